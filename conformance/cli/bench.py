"""``mqconform bench``: performance figures, each a ratio measured side by side in one run."""

from __future__ import annotations

from conformance.cli.common import EXIT_OK, UsageError, _areas, _duration, _positive, _seed
from conformance.runner.engine import DEFAULT_EXAMPLES

BENCH_FIGURES = ("detect", "throughput", "depth", "campaign", "brokers", "broker-jobs", "concurrency")   # conformance.bench.suite.FIGURES


def add_parsers(sub) -> None:
    bench = sub.add_parser("bench", help="performance figures, each a ratio measured side by side in one run")
    bench.add_argument("--only", help="comma-separated figures: " + ", ".join(BENCH_FIGURES) + " (default: all)")
    bench.add_argument("--faults", help="comma-separated catalogue faults for time to detect (default: all)")
    bench.add_argument("--area", help="comma-separated areas for throughput (default: all)")
    bench.add_argument("--seed", type=_seed, default=7, help="seed of the time-to-detect runs (default 7)")
    bench.add_argument("--examples", type=_positive, default=DEFAULT_EXAMPLES,
                       help=f"examples of each time-to-detect run (default {DEFAULT_EXAMPLES})")
    bench.add_argument("--task-seconds", type=_duration("seconds"), default=1.5,
                       help="seconds per task of the campaign figure (default 1.5)")



def cmd_bench(args, out) -> int:
    from adapters.simulated.faults import FAULTS
    from conformance.bench import suite as bench

    figures = [f.strip() for f in (args.only or ",".join(BENCH_FIGURES)).split(",") if f.strip()]
    unknown = [f for f in figures if f not in BENCH_FIGURES]
    if unknown or not figures:
        raise UsageError(f"--only: unknown figure {', '.join(unknown) or '(none)'}; "
                         f"choose from {', '.join(BENCH_FIGURES)}")
    faults = [f.strip() for f in (args.faults or ",".join(sorted(FAULTS))).split(",") if f.strip()]
    missing = [f for f in faults if f not in FAULTS]
    if missing:
        raise UsageError(f"--faults: no such fault {', '.join(missing)} (mqconform faults lists them)")
    bench.run(out, figures, faults, _areas(args.area), args.examples, args.seed, args.task_seconds)
    return EXIT_OK




COMMANDS = {"bench": cmd_bench}
