#!/usr/bin/env bash
# Set up mqconform in ./.venv and run the main job: a conformance run of the
# simulated queue manager with its summary.
#   bash scripts/setup.sh              # install, then run the main job
#   bash scripts/setup.sh --install    # install only
set -euo pipefail
cd "$(dirname "$0")/.."

# The interpreter of .venv: $PYTHON when set; else the distribution's own /usr/bin/python3 when it is 3.11 or newer
# and can make a venv (Debian's build, statically linked and built with the distribution's optimisations: the kit's
# runs take about 15% less CPU on it than on a python3 built from source without them, as pyenv builds it;
# docs/testing.md); else python3 from PATH.  An existing .venv is kept: remove it to make it again.
if [ -z "${PYTHON:-}" ]; then
    PYTHON=python3
    if [ -x /usr/bin/python3 ] && /usr/bin/python3 -c 'import sys, ensurepip, venv; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
        PYTHON=/usr/bin/python3
    fi
fi
if ! "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
    echo "setup: Python 3.11 or newer is required ($PYTHON)" >&2
    exit 2
fi
if [ ! -x .venv/bin/python ]; then
    echo "setup: making .venv with $PYTHON ($("$PYTHON" -c 'import sys; print(sys.version.split()[0])'))"
    "$PYTHON" -m venv .venv
fi
stamp=.venv/.mqconform-installed
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ] || [ constraints.txt -nt "$stamp" ]; then
    # The versions of constraints.txt (those the suite was measured with).
    # Some 35 packages, about 550 MB (PySpark is most of it): 1-2 minutes on a first install.
    echo "setup: step 1 of 3: Python packages into .venv (first install: about 35 packages, 550 MB, 1-2 min)"
    started=$SECONDS
    .venv/bin/python -m pip install --disable-pip-version-check --progress-bar off -c constraints.txt -e ".[all,dev]" 2>&1 \
        | awk '/^Collecting /{n++; printf "setup:   resolving %d: %s\n", n, $2; fflush()}
              /^Successfully installed/{print "setup:   installed " NF - 2 " packages"; fflush()}
              /^ERROR/{print; fflush()}' || true
    .venv/bin/python -c "import conformance, hypothesis, attrs, tabulate, pyspark" \
        || { echo "setup: installation failed" >&2; exit 2; }
    touch "$stamp"
    echo "setup: step 1 done in $((SECONDS - started)) s"
else
    echo "setup: step 1 of 3: Python packages: already installed"
fi

echo "setup: step 2 of 3: Debian packages (Java, Chromium, RabbitMQ, ActiveMQ, nodejs, Go; first install: 1-3 min)"
bash scripts/system-packages.sh

if [ "${1:-}" = "--install" ]; then
    exit 0
fi
echo "setup: step 3 of 3: the main job, a conformance run of the simulated queue manager"
exec .venv/bin/mqconform run --adapter simulated --seed "${MQCONFORM_SEED:-20261122}"
