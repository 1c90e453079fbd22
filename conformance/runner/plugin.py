"""The pytest plugin (entry point ``pytest11``): run the conformance machines from pytest.

After installing the kit::

    pytest --pyargs conformance --mq-adapter simulated --mq-adapter-opt faults=priority-ignored

Options: ``--mq-adapter``, ``--mq-adapter-opt KEY=VALUE`` (repeatable),
``--mq-area A[,B]``, ``--mq-seed``, ``--mq-results DIR``, ``--mq-concurrency N`` (concurrent cases of N clients
instead of the areas' machines).  Example budgets come
from the Hypothesis profiles ``mqconform-dev``, ``mqconform-ci`` and ``mqconform-campaign``
(``--hypothesis-profile``); a failure is saved as a replay file.

Installed, the plugin changes nothing in a pytest session until ``--mq-adapter`` is given: its profiles carry
the kit's name (a user's own ``dev`` or ``ci`` stays theirs), and Hypothesis's generation is made independent of
the code loaded only around the kit's own runs (conformance/runner/stable.py), never for a user's tests.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, settings

from adapters.base import AdapterError, AdapterOptionError, parse_options
from adapters.registry import UnknownAdapter, create_adapter
from reference_model.rules import parse_areas

PROFILES = {
    "mqconform-dev": 50,
    "mqconform-ci": 100,
    "mqconform-campaign": 2000,
}
for _name, _examples in PROFILES.items():
    settings.register_profile(
        _name,
        max_examples=_examples,
        stateful_step_count=40,
        deadline=None,
        suppress_health_check=list(HealthCheck),
        phases=(Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink),
        report_multiple_bugs=False,
    )


def pytest_addoption(parser):
    group = parser.getgroup("mqconform", "IBM MQ conformance (mqconform)")
    group.addoption("--mq-adapter", default=None,
                    help="adapter to test; without it the conformance tests are skipped and nothing is started")
    group.addoption("--mq-adapter-opt", action="append", default=[], metavar="KEY=VALUE",
                    help="adapter option, repeatable (e.g. faults=priority-ignored)")
    group.addoption("--mq-area", default=None, help="comma-separated rule areas (default: all)")
    group.addoption("--mq-seed", default=None, help="seed for reproducible generation")
    group.addoption("--mq-results", default=None, help="write a result directory here")
    group.addoption("--mq-examples", default=None, metavar="N",
                    help="cases each area's test runs, instead of the Hypothesis profile's examples (as "
                         "mqconform run --examples)")
    group.addoption("--mq-recorded", action="append", default=[], metavar="FILE_OR_DIR",
                    help="recorded counterexamples (replay files, or directories of them), repeatable: after each "
                         "area's search finds no departure, each of the area's is replayed, and one that shows its "
                         "departure again fails the area's test (as mqconform run --recorded)")
    group.addoption("--mq-concurrency", default=None, metavar="N",
                    help="concurrent cases instead of the areas' machines: N clients (2 to 4) at once on the core "
                         "area, as many cases as the Hypothesis profile's examples (docs/concurrency.md)")


def pytest_configure(config):
    config.addinivalue_line("markers", "mq_area(name): a conformance test for one rule area")
    if config.getoption("--mq-adapter", default=None) is None:
        return
    if config.getoption("hypothesis_profile", default=None) is None and not os.environ.get("HYPOTHESIS_PROFILE"):
        settings.load_profile("mqconform-dev")   # the kit's budget (50 examples), not Hypothesis's default of 100
    elif os.environ.get("HYPOTHESIS_PROFILE") in PROFILES and config.getoption("hypothesis_profile", None) is None:
        settings.load_profile(os.environ["HYPOTHESIS_PROFILE"])
    examples = config.getoption("--mq-examples", default=None)
    if examples is not None:
        if not examples.isdigit() or int(examples) < 1:
            raise pytest.UsageError(f"mqconform: --mq-examples: {examples!r} is not a number of cases, 1 or more")
    try:
        options = parse_options(config.getoption("--mq-adapter-opt"))
        adapter = create_adapter(config.getoption("--mq-adapter"), options)
        config._mq_areas = parse_areas(config.getoption("--mq-area"))
        seed_text = config.getoption("--mq-seed")
        config._mq_seed = int(seed_text) if seed_text is not None else random.randrange(2**31)
        if _worker(config):   # pytest-xdist: every worker runs with the controller's seed
            config._mq_seed = int(config.workerinput.get("mq_seed", config._mq_seed))
        config._mq_concurrency = _concurrency(config, adapter)
        config._mq_recorded = _recorded(config)
    except (UnknownAdapter, AdapterOptionError, AdapterError, ValueError) as exc:
        raise pytest.UsageError(f"mqconform: {exc}") from None
    config._mq_adapter = adapter
    config._mq_options = options
    config._mq_record = None
    results = config.getoption("--mq-results")
    if results and not _worker(config):
        shutil.rmtree(Path(results) / WORKERS, ignore_errors=True)   # parts of an earlier run


def _recorded(config) -> list:
    """The recorded counterexamples ``--mq-recorded`` names, every file read before anything runs."""
    from conformance.records.history import ReplayFileError
    from conformance.runner.recorded import load_recorded

    given = config.getoption("--mq-recorded", default=None) or []
    if given and config._mq_concurrency:
        raise ValueError("--mq-recorded replays sequential cases, not with --mq-concurrency")
    try:
        return load_recorded([Path(p) for p in given])
    except (ReplayFileError, OSError) as exc:
        raise ValueError(f"--mq-recorded: {exc}") from None


def _examples(config) -> int:
    """Cases each area's test runs: ``--mq-examples``, else the loaded Hypothesis profile's (read when the tests
    run: a conftest may load a profile after the plugin is configured)."""
    given = config.getoption("--mq-examples", default=None)
    return int(given) if given is not None else settings.default.max_examples


def _concurrency(config, adapter) -> int | None:
    """``--mq-concurrency``'s clients (None: not given); a ValueError says why it cannot be."""
    text = config.getoption("--mq-concurrency", default=None)
    if text is None:
        return None
    if text not in ("2", "3", "4"):
        adapter.close()
        raise ValueError(f"--mq-concurrency: {text!r} is not a number of clients from 2 to 4")
    if not getattr(adapter, "concurrent_calls", False):
        adapter.close()
        raise ValueError(f"--mq-concurrency: adapter {adapter.name!r} does not take calls from several clients at "
                         "once (docs/concurrency.md)")
    if config._mq_areas != ["core"] and config.getoption("--mq-area") is not None:
        adapter.close()
        raise ValueError("--mq-concurrency: concurrent cases are of the core area: leave --mq-area out or give core")
    config._mq_areas = ["core"]
    return int(text)


