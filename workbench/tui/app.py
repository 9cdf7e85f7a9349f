"""The Textual app: themes, the command palette, quitting safely, and screens."""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from textual import events, work
from textual.app import App, SystemCommand
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Input, TextArea

from workbench.config import ConfigProblem, load_config, write_config
from workbench.session import SaveConflict, SkillFile, SkillSession
from workbench.tui import collector
from workbench.tui.keystrokes import Keystrokes
from workbench.tui.screens.dialogs import DISCARD, SAVE_ALL, QuitDialog, flow
from workbench.tui.screens.editor import EditorScreen
from workbench.tui.screens.picker import LoadingScreen, SkillPicker
from workbench.tui.themes import load_themes

if TYPE_CHECKING:
    from rich.console import RenderableType

DEFAULT_THEME = "workbench-dark"
# Seconds from the editor's opening: the collector never stays paused, whatever the editor shows. Long: on a
# busy machine the first form may take seconds, and a freeze before it exists would leave the form walked by
# every full collection (a file shown as text ends the start-up itself: EditorScreen.ShownAsText).
START_OVER_AT_THE_LATEST = 30.0


class WorkbenchApp(App[None]):
    CSS_PATH = Path(__file__).parent / "workbench.tcss"  # absolute: subclasses elsewhere find it too
    TITLE = "Skill Workbench"
    BINDINGS = [
        Binding("ctrl+q", "quit", "Quit", tooltip="Quit (asks first if anything is unsaved)", id="quit", priority=True),
        Binding(
            "alt+s",
            "save_all",
            "Save all",
            tooltip="Save every file with unsaved edits (each atomic; keeps your formatting)",
            id="save-all",
            priority=True,
        ),
        Binding(
            "ctrl+t",
            "latest_results",
            "Results",
            tooltip="Review the graded runs of the latest iteration",
            id="latest-results",
        ),
    ]

    def __init__(self, skills: list[Path], watch: bool = True, blink: bool = True) -> None:
        super().__init__()
        self.skills = skills
        self.watch_files = watch
        self.blink = blink  # off for snapshots: a blinking cursor makes screenshots differ
        self.session: SkillSession | None = None
        self.rescued: list[Path] = []  # where unsaved edits went (rescue files), said on the terminal at exit
        self._rescued_texts: dict[str, str] = {}  # what was rescued, per file: not written twice
        self.quit_confirmed = False  # the quit dialog's "Quit without saving" was chosen
        self.keystrokes = Keystrokes(self)  # every key handled to its end before the next (keystrokes.py)
        self._start_up_over = False  # start-up is over (start_up_over())

    async def on_event(self, event: events.Event) -> None:
        if self.keystrokes.take(event):
            return  # a key from the terminal: it waits its turn
        await super().on_event(event)

    def on_mount(self) -> None:
        themes, problems = load_themes()
        for theme in themes:
            self.register_theme(theme)
        for problem in problems:
            self.notify(problem, title="Theme skipped", severity="warning")
        try:
            wanted = load_config().theme or DEFAULT_THEME
        except ConfigProblem as exc:  # said, not ignored; the app still opens
            self.notify(str(exc), title="Config file not used", severity="error", timeout=30)
            wanted = DEFAULT_THEME
        self.theme = (
            wanted
            if wanted in self.available_themes
            else DEFAULT_THEME
            if DEFAULT_THEME in self.available_themes
            else self.theme
        )
        self._theme_ready = True
        self._catch_signals()
        if len(self.skills) == 1:
            self.open_skill(self.skills[0])
        else:
            collector.resume_collector()  # a person chooses: the pause would have no end in sight
            self.push_screen(SkillPicker(self.skills), self.open_skill)

    def open_skill(self, root: Path | None) -> None:
        if root is None:
            self.exit()
            return
        self.sub_title = str(root)
        self.push_screen(LoadingScreen(root))
        self.load_session(root)

    @work(thread=True, exclusive=True, group="load", exit_on_error=False)
    def load_session(self, root: Path) -> None:
        """Read and validate the skill off the UI thread: a 10,000-case suite takes
        seconds, and the app stays responsive (and quittable) meanwhile."""
        try:
            session = SkillSession(root)
        except Exception as exc:  # noqa: BLE001 - whatever it is, the loading screen must end and say it
            self.call_from_thread(self._show_load_error, root, exc)
            return
        self.call_from_thread(self._show_session, session)

    def improve_from(self, session: SkillSession, iteration: Path, configuration: str) -> None:
        """The History screen, proposing the next version from these runs' failures (the Results screen's i)."""
        from workbench.tui.screens.history import HistoryScreen

        self.push_screen(HistoryScreen(session, improve_from=(iteration, configuration)))

    def _show_load_error(self, root: Path, exc: Exception) -> None:
        self.start_up_over()
        if isinstance(self.screen, LoadingScreen):
            self.screen.failed(f"{type(exc).__name__}: {exc}")

    def _show_session(self, session: SkillSession) -> None:
        self.session = session
        self.switch_screen(EditorScreen(session, watch=self.watch_files))
        self.set_timer(START_OVER_AT_THE_LATEST, self.start_up_over)

    def on_editor_screen_shown_as_text(self) -> None:
        self.start_up_over()

    def on_form_view_rendered(self) -> None:
        self.apply_blink()
        self.start_up_over()

    def start_up_over(self) -> None:
        """Start-up is over: the first form is built, or the load failed. What it built lives as
        long as the app (the 1,000-case bench suite and its form: ~250,000 objects): frozen, the
        collector never walks it again, mid-keystroke or mid-switch. The collector, paused since
        the process started (workbench/tui/collector.py), collects again from here."""
        if self._start_up_over:
            return
        self._start_up_over = True
        collector.resume_collector()

    def apply_blink(self) -> None:
        if not self.blink:
            for widget in self.screen.query("Input, TextArea"):
                if isinstance(widget, (Input, TextArea)):
                    widget.cursor_blink = False

    def watch_theme(self, theme: str) -> None:
        if getattr(self, "_theme_ready", False):
            try:
                write_config(theme=theme)
            except (ConfigProblem, OSError) as exc:  # a broken file is not overwritten
                self.notify(str(exc), title="Theme choice not saved", severity="error", timeout=30)

    def editor(self) -> EditorScreen | None:
        """The editor under whatever screen is shown (it holds the unsaved edits)."""
        return next((s for s in self.screen_stack if isinstance(s, EditorScreen)), None)

    def action_save_all(self) -> None:
        # Keystrokes lets this key through only once every key typed before it is handled.
        editor = self.editor()
        if editor is None:
            return
        editor.save_all()

    def action_latest_results(self) -> None:
        """The Results screen on the skill's latest iteration, from any screen."""
        from workbench.tui.screens.results import ResultsScreen
        from workbench.workspace import layout

        if self.session is None:
            return
        workspace = layout.default_workspace(self.session.root)
        latest = layout.next_iteration(workspace) - 1
        if latest < 1:
            self.notify("No runs yet: press Ctrl+G in the editor to run the evals.", severity="warning")
            return
        iteration = layout.iteration_dir(workspace, latest)
        shown = self.screen
        if isinstance(shown, ResultsScreen) and shown.iteration == iteration:
            self.notify(f"This is the latest iteration ({iteration.name}).")
            return
        self.push_screen(ResultsScreen(iteration, self.session))

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        # Every described key, the footer's and those it has no room for (its "more…"):
        # the screen's, then the app's own (Quit is Textual's already).
        own = [(b, self) for b in self.BINDINGS if isinstance(b, Binding) and b.id != "quit"]
        for binding, where in [*((b, screen) for b in getattr(screen, "BINDINGS", [])), *own]:
            if isinstance(binding, Binding) and binding.description:
                action = binding.action
                yield SystemCommand(
                    binding.description,
                    f"{binding.tooltip} ({binding.key})",
                    lambda action=action, where=where: self.run_action(action, where),
                )

    def _handle_exception(self, error: Exception) -> None:
        # A bug must not cost the user their edits: write them out first.
        try:
            self.rescue_unsaved()
        finally:
            super()._handle_exception(error)

    def exit(self, result: None = None, return_code: int = 0, message: RenderableType | None = None) -> None:
        # Every way out that is not a confirmed quit rescues first (a confirmed
        # quit saved everything, or was told to discard).
        self.rescue_unsaved()
        super().exit(result, return_code, message)

    def rescue_unsaved(self) -> None:
        """Write each unsaved edit to a rescue file (beside its file, else in the
        config folder) unless the person chose to discard them; `rescued` says
        where, for the terminal once the app has closed. Never raises."""
        session = self.session
        if session is None or self.quit_confirmed:
            return
        for skill_file in session.dirty_files():
            try:
                text = skill_file.unsaved_text()
            except Exception:  # noqa: BLE001 - rescue_one falls back to the typed text
                text = None
            if text is not None and self._rescued_texts.get(skill_file.rel) == text:
                continue  # already rescued as it is
            try:
                target = session.rescue_one(skill_file)
            except Exception:  # noqa: BLE001 - rescuing is best effort; try the next file
                continue
            if target is not None:
                self.rescued.append(target)
                if text is not None:
                    self._rescued_texts[skill_file.rel] = text

    def _signalled(self, signum: int) -> None:
        """SIGTERM or SIGHUP (the terminal closed): rescue, then close."""
        self.rescue_unsaved()
        if signum == signal.SIGHUP:
            # The terminal is gone: Textual's shutdown would write to it, and once its
            # output thread has died on the dead terminal, the 31st write blocks forever
            # (a closed terminal left the process hanging). The edits are safe: leave now.
            os._exit(128 + signum)
        self.exit(return_code=128 + signum)

    def _catch_signals(self) -> None:
        if self.is_headless:  # tests: the test runner keeps its own handlers
            return
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGHUP):
            try:
                loop.add_signal_handler(signum, self._signalled, signum)
            except (NotImplementedError, RuntimeError, ValueError):  # not the main thread, or no such signal here
                pass

    async def action_quit(self) -> None:
        session = self.session
        dirty = session.dirty_files() if session else []
        if session is None or not dirty:
            self.exit()
        elif not isinstance(self.screen, QuitDialog):  # asked already: that question stands
            self._ask_quit(dirty)

    @flow("quit")
    async def _ask_quit(self, dirty: list[SkillFile]) -> None:
        labels = [f.rel + (" (its text does not parse: saved as typed)" if f.raw_problem else "") for f in dirty]
        choice = await self.push_screen_wait(QuitDialog(labels))
        if choice == SAVE_ALL:
            if all(self._save_for_quit(skill_file) for skill_file in dirty):  # else said why; nothing lost
                self.exit()
        elif choice == DISCARD:
            self.quit_confirmed = True
            self.exit()
        # CANCEL: back to editing, nothing lost

    def _save_for_quit(self, skill_file: SkillFile) -> bool:
        assert self.session is not None
        if skill_file.refused:
            return True  # never dirty: it cannot be edited
        try:
            self.session.save(skill_file)
        except SaveConflict:
            self.notify(
                f"{skill_file.rel} changed on disk: save it on its own (ctrl+s) to choose, then quit.",
                title="Not quitting",
                severity="warning",
                timeout=15,
            )
            return False
        except OSError as exc:
            self.notify(
                f"{skill_file.rel} was not saved: {exc.strerror or exc}. Your edits are kept, unsaved.",
                title="Not quitting",
                severity="error",
                timeout=30,
            )
            return False
        return True
