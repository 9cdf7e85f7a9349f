"""The agent a flow runs: its executor chosen once (the flag, then the config, then the demo), for run,
evaluate and trigger alike, and made, refused with its reason when it cannot be."""

from __future__ import annotations

from typing import TYPE_CHECKING

from workbench.config import where
from workbench.errors import Refused
from workbench.runs import executors
from workbench.validate.diagnostic import did_you_mean

if TYPE_CHECKING:
    from workbench.config import Config


def executor_name(asked: str | None, config: Config) -> str:
    """The flag's executor, else the config's, else the demo. A name from the config that the registry
    does not know is refused, saying the key and the file (the flag's is checked by its parser)."""
    name = asked or config.executor or "demo"
    if not asked and name not in executors.NAMES:
        raise Refused(
            f"{where('executor')}: unknown executor {name!r} in the config file"
            f"{did_you_mean(str(name), executors.NAMES)}; expected one of {', '.join(executors.NAMES)}"
        )
    return name


def make(name: str | None, command: str | None, model: str | None) -> executors.Executor:
    """The executor, or Refused with why not (a command executor without its command, say)."""
    try:
        return executors.make(name or "demo", command, model)
    except ValueError as exc:
        raise Refused(str(exc)) from None
