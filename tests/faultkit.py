"""How a fault of the simulated queue manager's catalogue is checked alone: its area, the one platform its rules
show it on, and the seed that finds it soonest (``tests/data/fault_seeds.json``, measured by
``scripts/fault_seeds.py``)."""

from __future__ import annotations

import io
import json
import sys
import tempfile
import time
from pathlib import Path

from adapters.simulated.faults import FAULTS
from reference_model.rules import RULES

#: The seed each fault is checked with: the one, of seeds 1-8, whose run met ``tests/test_faults.py``'s conditions
#: soonest (a fault's run takes ten times longer under some seeds than under others).
FAULT_SEEDS: dict[str, dict] = json.loads((Path(__file__).parent / "data" / "fault_seeds.json").read_text())
#: Areas whose faults behave the same on every platform: checked on one, to keep the suite short.
ONE_PLATFORM = {"core": "distributed", "cluster": "distributed", "dlq": "distributed"}


def platform_of(fault: str) -> str | None:
    """The one platform to run ``fault``'s area on, or None for all: its area's (:data:`ONE_PLATFORM`), or the
    only one on which its rules apply (a queue-sharing group's on z/OS, segmentation's on distributed): on
    the other the area would run its whole budget for a departure it cannot show."""
    spec = FAULTS[fault]
    if spec.area in ONE_PLATFORM:
        return ONE_PLATFORM[spec.area]
    rules = [r for r in RULES.all() if r.id in spec.rules]
    on = [p for p in ("distributed", "zos") if any(r.applies_on(p) for r in rules)]
    return on[0] if len(on) == 1 else None


def seed_of(fault: str) -> str:
    return str(FAULT_SEEDS[fault]["seed"])


def fault_run_args(fault: str, seed: str, results: str) -> list[str]:
    """The command line of ``fault``'s run: its area on the simulated queue manager with the fault injected, at the
    default budget, stopping at the first departure."""
    platform = ["--adapter-opt", f"platform={platform_of(fault)}"] if platform_of(fault) else []
    return ["run", "--adapter", "simulated", "--faults", fault, "--area", FAULTS[fault].area, "--seed", seed,
            "--results", results, "--keep-going", "0", *platform]


def trial(fault: str, seed: int) -> dict:
    """``fault``'s run (:func:`fault_run_args`) under ``seed``: its seconds, and whether it meets
    ``tests/test_faults.py``'s conditions (``scripts/fault_seeds.py`` runs it in processes of their own)."""
    from conformance import cli
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
