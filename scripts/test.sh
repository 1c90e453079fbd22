#!/usr/bin/env bash
# Run the kit's own tests (installs first when needed).  Extra arguments go to pytest.
#   bash scripts/test.sh            everything (what CI runs): prints the 25 slowest tests and the time per file
#   bash scripts/test.sh --quick    the tests that need no broker, Spark or browser, for iterating; a test that
#                                   would start a broker or Spark without its mark fails there (conftest.py)
#   bash scripts/test.sh ARGS...    one pytest run of the whole suite with ARGS (-k, -m, a file, ...)
#
# With no arguments the suite runs as two pytest runs side by side, each with two workers: the tests that
# wait on a broker, Spark or a browser (marked broker, spark or browser: mostly real time spent waiting),
# and the others (mostly computing).  Run one after the other, a worker waiting on a broker left a core
# idle; side by side the waiting tests take what the computing ones leave (docs/testing.md).
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
pytest=(.venv/bin/python -m pytest -n 2 -p no:cacheprovider --durations=25)

verdict() {   # a pytest exit code, with "nothing collected" made a failure
    if [ "$1" -eq 5 ]; then
        echo "test: no tests were collected${2:+ ($2)}" >&2
        return 1
    fi
    return "$1"
}

if [ "${#quick[@]}" -gt 0 ] || [ "$#" -gt 0 ]; then
    set +e
    "${pytest[@]}" "${quick[@]}" tests "$@"
    rc=$?
    set -e
    verdict "$rc"
    exit $?
fi

WAITING="broker or spark or browser"
work=$(mktemp -d)
started=$SECONDS
set +e
"${pytest[@]}" --basetemp "$work/waiting" -m "$WAITING" tests > "$work/waiting.log" 2>&1 &
waiting=$!
trap 'kill "$waiting" 2>/dev/null' INT TERM
echo "test: the tests that wait on a broker, Spark or a browser run beside these, their output after them"
"${pytest[@]}" --basetemp "$work/computing" -m "not ($WAITING)" tests
computing_rc=$?
wait "$waiting"
waiting_rc=$?
set -e
echo
echo "==================== the tests that wait on a broker, Spark or a browser ===================="
cat "$work/waiting.log"
rm -rf "$work"
echo "test: both runs ended $((SECONDS - started)) s after they began (computing: exit $computing_rc; waiting: exit $waiting_rc)"
rc=0
verdict "$computing_rc" "computing tests" || rc=1
verdict "$waiting_rc" "waiting tests" || rc=1
exit "$rc"
