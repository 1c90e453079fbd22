"""The suite's tests of one group run on one worker (tests/xdist_groups.py): a shared broker is started once,
a module's fixture made once.  Checked on a small suite of its own, three workers, run as the suite is run."""

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.xdist_groups import UNKNOWN, WAITS, group_of, longest_first, measured

ROOT = Path(__file__).resolve().parent.parent

SUITE = {
    # a group named by a module's mark, and a test of its own group beside tests of none
    "test_marked.py": '''
import pytest
from record import record
pytestmark = pytest.mark.xdist_group("marked")

@pytest.mark.parametrize("i", range(6))
def test_marked(i):
    record("marked", i)
''',
    # a group given in a hook, as conftest.py gives the shared brokers' tests theirs; and tests of no group
    "test_fixture.py": '''
import pytest
from record import record

@pytest.mark.parametrize("i", range(6))
def test_uses_shared(shared, i):
    record("shared", i)

@pytest.mark.parametrize("i", range(12))
def test_alone(i):
    record("alone", i)
''',
    "conftest.py": '''
import pytest

@pytest.fixture(scope="session")
def shared():
    return object()

@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    for item in items:
        if "shared" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.xdist_group("shared"))
''',
    "record.py": '''
import json, os, time
def record(kind, i):
    time.sleep(0.05)   # long enough that three workers each take some
    with open(os.environ["RECORD"], "a") as f:
        f.write(json.dumps([kind, i, os.environ["PYTEST_XDIST_WORKER"]]) + "\\n")
''',
}


