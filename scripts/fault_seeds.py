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
import io
import json
import multiprocessing
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

SEEDS_FILE = ROOT / "tests" / "data" / "fault_seeds.json"


def trial(fault: str, seed: int) -> dict:
    """``fault``'s test command under ``seed``: its seconds, and whether its run meets the test's conditions."""
    from adapters.simulated.faults import FAULTS
    from conformance import cli
    from tests.faultkit import fault_run_args
    from tests.test_faults import EXACT

    spec = FAULTS[fault]
    with tempfile.TemporaryDirectory() as results:
        began = time.monotonic()
        err, sys.stderr = sys.stderr, io.StringIO()
        try:
            code = cli.main(fault_run_args(fault, str(seed), results), out=io.StringIO())
        finally:
            sys.stderr = err
        seconds = time.monotonic() - began
        named = {r for f in (Path(results) / "failures").glob("*.json") for r in json.loads(f.read_text())["rules"]}
    met = code == 1 and bool(named & set(spec.rules)) and (fault not in EXACT or named <= set(spec.rules))
    return {"fault": fault, "seed": seed, "seconds": round(seconds, 1), "met": met}


def _seeds(text: str) -> list[int]:
    if "-" in text:
        low, high = (int(x) for x in text.split("-", 1))
        return list(range(low, high + 1))
    return [int(x) for x in text.split(",") if x]


def main(argv: list[str] | None = None) -> int:
    from adapters.simulated.faults import FAULTS

    parser = argparse.ArgumentParser(prog="fault_seeds", description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", default="1-8", help="seeds to try, as 1-8 or 1,3,7 (default 1-8)")
    parser.add_argument("--jobs", type=int, default=2, help="runs at once (default 2)")
    parser.add_argument("--faults", default="", help="faults, comma-separated (default: the whole catalogue)")
    parser.add_argument("--write", action="store_true", help=f"write the choices to {SEEDS_FILE.relative_to(ROOT)}")
    args = parser.parse_args(argv)
    try:
        seeds = _seeds(args.seeds)
    except ValueError:
        print(f"fault_seeds: --seeds: not a list of seeds: {args.seeds!r}", file=sys.stderr)
        return 2
    faults = [f for f in args.faults.split(",") if f] or sorted(FAULTS)
    unknown = sorted(set(faults) - set(FAULTS))
    if unknown or not seeds or args.jobs < 1:
        print(f"fault_seeds: unknown faults {', '.join(unknown)}" if unknown else
              "fault_seeds: --seeds and --jobs need one or more", file=sys.stderr)
        return 2
    pairs = [(f, s) for f in faults for s in seeds]
    print(f"fault_seeds: {len(faults)} faults x {len(seeds)} seeds = {len(pairs)} runs, {args.jobs} at a time",
          flush=True)
    trials: dict[str, list[dict]] = {f: [] for f in faults}
    with concurrent.futures.ProcessPoolExecutor(max_workers=args.jobs,
                                                mp_context=multiprocessing.get_context("spawn")) as pool:
        for t in pool.map(trial, *zip(*pairs)):
            trials[t["fault"]].append(t)
    chosen = json.loads(SEEDS_FILE.read_text()) if SEEDS_FILE.is_file() else {}
    unmet = []
    for fault in faults:
        met = sorted((t for t in trials[fault] if t["met"]), key=lambda t: (t["seconds"], t["seed"]))
        if not met:
            unmet.append(fault)
            print(f"{fault}: no seed of {args.seeds} met the test")
            continue
        best = met[0]
        chosen[fault] = {"seed": best["seed"], "seconds": best["seconds"]}
        slowest = max(t["seconds"] for t in trials[fault])
        print(f"{fault}: seed {best['seed']} ({best['seconds']} s; {len(met)} of {len(seeds)} seeds met it, "
              f"the slowest run {slowest} s)")
    total = sum(min(t["seconds"] for t in trials[f] if t["met"]) for f in faults if f not in unmet)
    print(f"\nthe chosen seeds' runs: {total:.0f} s in all")
    if args.write:
        SEEDS_FILE.write_text(json.dumps(dict(sorted(chosen.items())), indent=1) + "\n")
    return 1 if unmet else 0


if __name__ == "__main__":
    sys.exit(main())
