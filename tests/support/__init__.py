"""How the tests start the workbench's command line: `cli.workbench` runs it in the test's own process
(click's CliRunner) wherever a real process does not matter; `process` starts a real `python -m
workbench` where one does (signals, kills, the terminal, a process looked for among the machine's,
exit codes as a shell sees them). tests/test_suite_itself.py checks that no test starts one otherwise."""
