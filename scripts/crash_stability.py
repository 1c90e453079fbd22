"""Whether a crash campaign's verdicts are stable: the same seed run several times gives, per rule, frequencies
within the binomial spread of their pooled rate.

    python scripts/crash_stability.py --runs 5 -- --adapter rabbitmq --adapter-opt nemesis=on --minutes 2 --seed 2

Everything after ``--`` is given to ``mqconform crash`` for each run (each into a results directory of its own under
``--out``, default a new temporary one).  Prints per rule each run's "k of n" and the central 95% interval of a
binomial with the pooled rate for that run's n; a run outside it is marked.  Exit 0 when every run of every rule
lies within, 1 when one does not, 2 when a run could not be made.  Run by hand: each run takes its budget.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from conformance.records.crash import binomial_interval

ROOT = Path(__file__).resolve().parent.parent


def judge(runs: list[dict]) -> tuple[list[str], bool]:
    """Per rule broken in any run, each run's count against the spread of the pooled rate: the lines, and whether
    every run lay within."""
    rules = sorted({rule for data in runs for rule in data["rules"]})
    lines, steady = [], True
    for rule in rules:
        k = [data["rules"].get(rule, {}).get("schedules", 0) for data in runs]
        n = [data["schedules"] for data in runs]
        pooled = sum(k) / sum(n) if sum(n) else 0.0
        cells = []
        for ki, ni in zip(k, n):
            low, high = binomial_interval(ni, pooled)
            inside = low <= ki <= high
            steady = steady and inside
            cells.append(f"{ki} of {ni} ({low}-{high})" + ("" if inside else " OUTSIDE"))
        lines.append(f"{rule}: pooled {pooled:.0%}; " + "; ".join(cells))
    return lines or ["no run broke a rule"], steady


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    ours, _, crash = (argv[:argv.index("--")], None, argv[argv.index("--") + 1:]) if "--" in argv else (argv, None, [])
    ap = argparse.ArgumentParser(prog="scripts/crash_stability.py")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args(ours)
    if args.runs < 2 or not crash:
        sys.stderr.write("crash_stability: give --runs 2 or more and, after --, the arguments of mqconform crash\n")
        return 2
    out = args.out or Path(tempfile.mkdtemp(prefix="mqconform-stability-"))
    runs = []
    for n in range(args.runs):
        results = out / f"run-{n + 1}"
        proc = subprocess.run([sys.executable, "-m", "conformance.cli", "crash", *crash, "--results", str(results)],
                              cwd=ROOT, capture_output=True, text=True)
        if proc.returncode not in (0, 1) or not (results / "crash.json").is_file():
            sys.stderr.write(f"crash_stability: run {n + 1} failed (exit {proc.returncode}): "
                             f"{(proc.stderr.strip().splitlines() or ['no message'])[-1]}\n")
            return 2
        runs.append(json.loads((results / "crash.json").read_text()))
        print(f"run {n + 1}: {runs[-1]['schedules']} schedules, "
              + (", ".join(f"{r} {e['schedules']}" for r, e in runs[-1]["rules"].items()) or "nothing broken"),
              flush=True)
    lines, steady = judge(runs)
    print("\n".join(lines))
    print("Every run lies within the binomial spread of the pooled rate." if steady else
          "Some run lies outside the binomial spread of the pooled rate: the frequencies are not stable.")
    print(f"Results: {out}")
    return 0 if steady else 1


if __name__ == "__main__":
    raise SystemExit(main())
