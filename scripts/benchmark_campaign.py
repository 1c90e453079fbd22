"""Benchmark: campaign throughput in one plain process, Spark local[1] and local[2], in one run.

    .venv/bin/python scripts/benchmark_campaign.py [--tasks 8] [--examples 20] [--area dlq]

Prints examples per second for the same tasks run three ways, Spark's start-up
cost separately, the scaling efficiency on this machine's cores, and how long a
campaign and a single run each take to find a fault.  Figures, not pass/fail.
"""

from __future__ import annotations

import argparse
import io
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from conformance import campaign as CP  # noqa: E402
from conformance import cli  # noqa: E402

OPTIONS = {"platform": "distributed"}


def plain(specs) -> tuple[float, int]:
    started = time.monotonic()
    examples = sum(CP._run_machine(s.to_json(), "simulated", OPTIONS, [], False)["examples"] for s in specs)
    return time.monotonic() - started, examples


def spark(specs, master: str, workdir: Path) -> tuple[float, float, int]:
    t0 = time.monotonic()
    session = CP.spark_session(master, workdir, 1)
    sc = session.sparkContext
    sc.parallelize([0], 1).map(lambda x: x).collect()   # starts the Python workers
    startup = time.monotonic() - t0
    t1 = time.monotonic()
    args = [(s.to_json(), "simulated", OPTIONS, [], 900, 1, {}) for s in specs]
    results = sc.parallelize(args, len(args)).map(CP.spark_task).collect()
    elapsed = time.monotonic() - t1
    session.stop()
    return startup, elapsed, sum(r["examples"] for r in results)


def time_to_find(argv) -> float:
    started = time.monotonic()
    code = cli.main(argv, out=io.StringIO())
    assert code == 1, f"the fault was not found ({code})"
    return time.monotonic() - started


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tasks", type=int, default=8)
    p.add_argument("--examples", type=int, default=20, help="examples per task")
    p.add_argument("--area", default="dlq")
    p.add_argument("--fault", default="dlq-retry-ignored")
    args = p.parse_args()
    specs = CP.plan_tasks(1, [(args.area, "distributed")], args.tasks * args.examples, args.examples)
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        os.environ.setdefault("HYPOTHESIS_STORAGE_DIRECTORY", str(tmp / "hyp"))
        t_plain, n = plain(specs)
        s1, t1, n1 = spark(specs, "local[1]", tmp / "s1")
        s2, t2, n2 = spark(specs, "local[2]", tmp / "s2")
        assert n == n1 == n2, (n, n1, n2)
        rate = lambda t: n / t  # noqa: E731
        print(f"workload: {args.tasks} tasks x {args.examples} examples of area {args.area} ({n} examples)")
        print(f"{'':12}{'seconds':>10}{'examples/s':>12}{'vs plain':>10}")
        print(f"{'plain':12}{t_plain:10.1f}{rate(t_plain):12.1f}{1:10.2f}")
        print(f"{'local[1]':12}{t1:10.1f}{rate(t1):12.1f}{t_plain / t1:10.2f}")
        print(f"{'local[2]':12}{t2:10.1f}{rate(t2):12.1f}{t_plain / t2:10.2f}")
        print(f"Spark start-up (session and first job): local[1] {s1:.1f}s, local[2] {s2:.1f}s (its JVM already running)")
        cores = os.cpu_count() or 1
        print(f"scaling local[1] -> local[2]: {t1 / t2:.2f}x, efficiency {t1 / t2 / 2:.0%} on {cores} cores")
        single = time_to_find(["run", "--adapter", "simulated", "--faults", args.fault, "--area", args.area,
                               "--seed", "7", "--adapter-opt", "platform=distributed", "--results",
                               str(tmp / "run")])
        campaign = time_to_find(["campaign", "--adapter", "simulated", "--faults", args.fault, "--area", args.area,
                                 "--examples", "200", "--task-examples", "25", "--seed", "7", "--master", "local[2]",
                                 "--adapter-opt", "platform=distributed", "--out", str(tmp / "camp")])
        print(f"finding {args.fault}: single run {single:.1f}s, campaign local[2] {campaign:.1f}s "
              f"(ratio {single / campaign:.2f}, Spark start-up included)")


if __name__ == "__main__":
    main()