#: Where pytest-xdist workers leave their part of the run's record, for the controller to merge.
WORKERS = ".mqconform-workers"


def _worker(config) -> str | None:
    """The pytest-xdist worker id when this process is a worker, else None."""
    return getattr(config, "workerinput", {}).get("workerid")


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node):
    """pytest-xdist (controller): hand every worker the run's seed."""
    seed = getattr(node.config, "_mq_seed", None)
    if seed is not None:
        node.workerinput["mq_seed"] = seed


def pytest_sessionfinish(session):
    """pytest-xdist (controller): merge the workers' parts into one result directory.  A session whose
    run record has an error (a harness error, or an area asked for that no case reached) exits 2, as
    ``mqconform run`` does: its verdicts are not evidence."""
    config = session.config
    if _worker(config) or getattr(config, "_mq_adapter", None) is None:
        return
    record = getattr(config, "_mq_record", None)
    results = config.getoption("--mq-results", default=None)
    folder = Path(results) / WORKERS if results else None
    parts = [json.loads(p.read_text(encoding="utf-8")) for p in sorted(folder.glob("*.json"))] if folder else []
    if parts:
        from conformance.records.results import RunRecord

        record = RunRecord.from_parts(parts)
        record.write(Path(results))
        shutil.rmtree(folder, ignore_errors=True)
    if record is not None and record.error is not None and session.exitstatus in (0, 1):
        config._mq_error = record.error
        session.exitstatus = 2


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    error = getattr(config, "_mq_error", None)
    if error is not None:
        terminalreporter.write_line(f"mqconform: not a verdict (exit 2): {error}")


def pytest_generate_tests(metafunc):
    if "mq_area" in metafunc.fixturenames:
        areas = getattr(metafunc.config, "_mq_areas", None) or parse_areas(None)
        metafunc.parametrize("mq_area", areas)


@pytest.fixture(scope="session")
def mq_adapter(pytestconfig):
    """The adapter chosen with ``--mq-adapter`` / ``--mq-adapter-opt``."""
    adapter = getattr(pytestconfig, "_mq_adapter", None)
    if adapter is None:
        pytest.skip("no system under test: give --mq-adapter NAME (see mqconform adapters)")
    yield adapter
    adapter.close()


