"""The seed each fault of the catalogue is checked with in ``tests/test_faults.py``: the one, among those tried, whose
run meets everything that test asks of it soonest.

Each fault's test runs its area on the simulated queue manager with the fault injected, at the default budget,
stopping at the first departure, and asks that the run fail naming one of the fault's own rules (and no other
rule, for a fault of ``EXACT``).  How long that takes depends on the seed, by a factor of ten for some faults:
this runs each fault's command under every seed given, keeps the fastest seed whose run meets the test's
conditions, and writes the choice to ``tests/data/fault_seeds.json`` (with ``--write``; merged into what is
there, so a new fault is measured alone).  A fault no seed met keeps its entry and is listed: exit 1.

    .venv/bin/python scripts/fault_seeds.py [--seeds 1-8] [--jobs 2] [--faults a,b] [--write]
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import multiprocessing
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

SEEDS_FILE = ROOT / "tests" / "data" / "fault_seeds.json"


def main(argv: list[str] | None = None) -> int:
    from conformance.bench.faults import add_run_options, chosen
    from tests.faultkit import trial

    parser = argparse.ArgumentParser(prog="fault_seeds", description=__doc__.split("\n\n")[0])
    add_run_options(parser, "1-8")
    parser.add_argument("--write", action="store_true", help="write the choices to tests/data/fault_seeds.json")
    args = parser.parse_args(argv)
    picked = chosen(args, "fault_seeds")
    if picked is None:
        return 2
    seeds, faults = picked
    pairs = [(f, s) for f in faults for s in seeds]
    print(f"fault_seeds: {len(faults)} faults x {len(seeds)} seeds = {len(pairs)} runs, {args.jobs} at a time",
          flush=True)
    trials: dict[str, list[dict]] = {f: [] for f in faults}
    with concurrent.futures.ProcessPoolExecutor(max_workers=args.jobs,
                                                mp_context=multiprocessing.get_context("spawn")) as pool:
        for t in pool.map(trial, *zip(*pairs)):
            trials[t["fault"]].append(t)
    measured = json.loads(SEEDS_FILE.read_text()) if SEEDS_FILE.is_file() else {}
    unmet = []
    for fault in faults:
        met = sorted((t for t in trials[fault] if t["met"]), key=lambda t: (t["seconds"], t["seed"]))
        if not met:
            unmet.append(fault)
            print(f"{fault}: no seed of {args.seeds} met the test")
            continue
        best = met[0]
        measured[fault] = {"seed": best["seed"], "seconds": best["seconds"]}
        slowest = max(t["seconds"] for t in trials[fault])
        print(f"{fault}: seed {best['seed']} ({best['seconds']} s; {len(met)} of {len(seeds)} seeds met it, "
              f"the slowest run {slowest} s)")
    total = sum(min(t["seconds"] for t in trials[f] if t["met"]) for f in faults if f not in unmet)
    print(f"\nthe chosen seeds' runs: {total:.0f} s in all")
    if args.write:
        SEEDS_FILE.write_text(json.dumps(dict(sorted(measured.items())), indent=1) + "\n")
    return 1 if unmet else 0


if __name__ == "__main__":
    sys.exit(main())
