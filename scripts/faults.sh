#!/usr/bin/env bash
# Seed-stable detection, measured: every fault of the simulated queue manager's catalogue run with seeds 1-5
# at the default budget; per fault, how many seeds found it and with which rule first (conformance/bench/faults.py).
# A benchmark, run by hand or on a schedule; not part of CI.  Options are passed on:
#   bash scripts/faults.sh [--seeds 1-5] [--jobs 2] [--faults a,b] [--whole] [--examples N] [--json FILE]
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --install > /dev/null
exec .venv/bin/python -m conformance.bench.faults "$@"
