"""Seed-stable detection, measured: every fault of the simulated queue manager's catalogue run under several seeds at
the default budget, with, per fault, how many seeds found it and how many named one of its own rules first.

    python -m conformance.bench.faults [--seeds 1-5] [--jobs 2] [--faults a,b] [--whole] [--json FILE]

``--whole``: exactness instead: each fault alone in a whole default run (every area, rounds until the budget is
spent, as ``mqconform run`` with no options), and, per fault, the rules failed besides its own.  A fault breaks
its own rules; any other rule failed is one a counterexample was blamed on that the fault does not break (or a
rule the fault's list leaves out), each to be read.

(``scripts/faults.sh`` runs it.)  A benchmark, run by hand or on a schedule, never in CI: it prints figures from
one run, and exits 0 when it printed them, 2 on bad input.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import multiprocessing
import sys
from pathlib import Path

import attrs

#: The goals of the power issue: every fault found by every seed, its own rule named first in at least this share
#: of the (fault, seed) pairs.
OWN_FIRST_GOAL = 0.9


@attrs.frozen
class Trial:
    """One fault run under one seed: found or not, and the rules its first counterexample names first."""

    fault: str
    seed: int
    found: bool
    first: str | None = None
    own_first: bool = False
    seconds: float = 0.0
    #: (--whole) The rules failed besides the fault's own.
    extra: tuple[str, ...] = ()


def run_one(fault: str, seed: int, examples: int | None = None) -> Trial:
    """``fault`` injected in the simulated queue manager, its area run at the default budget (or ``examples`` cases)
    under ``seed`` (stopping
    at the first departure, as ``mqconform run --area AREA --keep-going 0``): found when a counterexample blames one
    of the fault's own rules."""
    import time

    from adapters.registry import create_adapter
    from adapters.simulated.faults import FAULTS
    from conformance.runner.engine import DEFAULT_EXAMPLES, run_areas

    spec = FAULTS[fault]
    began = time.monotonic()
    adapter = create_adapter("simulated", {"faults": fault})
    try:
        record = run_areas(adapter, [spec.area], examples or DEFAULT_EXAMPLES, seed, {"faults": fault}, keep_going=0)
    finally:
        adapter.close()
    failures = sorted(record.failures, key=lambda f: (f.area, f.platform))   # distributed before zos, as listed
    named = {r for f in failures for r in f.blamed}
    first = failures[0].blamed[0] if failures and failures[0].blamed else None
    return Trial(fault, seed, bool(named & set(spec.rules)), first, first in spec.rules,
                 round(time.monotonic() - began, 1))


def run_whole(fault: str, seed: int, examples: int | None = None) -> Trial:
    """``fault`` alone in a whole default run (every area, rounds until the budget, or ``examples`` cases an area and
    platform, is spent): found when a
    counterexample blames one of its own rules; ``extra``, the rules failed besides its own."""
    import time

    from adapters.registry import create_adapter
    from adapters.simulated.faults import FAULTS
    from conformance.runner.engine import DEFAULT_EXAMPLES, run_areas
    from reference_model.rules import AREAS

    spec = FAULTS[fault]
    began = time.monotonic()
    adapter = create_adapter("simulated", {"faults": fault})
    try:
        record = run_areas(adapter, list(AREAS), examples or DEFAULT_EXAMPLES, seed, {"faults": fault},
                           keep_going=None)
    finally:
        adapter.close()
    failed = {r for f in record.failures for r in f.blamed}
    first = record.failures[0].blamed[0] if record.failures and record.failures[0].blamed else None
    return Trial(fault, seed, bool(failed & set(spec.rules)), first, first in spec.rules,
                 round(time.monotonic() - began, 1), extra=tuple(sorted(failed - set(spec.rules))))


def summarise_whole(trials: list[Trial]) -> dict:
    """Per fault: seeds run, seeds that found it, and the rules failed besides its own with the seeds that did;
    overall: the faults whose runs failed no other rule."""
    per: dict[str, dict] = {}
    for t in sorted(trials, key=lambda t: (t.fault, t.seed)):
        row = per.setdefault(t.fault, {"fault": t.fault, "seeds": 0, "found": 0, "extra": {}})
        row["seeds"] += 1
        row["found"] += t.found
        for rule in t.extra:
            row["extra"].setdefault(rule, []).append(t.seed)
    rows = list(per.values())
    return {"faults": len(rows), "exact": sum(not r["extra"] for r in rows), "rows": rows}


def summarise(trials: list[Trial], own_rules: dict[str, tuple[str, ...]]) -> dict:
    """Per fault: seeds run, seeds that found it, seeds whose first counterexample named its own rule first, and the
    first rules named otherwise; overall: faults found by every seed, and the share of pairs with the own rule first."""
    per: dict[str, dict] = {}
    for t in sorted(trials, key=lambda t: (t.fault, t.seed)):
        row = per.setdefault(t.fault, {"fault": t.fault, "rules": list(own_rules[t.fault]), "seeds": 0, "found": 0,
                                       "own_first": 0, "missed_by": [], "other_first": []})
        row["seeds"] += 1
        row["found"] += t.found
        row["own_first"] += t.found and t.own_first
        if not t.found:
            row["missed_by"].append(t.seed)
        elif not t.own_first and t.first:
            row["other_first"].append(f"{t.first} (seed {t.seed})")
    rows = list(per.values())
    pairs = sum(r["seeds"] for r in rows)
    return {
        "faults": len(rows),
        "found_by_every_seed": sum(r["found"] == r["seeds"] for r in rows),
        "pairs": pairs,
        "own_first_share": round(sum(r["own_first"] for r in rows) / pairs, 3) if pairs else 0.0,
        "rows": rows,
    }


