#!/usr/bin/env bash
# Run the kit's own tests (installs first when needed).  Extra arguments go to pytest.
#   bash scripts/test.sh            everything (what CI runs): prints the 25 slowest tests and the time per file
#   bash scripts/test.sh --quick    the tests that need no broker, Spark or browser, for iterating; a test that
#                                   would start a broker or Spark without its mark fails there (conftest.py)
set -euo pipefail
cd "$(dirname "$0")/.."
quick=()
if [ "${1:-}" = "--quick" ]; then
    shift
    quick=(-m "not broker and not spark and not browser")
    export MQCONFORM_QUICK=1
fi
bash scripts/setup.sh --install
export HYPOTHESIS_PROFILE=${HYPOTHESIS_PROFILE:-ci}
set +e
# One worker more than the cores: a broker test waits on its broker more than it computes (a RabbitMQ run keeps
# about a third of a core busy), and the spare worker keeps the cores busy meanwhile.
workers=$(( $(nproc) + 1 ))
.venv/bin/python -m pytest -n "$workers" -p no:cacheprovider --durations=25 "${quick[@]}" tests "$@"
rc=$?
set -e
if [ "$rc" -eq 5 ]; then
    echo "test: no tests were collected" >&2
    exit 1
fi
exit "$rc"
