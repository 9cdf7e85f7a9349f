"""The seed schemas are the contract: the workbench's schema check accepts and
rejects exactly what plain jsonschema (Draft 7) does with the seed, on the
corpus and on thousands of documents mutated from valid ones."""

from __future__ import annotations

import copy
import json

import jsonschema
import pytest
from conftest import CORPUS, SEEDS, SHARED, needs_corpus, needs_seeds
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_mutations import CHOCK_LEGACY, CHOCK_MODERN, SLOW_POWERS

from workbench.formats import chock, slow_powers
from workbench.formats.document import load
from workbench.validate import schema_check

pytestmark = needs_seeds


def _seed(name: str):
    return jsonschema.Draft7Validator(json.loads((SEEDS / name).read_text()))


# slow-powers follows eval-magic's current evals.schema.json (files_root, codebase,
# responder), which superseded seed 002; chock still follows its seed.
EVAL_MAGIC_SCHEMA = SHARED / "reference" / "eval-magic" / "schema" / "evals.schema.json"
SEED_FOR = {"slow-powers": str(EVAL_MAGIC_SCHEMA), "chock": "000_87878742f9768b9b.txt"}
FORMAT_FOR = {"slow-powers": slow_powers.FORMAT, "chock": chock.FORMAT}


def _agree(dialect: str, data) -> None:
    reference = _seed(SEED_FOR[dialect]).is_valid(data)
    ours = not schema_check.check(FORMAT_FOR[dialect], data)
    assert ours == reference, (dialect, json.dumps(data)[:500])


@needs_corpus
@pytest.mark.parametrize(
    "dialect,pattern", [("slow-powers", "slow-powers/**/evals/evals.json"), ("chock", "chock/**/evals/suite.yaml")]
)
def test_corpus_agrees_with_seed(dialect, pattern):
    files = sorted(CORPUS.glob(pattern))
    assert files
    for path in files:
        _agree(dialect, load(path).data)


# Values that sit on the schemas' boundaries: right and wrong types, enum
# members and near misses, empty and one-off-the-limit values.
VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.sampled_from([0, 1, -1, 2, 1.5, 2**31, -(2**31) - 1, 2**31 - 1]),
    st.sampled_from(
        [
            "",
            "x",
            "Case-1",
            "case-1",
            "-x",
            "always",
            "agent_asks",
            "sometimes",
            "shared",
            "isolated",
            "transcript_check",
            "llm_judge",
            "command_check",
            "diff_scope",
            "first_write",
            "completion_claim",
            "any",
            "trigger",
            "negative_trigger",
            "behavior",
            "implicit",
            "block",
            "allow",
            "commit",
            "push",
            "pending",
            "ready",
            "authored",
            "derived",
            "binary",
            "higher_is_better",
            "lower_is_better",
            "nlp_overlap",
        ]
    ),
    st.lists(st.sampled_from(["a", "b", "", 1]), max_size=3),
    st.dictionaries(st.sampled_from(["", "A", "B"]), st.sampled_from(["1", "", 2, ["x"], ["x", "x"]]), max_size=2),
)
# Per key, the values on its boundaries in either schema: valid, just invalid,
# and of the wrong type.
KEY_VALUES = {
    "id": ["a", "case-1", "Case-1", "-a", "", 1],
    "type": ["transcript_check", "llm_judge", "command_check", "diff_scope", "judge", 1],
    "prompt": ["p", "", 1],
    "expected_output": ["e", "", None],
    "rubric": ["r", ""],
    "command": ["c", ""],
    "turns": [
        [],
        [{"prompt": "p", "deliver_when": "always"}],
        [{"prompt": "p", "deliver_when": "agent_asks", "agent_response_matches": "x"}],
        [{"prompt": "p", "deliver_when": "always", "agent_response_matches": "x"}],
        [{"prompt": "", "deliver_when": "agent_asks"}],
        [{"prompt": "p"}],
    ],
    "files": [[], ["a"], [1], "a"],
    "setup_files": [[], ["a"], [""], [1]],
    "runs": [0, 1, 2, -1, 1.5, "1"],
    "isolation": ["shared", "isolated", "private", 1],
    "skill_should_trigger": [True, False, "no", 0],
    "assertions": [
        [],
        [{"id": "d", "type": "diff_scope"}],
        [{"id": "d", "type": "diff_scope", "max_files_touched": 0}],
        [{"id": "j", "type": "llm_judge", "rubric": "r", "extra": 1}],
        ["text"],
    ],
    "check": ["tool_invocation_matches", 1],
    "pattern": ["x", 1],
    "must_precede": ["any", "first_write", "never"],
    "model": ["m", 1],
    "env": [{}, {"A": "1"}, {"": "1"}, {"A": 1}, {"A": ""}],
    "matrix": [{}, {"A": ["1"]}, {"A": []}, {"A": ["1", "1"]}, {"": ["1"]}, {"A": [1]}],
    "expect_exit_code": [0, -1, 2**31 - 1, 2**31, -(2**31), -(2**31) - 1, 1.0, "0"],
    "expect_stdout": ["x", 1],
    "max_files_touched": [0, -1, 1, 1.5],
    "max_lines_changed": [0, -1, 3, "3"],
    "deliver_when": ["always", "agent_asks", "never"],
    "agent_response_matches": ["x", ""],
    "category": ["trigger", "implicit", "negative_trigger", "behavior", "correctness", "multilingual", "x"],
    "expect": ["block", "allow", "deny", "text", 1],
    "status": ["pending", "ready", "done"],
    "provenance": ["authored", "derived", "copied"],
    "event": ["commit", "push", "merge"],
    "direction": ["higher_is_better", "lower_is_better", "up"],
    "threshold": [1, 0.5, "high"],
    "weight": [1, "x"],
    "description": ["d", 1],
    "input": [{}, "x", []],
    "execute": [{}, {"expect": "block"}, {"expect": "x"}, "x"],
    "push_refs": [[], ["r"], [1]],
    "head_files": [{}, {"a": "x"}, {"a": 1}],
    "branch": ["main", 1],
    "metrics": [{}, {"m": {}}, {"m": {"type": "binary", "direction": "up"}}, {"m": {"direction": "lower_is_better"}}],
    "test_cases": [[], "x"],
    "cases": [[], "x"],
    "skill_id": ["s", 1],
    "policy_id": ["p", None],
    "created_at": ["2026-01-01T00:00:00Z", "yesterday"],
    "expected_error_pattern": ["x", 1],
    "structural_checks": [["a"], [1]],
    "unknown_key": [1],
}
KEYS = st.sampled_from(sorted(KEY_VALUES))


