"""pytest-xdist's ``--dist loadgroup`` that does not depend on changing node ids.

pytest-xdist groups the tests marked ``xdist_group`` by appending ``@name`` to each test's node id on the
worker, and reading it back on the controller.  From pytest 9.2 a node id is no longer changed that way
(pytest-dev/pytest-xdist#1386): the marks are kept, nothing fails, and the tests of a group are spread over
the workers as if they had none: every worker then starts its own shared broker, and a module fixture meant to
run once runs once per worker.  This plugin (loaded by the root ``conftest.py``) does the grouping itself:

- the controller makes a directory and hands it to each worker (``workerinput``);
- each worker, once its items are collected and marked, writes there which of its node ids belong to which group
  (its own file, replaced whole, so a reader never sees half of it);
- the controller's scheduler, pytest-xdist's own scope scheduling, reads the groups back when it first splits the
  collection into units: a group is one unit, every other test a unit of its own, as ``loadgroup`` does.

With a pytest that still changes node ids, the ids written are the changed ones, so the same groups come out.
``tests/test_xdist_groups.py`` runs a small suite on three workers and checks that each group ran on one.

The longest units go first.  Each worker orders its collection by how long each unit (a group, or a test alone)
took in a measured run (``tests/data/durations.json``, written by ``scripts/test.sh --write-durations``), longest
first, a group's tests kept together; the scheduler hands the units out in that order.  A run whose longest test
started last ends with one worker busy and the others idle; handed out longest first, the units fill the workers
evenly (the "longest processing time first" rule).  A test the file does not name counts as :data:`UNKNOWN`
seconds.  The units that wait on a broker (a test marked ``broker``), and those whose measured CPU is a small share
of their seconds (:data:`WAITING_SHARE`: a time box, a Spark job, a process of their own; the file has each test's
CPU seconds beside its seconds), are spread among the others, each kind handing out the same share of its seconds
at every point (:func:`spread`), so that the workers do not all wait at once.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

import pytest
from xdist.scheduler import LoadScopeScheduling

#: The ``workerinput`` key that carries the directory of groups.
KEY = "mqconform_groups"
#: Seconds each test took in a measured run (setup, call and teardown): node id -> seconds.
DURATIONS = Path(__file__).parent / "data" / "durations.json"
#: Seconds counted for a test the measured run did not have (about the suite's median).
UNKNOWN = 0.5


def measured() -> tuple[dict[str, float], dict[str, float]]:
    """Each test's measured seconds, and its CPU seconds where the file has them (``[seconds, cpu]``; a file
    written before CPU was measured has the seconds alone); ``MQCONFORM_TEST_DURATIONS`` names another file, and
    a missing one measures nothing."""
    try:
        data = json.loads(Path(os.environ.get("MQCONFORM_TEST_DURATIONS", DURATIONS)).read_text())
        seconds = {nodeid: float(v[0] if isinstance(v, list) else v) for nodeid, v in data.items()}
        return seconds, {nodeid: float(v[1]) for nodeid, v in data.items() if isinstance(v, list)}
    except (OSError, ValueError, TypeError, IndexError, AttributeError):
        return {}, {}   # (a file not of this shape orders nothing: the suite runs all the same)


def longest_first(items: list, seconds: dict[str, float], cpu: dict[str, float] | None = None) -> list:
    """``items`` in units (a group's tests together, every other test alone), the units longest first by
    ``seconds`` (ties in collection order), each unit's tests in collection order; the units that wait (on a
    broker: a test marked ``broker``; or on anything, as ``cpu``, the CPU seconds measured, says) spread evenly
    among the others (:func:`spread`)."""
    units: dict[str, list] = {}
    for item in items:
        units.setdefault(unit_of(item), []).append(item)
    cost = {unit: sum(seconds.get(item.nodeid, UNKNOWN) for item in members)
            for unit, members in units.items()}
    order = sorted(units, key=lambda unit: -cost[unit])
    cpu = cpu or {}
    waiting = {unit for unit, members in units.items()
               if any(item.get_closest_marker(WAITS) is not None for item in members)
               or all(item.nodeid in cpu for item in members)
               and sum(cpu[item.nodeid] for item in members) < WAITING_SHARE * cost[unit]}
    order = spread([u for u in order if u in waiting], [u for u in order if u not in waiting], cost)
    return [item for unit in order for item in units[unit]]


#: The mark of the tests that spend much of their time waiting on a broker (its start, its restarts, its calls).
WAITS = "broker"
#: A unit whose measured CPU is less than this share of its seconds waits as a broker's tests do (a time box, a
#: Spark job, a process of its own): measured with three workers on two cores, a test that computes all along
#: uses about two thirds of its seconds (it waits for a core the rest), one that waits a fifth or less.
WAITING_SHARE = 0.4


def spread(waiting: list[str], others: list[str], cost: dict[str, float]) -> list[str]:
    """Two lists of units, each longest first, merged so that each has handed out the same share of its seconds
    at every point: the next unit is from the list that has handed out the smaller share of its own (on a tie,
    the longer unit).

    A broker's tests spend much of their time waiting on it (a start, a restart, a call that takes real time);
    handed out longest first with everything else, they came first together, and three workers waiting on
    brokers at once left the two cores a fifth idle for the suite's first four minutes (measured in
    docs/testing.md).  Spread among the tests that compute, the workers waiting at any time are about the broker
    tests' share of the suite's seconds (four in ten), and the others keep the cores busy."""
    lists = [waiting, others]
    totals = [sum(cost[u] for u in units) or 1.0 for units in lists]
    handed, at, out = [0.0, 0.0], [0, 0], []
    while at[0] < len(waiting) or at[1] < len(others):
        live = [k for k in (0, 1) if at[k] < len(lists[k])]
        k = min(live, key=lambda k: (handed[k] / totals[k], -cost[lists[k][at[k]]]))
        unit = lists[k][at[k]]
        out.append(unit)
        handed[k] += cost[unit]
        at[k] += 1
    return out


def group_of(item: pytest.Item) -> str | None:
    """The group ``item`` runs in: its ``xdist_group`` marks' names joined (as pytest-xdist joins them), or None."""
    names = {str(m.args[0] if m.args else m.kwargs.get("name", "default")) for m in item.iter_markers("xdist_group")}
    return "_".join(sorted(names)) or None


