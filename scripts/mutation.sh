#!/usr/bin/env bash
# The kit's power, measured: mutants of the simulated queue manager and the DLQ handler
# (mutmut, from PyPI), each killed when the kit's own machines tell it apart from the model
# (mutation/test_kit_kills.py).  A benchmark, run by hand; not part of CI.
#   bash scripts/mutation.sh
# Settings from the environment:
#   MQCONFORM_MUTATION_SAMPLE    mutants to check, drawn at random (default 300; "all" for every one)
#   MQCONFORM_MUTATION_MINUTES   time box for checking them (default 30)
#   MQCONFORM_MUTATION_SEED      seed of the sample and of the kit's runs (default 7)
#   MQCONFORM_MUTATION_EXAMPLES  cases per area and platform in each kit run (default: the default run's, 200)
#   MQCONFORM_MUTATION_OUT       where the results go (default mutation-results/: results.txt, score.txt,
#                                survivors.diff with each surviving mutant's change)
# Prints the score per file and the surviving mutants; exit 0 when it printed a score, 2 otherwise.
# Mutants that cannot change behaviour go in mutation/equivalent.txt with a reason each.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
out=$(realpath -m "${MQCONFORM_MUTATION_OUT:-mutation-results}")
mkdir -p "$out"
sample=${MQCONFORM_MUTATION_SAMPLE:-300}
minutes=${MQCONFORM_MUTATION_MINUTES:-30}
export MQCONFORM_MUTATION_SEED=${MQCONFORM_MUTATION_SEED:-7}
bash scripts/setup.sh --install > /dev/null
.venv/bin/pip install --quiet -c constraints.txt mutmut 2>&1 | grep -v '^WARNING' || true
mutmut="$root/.venv/bin/mutmut"
# mutmut writes its mutants next to the code: it works on a copy, never on this checkout.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
tar --exclude=./.venv --exclude=./.git --exclude=./mutants --exclude='*/__pycache__' -cf - . | tar -xf - -C "$work"
cd "$work"
echo "mutation: generating the mutants"
# A name nothing matches: mutmut makes every mutant, then stops (it checks none, and says so).
timeout 900 "$mutmut" run --max-children 2 "no-such-mutant*" > "$work/generate.log" 2>&1 || true
"$mutmut" results --all true 2>/dev/null | sed -n 's/^ *\([^ :]*\): .*/\1/p' > "$work/all.txt"
total=$(wc -l < "$work/all.txt")
if [ "$total" -eq 0 ]; then
    echo "mutation: mutmut made no mutant: $(tr '\r' '\n' < "$work/generate.log" | grep -v '^ *$' | tail -n 1)" >&2
    exit 2
fi
if [ "$sample" = all ]; then cp "$work/all.txt" "$work/sample.txt"
else "$root/.venv/bin/python" - "$work/all.txt" "$sample" "$MQCONFORM_MUTATION_SEED" > "$work/sample.txt" <<'PY'
import random, sys
names = open(sys.argv[1]).read().split()
random.Random(int(sys.argv[3])).shuffle(names)
print("\n".join(sorted(names[:int(sys.argv[2])])))
PY
fi
echo "mutation: checking $(wc -l < "$work/sample.txt") of $total mutants on 2 cores, for at most $minutes min"
# In the background with a wait, so that the time box and a signal stop it at once; what was checked stays.
set +e
xargs -a "$work/sample.txt" timeout --signal=INT "$((minutes * 60))" "$mutmut" run --max-children 2 \
    > "$work/run.log" 2>&1 < /dev/null &
wait $!
set -e
"$mutmut" results --all true > "$out/results.txt" 2>/dev/null
: > "$out/survivors.diff"
sed -n 's/^ *\([^ :]*\): \(survived\|no tests\)$/\1/p' "$out/results.txt" | head -n 500 | while read -r name; do
    "$mutmut" show "$name" >> "$out/survivors.diff" 2>&1 || true
    echo >> "$out/survivors.diff"
done
cd "$root"
.venv/bin/python mutation/score.py "$out/results.txt" --equivalent mutation/equivalent.txt --diffs "$out/survivors.diff" \
    | tee "$out/score.txt"
echo "mutation: results in $out (each surviving mutant's change: survivors.diff)"
