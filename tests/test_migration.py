"""The migration page: one adapter's faithful run beside its run with the broker's defaults, each rule the
defaults break listed with the stated settings and code that fix it."""

import json

import pytest

from adapters.base import Dependency
from tests.clikit import run_cli

GLUE = [
    Dependency(kind="adapter code", what="MQDISC commits the unit of work before the connection closes",
               why="closing a broker connection rolls its open transaction back", rules={"CORE-30"}),
    Dependency(kind="client setting", what="consumers pull (prefetch 0)", why="order is the queue's",
               rules={"CORE-04", "CORE-05"}),
    Dependency(kind="adapter code", what="handles kept by the adapter", why="no MQOPEN", rules={"CORE-22"},
               needed=True),
]


def _as_broker_run(directory, mapping: str) -> None:
    """Give a simulated run's record what a broker adapter's run of ``mapping`` records: the adapter's name, its
    mapping, and the dependencies in force (the reports render what run.json says)."""
    meta = json.loads((directory / "run.json").read_text())
    meta["adapter"] = "somebroker"
    meta["system"] = {**{k: v for k, v in meta["system"].items() if k != "faults"}, "system": "Some Broker",
                      **({"mapping": mapping} if mapping != "faithful" else {})}
    meta["capabilities"]["depends_on"] = [d.to_json() for d in GLUE if mapping == "faithful" or d.needed]
    (directory / "run.json").write_text(json.dumps(meta))


@pytest.fixture(scope="session")
def runs(tmp_path_factory):
    """A faithful run (conformant) and a defaults run whose MQDISC backs out, as a broker's does when the
    connection closes without the adapter's commit."""
    base = tmp_path_factory.mktemp("migration")
    faithful, plain = base / "faithful", base / "defaults"
    args = ("run", "--adapter", "simulated", "--area", "core", "--seed", "2", "--examples", "20",
            "--adapter-opt", "platform=distributed")
    assert run_cli(*args, "--results", faithful)[0] == 0
    assert run_cli(*args, "--faults", "disconnect-backs-out", "--results", plain)[0] == 1
    _as_broker_run(faithful, "faithful")
    _as_broker_run(plain, "defaults")
    return faithful, plain


def test_the_page_lists_what_the_defaults_break_and_what_fixes_each(runs, tmp_path):
    faithful, plain = runs
    code, out, err = run_cli("report", faithful, plain, "--format", "migration", "--out", tmp_path / "m.md",
                             "--report-only")
    assert code == 0, err
    page = (tmp_path / "m.md").read_text()
    assert page.startswith("# Moving an MQ application onto Some Broker")
    breaks = page.split("## What breaks with the defaults", 1)[1].split("\n## ", 1)[0]
    row = next(line for line in breaks.splitlines() if line.startswith("| CORE-30 "))
    assert "| fail " in row and "| pass " in row and "D1 (adapter code): MQDISC commits" in row
    # each dropped setting or piece of code has its section, with the rules it bears on and both verdicts
    assert "### D1: MQDISC commits" in page and "### D2: consumers pull" in page
    # what the defaults keep is listed apart, never as a fix
    kept = page.split("## Kept under both mappings", 1)[1]
    assert "handles kept by the adapter" in kept and "### D3" not in page
    # a rule the defaults do not break is not listed as broken
    assert "| CORE-22 " not in breaks


def test_the_page_needs_both_mappings_of_one_adapter(runs, tmp_path):
    faithful, plain = runs
    for dirs in ((faithful,), (plain,), (faithful, faithful)):
        code, out, err = run_cli("report", *dirs, "--format", "migration", "--out", tmp_path / "m.md")
        assert code == 2 and "mapping=defaults" in err and len(err.strip().splitlines()) == 1, err
        assert not (tmp_path / "m.md").exists()


def test_a_defaults_run_is_its_own_column_in_every_report(runs, tmp_path):
    faithful, plain = runs
    assert run_cli("report", faithful, plain, "--format", "json", "--out", tmp_path / "r.json",
                   "--report-only")[0] == 0
    labels = [c["label"] for c in json.loads((tmp_path / "r.json").read_text())["columns"]]
    assert labels == ["somebroker", "somebroker [mapping: defaults]"]
