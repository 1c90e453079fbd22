"""Departures met while Hypothesis shrinks another one are reported too.

Hypothesis takes every departure a machine raises for one and the same failure:
shrinking the first, it moves to any smaller case that fails, whatever rule it
breaks, and keeps only the smallest.  A rule broken only in the case it moved
away from would then be reported as passing.  The session keeps the smallest
departure per set of rules broken, and the engine reports those the reported
ones do not cover.
"""

from __future__ import annotations

import attrs
import pytest

from adapters.registry import create_adapter
from conformance.runner import session as session_module
from conformance.checker.sequential import Mismatch
from conformance.runner import engine as engine_module
from conformance.runner.engine import run_area
from conformance.records.history import Failure, Step, with_alternatives
from conformance.runner.minimise import minimise
from conformance.records.results import FAIL, ONE_OF, RunRecord
from conformance.runner.session import NonConformance, Session
from reference_model import language as L
from reference_model import mqconst as C

#: Several faults a short run meets together.  (Not q-full-ignored: a queue of MAXDEPTH(3) fills within
#: a case or two, and every smaller case Hypothesis then tries fails the same way.)
FAULTS = "priority-ignored,backout-count-not-incremented,get-inhibit-ignored,browse-next-skips"


def _seen_broken(monkeypatch) -> list[Failure]:
    """Every departure a run's sessions raise from now on (Hypothesis's cases, shrinking among them),
    not those the minimiser's replays meet: a sub-history it tries may show the same fault through
    another rule's outcome (a message out of priority order after a commit cut in flight reads as
    the commit backed out), and the run reports what its own cases met."""
    seen: list[Failure] = []
    minimising = []
    raise_init = session_module.NonConformance.__init__

    def spy(self, failure):
        if not minimising:
            seen.append(failure)
        raise_init(self, failure)

    def spied_minimise(*args, **kwargs):
        minimising.append(True)
        try:
            return minimise(*args, **kwargs)
        finally:
            minimising.pop()

    monkeypatch.setattr(session_module.NonConformance, "__init__", spy)
    monkeypatch.setattr(engine_module, "minimise", spied_minimise)
    return seen


def test_no_rule_seen_broken_is_reported_as_passing(monkeypatch):
    seen = _seen_broken(monkeypatch)
    adapter = create_adapter("simulated", {"faults": FAULTS})
    caps = adapter.capabilities()
    record = RunRecord(adapter="simulated", describe={}, capabilities=caps.to_json(), areas=["core"],
                       seed=7, examples=100)
    run_area(adapter, "core", C.PLATFORM_DISTRIBUTED, 100, 7, {"faults": FAULTS}, record, keep_going=0)
    kinds = {frozenset(f.rules): f for f in seen}
    assert len(kinds) > 1, "the run met one kind of departure only"
    verdicts = {row["rule"]: row["verdict"] for row in record.rule_rows()}
    # Every rule a departure met needs, as its minimal form shows, fails.  (Minimising may name fewer
    # rules than the departure met: a get that selects, made a plain get, no longer implicates the
    # selection's rules, and a departure that then names only rules reported already is not reported again.)
    for departure in kinds.values():
        needed = minimise(departure, create_adapter("simulated", {"faults": FAULTS}), budget=5.0).rules
        # (or, named by a history that breaks one of several rules, is "one of" them, unless another of them
        # fails: that one then explains the history)
        explained = {r for f in record.failures if f.one_of and any(verdicts[o] == FAIL for o in f.blamed)
                     for r in f.blamed}
        assert {rule: verdicts[rule] for rule in needed
                if verdicts[rule] not in (FAIL, ONE_OF) and rule not in explained} == {}, departure.rules
    # Each departure reported is one the system shows again on its own.
    for failure in record.failures:
        assert failure.reproduced
        again = minimise(failure, adapter, budget=5.0)
        assert set(again.rules) == set(failure.rules)


def _failure(rules: tuple[str, ...], steps: int) -> Failure:
    op = L.InquireQueue(queue="Q", names=("CURDEPTH",))
    observed, allowed = L.Observation(attrs={"CURDEPTH": 2}), L.Observation(attrs={"CURDEPTH": 1})
    history = (Step(op=L.DefineQueue(queue="Q"), observed=L.OK),) + (Step(op=op, observed=observed),) * steps
    return Failure(area="core", adapter="simulated", platform=C.PLATFORM_DISTRIBUTED, seed=1, steps=history,
                   mismatch=Mismatch(index=steps, op=op, observed=observed, allowed=(allowed,),
                                     fields=("attrs.CURDEPTH",), rules=rules))


