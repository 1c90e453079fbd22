"""The search runs until its budget is spent (#64 item 2): an area's cases are shared by the rounds after each
departure, each round runs cases of its own, --keep-going caps the rounds, and --minutes bounds a run by
time; the summary says where the time went and how many cases a departure already found cut short."""

from __future__ import annotations

import json
import time

from adapters.registry import create_adapter
from conformance.runner import engine
from conformance.runner.session import Session
from conformance.records.results import PHASES, RunRecord
from tests.clikit import run_cli

FAULTS = "priority-ignored,q-full-ignored,backout-count-not-incremented"


def _rounds(monkeypatch, examples: int, keep_going):
    """Run the core area (distributed) with three faults; each round's (cases allowed, searched, cut short,
    seed), the record, and the departures reported because a round met them while shrinking its own (no round
    of their own)."""
    rounds, besides = [], []
    real = engine.run_machine
    real_others = Session.other_departures

    def others(session, *args, **kwargs):
        for other in real_others(session, *args, **kwargs):
            besides.append(other)
            yield other

    def counted(machine, settings, **kwargs):
        try:
            real(machine, settings, **kwargs)
        finally:
            s = machine.session
            rounds.append((settings.max_examples, s.searched, s.cut_short, machine._hypothesis_internal_use_seed))

    monkeypatch.setattr(engine, "run_machine", counted)
    monkeypatch.setattr(Session, "other_departures", others)
    adapter = create_adapter("simulated", {"faults": FAULTS, "platform": "distributed"})
    record = RunRecord(adapter="simulated", describe={}, capabilities=adapter.capabilities().to_json(),
                       areas=["core"], seed=7, examples=examples)
    engine.run_area(adapter, "core", "distributed", examples, 7, {"faults": FAULTS}, record, keep_going)
    return rounds, record, besides


def test_rounds_share_the_area_budget_until_it_is_spent(monkeypatch):
    rounds, record, _ = _rounds(monkeypatch, 60, None)
    assert len(rounds) >= 4 and len(record.failures) >= 3   # every fault found, then a round that finds none
    allowed = [r[0] for r in rounds]
    # each round gets what the rounds before it left: cases searched (a case cut short by a departure already
    # found apart) add up to the budget at most, and the last round is the one that spent it
    for n, (_, searched, cut, _) in enumerate(rounds[:-1]):
        assert allowed[n + 1] == allowed[n] - (searched - cut)
    # the shares add up to the budget exactly, and the last round ran its whole share (Hypothesis does not count
    # a case it discards, one whose draws ran past its buffer, so a round may start a case or two more)
    assert sum(s - c for _, s, c, _ in rounds[:-1]) + rounds[-1][0] == 60 and rounds[-1][1] >= rounds[-1][0]
    assert [r[3] for r in rounds] == [7 + n for n in range(len(rounds))]   # each round its own cases
    assert record.cut_short == sum(r[2] for r in rounds)
    assert set(record.phases) == set(PHASES) and all(v >= 0 for v in record.phases.values())


def test_keep_going_caps_the_rounds(monkeypatch):
    # each round reports its departure, and those it met while shrinking it (no round of their own)
    rounds, record, besides = _rounds(monkeypatch, 60, 1)
    assert len(rounds) == 2 and len(record.failures) == 2 + len(besides)
    rounds, record, besides = _rounds(monkeypatch, 60, 0)
    assert len(rounds) == 1 and len(record.failures) == 1 + len(besides)


def test_minutes_bound_a_run_and_the_summary_says_where_the_time_went(tmp_path):
    began = time.monotonic()
    # (each call holds the simulated queue manager 2 ms, as a broker's calls take time: the six seconds are spent
    # waiting on calls, as against a broker, not computing cases for the tests beside it)
    code, out, err = run_cli("run", "--adapter", "simulated", "--adapter-opt", "call-ms=2", "--area", "core",
                             "--seed", "7", "--minutes", "0.1", "--results", tmp_path / "r")
    took = time.monotonic() - began
    assert code == 0, out + err
    assert "cases until the time is spent, 0.1 minute(s) searching" in out
    run = json.loads((tmp_path / "r" / "run.json").read_text())
    # two platforms, three seconds each: the search stops at its share (a case under way ends first)
    assert run["examples_run"] > 0 and run["phases"]["search"] < 6 + 5, run["phases"]
    assert took < 30, took
    assert "Time by phase: search" in out
    # (20 cases: two are cut short by a departure already found; 60 until 2026-12-02, 8 s to 3 s; seed 9 since
    # 2026-12-07, when blaming "CORE-04, and one of CORE-15 / CORE-27" sent seed 7's minimising another way and left none cut short)
    code, out, err = run_cli("run", "--adapter", "simulated", "--faults", FAULTS, "--area", "core", "--seed", "9",
                             "--examples", "20", "--results", tmp_path / "f")
    assert code == 1, out + err
    assert "cut short by a departure already found" in out
    run = json.loads((tmp_path / "f" / "run.json").read_text())
    assert run["cut_short"] > 0 and run["phases"]["shrink"] > 0 and run["phases"]["minimise"] > 0
