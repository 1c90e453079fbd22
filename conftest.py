"""Test configuration for the kit's own tests (``tests/``).

The Hypothesis profile comes from ``HYPOTHESIS_PROFILE`` (``dev`` by default,
``ci`` in CI): the plugin's ``mqconform-dev`` and ``mqconform-ci`` under the suite's
own names.  The suite's own Hypothesis tests draw as the kit's runs do, independent
of the code loaded (conformance/runner/stable.py): a seed chosen for a test stays good
when any module of the kit changes.

Tests that need a broker, Spark or a browser carry the mark ``broker``, ``spark`` or
``browser``; ``scripts/test.sh --quick`` leaves them out (``MQCONFORM_QUICK=1``) and
refuses, in every other test, to start a broker or Spark (``MQCONFORM_REFUSE``): a
test that needs one without saying so fails there at once.  At the end of a run the
time spent per test file is printed, slowest first.

Nothing a test starts may outlive the suite: every process a test starts carries the
suite's mark in its environment (:data:`SESSION_MARK`, and the test's id in
:data:`TEST_MARK`), and once every worker has ended, a process that still carries it
(a broker, a server, a reaper) is named with the test that started it, stopped, and
fails the run (:func:`left_behind`).

The tests of a broker's mapping share one private broker of each kind per test process
(``rabbitmq_broker``, ``activemq_broker``), each test on queues of its own; with
``--dist loadgroup`` (scripts/test.sh) every test that uses one runs on one worker, so
the suite starts each shared broker once.  A test that restarts the shared broker leaves
it running; one that needs a broker no other test may see (killed, or of other settings)
starts its own.
"""

import contextlib
import json
import os
import time
import uuid
from collections import defaultdict
from pathlib import Path

import psutil
import pytest
from hypothesis import settings

import conformance.runner.plugin  # noqa: F401  (registers the profiles)
from adapters.brokers.server import REFUSE
from tests.processkit import SESSION_MARK, TEST_MARK, left_behind, stop_spark_gateway
from conformance.runner.stable import stable_generation

#: ``--dist loadgroup`` done by the suite itself: pytest-xdist's own stopped grouping with pytest 9.2.
pytest_plugins = ["tests.xdist_groups"]

for _name in ("dev", "ci"):
    settings.register_profile(_name, settings.get_profile(f"mqconform-{_name}"))
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev"))
_STABLE = stable_generation()   # kept: a context left unreferenced would be closed, and generation restored
_STABLE.__enter__()               # for the whole test process, never left

#: What a test may need that the quick suite leaves out, and why it is slow or needs installing.
NEEDS = {
    "broker": "starts RabbitMQ or ActiveMQ (seconds each, and real time)",
    "spark": "starts Spark (a JVM, about 10 s)",
    "browser": "runs headless Chromium",
}
QUICK = os.environ.get("MQCONFORM_QUICK") == "1"



def _own_mark() -> str:
    """This run's mark: the one a pytest-xdist worker was started with by the process that runs the suite, else
    a new one (a pytest a test runs as a subprocess is a suite of its own, and must not wait for the outer one's
    servers)."""
    mark = os.environ.get(SESSION_MARK, "")
    if os.environ.get("PYTEST_XDIST_WORKER") and mark.split("-", 1)[0] == str(os.getppid()):
        return mark
    return f"{os.getpid()}-{uuid.uuid4().hex}"


os.environ[SESSION_MARK] = _own_mark()


def pytest_configure(config):
    for name, why in NEEDS.items():
        config.addinivalue_line("markers", f"{name}: the test {why}; scripts/test.sh --quick leaves it out")
    config.addinivalue_line("markers", "own_collector: the test is about the cyclic collector's state itself, and "
                                       "runs with the process's, not with the collector tuned as the others")


@contextlib.contextmanager
def _tuned_for(item):
    """A test's set-up and body run with the cyclic collector tuned as the kit tunes it for its own work
    (:func:`conformance.runner.collector.collector_tuned`): what the worker process held before the test is
    left out of the collector's walks, and what the test left in cycles is collected at its end.  At Python's
    thresholds the collector walked the worker's whole heap again and again between and around the kit's runs
    (docs/testing.md, 2026-12-07, tenth session); the tests whose subject is the collector itself
    (``own_collector``) run without it."""
    if item.get_closest_marker("own_collector") is not None:
        yield
        return
    from conformance.runner.collector import collector_tuned

    with collector_tuned():
        yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item):
    with _tuned_for(item):
        yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    with _tuned_for(item):
        yield


#: The brokers shared by the mapping tests: fixture name -> broker.
SHARED_BROKERS = {"rabbitmq_broker": "rabbitmq", "activemq_broker": "activemq"}


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """A test that uses a shared broker runs in that broker's group: on one worker, beside its broker (before
    pytest-xdist names the groups, so that its own hook sees the mark)."""
    for item in items:
        for fixture, name in SHARED_BROKERS.items():
            if fixture in getattr(item, "fixturenames", ()):
                item.add_marker(pytest.mark.xdist_group(name))


def _shared(name, tmp_path_factory):
    from tests.brokerkit import running_broker

    yield from running_broker(name, tmp_path_factory.mktemp(f"shared-{name}"))


@pytest.fixture(scope="session")
def rabbitmq_broker(tmp_path_factory):
    """One private RabbitMQ for this test process, started on first use, stopped by PID at its end."""
    yield from _shared("rabbitmq", tmp_path_factory)


@pytest.fixture(scope="session")
def activemq_broker(tmp_path_factory):
    """One private ActiveMQ (STOMP and OpenWire) for this test process, started on first use, stopped at its end."""
    yield from _shared("activemq", tmp_path_factory)


