"""The agent and judge of a run, as the Runs and History screens both ask for
them: fields that become the same RunRequest fields the CLI's
flags do. The choices come from the executor and judge registries; the judge
shown first is the pipeline's default (the config's judge for a real agent)."""

from __future__ import annotations

from pathlib import Path

from textual import on
from textual.app import ComposeResult
from textual.containers import Container, Vertical
from textual.widget import Widget
from textual.widgets import Input, Label, Select

from workbench.app import offered, pipeline
from workbench.app.choices import Agent, Judge, Placement
from workbench.config import load_config
from workbench.errors import WorkbenchError
from workbench.tui.widgets.keys import OrderedInput


class Labelled(Vertical):
    """A field under its name: a label one line high over a one-line (compact) widget,
    so a form of many fields fits 80x24 and still says what each field is."""

    def __init__(self, label: str, widget: Widget, wide: bool = False) -> None:
        super().__init__(classes="labelled wide" if wide else "labelled")
        self.label, self.widget = label, widget

    def compose(self) -> ComposeResult:
        yield Label(self.label, classes="field-name")
        yield self.widget


class OptionGrid(Container):
    """Labelled fields in as many columns as the screen is wide (workbench.tcss:
    three below 100 columns, four below 140, six above): rows wrap, nothing is cut."""


def network_by_default() -> str:
    """The config's network for sandboxed agents, else model."""
    try:
        return load_config().network or offered.NETWORK_DEFAULT
    except WorkbenchError:  # a broken config file: the app said so when it started
        return offered.NETWORK_DEFAULT


def chosen_by_default() -> tuple[str, str]:
    """What the pipeline would choose by itself: the config's executor and judge, else the demo pair."""
    try:
        chosen = pipeline.defaults(pipeline.RunRequest(Path(".")))
        return chosen.agent.executor or "demo", chosen.judge.name or "demo"
    except WorkbenchError:  # a broken config file: the app said so when it started
        return "demo", "demo"


class AgentOptions(OptionGrid):
    def compose(self) -> ComposeResult:
        executor, judge = chosen_by_default()
        yield Labelled(
            "Agent",
            Select(
                [(n, n) for n in offered.executor_names()],
                value=executor,
                allow_blank=False,
                id="executor",
                tooltip="The agent that runs each eval",
                compact=True,
            ),
        )
        yield Labelled(
            "Model",
            OrderedInput(
                placeholder="agent's default",
                id="model",
                tooltip="Model for the claude and codex executors",
                compact=True,
            ),
        )
        yield Labelled(
            "Judge",
            Select(
                [(n, n) for n in offered.judge_names()],
                value=judge,
                allow_blank=False,
                id="judge",
                tooltip="Who grades rubrics and expectations (demo: offline heuristic, not a model)",
                compact=True,
            ),
        )
        yield Labelled(
            "Sandbox",
            Select(
                [(n, n) for n in offered.SANDBOXES],
                value=offered.SANDBOX_DEFAULT,
                allow_blank=False,
                id="sandbox",
                tooltip="Run agents in bubblewrap (read-only system, private home and /tmp, nothing survives the "
                "run); auto: when it works here, else none with a warning",
                compact=True,
            ),
        )
        yield Labelled(
            "Network",
            Select(
                [(n, n) for n in offered.NETWORKS],
                value=network_by_default(),
                allow_blank=False,
                id="network",
                tooltip="What a sandboxed agent reaches: model: its model API only; open: any host and every "
                "service of this machine (said on the run)",
                compact=True,
            ),
        )
        yield Labelled(
            "Check timeout (s)",
            OrderedInput(
                f"{pipeline.DEFAULT_CHECK_TIMEOUT:g}",
                id="check-timeout",
                type="number",
                tooltip="Seconds per command_check cell or chock replay before it is killed",
                compact=True,
            ),
        )
        yield Labelled(
            "Agent command",
            OrderedInput(
                placeholder="with the command agent",
                id="agent-command",
                tooltip="With the command executor: the command that runs the agent",
                compact=True,
            ),
            wide=True,
        )
        yield Labelled(
            "Judge command",
            OrderedInput(
                placeholder="with the command judge",
                id="judge-command",
                tooltip='With the command judge: the prompt on stdin, {"passed", "evidence"} on stdout',
                compact=True,
            ),
            wide=True,
        )

    @on(Select.Changed, "#executor")
    def executor_changed(self, event: Select.Changed) -> None:
        # The demo agent pairs with the demo judge; a real agent with the configured judge.
        try:
            judge = pipeline.default_judge(str(event.value))
        except WorkbenchError:  # a broken config file: the app said so when it started
            judge = "claude"
        self.query_one("#judge", Select).value = judge if judge in offered.judge_names() else "claude"

    def text(self, widget_id: str) -> str | None:
        return self.query_one(f"#{widget_id}", Input).value.strip() or None

    def fields(self) -> dict:
        """RunRequest fields: the agent, the judge, check_timeout."""
        timeout = self.text("check-timeout")
        return {
            "agent": Agent(
                str(self.query_one("#executor", Select).value), self.text("agent-command"), self.text("model")
            ),
            "judge": Judge(str(self.query_one("#judge", Select).value), self.text("judge-command")),
            "check_timeout": float(timeout) if timeout else pipeline.DEFAULT_CHECK_TIMEOUT,
        }

    def placement(self, workspace: Path | None = None, cluster: str | None = None) -> Placement:
        """The sandbox and its network chosen here, with the screen's workspace and cluster."""
        sandboxed = str(self.query_one("#sandbox", Select).value)
        return Placement(sandboxed, str(self.query_one("#network", Select).value), cluster, workspace)
