#!/usr/bin/env bash
# Run a command with every core kept busy, to show that what it checks does not depend on the machine's speed:
#   bash scripts/load.sh [--hogs N] -- bash scripts/test.sh
# N busy processes (default: one per core, nproc) spin at normal priority for as long as the command runs and
# are stopped by PID when it ends, whatever way it ends.  Exit: the command's own exit code.
set -euo pipefail
hogs=$(nproc)
if [ "${1:-}" = "--hogs" ]; then hogs=$2; shift 2; fi
if [ "${1:-}" = "--" ]; then shift; fi
if [ $# -eq 0 ]; then echo "load: usage: bash scripts/load.sh [--hogs N] -- COMMAND [ARG...]" >&2; exit 2; fi
case "$hogs" in ''|*[!0-9]*) echo "load: --hogs takes a number of processes, not '$hogs'" >&2; exit 2 ;; esac
pids=()
stop() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; }
trap stop EXIT
trap 'exit 130' INT TERM
for _ in $(seq "$hogs"); do
    # a loop of the shell's own arithmetic: no I/O, no file, nothing for the command to wait on
    bash -c 'while :; do :; done' < /dev/null > /dev/null 2>&1 &
    pids+=("$!")
done
echo "load: $hogs busy processes (pids ${pids[*]}) while: $*" >&2
set +e
"$@"
code=$?
set -e
exit "$code"
