"""Checks beyond the schema: what a suite can be valid JSON for and still be wrong
about (duplicate ids, missing fixtures, regexes Rust would refuse, ...).

Rules are written against data that may not match the schema at all: they check
types before they look inside, and never raise."""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from functools import cache, cached_property
from pathlib import Path
from typing import Any

from workbench.formats import artifacts, chock, paths, skill_creator, skill_md, slow_powers, trigger_set
from workbench.formats import pointer as ptr
from workbench.formats.artifacts import VERSION_NAME
from workbench.formats.dialect import Format
from workbench.validate import rust_regex, slow_powers_rules
from workbench.validate.diagnostic import Diagnostic, error, warning
from workbench.validate.trigger_lint import trigger_case, trigger_document


@dataclass
class LintContext:
    """Where the document lives: fixture paths and the SKILL.md beside it depend on it."""

    path: Path | None

    def __post_init__(self) -> None:
        # Absolute, so containment checks hold for paths given relative to "."
        self.path = Path(os.path.abspath(self.path)) if self.path else None

    @cached_property
    def evals_dir(self) -> Path | None:
        return self.path.parent if self.path else None

    @cached_property
    def skill_dir(self) -> Path | None:
        return self.path.parent.parent if self.path else None

    def fixture_problem(self, value: str, root: Path, root_label: str) -> str | None:
        """_file_problem, memoised: big suites name the same fixtures in every case."""
        key = (value, root)
        if key not in self._fixture_problems:
            self._fixture_problems[key] = _file_problem(value, root, root_label)
        return self._fixture_problems[key]

    @cached_property
    def _fixture_problems(self) -> dict:
        return {}

    @cached_property
    def skill_name(self) -> str | None:
        if self.skill_dir is None:
            return None
        skill_file = self.skill_dir / "SKILL.md"
        return skill_md.read_name(skill_file) if skill_file.is_file() else None


def iter_field(node: Any, pattern: str, tokens: tuple = ()) -> list[tuple[tuple, Any]]:
    """Values at a path pattern like "assertions/*/pattern", with their tokens.
    Tokens of array items are ints here; ptr.join makes them strings."""
    frontier = [(tokens, node)]
    for head in _split_pattern(pattern):
        found: list[tuple[tuple, Any]] = []
        if head == "*":
            for here, value in frontier:
                if isinstance(value, list):
                    found.extend((here + (index,), item) for index, item in enumerate(value))
        else:
            for here, value in frontier:
                if isinstance(value, dict) and head in value:
                    found.append((here + (head,), value[head]))
        if not found:
            return found
        frontier = found
    return frontier


@cache
def _split_pattern(pattern: str) -> tuple[str, ...]:
    return tuple(pattern.split("/"))


# ---------------------------------------------------------------- shared rules


def regex_fields(case: Any, fields: tuple[str, ...], base: tuple[str, ...]) -> list[Diagnostic]:
    out = []
    for field in fields:
        for tokens, value in iter_field(case, field, base):
            if isinstance(value, str):
                reason = rust_regex.problem(value)
                if reason:
                    out.append(error(ptr.join(tokens), reason))
    return out


def file_fields(
    case: Any, fields: tuple[str, ...], base: tuple[str, ...], root: Path | None, root_label: str, ctx: LintContext
) -> list[Diagnostic]:
    if root is None:
        return []
    out = []
    for field in fields:
        for tokens, value in iter_field(case, field, base):
            if isinstance(value, str) and value:
                problem = ctx.fixture_problem(value, root, root_label)
                if problem:
                    out.append(error(ptr.join(tokens), problem))
    return out


def _file_problem(value: str, root: Path, root_label: str) -> str | None:
    if os.path.isabs(value) or value.startswith("~"):
        return f'"{value}" is an absolute path; expected a path relative to the {root_label}'
    target = os.path.normpath(os.path.join(root, value))
    if not paths.inside(target, os.path.normpath(root)):
        return f'"{value}" points outside the {root_label}; fixture paths must stay inside it'
    problem = paths.relative_problem(value)
    if problem:
        return problem
    if not os.path.exists(target):
        shown = os.path.relpath(target, os.path.dirname(os.path.normpath(root)))
        return f'fixture "{value}" not found; expected it at {shown}'
    if not paths.inside(os.path.realpath(target), os.path.realpath(root)):
        return f'"{value}" is a link that leads outside the {root_label}; fixture paths must stay inside it'
    return paths.tree_problem(Path(target), root)


