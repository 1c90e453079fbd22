#!/usr/bin/env bash
# Run the kit's own tests (installs first when needed).  Extra arguments go to pytest.
#   bash scripts/test.sh            everything (what CI runs): prints the 25 slowest tests and the time per file
#   bash scripts/test.sh --quick    the tests that need no broker, Spark or browser, for iterating; a test that
#                                   would start a broker or Spark without its mark fails there (conftest.py)
#   bash scripts/test.sh --write-durations   everything, and each test's seconds and CPU seconds written to tests/data/durations.json
#                                   (the workers take the longest tests first: tests/xdist_groups.py)
set -euo pipefail
cd "$(dirname "$0")/.."
quick=()
if [ "${1:-}" = "--write-durations" ]; then
    shift
    export MQCONFORM_WRITE_DURATIONS=$PWD/tests/data/durations.json
elif [ "${1:-}" = "--quick" ]; then
    shift
    quick=(-m "not broker and not spark and not browser")
    export MQCONFORM_QUICK=1
fi
# One worker more than the cores: a third of the suite's time is spent waiting on brokers, Spark and the clock,
# and a third worker on two cores fills it (measured in docs/testing.md: 878 s with two, 693 s with three, 702 s
# and a test starved of CPU with four).  MQCONFORM_TEST_WORKERS sets another number.  --dist loadgroup: the tests
# of a broker's mapping share one broker, on one worker (conftest.py).
workers=${MQCONFORM_TEST_WORKERS:-$(( $(nproc) + 1 ))}
case "$workers" in ''|0|*[!0-9]*) echo "test: MQCONFORM_TEST_WORKERS takes a number of workers, 1 or more, not '$workers'" >&2; exit 2 ;; esac
bash scripts/setup.sh --install
unset PYTHONDONTWRITEBYTECODE
export HYPOTHESIS_PROFILE=${HYPOTHESIS_PROFILE:-ci}
set +e
.venv/bin/python -m pytest -n "$workers" --dist loadgroup -p no:cacheprovider --durations=25 "${quick[@]}" tests "$@"
rc=$?
set -e
if [ "$rc" -eq 5 ]; then
    echo "test: no tests were collected" >&2
    exit 1
fi
exit "$rc"
