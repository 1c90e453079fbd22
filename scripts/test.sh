#!/usr/bin/env bash
# Run the kit's own tests (installs first when needed).  Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --install
export HYPOTHESIS_PROFILE=${HYPOTHESIS_PROFILE:-ci}
set +e
.venv/bin/python -m pytest -n 2 -p no:cacheprovider --durations=15 tests "$@"
rc=$?
set -e
if [ "$rc" -eq 5 ]; then
    echo "test: no tests were collected" >&2
    exit 1
fi
exit "$rc"