def unit_of(item: pytest.Item) -> str:
    """The unit of work ``item`` is scheduled in: its group's, or its own node id."""
    group = group_of(item)
    return f"group:{group}" if group is not None else item.nodeid


def _groups_dir(config: pytest.Config) -> Path | None:
    return getattr(config, "_mqconform_groups", None)


def pytest_configure(config: pytest.Config) -> None:
    if hasattr(config, "workerinput"):
        return
    if config.getoption("dist", "no") == "loadgroup" and config.getoption("numprocesses", None):
        config._mqconform_groups = Path(tempfile.mkdtemp(prefix="mqconform-groups-"))


def pytest_unconfigure(config: pytest.Config) -> None:
    directory = _groups_dir(config)
    if directory is not None:
        shutil.rmtree(directory, ignore_errors=True)


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node) -> None:
    directory = _groups_dir(node.config)
    if directory is not None:
        node.workerinput[KEY] = str(directory)


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    directory = getattr(config, "workerinput", {}).get(KEY)
    if directory is None:
        return
    items[:] = longest_first(items, *measured())
    units = {item.nodeid: unit for item in items if (unit := unit_of(item)) != item.nodeid}
    worker = config.workerinput["workerid"]
    part = Path(directory) / f"{worker}.part"
    part.write_text(json.dumps(units))
    part.replace(Path(directory) / f"{worker}.json")


@pytest.hookimpl(tryfirst=True, optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log):
    directory = _groups_dir(config)
    if directory is None:
        return None
    config.option.loadscopereorder = False   # the units in the workers' order (longest first), not by size
    return GroupScheduling(config, log, directory)


class GroupScheduling(LoadScopeScheduling):
    """Scope scheduling whose scopes are the groups the workers wrote down, and each other test alone."""

    def __init__(self, config: pytest.Config, log, directory: Path) -> None:
        super().__init__(config, log)
        self._directory = directory
        self._units: dict[str, str] | None = None

    def _split_scope(self, nodeid: str) -> str:
        if self._units is None:
            # Every worker collected the same tests (the scheduler checks that before it splits them): one
            # worker's groups are everyone's.
            written = sorted(self._directory.glob("*.json"))
            self._units = json.loads(written[0].read_text()) if written else {}
        return self._units.get(nodeid, nodeid)
