"""The user's config folder and file (theme choice, user themes, default judge).
Core: no Textual.

config.json is one JSON object. The keys the workbench knows are typed fields of
`Config`; any other key is kept in `Config.extra` and written back unchanged, so
a save never drops what a newer (or older) workbench put there. A file that is
not JSON, not an object, or that has a known key of the wrong type is a
`ConfigProblem` naming the file, the line and the column: never silently
ignored (and never overwritten by a save).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from workbench.errors import WorkbenchError
from workbench.formats.save import atomic_write

APP_NAME = "skill-workbench"
CONFIG_FILE = "config.json"


class ConfigProblem(WorkbenchError):
    """config.json cannot be used as it is: where (path, line, column; 1-based,
    None when the whole file is concerned) and what was expected."""

    def __init__(self, path: Path, message: str, line: int | None = None, column: int | None = None) -> None:
        self.path, self.message, self.line, self.column = path, message, line, column
        where = str(path) if line is None else f"{path}:{line}:{column}"
        super().__init__(f"{where}: {message}")


@dataclass(frozen=True)
class Config:
    """The known keys of config.json (None: not set), and every other key in `extra`."""

    theme: str | None = None  # the app's theme, by name (the app saves the last one chosen)
    judge: str | None = None  # the default judge: demo, claude, anthropic or command
    judge_model: str | None = None  # the anthropic judge's model
    judge_base_url: str | None = None  # the anthropic judge's Messages API base URL
    executor: str | None = None  # the default executor of run, evaluate and the screens
    confirm_above_usd: float | None = None  # run and evaluate ask before an estimate above this (default 5)
    prices: dict[str, dict[str, float]] | None = None  # model -> dollars per million tokens (workbench/runs/cost.py)
    cluster: str | None = None  # a Dask scheduler's address (tcp://host:8786): dispatches run there (docs/cluster.md)
    # The sandbox (docs/security.md): what a sandboxed agent's network reaches, and what bounds its turns.
    network: str | None = None  # "model" (its model API only, the default) or "open"
    network_allow: list[str] | None = None  # endpoints it may reach beside its model API (host:port or URLs)
    sandbox_processes: int | None = None  # processes and threads of one turn (default 1024)
    sandbox_memory_mb: int | None = None  # memory of one turn (default 4096)
    sandbox_file_mb: int | None = None  # the size of any one file it writes (default 1024)
    sandbox_tmp_mb: int | None = None  # its private /tmp (default 512)
    sandbox_disk_mb: int | None = None  # how much its workspace and private home may grow (default 4096)
    sandbox_show: list[str] | None = None  # files and folders shown read-only beside what the agent needs
    extra: dict[str, Any] = field(default_factory=dict)  # keys the workbench does not know, kept as they are

    def to_dict(self) -> dict[str, Any]:
        """What config.json holds: the set fields, then the unknown keys."""
        data = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "extra"}
        return {**{k: v for k, v in data.items() if v is not None}, **self.extra}


# key -> what it must be (every key not listed here is a string)
BOUNDS = ("sandbox_processes", "sandbox_memory_mb", "sandbox_file_mb", "sandbox_tmp_mb", "sandbox_disk_mb")
SHAPES = {
    "confirm_above_usd": "a number of dollars, 0 or more",
    "prices": 'an object {"<model>": {"input": <dollars per million tokens>, "output": <...>, "cached_input": <...>}}',
    "network": '"model" or "open"',
    "network_allow": 'a list of endpoints, each host:port or a URL such as "https://api.example.com"',
    **{key: "a whole number, 1 or more" for key in BOUNDS},
    "sandbox_show": "a list of absolute paths (or ~/...) of files and folders",
}
KNOWN = {f.name: SHAPES.get(f.name, "a string") for f in fields(Config) if f.name != "extra"}


def _fits(key: str, value: Any) -> bool:
    if key == "confirm_above_usd":
        return _number(value)
    if key == "prices":
        return isinstance(value, dict) and all(
            isinstance(rates, dict) and rates and all(_number(v) for v in rates.values()) for rates in value.values()
        )
    if key == "network":
        return value in ("model", "open")
    if key == "network_allow":
        return isinstance(value, list) and all(isinstance(v, str) and _endpoint(v) for v in value)
    if key == "sandbox_show":
        return isinstance(value, list) and all(
            isinstance(v, str) and os.path.isabs(os.path.expanduser(v)) for v in value
        )
    if key in BOUNDS:
        return isinstance(value, int) and not isinstance(value, bool) and value >= 1
    return isinstance(value, str)


def _endpoint(text: str) -> bool:
    from workbench.formats.endpoint import endpoint

    try:
        endpoint(text)
    except ValueError:
        return False
    return True


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0


def config_dir() -> Path:
    """WORKBENCH_CONFIG_DIR when set (tests, CI), else the platform's config folder."""
    override = os.environ.get("WORKBENCH_CONFIG_DIR")
    if override:
        return Path(override)
    from platformdirs import user_config_dir

    return Path(user_config_dir(APP_NAME))


