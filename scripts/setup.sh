#!/usr/bin/env bash
# Set up mqconform in ./.venv and run the main job: a conformance run of the
# simulated queue manager with its summary.
#   bash scripts/setup.sh              # install, then run the main job
#   bash scripts/setup.sh --install    # install only
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
if ! "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
    echo "setup: Python 3.11 or newer is required ($PYTHON)" >&2
    exit 2
fi
if [ ! -x .venv/bin/python ]; then
    "$PYTHON" -m venv .venv
fi
stamp=.venv/.mqconform-installed
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
    .venv/bin/python -m pip install --quiet --disable-pip-version-check -e . 2>&1 \
        | grep -v "^WARNING: Location" || true
    .venv/bin/python -c "import conformance, hypothesis, attrs, tabulate, pyspark" \
        || { echo "setup: installation failed" >&2; exit 2; }
    touch "$stamp"
fi

bash scripts/system-packages.sh

if [ "${1:-}" = "--install" ]; then
    exit 0
fi
exec .venv/bin/mqconform run --adapter simulated --seed "${MQCONFORM_SEED:-20261122}"
