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
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

import pytest
from xdist.scheduler import LoadScopeScheduling

#: The ``workerinput`` key that carries the directory of groups.
KEY = "mqconform_groups"


def group_of(item: pytest.Item) -> str | None:
    """The group ``item`` runs in: its ``xdist_group`` marks' names joined (as pytest-xdist joins them), or None."""
    names = {str(m.args[0] if m.args else m.kwargs.get("name", "default")) for m in item.iter_markers("xdist_group")}
    return "_".join(sorted(names)) or None


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
    groups = {item.nodeid: group for item in items if (group := group_of(item)) is not None}
    worker = config.workerinput["workerid"]
    part = Path(directory) / f"{worker}.part"
    part.write_text(json.dumps(groups))
    part.replace(Path(directory) / f"{worker}.json")


@pytest.hookimpl(tryfirst=True, optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log):
    directory = _groups_dir(config)
    if directory is None:
        return None
    return GroupScheduling(config, log, directory)


class GroupScheduling(LoadScopeScheduling):
    """Scope scheduling whose scopes are the groups the workers wrote down, and each other test alone."""

    def __init__(self, config: pytest.Config, log, directory: Path) -> None:
        super().__init__(config, log)
        self._directory = directory
        self._groups: dict[str, str] | None = None

    def _split_scope(self, nodeid: str) -> str:
        if self._groups is None:
            # Every worker collected the same tests (the scheduler checks that before it splits them): one
            # worker's groups are everyone's.
            written = sorted(self._directory.glob("*.json"))
            self._groups = json.loads(written[0].read_text()) if written else {}
        group = self._groups.get(nodeid)
        return f"group:{group}" if group is not None else nodeid