def _run(tmp_path, *extra):
    for name, text in SUITE.items():
        (tmp_path / name).write_text(text)
    record = tmp_path / "record.jsonl"
    env = dict(os.environ, RECORD=str(record), PYTHONPATH=f"{ROOT}{os.pathsep}{tmp_path}")
    proc = subprocess.run([sys.executable, "-m", "pytest", "-n", "3", "--dist", "loadgroup", "-p", "no:cacheprovider",
                           "-p", "no:randomly", *extra, "-q", str(tmp_path)],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    workers: dict[str, set] = {}
    for line in record.read_text().splitlines():
        kind, _, worker = json.loads(line)
        workers.setdefault(kind, set()).add(worker)
    return workers, [tuple(json.loads(line)[:2]) for line in record.read_text().splitlines()]


def test_each_group_runs_on_one_worker_and_the_other_tests_are_spread(tmp_path, monkeypatch):
    # the last test of no group measured longest: it is among the first three the workers start
    durations = tmp_path / "durations.json"
    durations.write_text(json.dumps({"test_fixture.py::test_alone[11]": 100.0}))
    monkeypatch.setenv("MQCONFORM_TEST_DURATIONS", str(durations))
    workers, order = _run(tmp_path, "-p", "tests.xdist_groups")
    assert len(workers["marked"]) == 1, workers
    assert len(workers["shared"]) == 1, workers
    assert len(workers["alone"]) > 1, workers
    assert ("alone", 11) in order[:3], order


def test_a_tests_group_is_its_marks_names_joined():
    class Mark:
        def __init__(self, *args, **kwargs):
            self.args, self.kwargs = args, kwargs

    class Item:
        def __init__(self, *marks):
            self.marks = marks

        def iter_markers(self, name):
            assert name == "xdist_group"
            return iter(self.marks)

    assert group_of(Item()) is None
    assert group_of(Item(Mark("b"), Mark(name="a"))) == "a_b"
    assert group_of(Item(Mark())) == "default"


class _Item:
    def __init__(self, nodeid, group=None, waits=False):
        self.nodeid, self.group, self.waits = nodeid, group, waits

    def iter_markers(self, name):
        return iter([type("Mark", (), {"args": (self.group,), "kwargs": {}})()] if self.group else [])

    def get_closest_marker(self, name):
        return object() if name == WAITS and self.waits else None


def test_units_go_longest_first_a_group_by_its_tests_sum_and_kept_together():
    items = [_Item("a"), _Item("g1", "g"), _Item("b"), _Item("g2", "g"), _Item("c"), _Item("d")]
    seconds = {"a": 3.0, "g1": 2.0, "g2": 2.5, "b": 10.0, "c": 0.1}
    # b 10, the group 4.5, a 3, d unknown, c 0.1
    assert UNKNOWN < 3.0
    assert [i.nodeid for i in longest_first(items, seconds)] == ["b", "g1", "g2", "a", "d", "c"]
    # without measurements every test counts alike: the group of two first, the others in the collection's order
    assert [i.nodeid for i in longest_first(items, {})] == ["g1", "g2", "a", "b", "c", "d"]


def test_units_whose_measured_cpu_is_a_small_share_of_their_seconds_wait_as_a_brokers_do(tmp_path, monkeypatch):
    """A time-boxed test that computes little (CPU a tenth of its seconds) is spread among those that compute, as a
    broker's are; one that computes all along, or whose CPU was not measured, is not."""
    seconds = {"w1": 40.0, "c1": 35.0, "c2": 25.0, "t1": 30.0, "u1": 20.0}
    cpu = {"w1": 4.0, "c1": 30.0, "c2": 20.0, "t1": 3.0}
    items = [_Item(n) for n in seconds]
    # w1 and t1 wait (a tenth of their seconds): the waiting list's share is ahead once w1 is out, so c1 and c2 go
    # before t1; u1, not measured, computes
    assert [i.nodeid for i in longest_first(items, seconds, cpu)] == ["w1", "c1", "c2", "t1", "u1"]
    # without the CPU measured, longest first
    assert [i.nodeid for i in longest_first(items, seconds)] == ["w1", "c1", "t1", "c2", "u1"]
    # the file's two forms: [seconds, cpu], and the seconds alone (written before CPU was measured)
    written = tmp_path / "durations.json"
    written.write_text(json.dumps({"a": [3.0, 1.5], "b": 2.0}))
    monkeypatch.setenv("MQCONFORM_TEST_DURATIONS", str(written))
    assert measured() == ({"a": 3.0, "b": 2.0}, {"a": 1.5})
    for bad in ([1, 2], {"a": [3.0]}, {"a": "x"}):   # not of this shape: nothing measured, nothing raised
        written.write_text(json.dumps(bad))
        assert measured() == ({}, {}), bad


def test_units_that_wait_on_a_broker_are_spread_among_the_others_not_handed_out_together():
    """Four broker units (marked ``broker``) and four others, each list longest first: merged so that each list
    has handed out about the same share of its seconds at every point, never the broker units all first."""
    waits = {"w1": 40.0, "w2": 30.0, "w3": 20.0, "w4": 10.0}
    computes = {"c1": 35.0, "c2": 25.0, "c3": 25.0, "c4": 15.0}
    items = [_Item(n, waits=True) for n in waits] + [_Item(n) for n in computes]
    order = [i.nodeid for i in longest_first(items, {**waits, **computes})]
    # w1 (the longest of all) first; then whichever list is behind its own share
    assert order == ["w1", "c1", "c2", "w2", "c3", "w3", "c4", "w4"]
    # each list keeps its own order, longest first
    assert [n for n in order if n in waits] == list(waits) and [n for n in order if n in computes] == list(computes)
    # a broker group counts as one unit that waits, its tests kept together
    items = [_Item("g1", "g", waits=True), _Item("a"), _Item("g2", "g", waits=True), _Item("b")]
    assert [i.nodeid for i in longest_first(items, {"g1": 5.0, "g2": 5.0, "a": 20.0, "b": 1.0})] == ["a", "g1", "g2", "b"]
    # with no broker units at all, longest first as before
    items = [_Item("a"), _Item("b"), _Item("c")]
    assert [i.nodeid for i in longest_first(items, {"a": 1.0, "b": 3.0, "c": 2.0})] == ["b", "c", "a"]
