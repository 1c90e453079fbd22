"""Running machines against an adapter: the engine behind ``mqconform run`` and campaigns."""

from __future__ import annotations

import time
from typing import Callable

from hypothesis import HealthCheck, Phase, Verbosity, settings
from hypothesis.stateful import run_state_machine_as_test

from adapters.base import Adapter, AdapterError, Capabilities
from conformance.machines import MACHINES
from conformance.machines.base import bind
from conformance.results import RunRecord
from conformance.session import HarnessError, NonConformance, Session
from reference_model.rules import RULES

#: Steps per generated case.
STEPS_PER_CASE = 40


class NothingRan(RuntimeError):
    """No test case executed: never a pass."""


def machine_settings(examples: int, steps: int = STEPS_PER_CASE, database=None) -> settings:
    return settings(
        max_examples=examples,
        stateful_step_count=steps,
        deadline=None,
        database=database,
        suppress_health_check=list(HealthCheck),
        verbosity=Verbosity.quiet,
        report_multiple_bugs=False,
        phases=(Phase.explicit, Phase.generate, Phase.shrink),
    )


def area_platforms(area: str, caps: Capabilities) -> list[str]:
    """The platforms to run ``area`` on: each the adapter shows on which some of its rules apply."""
    if area not in caps.areas or area not in MACHINES:
        return []
    return [p for p in caps.platforms if any(rule.applies_on(p) for rule in RULES.all(area))]


def bound_machine(adapter: Adapter, area: str, platform: str, seed: int | None,
                  adapter_options: dict | None, coverage) -> type:
    """``area``'s machine class, running against ``adapter`` on ``platform`` with its own session and seed."""
    session = Session(adapter, area, adapter_options, seed, coverage=coverage, platform=platform)
    machine = bind(MACHINES[area], session)
    if seed is not None:
        machine._hypothesis_internal_use_seed = seed
    return machine


def run_area(adapter: Adapter, area: str, platform: str, examples: int, seed: int | None,
             adapter_options: dict | None, record: RunRecord) -> tuple[str, float]:
    """Run one area's machine on one platform, adding to ``record``; returns (outcome, seconds)."""
    machine = bound_machine(adapter, area, platform, seed, adapter_options, record.coverage)
    started = time.monotonic()
    try:
        run_state_machine_as_test(machine, settings=machine_settings(examples))
        outcome = "conformant"
    except NonConformance as exc:
        record.add_failure(exc.failure)
        outcome = "NON-CONFORMANT (" + ", ".join(exc.failure.rules) + ")"
    except HarnessError as exc:
        record.error = str(exc)
        outcome = "error"
    return outcome, time.monotonic() - started


def run_areas(adapter: Adapter, areas: list[str], examples: int, seed: int | None,
              adapter_options: dict | None = None,
              progress: Callable[[str], None] | None = None) -> RunRecord:
    """Run each area's machine against ``adapter``; returns the run's record."""
    caps = adapter.capabilities()
    try:
        describe = adapter.describe()
    except AdapterError as exc:
        raise HarnessError(f"adapter {adapter.name!r}: {exc}") from exc
    record = RunRecord(adapter=adapter.name, describe=describe, capabilities=caps.to_json(),
                       areas=list(areas), seed=seed, examples=examples)
    for area in areas:
        platforms = area_platforms(area, caps)
        if not platforms and progress:
            progress(f"{area}: not applicable to adapter {adapter.name!r}")
        for platform in platforms:
            outcome, seconds = run_area(adapter, area, platform, examples, seed, adapter_options, record)
            if progress:
                progress(f"{area} on {platform}: {outcome} in {seconds:.1f}s")
            if record.error:
                break
        if record.error:
            break
    record.ended = time.time()
    if record.coverage.examples == 0 and record.error is None:
        record.error = "no test case ran: none of the areas " + ", ".join(areas) + \
            f" is applicable to adapter {adapter.name!r}"
    return record