def same_names(case: Any, base: tuple[str, ...]) -> list[Diagnostic]:
    """Fixtures land at the top of the workspace by name: two of one name would collide."""
    files = case.get("files") if isinstance(case, dict) else None
    out: list[Diagnostic] = []
    seen: dict[str, str] = {}
    for index, value in enumerate(files if isinstance(files, list) else []):
        if not isinstance(value, str):
            continue
        name = os.path.basename(os.path.normpath(value))
        if name in seen:
            out.append(
                error(
                    ptr.join(base + ("files", index)),
                    f'"{value}" and "{seen[name]}" would both land at {name} at the top of the workspace; '
                    "expected fixtures with different names",
                )
            )
        seen.setdefault(name, value)
    return out


def duplicate_ids(items: Any, base: tuple[str, ...], what: str, id_field: str = "id") -> list[Diagnostic]:
    if not isinstance(items, list):
        return []
    first: dict[Any, int] = {}
    out = []
    for index, item in enumerate(items):
        if not isinstance(item, dict) or id_field not in item:
            continue
        value = item[id_field]
        try:
            hash(value)
        except TypeError:
            continue
        key = (type(value) is bool, value)
        if key in first:
            out.append(
                error(
                    ptr.join(base + (str(index), id_field)),
                    f"duplicate {what} id {_quoted(value)}: {what} {first[key] + 1} already uses it; "
                    "ids must be unique",
                )
            )
        else:
            first[key] = index
    return out


def skill_name_matches(data: Any, field: str, ctx: LintContext) -> list[Diagnostic]:
    value = data.get(field) if isinstance(data, dict) else None
    expected = ctx.skill_name
    if isinstance(value, str) and expected and value != expected:
        return [
            warning(
                f"/{field}",
                f'{field} is "{value}" but the SKILL.md beside it is named "{expected}"; expected them to match',
            )
        ]
    return []


def _quoted(value: Any) -> str:
    return f'"{value}"' if isinstance(value, str) else str(value)


def _cases(data: Any, pointer: str) -> tuple[tuple[str, ...], list]:
    tokens = ptr.split(pointer)
    try:
        cases = ptr.resolve(data, tokens)
    except (KeyError, IndexError, TypeError, ValueError):
        return tokens, []
    return tokens, cases if isinstance(cases, list) else []


# ---------------------------------------------------------------- slow-powers


def slow_powers_case(case: Any, base: tuple[str, ...], ctx: LintContext) -> list[Diagnostic]:
    out = regex_fields(case, slow_powers.REGEX_FIELDS, base)
    out += slow_powers_rules.case_rules(case, base, ctx.evals_dir)
    fixtures_root, label = slow_powers.fixtures_root(case, ctx.evals_dir)
    if fixtures_root is not None and any(d.path == ptr.join(base + ("files_root",)) for d in out):
        fixtures_root = None  # a files_root that is refused says so once, not once per fixture
    out += file_fields(case, ("files/*",), base, fixtures_root, label, ctx)
    out += file_fields(case, ("assertions/*/setup_files/*",), base, ctx.evals_dir, "evals folder", ctx)
    out += same_names(case, base)
    if isinstance(case, dict):
        out += duplicate_ids(case.get("assertions"), base + ("assertions",), "assertion")
    return out


def slow_powers_document(data: Any, ctx: LintContext) -> list[Diagnostic]:
    tokens, cases = _cases(data, "/evals")
    out = duplicate_ids(cases, tokens, "case")
    out += skill_name_matches(data, "skill_name", ctx)
    if isinstance(data, dict) and "codebase" in data:
        out += slow_powers_rules.codebase_problems(data["codebase"], ("codebase",), ctx.evals_dir)
    flags = [c.get("skill_should_trigger", True) for c in cases if isinstance(c, dict)]
    if flags and all(flag is False for flag in flags):
        out.append(
            warning(
                "/evals",
                "every eval has skill_should_trigger: false, so nothing tests that "
                "the skill fires; expected at least one eval where it should",
            )
        )
    return out


# ---------------------------------------------------------------- skill-creator