def test_departures_besides_names_every_rule_seen_broken_with_few_histories():
    session = Session(create_adapter("simulated", {}), "core")
    for failure in (_failure(("CORE-28",), 3), _failure(("CORE-28",), 2), _failure(("CORE-04",), 1),
                    _failure(("CORE-04", "CORE-28"), 2), _failure(("CORE-02", "CORE-04", "CORE-28"), 4),
                    _failure(("CORE-05", "CORE-28"), 6), _failure(("CORE-05", "CORE-18"), 6),
                    _failure(("CORE-05", "CORE-19"), 5)):
        session.remember(failure)
    every = {rule for key in session.departures for rule in key}
    assert session.departures_besides(every) == []
    # The one naming the most rules first; on a tie the smaller; none that adds nothing.
    assert [(f.rules, f.size) for f in session.departures_besides(set())] == [
        (("CORE-02", "CORE-04", "CORE-28"), 5), (("CORE-05", "CORE-19"), 6), (("CORE-05", "CORE-18"), 7)]
    assert [(f.rules, f.size) for f in session.departures_besides({"CORE-02", "CORE-05", "CORE-18", "CORE-19"})] \
        == [(("CORE-04", "CORE-28"), 3)]


def test_a_departure_a_replay_does_not_show_is_marked_not_reproduced():
    """A conforming system does not show the invented depth: minimised, it comes back as it was, marked."""
    adapter = create_adapter("simulated", {})
    failure = _failure(("CORE-28",), 1)
    marked = minimise(failure, adapter, budget=5.0)
    assert marked.reproduced is False and attrs.evolve(marked, reproduced=True) == failure
    # a departure the system shows again stays unmarked
    faulty = create_adapter("simulated", {"faults": "uncommitted-put-visible"})
    session = Session(faulty, "core", platform=C.PLATFORM_DISTRIBUTED)
    session.start_case()
    ops = [L.DefineQueue(queue="Q"), L.Connect(conn="a"), L.Connect(conn="b"),
           L.Open(conn="a", handle="ha", queue="Q", options=C.MQOO_OUTPUT),
           L.Open(conn="b", handle="hb", queue="Q", options=C.MQOO_INPUT_SHARED),
           L.Put(conn="a", handle="ha", body="m1", options=C.MQPMO_SYNCPOINT),
           L.Get(conn="b", handle="hb", options=C.MQGMO_NO_SYNCPOINT)]
    with pytest.raises(NonConformance) as raised:
        for op in ops:
            session.execute(op)
    shown = minimise(raised.value.failure, faulty, budget=5.0)
    assert shown.reproduced is True and set(shown.rules) == set(raised.value.failure.rules)


def test_a_departure_the_rules_another_area_found_broken_explain_is_not_new_and_the_area_says_so(tmp_path,
                                                                                                  monkeypatch):
    """One system: a rule the core area found broken explains the syncpoint area's departures as well (the same
    uncommitted put seen), so that area records nothing new; its line says what it met, not "conformant".  Nor
    is such a departure shrunk (each such case was a whole case on the system for a departure not reported):
    the rules the core area found broken are set aside in the syncpoint area from its first case, which goes on
    past the departure (until 2026-12-07 the case ended there, and the session asked whether it was explained
    before the first case that would shrink it)."""
    import json

    from tests.clikit import run_cli

    shrinking: dict[int, list[bool]] = {}   # per syncpoint session: each case started after its first departure,
    start_case = Session.start_case        # whether it ran on the system

    def spied(self):
        met, ran = self.smallest is not None, False
        try:
            start_case(self)
            ran = not self._idle
        finally:   # (a session whose shrinking is over may end it at once, raising)
            if met and self.area == "syncpoint":
                shrinking.setdefault(id(self), []).append(ran)
    monkeypatch.setattr(Session, "start_case", spied)
    # (10 cases an area: with seed 3, 5 already meet the syncpoint area's explained departure)
    code, out, err = run_cli("run", "--adapter", "simulated", "--faults", "uncommitted-put-visible", "--area",
                             "core,syncpoint", "--seed", "3", "--examples", "10", "--results", tmp_path / "r")
    assert code == 1, out + err
    failures = [json.loads(p.read_text()) for p in (tmp_path / "r" / "failures").glob("*.json")]
    assert {f["area"] for f in failures} == {"core"}, [(f["area"], f["rules"]) for f in failures]
    assert "syncpoint on zos: no new departure (only departures that rules found broken before explain: CORE-02)" \
        in out, out
    assert not any(ran for cases in shrinking.values() for ran in cases), shrinking


