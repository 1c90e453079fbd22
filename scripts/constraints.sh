#!/usr/bin/env bash
# Write constraints.txt from the packages in .venv: after a deliberate upgrade
# (.venv/bin/python -m pip install -U hypothesis ...), so that every machine installs what was measured.
# Then run the whole suite: seeds chosen by measurement may draw other cases under another Hypothesis.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x .venv/bin/python ] || { echo "constraints: no .venv here; run bash scripts/setup.sh --install first" >&2; exit 2; }
header=$(grep '^#' constraints.txt)
pinned=$(.venv/bin/python -m pip freeze --exclude-editable --disable-pip-version-check | grep -v '^#')
printf '%s\n%s\n' "$header" "$pinned" > constraints.txt
echo "constraints: $(printf '%s\n' "$pinned" | wc -l) packages written to constraints.txt"