def config_path() -> Path:
    return config_dir() / CONFIG_FILE


def where(key: str) -> str:
    """`path:line:column` of a top-level key's value in the config file (just the path when it cannot be
    placed): for messages about a value that is well-typed but names nothing the workbench knows."""
    path = config_path()
    try:
        text = path.read_text("utf-8")
        return f"{path}:{':'.join(map(str, _line_column(text, _value_offsets(text)[key])))}"
    except (OSError, UnicodeDecodeError, ValueError, KeyError):
        return str(path)


def _line_column(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


def _value_offsets(text: str) -> dict[str, int]:
    """Where each top-level key's value starts, in a text that is known to be a JSON object."""
    decoder = json.JSONDecoder()
    whitespace = " \t\n\r"
    offsets: dict[str, int] = {}
    at = len(text) - len(text.lstrip(whitespace + "\ufeff")) + 1  # past the "{"
    while True:
        while text[at] in whitespace or text[at] == ",":
            at += 1
        if text[at] == "}":
            return offsets
        key, at = json.decoder.scanstring(text, at + 1)  # type: ignore[attr-defined]  # exists; typeshed omits it
        while text[at] in whitespace or text[at] == ":":
            at += 1
        offsets[key] = at
        _value, at = decoder.raw_decode(text, at)


def _parse(path: Path, text: str) -> dict[str, Any]:
    try:
        data = json.loads(text.removeprefix("\ufeff"))
    except json.JSONDecodeError as exc:
        raise ConfigProblem(path, f"not valid JSON: {exc.msg}", exc.lineno, exc.colno) from None
    if not isinstance(data, dict):
        stripped = text.lstrip(" \t\n\r\ufeff")
        line, column = _line_column(text, len(text) - len(stripped))
        raise ConfigProblem(path, f"expected a JSON object ({{...}}), found {_kind(data)}", line, column)
    return data


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"{str(value).lower()} (a boolean)"
    if isinstance(value, (int, float)):
        return f"{value!r} (a number)"
    if isinstance(value, str):
        return f"{value!r} (a string)"
    return "an array" if isinstance(value, list) else "an object"


def _check(path: Path, data: dict[str, Any], text: str | None) -> Config:
    known: dict[str, Any] = {}
    for key, value in data.items():
        if key not in KNOWN:
            continue
        if value is not None and not _fits(key, value):
            line = column = None
            if text is not None:
                line, column = _line_column(text, _value_offsets(text)[key])
            raise ConfigProblem(path, f'"{key}" must be {KNOWN[key]} (or null), found {_kind(value)}', line, column)
        known[key] = value
    return Config(**known, extra={k: v for k, v in data.items() if k not in KNOWN})


def load_config() -> Config:
    """The config file as a Config: the defaults when there is no file. Raises ConfigProblem."""
    path = config_path()
    try:
        text = path.read_text("utf-8")
    except FileNotFoundError:
        return Config()
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigProblem(path, f"cannot be read: {getattr(exc, 'strerror', None) or exc}") from None
    return _check(path, _parse(path, text), text)


def save_config(config: Config) -> None:
    """Write the config file (atomically): the set fields and every unknown key."""
    folder = config_dir()
    folder.mkdir(parents=True, exist_ok=True)
    atomic_write(folder / CONFIG_FILE, json.dumps(config.to_dict(), indent=2, ensure_ascii=False) + "\n")


def write_config(**changes: Any) -> Config:
    """Change some keys of the config file and keep the rest (None removes a key).
    Raises ConfigProblem when the file on disk is broken (it is not overwritten)
    or a known key gets a value of the wrong type."""
    data = load_config().to_dict()
    for key, value in changes.items():
        if value is None:
            data.pop(key, None)
        else:
            data[key] = value
    updated = _check(config_path(), data, None)
    save_config(updated)
    return updated


def bundled(folder: str) -> Path | None:
    """A folder shipped with the workbench (themes/, demo/): the copy installed
    inside the package (workbench/_bundled/, made at build time), else the one at
    the root of a source checkout (an editable install)."""
    package = Path(__file__).resolve().parent
    installed = package / "_bundled" / folder
    if installed.is_dir():
        return installed
    checkout = package.parent
    candidate = checkout / folder
    if candidate.is_dir() and (checkout / "pyproject.toml").is_file():
        return candidate
    return None


__all__ = [
    "APP_NAME",
    "Config",
    "ConfigProblem",
    "bundled",
    "config_dir",
    "config_path",
    "load_config",
    "save_config",
    "write_config",
]