def parse_seeds(text: str) -> list[int]:
    """Seeds written as 1-5 or 1,3,7 (or both: 1-3,7); ValueError for anything else."""
    out: list[int] = []
    for part in text.split(","):
        low, _, high = part.partition("-")
        out += list(range(int(low), int(high or low) + 1))
    if not out:
        raise ValueError("no seed")
    return out


def add_run_options(parser: argparse.ArgumentParser, seeds: str) -> None:
    """The options of a run over faults and seeds: ``--seeds`` (default ``seeds``), ``--jobs``, ``--faults``."""
    parser.add_argument("--seeds", default=seeds, help=f"seeds, as 1-5 or 1,3,7 (default {seeds})")
    parser.add_argument("--jobs", type=int, default=2, help="runs at once, each in a process of its own (default 2)")
    parser.add_argument("--faults", default="", help="faults to run, comma-separated (default: the whole catalogue)")


def chosen(args: argparse.Namespace, prog: str) -> tuple[list[int], list[str]] | None:
    """The seeds and faults :func:`add_run_options`' options name, or None once a line on standard error has said
    what is wrong with them (a fault only concurrent cases or crash schedules show is not unknown)."""
    from adapters.simulated.faults import FAULTS, RACES, SOMETIMES

    try:
        seeds = parse_seeds(args.seeds)
    except ValueError:
        print(f"{prog}: --seeds: not a list of seeds: {args.seeds!r} (as 1-5 or 1,3,7)", file=sys.stderr)
        return None
    faults = [f for f in args.faults.split(",") if f] or sorted(FAULTS)
    unknown = sorted(set(faults) - set(FAULTS))
    other = [f for f in unknown if f in RACES or f in SOMETIMES]
    if other:
        print(f"{prog}: {', '.join(other)}: shown only by concurrent cases or crash schedules, never by a "
              f"sequential run (this bench's)", file=sys.stderr)
    elif unknown:
        print(f"{prog}: unknown faults {', '.join(unknown)} (see mqconform faults)", file=sys.stderr)
    elif args.jobs < 1:
        print(f"{prog}: --jobs must be 1 or more", file=sys.stderr)
    else:
        return seeds, faults
    return None


def main(argv: list[str] | None = None, out=None) -> int:
    from tabulate import tabulate

    from adapters.simulated.faults import FAULTS

    out = out or sys.stdout
    parser = argparse.ArgumentParser(prog="faults", description=__doc__.split("\n\n")[0])
    add_run_options(parser, "1-5")
    parser.add_argument("--whole", action="store_true",
                        help="each fault alone in a whole default run: the rules failed besides its own")
    parser.add_argument("--examples", type=int, default=None,
                        help="cases an area and platform (default: a run's default, 200)")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    args = parser.parse_args(argv)
    if args.examples is not None and args.examples < 1:
        print("faults: --examples must be 1 or more", file=sys.stderr)
        return 2
    picked = chosen(args, "faults")
    if picked is None:
        return 2
    seeds, faults = picked
    pairs = [(f, s) for f in faults for s in seeds]
    print(f"faults: {len(faults)} faults x {len(seeds)} seeds = {len(pairs)} runs, {args.jobs} at a time", file=out,
          flush=True)
    trials: list[Trial] = []
    # spawned, not forked: a fork of a process with threads (a test runner's) may inherit a lock held for ever
    with concurrent.futures.ProcessPoolExecutor(max_workers=args.jobs,
                                                mp_context=multiprocessing.get_context("spawn")) as pool:
        for trial in pool.map(run_whole if args.whole else run_one, *zip(*pairs), [args.examples] * len(pairs)):
            trials.append(trial)
    if args.whole:
        whole = summarise_whole(trials)
        rows = [[r["fault"], ", ".join(FAULTS[r["fault"]].rules), f"{r['found']}/{r['seeds']}",
                 "; ".join(f"{rule} (seeds {', '.join(map(str, seeds))})" for rule, seeds in sorted(r["extra"].items()))
                 or "-"] for r in whole["rows"]]
        print(tabulate(rows, headers=["fault", "own rules", "found", "failed besides its own"]), file=out)
        print(f"\nexact: {whole['exact']} of {whole['faults']} faults failed no rule besides their own in every "
              f"whole run (goal: all)", file=out)
        if args.json:
            args.json.write_text(json.dumps(whole, indent=1) + "\n")
        return 0
    figures = summarise(trials, {f: FAULTS[f].rules for f in faults})
    table = [[r["fault"], ", ".join(r["rules"]), f"{r['found']}/{r['seeds']}", f"{r['own_first']}/{r['seeds']}",
              ", ".join(map(str, r["missed_by"])) or "-", "; ".join(r["other_first"]) or "-"]
             for r in figures["rows"]]
    print(tabulate(table, headers=["fault", "own rules", "found", "own rule first", "missed by seeds",
                                   "first named otherwise"]), file=out)
    print(f"\nfound by every seed: {figures['found_by_every_seed']} of {figures['faults']} faults; own rule named first "
          f"in {figures['own_first_share']:.1%} of {figures['pairs']} (fault, seed) pairs "
          f"(goals: all, and {OWN_FIRST_GOAL:.0%})", file=out)
    if args.json:   # with every run's own figures: which seed finds a fault soonest
        trials_json = [attrs.asdict(t, filter=lambda a, _: a.name != "extra") for t in trials]
        args.json.write_text(json.dumps({**figures, "trials": trials_json}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