def test_a_dlq_handler_forwarding_past_maxdepth_is_what_ignoring_maxdepth_explains(tmp_path, monkeypatch):
    """A queue manager that accepts puts beyond MAXDEPTH accepts its DLQ handler's forwards too: once the core area
    found CORE-27 broken, the DLQ area's forwards to a full queue are no new departure (CORE-27 relaxed lets the
    handler's puts past MAXDEPTH as it lets the application's), though that area never set CORE-27 aside.  They
    are seen to be explained before they are minimised, and are not minimised (that was 150 s of a 167 s run)."""
    import json

    from tests.clikit import run_cli

    minimised = []

    def spied(failure, *args, **kwargs):
        minimised.append(failure.area)
        return minimise(failure, *args, **kwargs)
    monkeypatch.setattr(engine_module, "minimise", spied)

    # (20 cases an area: with seed 1, 10 already forward to a full queue since the DLQ machine forwards to PARK
    # at each rescan; before that rule 30 did not, the DLQ area was then conformant and this test failed)
    code, out, err = run_cli("run", "--adapter", "simulated", "--faults", "q-full-ignored", "--area", "core,dlq",
                             "--seed", "1", "--examples", "20", "--results", tmp_path / "r")
    assert code == 1, out + err
    failures = [json.loads(p.read_text()) for p in (tmp_path / "r" / "failures").glob("*.json")]
    assert {f["area"] for f in failures} == {"core"}, [(f["area"], f["rules"]) for f in failures]
    assert "dlq on distributed: no new departure (only departures that rules found broken before explain: CORE-27)" \
        in out, out
    assert "core" in minimised and "dlq" not in minimised, minimised


def test_a_departure_blamed_on_one_rule_of_a_one_of_alone_is_recorded_and_settles_it():
    """A run whose failures so far break one of TRIG-02 / TRIG-26 / TRIG-12 (each alone, relaxed, explains the
    history: a trigger message too many) that then meets a departure blamed on TRIG-02 alone records it, though
    TRIG-02 is known: it settles which of them the first history breaks, and TRIG-26 and TRIG-12 are no longer
    "one of".  (Such a departure was dropped as one the rules found broken explain.)  One blamed on several rules
    together is still dropped: it shows no more than the "one of" did."""
    from tests.test_minimise import _trigger_one_of, failure_of

    adapter = create_adapter("simulated", {"faults": "trigmpri-ignored", "platform": C.PLATFORM_ZOS})
    tolerance = adapter.capabilities().expiry_tolerance
    one_of = with_alternatives(failure_of(adapter, "trigger", _trigger_one_of(), platform=C.PLATFORM_ZOS), tolerance)
    assert one_of.one_of and set(one_of.blamed) == {"TRIG-02", "TRIG-26", "TRIG-12"}, one_of.blamed
    record = RunRecord(adapter="simulated", describe={}, capabilities=adapter.capabilities().to_json(),
                       areas=["trigger"], seed=5, examples=20)
    record.add_failure(one_of)
    verdicts = {row["rule"]: row["verdict"] for row in record.rule_rows()}
    assert verdicts["TRIG-02"] == verdicts["TRIG-26"] == verdicts["TRIG-12"] == ONE_OF
    run_area(adapter, "trigger", C.PLATFORM_ZOS, 20, 5, {"faults": "trigmpri-ignored"}, record, keep_going=None)
    assert [(f.blamed, f.one_of) for f in record.failures[1:]] == [(("TRIG-02",), False)], \
        [(f.blamed, f.one_of) for f in record.failures]
    verdicts = {row["rule"]: row["verdict"] for row in record.rule_rows()}
    assert verdicts["TRIG-02"] == FAIL and ONE_OF not in (verdicts["TRIG-26"], verdicts["TRIG-12"]), verdicts
