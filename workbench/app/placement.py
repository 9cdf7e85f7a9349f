"""How a flow's agents are held: the one resolution of the sandbox and its network, refused with
its reason when it cannot be. Every flow (run, evaluate, trigger, improve's and optimize's
proposers, draft-cases) and the screens ask here."""

from __future__ import annotations

from typing import TYPE_CHECKING

from workbench.errors import Refused
from workbench.runs import network, sandbox
from workbench.runs.runner import allowed_endpoints

if TYPE_CHECKING:
    from workbench.config import Config
    from workbench.runs.executors.base import Executor


def hold(
    sandbox_choice: str,
    network_choice: str | None = None,
    agent: Executor | None = None,
    config: Config | None = None,
) -> sandbox.Holding:
    """sandbox.choose (flags, then the config, then ours), as Refused when it cannot hold: bwrap asked
    for and unusable, a bad choice, a bad config, or (given the agent) the model API its confined
    network must reach is not an endpoint."""
    try:
        held = sandbox.choose(sandbox_choice, network_choice, config)
        if agent is not None and held.sandbox == sandbox.BWRAP and held.network == network.MODEL:
            allowed_endpoints(agent, held.allow)
    except (ValueError, sandbox.SandboxUnavailable) as exc:
        raise Refused(str(exc)) from None
    return held
