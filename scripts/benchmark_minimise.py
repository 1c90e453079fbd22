"""How small the kit's counterexamples are, over the simulated queue manager's whole fault catalogue.

For each fault: run its area (one platform, one round) without minimising, then
minimise the failure Hypothesis shrank, and print the history lengths before and
after, the time minimising took, and whether the fault's declared rule is named
first.  Ends with the distribution (median, max) and the shares.

    .venv/bin/python scripts/benchmark_minimise.py [--seed 7] [--examples 200] [FAULT ...]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from adapters.registry import create_adapter  # noqa: E402
from adapters.simulated.faults import FAULTS  # noqa: E402
from conformance.runner.engine import area_platforms, run_area  # noqa: E402
from conformance.records.history import with_alternatives  # noqa: E402
from conformance.runner.minimise import minimise  # noqa: E402
from conformance.records.results import RunRecord  # noqa: E402

SEEDS = {"every-twice-on-alter": 1, "dlq-header-stripped": 1}


def _set(value) -> int:
    """Fields of a language value not at their defaults, counted into nested values."""
    import attrs

    count = 0
    for field in attrs.fields(type(value)):
        current = getattr(value, field.name)
        if field.default is attrs.NOTHING or current != field.default:
            count += _set(current) if attrs.has(type(current)) else 1
    return count


def values(failure) -> int:
    """What a reader must take in besides the operations: message fields set (descriptor, context,
    MQDLH) and rules-table keywords."""
    import attrs

    from reference_model import dlq_table

    count = 0
    for step in failure.steps:
        for part in ("md", "dlh"):
            value = getattr(step.op, part, None)
            count += _set(value) if value is not None and attrs.has(type(value)) else 0
        table = getattr(step.op, "table", None)
        if isinstance(table, str):
            entries = dlq_table.entries(table)
            count += sum(len(e) for e in entries) if entries is not None else len(table.split("("))
    return count


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--examples", type=int, default=200)
    parser.add_argument("faults", nargs="*", default=sorted(FAULTS))
    args = parser.parse_args()
    before, after, first, seconds, missed, held, other = [], [], [], [], [], [], []
    print(f"{'fault':36} {'shrunk':>6} {'minimal':>7} {'values':>9} {'seconds':>7}  rules (declared rule first?)")
    for name in args.faults:
        spec = FAULTS[name]
        adapter = create_adapter("simulated", {"faults": name})
        caps = adapter.capabilities()
        platform = area_platforms(spec.area, caps)[0]   # z/OS for the areas only z/OS has
        record = RunRecord(adapter="simulated", describe={}, capabilities=caps.to_json(), areas=[spec.area],
                           seed=args.seed, examples=args.examples)
        seed = SEEDS.get(name, args.seed)
        run_area(adapter, spec.area, platform, args.examples, seed, {"faults": name}, record,
                 minimise_histories=False)
        if not record.failures:
            missed.append(name)
            print(f"{name:36} {'-':>6} {'-':>7} {'-':>9} {'-':>7}  not found with seed {seed}")
            continue
        shrunk = record.failures[0]
        started = time.monotonic()
        small = minimise(shrunk, adapter)
        took = time.monotonic() - started
        adapter.close()
        declared_first = bool(small.rules) and small.rules[0] in spec.rules
        # Not first: named among the rules, or by the other reading of the history (an earlier step).
        alts = with_alternatives(small, caps.expiry_tolerance).mismatch.alternatives
        other.append(not declared_first and any(r in spec.rules for r in
                                                (*small.rules, *(r for a in alts for r in a.rules))))
        before.append(len(shrunk.steps))
        after.append(len(small.steps))
        first.append(declared_first)
        seconds.append(took)
        held.append((values(shrunk), values(small)))
        print(f"{name:36} {len(shrunk.steps):>6} {len(small.steps):>7} {f'{held[-1][0]}->{held[-1][1]}':>9} "
              f"{took:>7.2f}  "
              f"{','.join(small.rules)} ({'yes' if declared_first else 'named' if other[-1] else 'no'})"
              + "".join(f"; or step {a.index + 1}: {','.join(a.rules)}" for a in alts))
    if not after:
        return 1
    print()
    print(f"faults found: {len(after)} of {len(args.faults)}" + (f" (missed: {', '.join(missed)})" if missed else ""))
    print(f"history length as Hypothesis shrank it: median {statistics.median(before)}, max {max(before)}")
    print(f"history length minimised:              median {statistics.median(after)}, max {max(after)}")
    print(f"ratio minimised / shrunk (median):     {statistics.median(a / b for a, b in zip(after, before)):.2f}")
    print(f"values set (message fields, table keywords), as shrunk: total {sum(b for b, _ in held)}, "
          f"minimised: total {sum(a for _, a in held)}, max {max(a for _, a in held)}")
    print(f"declared rule named first:             {sum(first)} of {len(first)} ({100 * sum(first) / len(first):.0f}%)")
    print(f"declared rule named, not first:        {sum(other)} of {len(first)} (among the rules, or in the "
          "other reading of the history)")
    print(f"seconds minimising: median {statistics.median(seconds):.2f}, max {max(seconds):.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
