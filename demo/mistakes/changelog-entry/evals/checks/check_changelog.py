"""Checks a CHANGELOG.md in a run's workspace against the baseline commit.

CHECK=structure  the file keeps a Keep a Changelog shape: Unreleased comes first
CHECK=entry      Unreleased gained at least one line in the section named by SECTION
CHECK=released   every released section is exactly as it was
Prints "ok: ..." and exits 0, or prints "fail: ..." and exits 1.
"""

import os
import re
import subprocess
import sys

KINDS = ("Added", "Changed", "Deprecated", "Removed", "Fixed", "Security")


def sections(text: str) -> list[tuple[str, str]]:
    parts = re.split(r"^## ", text, flags=re.M)
    return [(p.splitlines()[0].strip(), p) for p in parts[1:]]


def bullets(section_text: str, kind: str) -> list[str]:
    match = re.search(rf"^### {kind}\n(.*?)(?=^### |\Z)", section_text, flags=re.M | re.S)
    return [line for line in (match.group(1).splitlines() if match else []) if line.startswith("- ")]


def baseline(path: str) -> str:
    result = subprocess.run(["git", "show", f"HEAD:{path}"], capture_output=True, text=True)
    return result.stdout if result.returncode == 0 else ""


def main() -> int:
    path = sys.argv[1] if len(sys.argv) > 1 else "CHANGELOG.md"
    check = os.environ.get("CHECK", "structure")
    try:
        now = open(path, encoding="utf-8").read()
    except OSError as exc:
        print(f"fail: cannot read {path}: {exc.strerror}")
        return 1
    before = sections(baseline(path))
    after = sections(now)
    if check == "structure":
        if not after or not after[0][0].startswith("[Unreleased]"):
            print("fail: the first section is not ## [Unreleased]")
            return 1
        print("ok: Unreleased is the first section")
        return 0
    if check == "entry":
        kind = os.environ.get("SECTION", "Added")
        old = bullets(before[0][1], kind) if before else []
        new = bullets(after[0][1], kind) if after else []
        if len(new) <= len(old):
            print(f"fail: no new line under Unreleased / {kind}")
            return 1
        print(f"ok: {len(new) - len(old)} new line(s) under Unreleased / {kind}")
        return 0
    if check == "released":
        if [s for s in before if not s[0].startswith("[Unreleased]")] != \
                [s for s in after if not s[0].startswith("[Unreleased]")]:
            print("fail: a released section changed")
            return 1
        print("ok: released sections unchanged")
        return 0
    print(f"fail: unknown CHECK {check!r}")
    return 1


if __name__ == "__main__":
    sys.exit(main())
