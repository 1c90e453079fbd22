"""The test a mutant of the simulated queue manager must survive: the kit's own machines, run against it.

Run by ``scripts/mutation.sh`` (mutmut), never by the suite: a mutant is killed when the
kit finds a departure from the model (or the mutated queue manager breaks) in one of these
runs.  One test per area and platform, so that mutmut runs only the areas that reach the
mutated function; generation only (no shrinking: any departure kills), a fixed seed, and
``MQCONFORM_MUTATION_EXAMPLES`` cases (default: the default run's budget, so that the score measures what
``mqconform run`` finds as a user runs it).
"""

from __future__ import annotations

import os
import sys

import pytest
from hypothesis import Phase, settings
from hypothesis.stateful import run_state_machine_as_test

from adapters.registry import create_adapter
from conformance.cli.concurrency import DEFAULT_CASES
from conformance.runner.engine import DEFAULT_EXAMPLES, area_platforms, bound_machine, machine_settings
from conformance.records.results import Coverage
from conformance.runner.stable import stable_generation
from reference_model.rules import AREAS

EXAMPLES = int(os.environ.get("MQCONFORM_MUTATION_EXAMPLES", str(DEFAULT_EXAMPLES)))
SEED = int(os.environ.get("MQCONFORM_MUTATION_SEED", "7"))
#: Faults of the catalogue to switch on (a check that these tests can fail: see tests/test_mutation.py).
FAULTS = os.environ.get("MQCONFORM_MUTATION_FAULTS", "")
PAIRS = [(area, platform) for area in AREAS
         for platform in area_platforms(area, create_adapter("simulated", {}).capabilities())]


#: The code under mutation (mutmut's source paths) as modules.
MUTATED = ("adapters.simulated", "adapters.dlq_handler")
#: Module-level caches of the code under mutation that are not ``functools`` caches: (module, name).
DICT_CACHES = (("adapters.base", "_HANDLERS"),)


def empty_caches() -> None:
    """Empty every cache of the code under mutation.  mutmut runs each mutant's tests in a process forked
    from one that ran the clean tests: a cache filled there (a rules table read, the method found for an
    operation) would answer for the mutant's code, which then never ran, and the mutant would survive."""
    for name, module in list(sys.modules.items()):
        if module is not None and name.startswith(MUTATED):
            for value in list(vars(module).values()):
                if callable(getattr(value, "cache_clear", None)):
                    value.cache_clear()
    for module, name in DICT_CACHES:
        if module in sys.modules:
            getattr(sys.modules[module], name).clear()


@pytest.fixture(autouse=True)
def _no_cache_from_the_clean_run():
    empty_caches()


@pytest.mark.parametrize("area,platform", PAIRS, ids=[f"{a}-{p}" for a, p in PAIRS])
def test_the_kit_finds_no_departure(area, platform):
    _run(area, platform)


def test_the_dlq_area_with_its_handler_host_browsing_by_calls_finds_no_departure(monkeypatch):
    """The DLQ area once more, the handler host reading the dead-letter queue by the calls of a browse (connect,
    open, browse first and next, close, disconnect), as it does on every system but the simulated queue manager,
    which lets it walk the queue directly (the same walk: tests/test_dlq_host.py): that code is the kit's too."""
    from adapters.simulated.queue_manager import SimulatedQueueManager

    monkeypatch.setattr(SimulatedQueueManager, "HOST_READS_DIRECTLY", False)
    _run("dlq", next(platform for area, platform in PAIRS if area == "dlq"))


def _options(platform: str) -> dict:
    """The simulated queue manager's options: the platform, and the faults asked for (none: a clean one)."""
    return {"platform": platform, **({"faults": FAULTS} if FAULTS else {})}


def _run(area: str, platform: str) -> None:
    """A run of ``area``'s machine on ``platform`` against the queue manager under test: any departure fails."""
    options = _options(platform)
    adapter = create_adapter("simulated", options)
    try:
        machine = bound_machine(adapter, area, platform, SEED, options, Coverage(),
                                shrink_budget=0)
        with stable_generation():
            run_state_machine_as_test(machine, settings=settings(machine_settings(EXAMPLES),
                                                                 phases=(Phase.explicit, Phase.generate)))
    finally:
        adapter.close()


#: Concurrent cases of three clients, as ``mqconform run --concurrency 3`` makes them (its default number): how
#: the queue manager takes calls from several clients at once (its lock, what it does between a call's reads and
#: writes) is the kit's to judge too, and no sequential case reaches it.
CONCURRENT_CASES = int(os.environ.get("MQCONFORM_MUTATION_CONCURRENT_CASES", str(DEFAULT_CASES)))


def test_concurrent_clients_meet_no_race():
    from conformance.runner.concurrent import search_races

    adapter = create_adapter("simulated", _options("distributed"))
    try:
        races, _ = search_races(adapter, SEED, CONCURRENT_CASES, clients=3, keep_going=0)
    finally:
        adapter.close()
    assert races == [], f"a race: {races[0].result.rules}"
