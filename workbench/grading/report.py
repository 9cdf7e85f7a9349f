"""`workbench report`: an iteration's results as text, JSON, JUnit XML for CI, or one HTML page to share."""

from __future__ import annotations

from itertools import islice

import orjson

from workbench.formats import json_out
from workbench.formats.regular import read_object
from workbench.grading.benchmark import STOPPED, cost_line, prompt_of
from workbench.grading.review import Review, cell_text
from workbench.runs.stopped import said_of
from workbench.workspace import layout

TYPE_CHECKING = False  # not typing's: a report starts faster without importing it
if TYPE_CHECKING:
    from typing import TextIO


def eval_prompt(iteration: str, folder: str, prompts: dict[str, str] | None = None) -> str:
    """The eval's prompt as its eval_metadata.json has it (ours and skill-creator's write one);
    from `prompts` (an up-to-date benchmark.json's) when it has the folder's."""
    if not folder:
        return ""
    if prompts is not None and folder in prompts:
        return prompts[folder]
    return prompt_of(read_object(f"{iteration}/{folder}/{layout.EVAL_METADATA}"))


def as_json(review: Review, iteration: str) -> dict:
    return {
        "iteration": iteration,
        "configurations": review.configurations,
        "pass_rate": {c: review.rate(c) for c in review.configurations},
        "delta": review.delta(),
        "difference": (d.as_json() if (d := review.difference()) else None),
        "errors": review.errors,
        "incomplete": stopped(iteration, review),
        "cost_usd": {**review.cost(), "configurations": {c: review.cost(c) for c in review.configurations}},
        "evals": [
            {
                "eval_id": row.eval_id,
                "eval_name": row.name,
                "prompt": eval_prompt(iteration, row.folder, review.prompts),
                "configurations": {
                    c: {
                        "runs": cell.runs,
                        "passed": cell.passed,
                        "total": cell.total,
                        "pass_rate": round(cell.pass_rate, 4),
                        "pass_all": cell.pass_all,
                        "flaky": cell.flaky,
                        "mean_seconds": round(cell.seconds / cell.runs, 3) if cell.runs else 0,
                        "mean_tokens": round(cell.tokens / cell.runs) if cell.runs else 0,
                        "cost_usd": round(cell.cost_usd, 6),
                        "judge_cost_usd": round(cell.judge_cost_usd, 6),
                        **({"invocation_rate": cell.invoked / cell.staged} if cell.staged else {}),
                        "assertions": {
                            k: {"passed": v[0], "runs": v[1], "text": v[2]} for k, v in cell.assertions.items()
                        },
                    }
                    for c, cell in row.cells.items()
                },
            }
            for row in review.rows
        ],
        "failures": [vars(f) for f in review.failures],
    }


def stopped(iteration: str, review: Review | None = None) -> str | None:
    """Why the runs of an iteration were left unstarted (the budget), from its plan.json (as the review
    read it with the runs, when it did); None: complete."""
    if review is not None and review.plan_said is not None:
        return said_of(review.plan_said[STOPPED])
    return said_of(read_object(f"{iteration}/{layout.PLAN}").get(STOPPED))


def as_text(review: Review, iteration: str) -> str:
    lines = [f"Results of {iteration}", ""]
    why = stopped(iteration, review)
    if why:
        lines += [f"INCOMPLETE: {why}. The rates below are of the runs that ran; the others are errors.", ""]
    width = max([len(r.label) for r in review.rows] + [4])
    lines.append("eval".ljust(width) + "  " + "  ".join(c.ljust(28) for c in review.configurations))
    for row in review.rows:
        cells = []
        for c in review.configurations:
            cell = row.cells.get(c)
            cells.append((cell_text(cell) if cell else "—").ljust(28))
        lines.append(row.label.ljust(width) + "  " + "  ".join(cells))
    rates = "  ".join(f"{c} {rate:.0%}" for c in review.configurations if (rate := review.rate(c)) is not None)
    delta, diff = review.delta(), review.difference()
    lines += ["", f"pass rate: {rates}" + (f"  delta {delta:+.2f}" if delta is not None else "")]
    if diff is not None:
        lines.append(f"paired by eval: {diff.shown()} ({diff.better} better, {diff.worse} worse)")
    lines.append(cost_line(review.cost()))
    if review.failures:
        lines += ["", f"{len(review.failures)} failed expectation(s):"]
        for f in review.failures:
            evidence = " ".join(f.evidence.split())[:400]
            lines.append(
                f"  ✗ eval {f.eval_id} · {f.configuration} · run {f.run_number} · {f.id}"
                + (" (not graded)" if f.error else "")
                + f"\n      {f.text[:200]}\n      {evidence}"
            )
    return "\n".join(lines) + "\n"


