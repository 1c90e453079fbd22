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
"""

import os
from collections import defaultdict

import pytest
from hypothesis import settings

import conformance.runner.plugin  # noqa: F401  (registers the profiles)
from adapters.brokers.server import REFUSE
from conformance.runner.stable import stable_generation

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


def pytest_configure(config):
    for name, why in NEEDS.items():
        config.addinivalue_line("markers", f"{name}: the test {why}; scripts/test.sh --quick leaves it out")


@pytest.fixture(autouse=True)
def _refuse_what_is_not_declared(request, monkeypatch):
    """In the quick suite, a test not marked as needing a broker or Spark may not start one."""
    if QUICK:
        marks = {m.name for m in request.node.iter_markers()}
        monkeypatch.setenv(REFUSE, ",".join(n for n in ("broker", "spark") if n not in marks))
    yield


def pytest_terminal_summary(terminalreporter):
    per_file: dict[str, float] = defaultdict(float)
    for reports in terminalreporter.stats.values():
        for report in reports:
            nodeid, duration = getattr(report, "nodeid", ""), getattr(report, "duration", None)
            if nodeid and isinstance(duration, (int, float)):
                per_file[nodeid.split("::", 1)[0]] += duration
    if not per_file:
        return
    terminalreporter.write_sep("=", "time per test file (setup, call and teardown, all workers)")
    total = sum(per_file.values())
    for path, seconds in sorted(per_file.items(), key=lambda kv: -kv[1]):
        terminalreporter.write_line(f"{seconds:8.1f}s {100 * seconds / total:5.1f}%  {path}")
    terminalreporter.write_line(f"{total:8.1f}s in all")
