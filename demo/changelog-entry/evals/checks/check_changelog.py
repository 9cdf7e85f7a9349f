"""Checks a CHANGELOG.md in a run's workspace against the baseline commit.

CHECK=structure  the file keeps a Keep a Changelog shape: Unreleased comes first
CHECK=entry      Unreleased gained at least one line in the section named by SECTION
CHECK=sections   under Unreleased each ### kind is a Keep a Changelog kind, appears
                 once, and the kinds come in the order Added, Changed, Deprecated,
                 Removed, Fixed, Security
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


def unreleased(parts):
    return next((body for title, body in parts if title.startswith("[Unreleased]")), None)


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
        if unreleased(after) is None:
            print("fail: there is no ## [Unreleased] section")
            return 1
        old = bullets(unreleased(before) or "", kind)
        new = bullets(unreleased(after), kind)
        if len(new) <= len(old):
            print(f"fail: no new line under Unreleased / {kind}")
            return 1
        print(f"ok: {len(new) - len(old)} new line(s) under Unreleased / {kind}")
        return 0
    if check == "sections":
        body = unreleased(after)
        if body is None:
            print("fail: there is no ## [Unreleased] section")
            return 1
        found = re.findall(r"^### (.*?)\s*$", body, flags=re.M)
        unknown = [k for k in found if k not in KINDS]
        if unknown:
            print(f"fail: not a Keep a Changelog kind under Unreleased: {', '.join(unknown)}")
            return 1
        twice = sorted({k for k in found if found.count(k) > 1})
        if twice:
            print(f"fail: more than one ### {twice[0]} under Unreleased")
            return 1
        if found != sorted(found, key=KINDS.index):
            print(f"fail: Unreleased has {', '.join(found)}; the order is {', '.join(KINDS)}")
            return 1
        print(f"ok: Unreleased has {', '.join(found) or 'no sections'}, each once, in order")
        return 0
    if check == "released":
        if [s for s in before if not s[0].startswith("[Unreleased]")] != [
            s for s in after if not s[0].startswith("[Unreleased]")
        ]:
            print("fail: a released section changed")
            return 1
        print("ok: released sections unchanged")
        return 0
    print(f"fail: unknown CHECK {check!r}")
    return 1


if __name__ == "__main__":
    sys.exit(main())
