#!/usr/bin/env bash
# Show that a seed fixes a run's verdicts: run the same adapter with the same seed
# several times and compare the verdict of every rule.  Exit 0 when all runs agree.
# Each run leaves a trace (MQCONFORM_TRACE); when a run's verdicts differ from the first run's,
# `mqconform compare-traces` says where the two runs parted and whether the system (the same
# operation answered otherwise) or the kit (another operation after the same answers) made them part.
#   bash scripts/same-seed.sh [ADAPTER] [TIMES]        (default: rabbitmq 5)
# Extra settings from the environment: MQCONFORM_SEED, MQCONFORM_EXAMPLES, MQCONFORM_AREAS, MQCONFORM_KEEP_GOING,
# MQCONFORM_ADAPTER_OPTS (space-separated KEY=VALUE adapter options, e.g. "nemesis=on restart=on");
# MQCONFORM_KEEP=1 keeps every run's output and results (the directory is printed at the end).
# For rabbitmq, activemq or activemq-stomp the broker is started here (mqconform brokers up) and stopped after.
set -euo pipefail
cd "$(dirname "$0")/.."
adapter=${1:-rabbitmq}
times=${2:-5}
seed=${MQCONFORM_SEED:-20261123}
examples=${MQCONFORM_EXAMPLES:-10}
areas=${MQCONFORM_AREAS:-core,expiry}
keep_going=${MQCONFORM_KEEP_GOING:-2}
opts=()
for kv in ${MQCONFORM_ADAPTER_OPTS:-}; do opts+=(--adapter-opt "$kv"); done
broker=${adapter%-stomp}   # activemq and activemq-stomp share the activemq broker
bash scripts/setup.sh --install
work=$(mktemp -d)
export MQCONFORM_RUN_DIR="$work/brokers"
cleanup() {
    case "$broker" in rabbitmq|activemq) timeout 60 .venv/bin/mqconform brokers down "$broker" >/dev/null || true ;; esac
    if [ -n "${MQCONFORM_KEEP:-}" ]; then echo "runs kept in $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT
trap "exit 130" INT TERM
case "$broker" in rabbitmq|activemq) timeout 120 .venv/bin/mqconform brokers up "$broker" ;; esac
for i in $(seq 1 "$times"); do
    set +e
    MQCONFORM_TRACE="$work/trace-$i.jsonl" .venv/bin/mqconform run --adapter "$adapter" --seed "$seed" --examples "$examples" --area "$areas" \
        --keep-going "$keep_going" ${opts[@]+"${opts[@]}"} --results "$work/run-$i" > "$work/out-$i.txt" 2>&1
    rc=$?
    set -e
    if [ "$rc" -eq 2 ]; then
        echo "run $i: error: $(tail -1 "$work/out-$i.txt")" >&2
        exit 2
    fi
    .venv/bin/python -c 'import json, sys
for line in open(sys.argv[1]):
    row = json.loads(line)
    print(row["rule"], row["verdict"])' "$work/run-$i/rules.jsonl" > "$work/verdicts-$i.txt"
    echo "run $i: exit $rc, $(grep -c ' fail$' "$work/verdicts-$i.txt" || true) rules failed, $(grep -c ' pass$' "$work/verdicts-$i.txt" || true) passed"
done
same=0
for i in $(seq 2 "$times"); do
    if ! diff -u "$work/verdicts-1.txt" "$work/verdicts-$i.txt" > "$work/diff-$i.txt"; then
        echo "run $i differs from run 1:"
        grep '^[-+][A-Z]' "$work/diff-$i.txt" || true
        echo "where runs 1 and $i parted:"
        .venv/bin/mqconform compare-traces "$work/trace-1.jsonl" "$work/trace-$i.jsonl" | sed 's/^/  /' || true
        same=1
    fi
done
if [ "$same" -eq 0 ]; then
    echo "all $times runs of adapter $adapter with seed $seed gave the same verdict for every rule"
fi
exit "$same"
