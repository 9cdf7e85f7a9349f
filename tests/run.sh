#!/usr/bin/env bash
# Installs everything the test suite needs into .venv and runs the whole suite.
# This is the README's test command and exactly what CI runs (.ci/run).
set -euo pipefail
cd "$(dirname "$0")/.."

python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
  || { echo "Skill Workbench needs Python 3.11 or newer" >&2; exit 2; }
[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/python -m pip install --quiet --disable-pip-version-check -e '.[test]'

# The real Claude Code CLI, pinned, for the claude executor's end-to-end tests
# (they run it against a scripted local model server). Cached across clones;
# without npm those tests skip and say why.
CLAUDE_CODE_VERSION=2.1.332
cache="${XDG_CACHE_HOME:-$HOME/.cache}/skill-workbench/claude-code-$CLAUDE_CODE_VERSION"
if [ ! -x "$cache/node_modules/.bin/claude" ] && command -v npm >/dev/null 2>&1; then
  mkdir -p "$cache"
  npm install --silent --no-audit --no-fund --prefix "$cache" "@anthropic-ai/claude-code@$CLAUDE_CODE_VERSION" \
    >/dev/null 2>&1 || echo "could not install Claude Code $CLAUDE_CODE_VERSION from npm: its tests will skip" >&2
fi
if [ -x "$cache/node_modules/.bin/claude" ]; then
  export WORKBENCH_TEST_CLAUDE="$cache/node_modules/.bin/claude"
fi

set +e
.venv/bin/python -m pytest "$@"
status=$?
set -e
if [ "$status" -eq 5 ]; then
  echo "pytest collected no tests: that is a failure, not a pass" >&2
  exit 1
fi
exit "$status"