@pytest.fixture(scope="session")
def mq_record(pytestconfig, mq_adapter):
    """The session's run record; written to ``--mq-results`` at the end."""
    from conformance.records.results import RunRecord

    try:
        describe = mq_adapter.describe()
    except AdapterError as exc:
        pytest.exit(f"mqconform: adapter {mq_adapter.name!r}: {exc}", returncode=2)
    record = RunRecord(
        adapter=mq_adapter.name, describe=describe,
        capabilities=mq_adapter.capabilities().to_json(), areas=pytestconfig._mq_areas,
        seed=pytestconfig._mq_seed, examples=_examples(pytestconfig),
        concurrency=getattr(pytestconfig, "_mq_concurrency", None),
    )
    pytestconfig._mq_record = record
    yield record
    record.ended = time.time()
    results = pytestconfig.getoption("--mq-results")
    worker = _worker(pytestconfig)
    if results and worker:
        from conformance.records.history import write_json_atomic

        write_json_atomic(Path(results) / WORKERS / f"{worker}.json", record.part_json())
    elif results:
        record.write(Path(results))
        from adapters.subprocess import keep_artifacts

        keep_artifacts(mq_adapter, Path(results))   # a protocol server's log


@pytest.fixture
def mq_run_area(pytestconfig, mq_adapter, mq_record):
    """Run one area's machine against the adapter; fails the test on a non-conformance."""
    from conformance.runner.engine import area_platforms, bound_machine, run_machine
    from conformance.records.history import save_failure, with_alternatives
    from conformance.runner.minimise import minimise
    from conformance.records.render import render_failure
    from conformance.runner.session import HarnessError, NonConformance

    def run(area: str) -> None:
        if getattr(pytestconfig, "_mq_concurrency", None):
            pytest.skip("concurrent cases run instead of the areas' machines (--mq-concurrency)")
        platforms = area_platforms(area, mq_adapter.capabilities())
        if not platforms:
            pytest.skip(f"area {area!r} is not applicable to adapter {mq_adapter.name!r}")
        machine = None
        problem = None   # failed outside the except blocks, so that pytest prints it once, unchained
        try:
            for platform in platforms:
                machine = bound_machine(mq_adapter, area, platform, pytestconfig._mq_seed,
                                        pytestconfig._mq_options, mq_record.coverage)
                run_machine(machine, settings(settings.default, max_examples=_examples(pytestconfig),
                                              deadline=None, suppress_health_check=list(HealthCheck)))
        except NonConformance as exc:
            tolerance = mq_adapter.capabilities().expiry_tolerance
            failure = with_alternatives(minimise(exc.failure, mq_adapter), tolerance)
            mq_record.add_failure(failure)
            where = _failures(pytestconfig)
            path = save_failure(failure, where)
            problem = f"{render_failure(failure)}\n\nReplay file: {path}\nReplay with: mqconform replay {path}"
            # the area stops at its first departure: the platforms after this one were not run, and say so
            left = platforms[platforms.index(failure.platform) + 1:] if failure.platform in platforms else []
            if left:
                problem += (f"\n\nNot run after this departure: platform {', '.join(left)} (the area stops at its "
                            f"first departure; mqconform run --area {area} --keep-going N runs every platform)")
            # Departures from other rules met while Hypothesis shrank this one: reported too.
            for other in machine.session.other_departures(failure.rules, lambda f: minimise(f, mq_adapter)):
                other = with_alternatives(other, tolerance)
                mq_record.add_failure(other)
                problem += (f"\n\nAlso broken ({', '.join(other.blamed)}), met while shrinking: "
                            f"mqconform replay {save_failure(other, where)}")
        except HarnessError as exc:
            mq_record.error = str(exc)
            mq_record.errored.append(area)
            problem = f"harness error (not a verdict): {exc}"
        except Exception:
            broken = machine.session.broken if machine is not None else None
            if broken is None:
                raise
            mq_record.error = str(broken)
            mq_record.errored.append(area)
            problem = f"harness error (not a verdict): {broken}"
        if problem is None and getattr(pytestconfig, "_mq_recorded", None):
            problem = _replay_recorded(pytestconfig, mq_adapter, mq_record, area, platforms)
        if problem is None:
            from conformance.records.results import unreached_areas

            if unreached_areas(mq_record.rule_rows(), [area]):
                # cases ran, yet none reached a rule of the area: no verdict, and never a pass
                mq_record.error = (f"area {area}: {mq_record.coverage.examples} cases ran in the session but no "
                                   f"rule of the area was exercised (adapter {mq_adapter.name!r})")
                mq_record.errored.append(area)
                problem = f"harness error (not a verdict): {mq_record.error}"
        if problem is not None:
            pytest.fail(problem, pytrace=False)

    return run


