#!/usr/bin/env bash
# A Dask cluster on this machine, to try `workbench run --cluster` (docs/cluster.md):
# one scheduler and two workers, each its own process, started with the plain
# `dask` commands a team runs on its own machines. Ctrl-C stops all three.
#
#   scripts/local-cluster.sh [PORT]          (default 8786)
#   workbench run SKILL_DIR --cluster tcp://127.0.0.1:8786
#
# Run it from an environment where the workbench is installed with its extra
# (pip install 'skill-workbench[cluster]'): the workers import it, and run the
# agent CLIs from their PATH with the credentials of their own environment.
set -euo pipefail
port="${1:-8786}"
dask="${DASK:-dask}"
command -v "$dask" >/dev/null 2>&1 \
  || { echo "no dask command: pip install 'skill-workbench[cluster]'" >&2; exit 2; }

pids=()
stop() { kill "${pids[@]}" 2>/dev/null || true; wait 2>/dev/null || true; }
trap stop EXIT INT TERM

"$dask" scheduler --host 127.0.0.1 --port "$port" --no-dashboard &
pids+=($!)
for _ in $(seq 50); do  # at most 10 s for the scheduler to listen
  (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
  sleep 0.2
done
for _ in 1 2; do
  "$dask" worker "tcp://127.0.0.1:$port" --nworkers 1 --nthreads 2 --no-dashboard &
  pids+=($!)
done
echo "scheduler at tcp://127.0.0.1:$port with two workers; Ctrl-C stops them" >&2
wait
