#!/usr/bin/env bash
# Regenerate the published compliance reports: docs/compliance/BROKER.md with their result
# directories docs/compliance/results/BROKER (run.json, rules.jsonl, the replay files).
#   bash scripts/compliance.sh [rabbitmq|activemq|all]      (default: all)
# Each broker is a private one this script starts on 127.0.0.1 and stops by PID (mqconform brokers),
# run twice with a fixed seed: every area with a fixed budget, then the core area under the nemesis
# (connections cut between calls and in flight, the broker paused, restarted and killed), whose
# rules the first run cannot reach; the report merges the two (docs/compliance/results/BROKER and
# BROKER-nemesis).  Failures docs/compliance/known-deviations.toml explains are shown as known
# deviations; the counterexamples those deviations record (docs/compliance/counterexamples/BROKER) are
# replayed after each area's search of those two runs where it did not find their departures (run --recorded).
# Then every area once more with --adapter-opt mapping=defaults (the broker and its client
# as they install, on a private broker of the run's own: docs/compliance/results/BROKER-defaults; the
# departures that run published before replayed after each area's search, run --recorded), and
# the migration page docs/compliance/BROKER-migration.md: what the defaults break, and which of the
# settings and adapter code the faithful mapping relies on fixes each.  Settings from the environment: MQCONFORM_SEED (default 20261125), MQCONFORM_EXAMPLES
# (cases searched per area, default 60), MQCONFORM_KEEP_GOING (a cap on the rounds after a departure,
# default none), MQCONFORM_NEMESIS_EXAMPLES (cases of the nemesis run, default 15: each restart costs
# seconds), MQCONFORM_RUNS (which of each broker's runs to make again, of "plain nemesis defaults", default
# all three: a change that touches only some of them keeps the others' committed results; the reports are
# made again from all of them; "concurrent" makes the run of concurrent cases: MQCONFORM_CONCURRENT_EXAMPLES cases,
# default 40, of 3 clients at once on the core area, docs/concurrency.md, whose verdicts and races the report
# shows beside the others').
# Exit 0 when the reports were written, 2 when a broker or a run broke (the committed reports are
# then left as they were).
set -euo pipefail
cd "$(dirname "$0")/.."
which=${1:-all}
case "$which" in
    all) brokers=(rabbitmq activemq) ;;
    rabbitmq|activemq) brokers=("$which") ;;
    *) echo "compliance: unknown broker $which (rabbitmq, activemq or all)" >&2; exit 2 ;;
esac
seed=${MQCONFORM_SEED:-20261125}
# Cases searched per area, shared by the rounds after each departure: a broker's known departures come
# first in every round, and each round sets aside what the last found, so that one departure does not keep
# the others (or the rules about faults under the nemesis) from being reached.
examples=${MQCONFORM_EXAMPLES:-60}
nemesis_examples=${MQCONFORM_NEMESIS_EXAMPLES:-15}
# A cap on the rounds after a departure (default: until the cases are spent).
rounds=()
if [ -n "${MQCONFORM_KEEP_GOING:-}" ]; then rounds=(--keep-going "$MQCONFORM_KEEP_GOING"); fi
concurrent_examples=${MQCONFORM_CONCURRENT_EXAMPLES:-40}
runs=" ${MQCONFORM_RUNS:-plain nemesis defaults concurrent} "
for r in $runs; do
    case "$r" in
        plain|nemesis|defaults|concurrent) ;;
        *) echo "compliance: unknown run $r in MQCONFORM_RUNS (plain, nemesis, defaults or concurrent)" >&2; exit 2 ;;
    esac