def skill_creator_case(case: Any, base: tuple[str, ...], ctx: LintContext) -> list[Diagnostic]:
    out = file_fields(case, skill_creator.FILE_FIELDS, base, ctx.skill_dir, "skill folder", ctx)
    out += same_names(case, base)
    if ctx.skill_dir is not None and ctx.evals_dir is not None and not out:
        for tokens, value in iter_field(case, "files/*", base):
            target = os.path.normpath(os.path.join(ctx.skill_dir, str(value)))
            if isinstance(value, str) and not paths.inside(target, os.path.normpath(ctx.evals_dir)):
                out.append(
                    error(
                        ptr.join(tokens),
                        f'"{value}" is outside {ctx.evals_dir.name}/; a run copies (and trust covers) '
                        f"only the evals folder, expected the fixture under {ctx.evals_dir.name}/",
                    )
                )
    out += blank_texts(case, base, ("expectations/*", "assertions/*"), "an expectation a judge reads")
    if isinstance(case, dict):
        if "expectations" in case and "assertions" in case:
            out.append(
                warning(
                    ptr.join(base + ("assertions",)),
                    "both expectations and assertions are given; skill-creator reads one list, "
                    "expected only one of them",
                )
            )
        if "expected_output" not in case:
            out.append(warning(ptr.join(base), "no expected_output: reviewers see no description of success"))
    return out


def skill_creator_document(data: Any, ctx: LintContext) -> list[Diagnostic]:
    tokens, cases = _cases(data, "/evals")
    out = duplicate_ids(cases, tokens, "case")
    out += skill_name_matches(data, "skill_name", ctx)
    if isinstance(data, dict) and isinstance(data.get("evals"), list) and not data["evals"]:
        out.append(warning("/evals", "no evals: expected at least one case"))
    return out


# ---------------------------------------------------------------- chock


def blank_texts(case: Any, base: tuple[str, ...], fields: tuple[str, ...], what: str) -> list[Diagnostic]:
    """A text that is only blanks where one is checked against the run: it can only pass vacuously or be
    judged on nothing, so it is an error before anything runs."""
    out = []
    for pattern in fields:
        for tokens, value in iter_field(case, pattern, base):
            if isinstance(value, str) and not value.strip():
                named = next((t for t in reversed(tokens) if isinstance(t, str)), "it")
                label = f"an item of {named}" if isinstance(tokens[-1], int) else named
                out.append(error(ptr.join(tokens), f"{label} is empty; expected {what}"))
    return out


def chock_case(case: Any, base: tuple[str, ...], ctx: LintContext) -> list[Diagnostic]:
    out = regex_fields(case, chock.REGEX_FIELDS, base)
    out += blank_texts(
        case,
        base,
        ("expect", "expected_behavior", "structural_checks/*", "expected_error_pattern"),
        "what the run must show",
    )
    execute = case.get("execute") if isinstance(case, dict) else None
    if isinstance(execute, dict):
        for field in chock.REPLAY_FILE_FIELDS:
            tree = execute.get(field)
            for name in tree if isinstance(tree, dict) else {}:
                problem = paths.relative_problem(str(name), f"{field} path")
                if problem:
                    out.append(error(ptr.join(base + ("execute", field, str(name))), f"{field}: {problem}"))
        gate = [k for k in chock.GATE_FIELDS if k in execute]
        if "command" in execute and gate:
            out.append(
                warning(
                    ptr.join(base + ("execute",)),
                    f"execute has both command and gate fields ({', '.join(gate)}); a case replays "
                    "either the guard (command) or the gate, expected one of them",
                )
            )
        if "push_refs" in execute and execute.get("event") != "push":
            out.append(warning(ptr.join(base + ("execute", "push_refs")), "push_refs are only used with event: push"))
    return out


def chock_document(data: Any, ctx: LintContext) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    for case_list in chock.FORMAT.cases:
        tokens, cases = _cases(data, case_list.pointer)
        if not cases:
            continue
        out += duplicate_ids(cases, tokens, "case")
        present = {c.get("category") for c in cases if isinstance(c, dict)}
        missing = [c for c in chock.REQUIRED_CATEGORIES if c not in present]
        if missing:
            # chock itself refuses a suite without a negative_trigger or behavior case.
            fatal = any(c in chock.REFUSED_WITHOUT for c in missing)
            out.append(
                (error if fatal else warning)(
                    case_list.pointer,
                    f"no {' or '.join(missing)} case; expected at least one trigger, "
                    "negative_trigger and behavior case",
                )
            )
    suite = data.get("eval_suite") if isinstance(data, dict) else None
    if isinstance(suite, dict):
        out += skill_name_matches(suite, "skill_id", ctx)
        created = suite.get("created_at")
        if isinstance(created, str) and not _DATE_TIME.fullmatch(created):
            out.append(
                warning(
                    "/eval_suite/created_at",
                    f'created_at is "{created}"; expected an RFC 3339 date-time like 2026-01-15T10:30:00Z',
                )
            )
    return out


