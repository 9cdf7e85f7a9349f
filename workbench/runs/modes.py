"""The sandbox and network modes a run can ask for, by name: in a module of their own so that what only
names them (the shared choices, the command line's options) starts without the sandbox and the relay."""

from __future__ import annotations

AUTO, BWRAP, NONE = "auto", "bwrap", "none"  # --sandbox
SANDBOXES = (AUTO, BWRAP, NONE)
MODEL, OPEN = "model", "open"  # --network: the model API only, or the machine's network as it is
NETWORKS = (MODEL, OPEN)
