"""The suite's tests of one group run on one worker (tests/xdist_groups.py): a shared broker is started once,
a module's fixture made once.  Checked on a small suite of its own, three workers, run as the suite is run."""

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.xdist_groups import UNKNOWN, group_of, longest_first

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
    def __init__(self, nodeid, group=None):
        self.nodeid, self.group = nodeid, group

    def iter_markers(self, name):
        return iter([type("Mark", (), {"args": (self.group,), "kwargs": {}})()] if self.group else [])


def test_units_go_longest_first_a_group_by_its_tests_sum_and_kept_together():
    items = [_Item("a"), _Item("g1", "g"), _Item("b"), _Item("g2", "g"), _Item("c"), _Item("d")]
    seconds = {"a": 3.0, "g1": 2.0, "g2": 2.5, "b": 10.0, "c": 0.1}
    # b 10, the group 4.5, a 3, d unknown, c 0.1
    assert UNKNOWN < 3.0
    assert [i.nodeid for i in longest_first(items, seconds)] == ["b", "g1", "g2", "a", "d", "c"]
    # without measurements every test counts alike: the group of two first, the others in the collection's order
    assert [i.nodeid for i in longest_first(items, {})] == ["g1", "g2", "a", "b", "c", "d"]