_DATE_TIME = re.compile(r"\d{4}-\d\d-\d\d[Tt ]\d\d:\d\d:\d\d(\.\d+)?([Zz]|[+-]\d\d:\d\d)")


# ---------------------------------------------------------------- SKILL.md


def skill_md_document(data: Any, ctx: LintContext, body: str = "", body_line: int = 1) -> list[Diagnostic]:
    if not isinstance(data, dict):
        return [
            error(
                "",
                "expected the frontmatter to be a mapping of keys (name, description, ...), "
                f"found {type(data).__name__ if data is not None else 'nothing'}",
            )
        ]
    out = []
    for key in data:
        if key not in skill_md.ALLOWED_KEYS:
            out.append(
                error(
                    f"/{ptr.escape(key)}",
                    f'unexpected frontmatter key "{key}"; allowed: ' + ", ".join(skill_md.ALLOWED_KEYS),
                )
            )
    out += _skill_name_rules(data.get("name"), ctx)
    description = data.get("description")
    if "description" not in data:
        out.append(error("", 'missing required key "description": what the skill does and when to use it'))
    elif not isinstance(description, str) or not description.strip():
        out.append(error("/description", "expected a non-empty description"))
    else:
        if len(description) > skill_md.DESCRIPTION_MAX:
            out.append(
                error(
                    "/description",
                    f"description is {len(description)} characters; expected at most {skill_md.DESCRIPTION_MAX}",
                )
            )
        if "<" in description or ">" in description:
            out.append(
                warning(
                    "/description",
                    "description contains angle brackets (< or >); skill-creator's packager refuses them",
                )
            )
    compatibility = data.get("compatibility")
    if "compatibility" in data and not (isinstance(compatibility, str) and compatibility.strip()):
        out.append(error("/compatibility", "expected compatibility to be a non-empty string"))
    elif isinstance(compatibility, str) and len(compatibility) > skill_md.COMPATIBILITY_MAX:
        out.append(
            error(
                "/compatibility",
                f"compatibility is {len(compatibility)} characters; expected at most {skill_md.COMPATIBILITY_MAX}",
            )
        )
    if "license" in data and not isinstance(data["license"], str):
        out.append(error("/license", "expected license to be a string"))
    tools = data.get("allowed-tools")
    if "allowed-tools" in data and not (
        isinstance(tools, str) or (isinstance(tools, list) and all(isinstance(t, str) for t in tools))
    ):
        out.append(error("/allowed-tools", "expected allowed-tools to be a space-separated string of tool names"))
    out += _metadata_rules(data)
    lines = body.split("\n")
    if not body.strip():
        out.append(
            Diagnostic("error", "", "expected a body after the frontmatter: the skill's instructions", body_line, 1)
        )
    elif len(lines) > skill_md.BODY_LINES_MAX:
        out.append(
            Diagnostic(
                "warning",
                "",
                f"the body is {len(lines)} lines; keep SKILL.md under "
                f"{skill_md.BODY_LINES_MAX} lines and move detail to referenced files",
                body_line + skill_md.BODY_LINES_MAX,
                1,
            )
        )
    return out


def _skill_name_rules(name: Any, ctx: LintContext) -> list[Diagnostic]:
    if name is None:
        return [
            error("", 'missing required key "name": lowercase letters, digits and hyphens, matching the folder name')
        ]
    if not isinstance(name, str):
        return [error("/name", "expected name to be a string")]
    out = []
    if len(name) > skill_md.NAME_MAX:
        out.append(error("/name", f"name is {len(name)} characters; expected at most {skill_md.NAME_MAX}"))
    if not skill_md.NAME_PATTERN.fullmatch(name):
        out.append(
            error(
                "/name",
                f'name "{name}" must be lowercase letters, digits and single hyphens, '
                "not starting or ending with a hyphen",
            )
        )
    folder = ctx.path.parent.name if ctx.path else None
    if folder and name != folder:
        out.append(error("/name", f'name "{name}" differs from its folder "{folder}"; expected them to be equal'))
    return out