def _failures(config) -> Path:
    """Where the areas' tests save their failures' replay files."""
    return Path(config.getoption("--mq-results") or ".mqconform") / "failures"


def _replay_recorded(config, adapter, record, area: str, platforms) -> str | None:
    """Replay the recorded counterexamples of ``area`` on ``platforms`` after its search found nothing: what the
    test fails with where one shows its departure again (None: none did), each replay noted in ``record``."""
    from conformance.records.history import save_failure, with_alternatives
    from conformance.records.render import render_failure
    from conformance.runner.minimise import minimise
    from conformance.runner.recorded import replay_recorded
    from conformance.runner.session import HarnessError

    problems = []
    for kept in config._mq_recorded:
        if kept.failure.area != area or kept.failure.platform not in platforms:
            continue
        try:
            shown, again = replay_recorded(adapter, kept.failure, config._mq_options, record.coverage)
        except HarnessError as exc:
            record.error = str(exc)
            record.errored.append(area)
            return f"harness error (not a verdict): {exc}"
        record.recorded.append({"file": kept.name, "area": area, "platform": kept.failure.platform, "shown": shown})
        if again is None:
            continue
        # (minimised as the search's departures are, and as a run's recorded ones: engine.run_area)
        failure = with_alternatives(minimise(again, adapter, set_aside=frozenset(kept.failure.set_aside)),
                                    adapter.capabilities().expiry_tolerance)
        record.add_failure(failure)
        path = save_failure(failure, _failures(config))
        problems.append(f"{render_failure(failure)}\n\nShown again by the recorded counterexample {kept.name}, "
                        f"replayed after the search found no departure.\nReplay file: {path}\n"
                        f"Replay with: mqconform replay {path}")
    return "\n\n".join(problems) or None


@pytest.fixture
def mq_run_concurrent(pytestconfig, mq_adapter, mq_record):
    """Run concurrent cases of ``--mq-concurrency`` clients against the adapter (skipped without it): as many as
    the Hypothesis profile's examples, going on after a race with its rules set aside, each race shrunk and
    recorded; fails the test with every race's timeline and replay file."""
    from conformance.checker.linearizable import INDETERMINATE
    from conformance.records.races import race_replay_command, render_race, save_race
    from conformance.runner.concurrent import race_file, search_races, shrink

    def run() -> None:
        clients = getattr(pytestconfig, "_mq_concurrency", None)
        if not clients:
            pytest.skip("no concurrent cases asked for (--mq-concurrency N)")
        capabilities = mq_adapter.capabilities()
        platform = "distributed" if "distributed" in capabilities.platforms else capabilities.platforms[0]
        where = Path(pytestconfig.getoption("--mq-results") or ".mqconform")
        shown = []

        def found(race) -> tuple[str, ...]:
            record = race_file(race, shrink(mq_adapter, race, platform), adapter=mq_adapter.name,
                               adapter_options=pytestconfig._mq_options, platform=platform)
            mq_record.add_race(record)
            shown.append(f"{render_race(record)}\n\nReplay with: {race_replay_command(save_race(record, where))}")
            return record.rules

        from collections import Counter

        verdicts: Counter = Counter()
        search_races(mq_adapter, pytestconfig._mq_seed, _examples(pytestconfig), clients=clients,
                     platform=platform, coverage=mq_record.coverage, verdicts=verdicts, keep_going=None,
                     on_race=found)
        if shown:
            pytest.fail("\n\n".join(shown), pytrace=False)
        if verdicts[INDETERMINATE] == sum(verdicts.values()):
            mq_record.error = "every concurrent case was left indeterminate by the checker's bound: no verdict"
            mq_record.errored.append("core")
            pytest.fail(f"harness error (not a verdict): {mq_record.error}", pytrace=False)

    return run


def pytest_report_header(config):
    adapter = getattr(config, "_mq_adapter", None)
    if adapter is None:
        return None
    clients = getattr(config, "_mq_concurrency", None)
    return (f"mqconform: adapter {adapter.name} ({adapter.capabilities().platform}), "
            f"areas {','.join(config._mq_areas)}, seed {config._mq_seed}, "
            + (f"concurrent cases of {clients} clients, " if clients else "") +
            f"hypothesis profile {os.environ.get('HYPOTHESIS_PROFILE', 'from --hypothesis-profile or default')}")