@pytest.fixture(autouse=True)
def _refuse_what_is_not_declared(request, monkeypatch):
    """In the quick suite, a test not marked as needing a broker or Spark may not start one."""
    if QUICK:
        marks = {m.name for m in request.node.iter_markers()}
        monkeypatch.setenv(REFUSE, ",".join(n for n in ("broker", "spark") if n not in marks))
    yield


def _cpu() -> float:
    """CPU seconds this process and the children it has waited for have used (servers a test started and stopped)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


_CPU_MARK = pytest.StashKey[float]()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    item.stash[_CPU_MARK] = _cpu()
    os.environ[TEST_MARK] = item.nodeid
    try:
        yield
    finally:
        os.environ.pop(TEST_MARK, None)


@pytest.hookimpl(hookwrapper=True)
def pytest_sessionfinish(session, exitstatus):
    """In the process that runs the suite, after every worker has ended: fail when a test left a process running.
    (Every process first stops the Spark JVM its campaigns shared, which PySpark keeps until the process ends.)"""
    yield
    stop_spark_gateway()
    if hasattr(session.config, "workerinput"):
        return
    me = psutil.Process()
    lines = left_behind(os.environ[SESSION_MARK], {me.pid} | {p.pid for p in me.parents()})
    if lines:
        writer = session.config.get_terminal_writer()
        writer.line()
        writer.line(f"{len(lines)} process(es) left running by the tests (killed now):", red=True)
        for line in lines:
            writer.line(f"  {line}")
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Each phase's report carries the CPU seconds it used (``cpu`` among its user properties), so that the
    summary can say where the CPU went as well as the wall clock: with more workers than cores, a test's
    seconds include the time it waited for a core."""
    outcome = yield
    now = _cpu()
    report = outcome.get_result()
    report.user_properties.append(("cpu", now - item.stash.get(_CPU_MARK, now)))
    item.stash[_CPU_MARK] = now


#: Where the summary writes each test's seconds, when set.
WRITE_DURATIONS = "MQCONFORM_WRITE_DURATIONS"


def _machine_busy() -> float:
    """CPU seconds the whole machine has been busy since it started (every process, every core)."""
    t = psutil.cpu_times()
    # (Linux counts a guest's time in user and nice as well: left out here once)
    not_busy = ("idle", "iowait", "guest", "guest_nice")
    return sum(t) - sum(getattr(t, name, 0.0) for name in not_busy)


_MACHINE_AT_START: tuple[float, float] | None = None


def pytest_sessionstart(session):
    global _MACHINE_AT_START
    _MACHINE_AT_START = (time.monotonic(), _machine_busy())


def _machine_line() -> str | None:
    """What the whole machine's CPU did during the run: the test processes count only their own CPU and that of the
    servers they started and stopped, not a shared broker's, nor Spark's JVMs and Python workers (a time-boxed
    campaign on two Spark workers used 130 s of CPU, its test counted 1.3 s)."""
    if _MACHINE_AT_START is None:
        return None
    began, busy = _MACHINE_AT_START
    seconds, used = time.monotonic() - began, _machine_busy() - busy
    cores = psutil.cpu_count() or 1
    return (f"the machine: {used:.0f} s of CPU in {seconds:.0f} s, {100 * used / (seconds * cores):.0f}% of its "
            f"{cores} cores (every process: the tests, the brokers, Spark, and anything else running)")


def pytest_terminal_summary(terminalreporter):
    per_file: dict[str, float] = defaultdict(float)
    cpu_per_file: dict[str, float] = defaultdict(float)
    per_test: dict[str, float] = defaultdict(float)
    seconds_per_test: dict[str, float] = defaultdict(float)
    for reports in terminalreporter.stats.values():
        for report in reports:
            nodeid, duration = getattr(report, "nodeid", ""), getattr(report, "duration", None)
            if nodeid and isinstance(duration, (int, float)):
                path = nodeid.split("::", 1)[0]
                cpu = sum(v for k, v in getattr(report, "user_properties", ()) if k == "cpu")
                per_file[path] += duration
                cpu_per_file[path] += cpu
                per_test[nodeid] += cpu
                seconds_per_test[nodeid] += duration
    if not per_file:
        return
    if os.environ.get(WRITE_DURATIONS):
        # what tests/xdist_groups.py orders the units by (scripts/test.sh --write-durations): each test's seconds
        # and CPU seconds
        Path(os.environ[WRITE_DURATIONS]).write_text(json.dumps(
            {nodeid: [round(s, 2), round(per_test[nodeid], 2)] for nodeid, s in sorted(seconds_per_test.items())},
            indent=0) + "\n")
    terminalreporter.write_sep("=", "time per test file (setup, call and teardown, all workers; CPU of the "
                                    "test process and the servers it stopped)")
    total, cpu = sum(per_file.values()), sum(cpu_per_file.values())
    for path, seconds in sorted(per_file.items(), key=lambda kv: -kv[1]):
        terminalreporter.write_line(f"{seconds:8.1f}s {100 * seconds / total:5.1f}%  {cpu_per_file[path]:8.1f}s CPU"
                                    f"  {path}")
    terminalreporter.write_line(f"{total:8.1f}s in all          {cpu:8.1f}s CPU")
    machine = _machine_line()
    if machine:
        terminalreporter.write_line(machine)
    terminalreporter.write_sep("=", "25 tests that used the most CPU (all phases)")
    for nodeid, seconds in sorted(per_test.items(), key=lambda kv: -kv[1])[:25]:
        terminalreporter.write_line(f"{seconds:8.1f}s CPU  {nodeid}")