def _value_for(draw, key):
    if draw(st.integers(0, 4)) == 0:
        return copy.deepcopy(draw(VALUES))
    return copy.deepcopy(draw(st.sampled_from(KEY_VALUES.get(key, [None]))))


def _containers(node, path=()):
    yield path, node
    children = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for key, child in children:
        if isinstance(child, (dict, list)):
            yield from _containers(child, path + (key,))


@st.composite
def mutated(draw, base):
    doc = copy.deepcopy(base)
    for _ in range(draw(st.integers(1, 3))):
        containers = list(_containers(doc))
        _, node = draw(st.sampled_from(containers))
        action = draw(st.sampled_from(["set", "delete", "set-existing", "set-existing"]))
        if isinstance(node, dict):
            if action == "delete" and node:
                del node[draw(st.sampled_from(sorted(node)))]
            elif action == "set-existing" and node:
                key = draw(st.sampled_from(sorted(node)))
                node[key] = _value_for(draw, key)
            else:
                key = draw(KEYS)
                node[key] = _value_for(draw, key)
        elif isinstance(node, list) and node:
            index = draw(st.integers(0, len(node) - 1))
            if action == "delete":
                del node[index]
            elif action == "set":
                node[index] = copy.deepcopy(draw(VALUES))
            else:
                node.append(copy.deepcopy(node[index]))
    return doc


@pytest.mark.slow  # 5 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated(SLOW_POWERS))
def test_slow_powers_schema_agrees_with_seed(doc):
    _agree("slow-powers", doc)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(mutated(CHOCK_MODERN), mutated(CHOCK_LEGACY)))
def test_chock_schema_agrees_with_seed(doc):
    _agree("chock", doc)


def _single_mutations(base):
    """Every one-step change: each key of each object set to each of its boundary
    values, each key deleted, each array item deleted or doubled."""
    for path, _ in list(_containers(base)):

        def at(doc, path=path):
            node = doc
            for token in path:
                node = node[token]
            return node

        node = at(base)
        if isinstance(node, dict):
            for key in sorted(set(KEY_VALUES) | set(node)):
                for value in KEY_VALUES.get(key, [None]):
                    doc = copy.deepcopy(base)
                    at(doc)[key] = copy.deepcopy(value)
                    yield doc
            for key in node:
                doc = copy.deepcopy(base)
                del at(doc)[key]
                yield doc
        else:
            for index in range(len(node)):
                doc = copy.deepcopy(base)
                del at(doc)[index]
                yield doc
                doc = copy.deepcopy(base)
                at(doc).append(copy.deepcopy(node[index]))
                yield doc


@pytest.mark.parametrize(
    "dialect,base",
    [("slow-powers", SLOW_POWERS), ("chock", CHOCK_MODERN), ("chock", CHOCK_LEGACY)],
    ids=["slow-powers", "eval_suite", "suite"],
)
@pytest.mark.slow  # 10 s of a worker in a whole run at load 13, before tests/support (its slowest parameters)
def test_every_single_mutation_agrees_with_seed(dialect, base):
    count = 0
    for doc in _single_mutations(base):
        _agree(dialect, doc)
        count += 1
    assert count > 1000
