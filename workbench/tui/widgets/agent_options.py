"""The agent and judge of a run, as the Runs and History screens both ask for
them: fields that become the same RunRequest fields the CLI's
flags do. The choices come from the executor and judge registries; the judge
shown first is the pipeline's default (the config's judge for a real agent)."""

from __future__ import annotations

from pathlib import Path

from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import Input, Select

from workbench import pipeline
from workbench.errors import WorkbenchError
from workbench.grading import judges
from workbench.runs import executors, sandbox


class AgentOptions(Vertical):
    """Two rows, so that they fit 80 columns: the choices, then the two commands."""

    def compose(self) -> ComposeResult:
        # What the pipeline would choose by itself: the config's executor and judge, else the demo pair.
        try:
            chosen = pipeline.defaults(pipeline.RunRequest(Path(".")))
            executor, judge = chosen.executor or "demo", chosen.judge.name or "demo"
        except WorkbenchError:  # a broken config file: the app said so when it started
            executor, judge = "demo", "demo"
        with Horizontal(classes="run-options"):
            yield Select(
                [(n, n) for n in executors.NAMES], value=executor, allow_blank=False, id="executor", tooltip="The agent"
            )
            yield Input(placeholder="model", id="model", tooltip="Model for the claude and codex executors")
            yield Select(
                [(f"judge: {n}", n) for n in judges.NAMES],
                value=judge,
                allow_blank=False,
                id="judge",
                tooltip="Who grades rubrics and expectations (demo: offline heuristic, not a model)",
            )
            yield Input(
                f"{pipeline.DEFAULT_CHECK_TIMEOUT:g}",
                placeholder="check s",
                id="check-timeout",
                type="number",
                tooltip="Seconds per command_check cell or chock replay before it is killed",
            )
        with Horizontal(classes="run-options"):
            yield Input(
                placeholder="agent command (with the command executor)",
                id="agent-command",
                tooltip="With the command executor: the command that runs the agent",
            )
            yield Input(
                placeholder="judge command (with the command judge)",
                id="judge-command",
                tooltip='With the command judge: the prompt on stdin, {"passed", "evidence"} on stdout',
            )
            yield Select(
                [(f"sandbox: {n}", n) for n in sandbox.CHOICES],
                value=sandbox.AUTO,
                allow_blank=False,
                id="sandbox",
                tooltip="Run agents in bubblewrap (read-only system, private home and /tmp, nothing survives the "
                "run); auto: when it works here, else none with a warning",
            )

    def on_mount(self) -> None:
        self.query_one("#check-timeout", Input).border_title = "check"

    @on(Select.Changed, "#executor")
    def executor_changed(self, event: Select.Changed) -> None:
        # The demo agent pairs with the demo judge; a real agent with the configured judge.
        try:
            judge = pipeline.default_judge(str(event.value))
        except WorkbenchError:  # a broken config file: the app said so when it started
            judge = "claude"
        self.query_one("#judge", Select).value = judge if judge in judges.NAMES else "claude"

    def text(self, widget_id: str) -> str | None:
        return self.query_one(f"#{widget_id}", Input).value.strip() or None

    def fields(self) -> dict:
        """RunRequest fields: executor, agent_command, model, judge, check_timeout, sandbox."""
        timeout = self.text("check-timeout")
        return {
            "executor": str(self.query_one("#executor", Select).value),
            "agent_command": self.text("agent-command"),
            "model": self.text("model"),
            "judge": pipeline.JudgeChoice(str(self.query_one("#judge", Select).value), self.text("judge-command")),
            "check_timeout": float(timeout) if timeout else pipeline.DEFAULT_CHECK_TIMEOUT,
            "sandbox": str(self.query_one("#sandbox", Select).value),
        }