def _metadata_rules(data: dict) -> list[Diagnostic]:
    if "metadata" not in data:
        return []
    metadata = data["metadata"]
    if not isinstance(metadata, dict):
        return [error("/metadata", "expected metadata to be a mapping of string keys to string values")]
    # Nested values are common (chock keeps its manifest there) and Claude Code reads
    # them, so they are a portability warning, not an error.
    return [
        warning(
            f"/metadata/{ptr.escape(key)}",
            f'metadata "{key}" is {_kind(value)}; the Agent Skills specification expects string '
            "values, so some clients may not read it",
        )
        for key, value in metadata.items()
        if not isinstance(value, str)
    ]


def _kind(value: Any) -> str:
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    return f"a {type(value).__name__}" if value is not None else "empty"


# ---------------------------------------------------------------- artifacts


def history_document(data: Any, ctx: LintContext) -> list[Diagnostic]:
    if not isinstance(data, dict) or not isinstance(data.get("iterations"), list):
        return []
    out = []
    iterations = data["iterations"]
    seen: dict[str, int] = {}
    bests = []
    for index, item in enumerate(iterations):
        if not isinstance(item, dict):
            continue
        here = f"/iterations/{index}"
        version, parent = item.get("version"), item.get("parent")
        out += _version_names(here, {"version": version, "parent": parent})
        if isinstance(version, str):
            if version in seen:
                out.append(
                    error(
                        f"{here}/version",
                        f'version "{version}" appears twice (first at iteration '
                        f"{seen[version] + 1}); expected each version once",
                    )
                )
            seen.setdefault(version, index)
        if item.get("is_current_best") is True:
            bests.append((index, version))
        if parent is None:
            if item.get("grading_result") != "baseline":
                out.append(
                    error(f"{here}/parent", f'version "{version}" has no parent; only the baseline (v0) may have none')
                )
        elif isinstance(parent, str):
            if parent == version:
                out.append(error(f"{here}/parent", f'version "{version}" is its own parent: a cycle'))
            elif parent not in seen:
                later = any(isinstance(i, dict) and i.get("version") == parent for i in iterations[index + 1 :])
                out.append(
                    error(
                        f"{here}/parent",
                        f'parent "{parent}" of "{version}" '
                        + (
                            "comes later in iterations; parents must come earlier (a cycle or a misordered history)"
                            if later
                            else "does not exist"
                        ),
                    )
                )
    current = data.get("current_best")
    out += _version_names("", {"current_best": current})
    if len(bests) != 1:
        where = "/iterations" if not bests else f"/iterations/{bests[1][0]}/is_current_best"
        out.append(error(where, f"{len(bests)} iterations are marked is_current_best; expected exactly one"))
    elif isinstance(current, str) and bests[0][1] != current:
        out.append(
            error(
                "/current_best",
                f'current_best is "{current}" but the iteration marked '
                f'is_current_best is "{bests[0][1]}"; expected them to agree',
            )
        )
    if isinstance(current, str) and seen and current not in seen:
        out.append(error("/current_best", f'current_best "{current}" is not one of the iterations'))
    return out


def _version_names(base: str, names: dict[str, Any]) -> list[Diagnostic]:
    """What the schema's pattern lets through ("v1" and a line break) and git would read otherwise."""
    return [
        error(
            f"{base}/{key}", f"{json.dumps(value)} is not a version name; expected exactly v and digits (v0, v1, ...)"
        )
        for key, value in names.items()
        if isinstance(value, str) and value.rstrip("\n") != value and VERSION_NAME.fullmatch(value.rstrip("\n"))
    ]


def grading_document(data: Any, ctx: LintContext) -> list[Diagnostic]:
    if not isinstance(data, dict):
        return []
    summary, expectations = data.get("summary"), data.get("expectations")
    if not isinstance(summary, dict) or not isinstance(expectations, list):
        return []
    out = []
    passed = sum(1 for e in expectations if isinstance(e, dict) and e.get("passed") is True)
    counted = {"total": len(expectations), "passed": passed, "failed": len(expectations) - passed}
    for key, value in counted.items():
        if isinstance(summary.get(key), int) and summary[key] != value:
            out.append(
                warning(f"/summary/{key}", f"summary.{key} is {summary[key]} but the expectations count {value}")
            )
    rate = summary.get("pass_rate")
    if isinstance(rate, (int, float)) and expectations and abs(rate - passed / len(expectations)) > 0.006:
        out.append(
            warning(
                "/summary/pass_rate",
                f"summary.pass_rate is {rate} but {passed} of {len(expectations)} expectations passed",
            )
        )
    return out


