"""Validation speed, each figure beside its anchor, measured in one run.

    .venv/bin/python bench/validate_bench.py [--quick]

Anchors (DESIGN.md section 7, measured on these 2-core machines for a 1,000-case
slow-powers suite): plain jsonschema Draft 7 1,640 ms, jsonschema-rs 3.3 ms,
json.loads 11 ms. Budgets: parse + schema + lint of 1,000 cases <= 50 ms;
re-validating one edited case <= 5 ms; the whole `workbench validate` process
on 1,000 cases <= 1 s; `workbench validate` of the shared corpus < 2 s.
The plain jsonschema anchor is re-measured here, on the same file.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from suite_gen import write_suite  # noqa: E402

from workbench.formats import slow_powers  # noqa: E402
from workbench.formats.document import load  # noqa: E402
from workbench.validate.validator import validate_case, validate_document, validate_file  # noqa: E402

CORPUS = HERE.parent.parent / "shared" / "corpus"
SEED = HERE.parent.parent / "shared" / "seeds" / "002_4365d520db140803.txt"


def median_ms(fn, repeat: int) -> float:
    fn()  # warm caches (schema compile, imports) as in a running app
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def row(label: str, ms: float, anchor: str) -> None:
    print(f"  {label:<52} {ms:>9.1f} ms   {anchor}")


def bench_suite(root: Path, cases: int, quick: bool) -> None:
    import jsonschema
    import jsonschema_rs

    path = write_suite(root, cases, name=f"suite-{cases}")
    text = path.read_text()
    print(f"\n{cases:,} cases ({len(text) / 1e6:.1f} MB, every assertion kind, 2 turns per case)")
    seed = json.loads(SEED.read_text())
    data = json.loads(text)
    plain = jsonschema.Draft7Validator(seed)
    rust = jsonschema_rs.Draft7Validator(seed, validate_formats=False)
    scale = cases / 1000

    reps = 1 if (quick or cases > 1000) else 3
    row(
        "plain jsonschema Draft 7 (the anchor, same file)",
        median_ms(lambda: plain.is_valid(data), reps),
        f"anchor {1640 * scale:,.0f} ms (DESIGN: 1,640 ms per 1,000 cases)",
    )
    row("json.loads", median_ms(lambda: json.loads(text), 11), f"anchor {11 * scale:,.0f} ms")
    row("jsonschema-rs alone", median_ms(lambda: rust.is_valid(data), 11), f"anchor {3.3 * scale:,.1f} ms")
    row(
        "workbench: parse + schema + lint (validate_file)",
        median_ms(lambda: validate_file(path), 11),
        f"budget {50 * scale:,.0f} ms" if cases == 1000 else "(no budget; scales linearly)",
    )

    doc = load(path)
    middle = f"/evals/{cases // 2}"
    doc.data["evals"][cases // 2]["turns"][0]["deliver_when"] = "sometimes"  # an edit that breaks the case
    row(
        "workbench: re-validate one edited case",
        median_ms(lambda: validate_case(doc, slow_powers.FORMAT, middle), 51),
        "budget 5 ms",
    )

    broken = load(path)
    for index in range(0, cases, 100):  # 1% of cases with a mistake, found and located
        broken.data["evals"][index]["runs"] = 0
    row(
        "workbench: validate with 1% broken cases (+ locate)",
        median_ms(lambda: validate_document(broken, slow_powers.FORMAT), 5),
        "(diagnostics with line and column)",
    )

    if cases == 1000:
        command = [sys.executable, "-m", "workbench", "validate", str(path)]
        row(
            "whole `workbench validate` process",
            median_ms(lambda: subprocess.run(command, capture_output=True), 5),
            "budget 1,000 ms",
        )


def main() -> None:
    quick = "--quick" in sys.argv
    print("workbench validate: speed beside its anchors (median of repeated runs)")
    with tempfile.TemporaryDirectory() as tmp:
        bench_suite(Path(tmp), 1000, quick)
        if not quick:
            bench_suite(Path(tmp), 10000, quick)
    if CORPUS.is_dir():
        command = [sys.executable, "-m", "workbench", "validate", str(CORPUS)]
        print(f"\nshared corpus ({sum(1 for _ in CORPUS.rglob('*') if _.is_file())} files)")
        row(
            "whole `workbench validate ../shared/corpus` process",
            median_ms(lambda: subprocess.run(command, capture_output=True), 5),
            "budget 2,000 ms",
        )


if __name__ == "__main__":
    main()
