"""The config file: typed, checked (a broken file or a key of the wrong type is a
ConfigProblem that says where, never silently ignored), and saved without losing
the keys this version does not know."""

from __future__ import annotations

import json

import pytest

from workbench.app.choices import Agent
from workbench.app.pipeline import RunRequest, defaults, make_judge
from workbench.config import Config, ConfigProblem, config_dir, load_config, save_config, write_config
from workbench.errors import WorkbenchError


def _write(text: str):
    folder = config_dir()
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(text)
    return folder / "config.json"


def test_no_file_is_the_defaults():
    assert load_config() == Config() and load_config().to_dict() == {}


def test_the_known_keys_are_typed_and_the_others_kept():
    _write(
        '{"theme": "solarized-dark", "judge": "anthropic", "judge_model": "m", "executor": "claude",\n'
        ' "judge_base_url": "http://127.0.0.1:1", "future_key": {"nested": [1, 2]}, "flag": null}\n'
    )
    config = load_config()
    assert (config.theme, config.judge, config.judge_model, config.executor) == (
        "solarized-dark",
        "anthropic",
        "m",
        "claude",
    )
    assert config.judge_base_url == "http://127.0.0.1:1"
    assert config.extra == {"future_key": {"nested": [1, 2]}, "flag": None}
    with pytest.raises(AttributeError):
        config.theme = "x"  # frozen


def test_a_save_keeps_the_unknown_keys():
    path = _write('{"future_key": {"nested": [1, 2]}, "flag": null, "judge": "claude"}')
    write_config(theme="workbench-light")
    assert json.loads(path.read_text()) == {
        "judge": "claude",
        "theme": "workbench-light",
        "future_key": {"nested": [1, 2]},
        "flag": None,
    }
    write_config(judge=None)  # None removes a key
    assert "judge" not in json.loads(path.read_text())
    save_config(Config(judge_model="m", extra={"other": True}))
    assert json.loads(path.read_text()) == {"judge_model": "m", "other": True}


@pytest.mark.parametrize(
    "text,line,column,said",
    [
        ('{"theme": "x",\n  "judge": }\n', 2, 12, "not valid JSON: Expecting value"),
        ('{"theme": "x"\n', 2, 1, "not valid JSON: Expecting ',' delimiter"),
        ("", 1, 1, "not valid JSON"),
        ('\n  ["theme"]\n', 2, 3, "expected a JSON object ({...}), found an array"),
        ('{\n  "judge": "claude",\n  "theme":   true\n}\n', 3, 14, '"theme" must be a string (or null), found true'),
        ('{"judge_model": 4}', 1, 17, '"judge_model" must be a string (or null), found 4 (a number)'),
        ('{"a": {"theme": 1}, "executor": ["demo"]}', 1, 33, '"executor" must be a string (or null), found an array'),
    ],
)
def test_a_broken_file_is_a_problem_that_says_where(text, line, column, said):
    path = _write(text)
    with pytest.raises(ConfigProblem) as caught:
        load_config()
    problem = caught.value
    assert (problem.path, problem.line, problem.column) == (path, line, column)
    assert said in problem.message and str(problem).startswith(f"{path}:{line}:{column}: ")
    with pytest.raises(ConfigProblem):
        load_config().to_dict()


def test_a_broken_file_is_not_overwritten_by_a_save():
    path = _write('{"theme": "x", oops}')
    with pytest.raises(ConfigProblem):
        write_config(theme="workbench-light")
    assert path.read_text() == '{"theme": "x", oops}'


def test_a_wrong_type_is_refused_on_write_too():
    with pytest.raises(ConfigProblem, match='"theme" must be a string'):
        write_config(theme=3)
    assert not (config_dir() / "config.json").exists()


def _judge(executor: str | None = "claude"):
    """The judge the pipeline picks for a request that names none, or (None, what it says)."""
    try:
        return make_judge(defaults(RunRequest(config_dir(), agent=Agent(executor))).judge), ""
    except WorkbenchError as exc:
        return None, str(exc)


def test_the_default_judge_comes_from_the_config():
    assert _judge()[0].name == "claude"
    write_config(judge="anthropic", judge_model="configured")
    judge, _ = _judge()
    assert judge.name == "anthropic" and judge.model == "configured"
    assert _judge("demo")[0].name == "demo"  # the demo agent keeps the demo judge


def test_a_broken_config_or_unknown_judge_is_said_when_choosing_the_judge():
    path = _write('{"judge": 7}')
    judge, said = _judge()
    assert judge is None and f'{path}:1:11: "judge" must be a string' in said
    _write('{"judge": "gpt"}')
    judge, said = _judge()
    assert judge is None and f"{path}:1:11: unknown judge 'gpt' in the config file" in said
    _write('{"judge": "command"}')
    judge, said = _judge()
    assert judge is None and 'judge is "command", which needs --judge-command CMD' in said
    _write('{\n  "executor": "gpt5"\n}')
    judge, said = _judge(executor=None)
    assert judge is None and f"{path}:2:15: unknown executor 'gpt5' in the config file" in said
