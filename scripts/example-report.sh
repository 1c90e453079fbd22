#!/usr/bin/env bash
# Regenerate the example compliance report in docs/reports/: the simulated queue manager
# with and without a fault, beside the published results of the real brokers
# (docs/compliance/results, from scripts/compliance.sh), every area, side by side.
#   bash scripts/example-report.sh
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --install
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
seed=${MQCONFORM_SEED:-20261122}
examples=${MQCONFORM_EXAMPLES:-40}
.venv/bin/mqconform run --adapter simulated --seed "$seed" --examples "$examples" \
    --results "$work/simulated" > /dev/null
.venv/bin/mqconform run --adapter simulated --faults priority-ignored --area core --seed "$seed" \
    --examples "$examples" --results "$work/simulated-priority-ignored" > /dev/null || true
mkdir -p docs/reports
for fmt in md html; do
    .venv/bin/mqconform report "$work/simulated" "$work/simulated-priority-ignored" \
        docs/compliance/results/rabbitmq docs/compliance/results/activemq --format "$fmt" \
        --known-deviations docs/compliance/known-deviations.toml --out "docs/reports/example.$fmt" --report-only
done
# the replay paths in the report point into the temporary directory: show them relative instead
sed -i "s#$work/#results/#g" docs/reports/example.md docs/reports/example.html
