"""Benchmark: the cost of the JSON-lines protocol, in one run.

    .venv/bin/python scripts/benchmark_subprocess.py [--examples 30] [--seed 11] [--area core,expiry]  (default: every area)

Runs the same areas, seed and budget on the in-process simulated queue manager
and on the same queue manager behind the protocol (``python -m
adapters.simulated.serve`` through ``--adapter subprocess``), and prints checked
steps per second for each and their ratio (the goal is at least 0.7), plus a
bare round trip through a pipe on this machine for scale.  Figures, not
pass/fail.
"""

from __future__ import annotations

import argparse
import io
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from conformance import cli  # noqa: E402

GOAL = 0.7


def run(argv: list[str], results: Path) -> tuple[float, int]:
    started = time.monotonic()
    code = cli.main([*argv, "--results", str(results)], out=io.StringIO())
    seconds = time.monotonic() - started
    if code != 0:
        raise SystemExit(f"benchmark: run exited {code}: {' '.join(argv)}")
    steps = json.loads((results / "run.json").read_text())["steps_run"]
    return seconds, steps


def pipe_round_trip(n: int = 2000) -> float:
    child = "import sys\nfor line in sys.stdin:\n    sys.stdout.write(line); sys.stdout.flush()\n"
    proc = subprocess.Popen([sys.executable, "-c", child], stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
    started = time.perf_counter()
    for _ in range(n):
        proc.stdin.write(b'{"id": 1}\n')
        proc.stdout.readline()
    seconds = time.perf_counter() - started
    proc.stdin.close()
    proc.wait()
    return seconds / n


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--examples", default="30")
    parser.add_argument("--seed", default="11")
    parser.add_argument("--area", default=None, help="areas (default: all)")
    args = parser.parse_args()
    common = ["run", "--examples", args.examples, "--seed", args.seed] + (["--area", args.area] if args.area else [])
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        t_in, steps_in = run([*common, "--adapter", "simulated"], tmp / "in")
        server = f"{sys.executable} -m adapters.simulated.serve"
        t_sub, steps_sub = run([*common, "--adapter", "subprocess", "--adapter-opt", f"command={server}"], tmp / "sub")
    rate_in, rate_sub = steps_in / t_in, steps_sub / t_sub
    print(f"areas {args.area or 'all'}, seed {args.seed}, {args.examples} examples per area")
    print(f"in-process simulated:       {steps_in:7d} steps in {t_in:6.1f}s = {rate_in:8.0f} steps/s")
    print(f"subprocess reference server: {steps_sub:6d} steps in {t_sub:6.1f}s = {rate_sub:8.0f} steps/s")
    print(f"ratio subprocess / in-process: {rate_sub / rate_in:.2f} (goal {GOAL})")
    print(f"per step: {1e6 / rate_in:.0f} us in-process, {1e6 / rate_sub:.0f} us through the protocol; "
          f"a bare pipe round trip here: {pipe_round_trip() * 1e6:.0f} us")
    if steps_in != steps_sub:
        print("note: the two runs checked different numbers of steps")
    return 0


if __name__ == "__main__":
    sys.exit(main())