def as_junit(review: Review, iteration: str) -> str:
    """One test suite per configuration, one test case per assertion of each run.
    The baseline's failures are what a skill is for: reported as expected
    failures (skipped), not as test failures."""
    import xml.etree.ElementTree as ET  # here: only this format needs it

    suites = ET.Element("testsuites", name=f"skill-workbench {iteration}")
    baseline = review.pair[1] if review.pair else None
    for configuration in review.configurations:
        suite = ET.SubElement(suites, "testsuite", name=configuration)
        spent = review.cost(configuration)
        properties = ET.SubElement(suite, "properties")
        for name in ("agents", "judge"):  # dollars; the unknowns say how many runs did not report theirs
            ET.SubElement(properties, "property", name=f"cost_usd.{name}", value=f"{spent[name]:.6f}")
            ET.SubElement(properties, "property", name=f"cost_usd.{name}_unknown", value=str(spent[f"{name}_unknown"]))
        tests = failures = errors = skipped = 0
        for r in review.results:
            if r.configuration != configuration:
                continue
            if r.grading.get("unusable"):  # an error element, never a run with nothing to fail
                tests += 1
                errors += 1
                case = ET.SubElement(
                    suite, "testcase", classname=f"eval-{r.eval_id}.run-{r.run_number}", name="grading"
                )
                node = ET.SubElement(case, "error", message="the run's grading cannot be used")
                node.text = str(r.grading.get("run_error", ""))
            for index, e in enumerate(r.expectations):
                tests += 1
                case = ET.SubElement(
                    suite, "testcase", classname=f"eval-{r.eval_id}.run-{r.run_number}", name=str(e.get("id") or index)
                )
                if e.get("passed"):
                    continue
                is_error = bool(e.get("error") or r.grading.get("run_error"))
                if configuration == baseline and not is_error:
                    skipped += 1
                    node = ET.SubElement(
                        case,
                        "skipped",
                        type="expected-failure",
                        message=f"expected failure of the baseline ({configuration}): {str(e.get('text', ''))[:240]}",
                    )
                    node.text = str(e.get("evidence", ""))
                    continue
                errors += is_error
                failures += not is_error
                node = ET.SubElement(case, "error" if is_error else "failure", message=str(e.get("text", ""))[:300])
                node.text = str(e.get("evidence", ""))
        suite.set("tests", str(tests))
        suite.set("failures", str(failures))
        suite.set("errors", str(errors))
        suite.set("skipped", str(skipped))
    ET.indent(suites)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suites, encoding="unicode") + "\n"


def render(review: Review, iteration: str, fmt: str) -> str:
    if fmt == "html":  # here: Jinja2 and the page's template only when a page is asked for
        from pathlib import Path

        from workbench.grading.report_html import render_html

        return render_html(review, Path(iteration))
    if fmt == "json":  # orjson: the standard encoder with indent takes a second on 10,000 runs
        return json_out.dumps(as_json(review, iteration), orjson.OPT_INDENT_2, str).decode() + "\n"
    if fmt == "junit":
        return as_junit(review, iteration)
    return as_text(review, iteration)


def write(review: Review, iteration: str, fmt: str, stream: TextIO) -> None:
    """The report written to `stream`; a page as it is made, never whole in memory."""
    if fmt == "html":
        from pathlib import Path

        from workbench.grading.report_html import page_parts

        parts = page_parts(review, Path(iteration))
        while batch := list(islice(parts, 4096)):  # a million small pieces, written some thousands at a time
            stream.write("".join(batch))
    elif fmt == "json" and hasattr(stream, "buffer"):  # orjson's bytes as they are, not decoded to be encoded again
        stream.flush()
        # The newline by orjson: adding it after would copy the whole report (a megabyte at 1,000 runs).
        option = orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE
        stream.buffer.write(json_out.dumps(as_json(review, iteration), option, str))
    else:
        stream.write(render(review, iteration, fmt))
