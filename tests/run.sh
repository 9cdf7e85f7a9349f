#!/usr/bin/env bash
# Installs everything the test suite needs into .venv and runs the whole suite (--quick: all but the slow).
# This is the README's test command and exactly what CI runs (.ci/run).
set -euo pipefail
cd "$(dirname "$0")/.."

# --quick: every test but those marked slow (pyproject.toml's markers), for the inner loop; the rest of
# the arguments go to pytest. Without it, everything: what CI runs.
selection=()
if [ "${1:-}" = "--quick" ]; then
  shift
  selection=(-m "not slow")
fi

python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
  || { echo "Skill Workbench needs Python 3.11 or newer" >&2; exit 2; }
[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/python -m pip install --quiet --disable-pip-version-check -e '.[test]'

# The real agent CLIs, pinned, for the claude and codex executors' end-to-end
# tests (they run them against scripted local model servers). Cached across
# clones; without npm those tests skip and say why.
install_cli() {  # install_cli PACKAGE VERSION BINARY VARIABLE
  local cache="${XDG_CACHE_HOME:-$HOME/.cache}/skill-workbench/${1##*/}-$2"
  if [ ! -x "$cache/node_modules/.bin/$3" ] && command -v npm >/dev/null 2>&1; then
    mkdir -p "$cache"
    npm install --silent --no-audit --no-fund --prefix "$cache" "$1@$2" >/dev/null 2>&1 \
      || echo "could not install $1 $2 from npm: its tests will skip" >&2
  fi
  if [ -x "$cache/node_modules/.bin/$3" ]; then
    export "$4=$cache/node_modules/.bin/$3"
  fi
}
install_cli @anthropic-ai/claude-code 2.1.332 claude WORKBENCH_TEST_CLAUDE
install_cli @openai/codex 0.171.0 codex WORKBENCH_TEST_CODEX

# Debian packages the tests drive: bubblewrap (the agents' sandbox), tmux (the
# real app in a terminal, typed at human and auto-repeat speed) and chromium (the
# HTML report opened in a real headless browser). Installed quietly
# when missing, only as root with apt; otherwise those tests skip and say why.
install_deb() {  # install_deb PACKAGE COMMAND
  if ! command -v "$2" >/dev/null 2>&1 && [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
    { [ -n "${APT_UPDATED:-}" ] || apt-get update -qq; } >/dev/null 2>&1 && APT_UPDATED=1
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$1" >/dev/null 2>&1 \
      || echo "could not install $1: the tests that need it will skip" >&2
  fi
}
install_deb bubblewrap bwrap
install_deb tmux tmux
install_deb chromium chromium

# House rules: lint, formatting and types are part of passing, so the test command (and CI) enforces them.
.venv/bin/ruff check workbench tests bench
.venv/bin/ruff format --check workbench tests bench
.venv/bin/vulture  # dead code: [tool.vulture] in pyproject.toml, its exceptions in tests/vulture_whitelist.py
# The type check (a minute of one core on a fresh clone, which has no mypy cache) runs beside the
# tests, whose workers spend part of their time waiting on the processes they start; its verdict
# is said after theirs and fails the command as before.
types=$(mktemp)
.venv/bin/mypy >"$types" 2>&1 &
types_pid=$!
# an interrupted run leaves no mypy behind; `|| true`: under set -e a failed kill (mypy already done and
# waited for, as on every finished run) would end the trap, and the command, with status 1 whatever the verdict
trap 'kill "$types_pid" 2>/dev/null || true; rm -f "$types"' EXIT
trap 'exit 130' INT TERM

# The tests run on workers, one a core and one more (pyproject.toml's addopts: -n auto; -n 0 runs
# them in this process). No .pytest_cache is written into the clone.
set +e
.venv/bin/python -m pytest -p no:cacheprovider "${selection[@]}" "$@"
status=$?
wait "$types_pid"
types_status=$?
set -e
cat "$types"
if [ "$types_status" -ne 0 ]; then
  echo "mypy found type errors (above): the tests' verdict does not count until they are fixed" >&2
  exit 1
fi
if [ "$status" -eq 5 ]; then
  echo "pytest collected no tests: that is a failure, not a pass" >&2
  exit 1
fi
exit "$status"
