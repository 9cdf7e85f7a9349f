"""Names vulture (the dead-code check, tests/run.sh) cannot see used: each is read by a framework or by
data, not by a call in the code. A name here needs its reason; dead code is deleted."""

# ruff: noqa
# Registered by their modules (EXECUTORS.register, JUDGES.register): looked up by name.
ClaudeExecutor, CodexExecutor, CommandExecutor, DemoExecutor
ClaudeJudge, CommandJudge, DemoJudge, AnthropicJudge
# Read by the HTML report's Jinja template (grading/templates/report.html.j2).
conversation_note, outputs_note, diff_note
# Serialized with dataclasses.asdict: a record's fields (transcript, budget stop).
duration_ms, spent_usd, next_usd, limit_dispatches
# Attributes libraries read: ruamel's preserve_quotes, shlex's whitespace_split, re2's log_errors.
preserve_quotes, whitespace_split, log_errors
# Textual reads these on its widgets and apps.
CSS_PATH, can_focus, can_focus_children, BUTTON_INNER, show_root, guide_depth, allow_expand
# Textual calls these with arguments the override need not read.
parameters, viewport
# Python calls a module's __getattr__ for a name it lacks (PEP 562: workbench/app/offered.py's PROPOSERS).
__getattr__
# Click calls a decorator's __call__, and a Group's list_commands and get_command (cli/main.py, the lazy group).
__call__, list_commands, get_command
# workbench/tui/compat.py: Textual's private attributes it sets, and the canary's list of overrides.
_value, _updates, _disabled, private_methods
# Called by tests only, as a way in: the session's rescue of unsaved edits (tests/test_save_safety.py),
# the diff scope measured of a folder (tests/test_git_inert.py), the benchmark cache read alone.
rescue, measure, results_from_benchmark