def metrics_document(data: Any, ctx: LintContext) -> list[Diagnostic]:
    if not isinstance(data, dict) or not isinstance(data.get("tool_calls"), dict):
        return []
    values = data["tool_calls"].values()
    if all(isinstance(v, int) for v in values) and isinstance(data.get("total_tool_calls"), int):
        total = sum(values)
        if total != data["total_tool_calls"]:
            return [
                warning(
                    "/total_tool_calls",
                    f"total_tool_calls is {data['total_tool_calls']} but tool_calls add up to {total}",
                )
            ]
    return []


def benchmark_document(data: Any, ctx: LintContext) -> list[Diagnostic]:
    if not isinstance(data, dict):
        return []
    out = []
    runs = data.get("runs")
    if isinstance(runs, list):
        if not runs:
            out.append(error("/runs", "the benchmark has zero runs; expected at least one graded run"))
        for index, run in enumerate(runs):
            if not isinstance(run, dict):
                continue
            if "config" in run and "configuration" not in run:
                out.append(error(f"/runs/{index}/config", 'found "config"; the viewer reads "configuration"'))
            if "pass_rate" in run and "result" not in run:
                out.append(
                    error(
                        f"/runs/{index}/pass_rate",
                        "pass_rate is at the top of the run; the viewer reads result.pass_rate",
                    )
                )
        out += _runs_per_configuration(data, runs)
    out += _delta_sign(data)
    return out


def _runs_per_configuration(data: dict, runs: list) -> list[Diagnostic]:
    metadata = data.get("metadata")
    declared = metadata.get("runs_per_configuration") if isinstance(metadata, dict) else None
    counts: dict[tuple, int] = {}
    for run in runs:
        if isinstance(run, dict):
            key = (str(run.get("eval_id")), str(run.get("configuration")))
            counts[key] = counts.get(key, 0) + 1
    if isinstance(declared, int) and counts and declared != max(counts.values()):
        return [
            warning(
                "/metadata/runs_per_configuration",
                f"runs_per_configuration is {declared} but the runs count up to "
                f"{max(counts.values())} per eval and configuration",
            )
        ]
    return []


def _delta_sign(data: dict) -> list[Diagnostic]:
    summary = data.get("run_summary")
    if not isinstance(summary, dict) or not isinstance(summary.get("delta"), dict):
        return []
    for new, base in artifacts.CONFIGURATION_PAIRS:
        try:
            expected = summary[new]["pass_rate"]["mean"] - summary[base]["pass_rate"]["mean"]
            stated = float(str(summary["delta"]["pass_rate"]))
        except (KeyError, TypeError, ValueError):
            continue
        if abs(stated - expected) > 0.006:
            return [
                warning(
                    "/run_summary/delta/pass_rate",
                    f"delta.pass_rate is {summary['delta']['pass_rate']} but {new} minus {base} is "
                    f"{expected:+.2f}; expected new minus baseline",
                )
            ]
    return []


# ---------------------------------------------------------------- dispatch

CASE_RULES = {
    slow_powers.NAME: slow_powers_case,
    skill_creator.NAME: skill_creator_case,
    chock.NAME: chock_case,
    trigger_set.NAME: trigger_case,
}
DOCUMENT_RULES = {
    slow_powers.NAME: slow_powers_document,
    skill_creator.NAME: skill_creator_document,
    chock.NAME: chock_document,
    trigger_set.NAME: trigger_document,
    artifacts.HISTORY.name: history_document,
    artifacts.GRADING.name: grading_document,
    artifacts.METRICS.name: metrics_document,
    artifacts.BENCHMARK.name: benchmark_document,
}


def lint_case(fmt: Format, case: Any, tokens: tuple[str, ...], ctx: LintContext) -> list[Diagnostic]:
    rule = CASE_RULES.get(fmt.name)
    return rule(case, tokens, ctx) if rule else []


def lint_document(fmt: Format, data: Any, ctx: LintContext) -> list[Diagnostic]:
    rule = DOCUMENT_RULES.get(fmt.name)
    out = rule(data, ctx) if rule else []
    for case_list in fmt.cases:
        tokens, cases = _cases(data, case_list.pointer)
        for index, case in enumerate(cases):
            out += lint_case(fmt, case, tokens + (str(index),), ctx)
    return out
