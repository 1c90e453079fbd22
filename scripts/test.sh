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
.venv/bin/python -m pytest -n 2 -p no:cacheprovider --durations=25 "${quick[@]}" tests "$@"
rc=$?
set -e
if [ "$rc" -eq 5 ]; then
    echo "test: no tests were collected" >&2
    exit 1
fi
exit "$rc"