done
bash scripts/setup.sh --install
mq=.venv/bin/mqconform
work=$(mktemp -d)
export MQCONFORM_RUN_DIR="$work/brokers"
running=
cleanup() {
    trap '' INT TERM   # a second signal must not cut the clean-up short
    if [ -n "$running" ]; then kill "$running" 2>/dev/null; wait "$running" 2>/dev/null; fi
    for b in "${brokers[@]}"; do timeout 60 "$mq" brokers down "$b" >/dev/null 2>&1 || true; done
    rm -rf "$work"
}
trap cleanup EXIT
trap "exit 130" INT TERM
mkdir -p docs/compliance/results
# run NAME ARGS...: one run of the kit into $work/NAME (its output in $work/NAME.txt).
run() {
    local name=$1
    shift
    echo "compliance: $name: mqconform run $* (output: $work/$name.txt)"
    # In the background with a wait, so that a signal to this script stops the run at once (bash runs
    # a trap only after the foreground command ends); the run writes what it found and exits 130.
    set +e
    timeout 3600 "$mq" run "$@" --seed "$seed" --results "$work/$name" > "$work/$name.txt" 2>&1 < /dev/null &
    running=$!
    wait "$running"
    rc=$?
    running=
    set -e
    grep -E '^  [a-z]+ on [a-z/]+: ' "$work/$name.txt" || true
    if [ "$rc" -ne 0 ] && [ "$rc" -ne 1 ]; then
        echo "compliance: $name: the run ended with exit $rc: $(tail -n 1 "$work/$name.txt")" >&2
        exit 2
    fi
}
for b in "${brokers[@]}"; do
    made=()
    # (the plain and nemesis runs share the broker the script starts; the defaults run starts its own)
    shared=
    if [[ $runs == *" plain "* || $runs == *" nemesis "* || $runs == *" concurrent "* ]]; then shared=yes; fi
    if [ -n "$shared" ]; then
        echo "compliance: $b: starting the kit's private broker"
        timeout 120 "$mq" brokers up "$b"
    fi
    # Restarts only in the nemesis run (unbounded there): the first and the defaults run make none, not the few
    # a run on a broker the kit started makes by default, so that each run's verdicts cover what they always did.
    # The counterexamples the known deviations record, replayed after each area's search where it did not find
    # their departures (run --recorded): a departure the search missed this time is still this run's evidence
    # where the broker shows it again, and a verdict does not move for the search's path alone.
    recorded=()
    if [ -d "docs/compliance/counterexamples/$b" ]; then recorded=(--recorded "docs/compliance/counterexamples/$b"); fi
    if [[ $runs == *" plain "* ]]; then
        run "$b" --adapter "$b" --examples "$examples" "${rounds[@]}" "${recorded[@]}" --adapter-opt restart=off
        made+=("$b")
    fi
    if [[ $runs == *" nemesis "* ]]; then
        run "$b-nemesis" --adapter "$b" --area core --examples "$nemesis_examples" "${rounds[@]}" "${recorded[@]}" \
            --adapter-opt nemesis=on --adapter-opt restart=on
        made+=("$b-nemesis")
    fi
    # Concurrent cases: 3 clients at once, each on its own connection (no restarts, no nemesis).
    if [[ $runs == *" concurrent "* ]]; then
        run "$b-concurrent" --adapter "$b" --area core --concurrency 3 --examples "$concurrent_examples" \
            "${rounds[@]}"
        made+=("$b-concurrent")
    fi
    if [ -n "$shared" ]; then timeout 60 "$mq" brokers down "$b" >/dev/null; fi
    # The broker and client as they install: with no broker running, the run starts its own, configured as
    # the broker installs (ActiveMQ: no priority dispatch, expired messages dead-lettered).
    # Its own departures published before are replayed after each area's search (run --recorded), as the known
    # deviations' are for the runs above: what the defaults break does not move with the search's path alone.
    if [[ $runs == *" defaults "* ]]; then
        before=()
        if compgen -G "docs/compliance/results/$b-defaults/failures/*.json" > /dev/null; then
            mkdir -p "$work/$b-defaults-before"
            cp docs/compliance/results/"$b"-defaults/failures/*.json "$work/$b-defaults-before/"
            before=(--recorded "$work/$b-defaults-before")
        fi
        run "$b-defaults" --adapter "$b" --examples "$examples" "${rounds[@]}" "${before[@]}" \
            --adapter-opt mapping=defaults --adapter-opt restart=off
        made+=("$b-defaults")
    fi
    for name in "${made[@]}"; do
        rm -rf "docs/compliance/results/$name"
        cp -r "$work/$name" "docs/compliance/results/$name"
    done
    "$mq" report "docs/compliance/results/$b" "docs/compliance/results/$b-nemesis" \
        "docs/compliance/results/$b-concurrent" --format md --report-only \
        --known-deviations docs/compliance/known-deviations.toml --out "docs/compliance/$b.md"
    "$mq" report "docs/compliance/results/$b" "docs/compliance/results/$b-nemesis" \
        "docs/compliance/results/$b-defaults" --format migration --report-only \
        --known-deviations docs/compliance/known-deviations.toml --out "docs/compliance/$b-migration.md"
done
