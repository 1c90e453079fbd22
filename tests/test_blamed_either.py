"""A history that breaks some rules, and one of others beside them: no rule alone explains it, several smallest
sets do, all sharing the same rules but one.  The shared rules fail; the others are *one of*, each; and every
place the verdict is told (the failure's file, the run's rules, its text, the reports) says so, none of them
dropped as the first set tried once kept one and left the other "pass"."""

import json

from conformance.checker.accounting import departure_verdicts
from conformance.records.history import Failure, Step, load_failure, with_alternatives
from conformance.records.render import render_failure
from conformance.records.results import Coverage, RunRecord
from conformance.checker.sequential import check_history
from conformance.runner.jobs import Siblings
from reference_model import language as L
from reference_model import mqconst as C
from reports import make_report, render
from tests.test_checker import SETUP, msg

D = C.PLATFORM_DISTRIBUTED


def _expired_at_commit() -> Failure:
    """A put under syncpoint with Expiry 3 tenths, committed 9 tenths later, then got with its Expiry of 3: MQ has
    discarded it (its expiry counts from the put).  Returning it breaks EXP-06; its Expiry untouched breaks the
    decrement, which EXP-02 and EXP-03 each say (either, with EXP-06, explains the history; neither without)."""
    history = SETUP + [
        (L.Put(conn="a", handle="a1", body="m1", md=L.MessageDescriptor(priority=0, expiry=3),
               options=C.MQPMO_SYNCPOINT), L.OK),
        (L.AdvanceClock(tenths=9), L.OK), (L.Commit(conn="a"), L.OK),
        (L.Get(conn="b", handle="b1", options=C.MQGMO_NO_SYNCPOINT), msg("m1", expiry=3)),
    ]
    mismatch = check_history(D, history)[-1].mismatch
    assert mismatch is not None
    failure = Failure(area="expiry", adapter="simulated", platform=D, seed=1,
                      steps=tuple(Step(op=op, observed=obs) for op, obs in history), mismatch=mismatch)
    return with_alternatives(failure)


def test_the_shared_rule_is_broken_and_one_of_the_others():
    failure = _expired_at_commit()
    assert set(failure.blamed) == {"EXP-06", "EXP-02", "EXP-03"}, failure.blamed
    assert set(failure.either) == {"EXP-02", "EXP-03"} and failure.broken == ("EXP-06",)
    assert not failure.one_of
    assert failure.blamed_text.startswith("EXP-06, and one of ") and "EXP-02" in failure.blamed_text
    assert departure_verdicts(failure.mismatch)[0] == "EXP-06" and len(departure_verdicts(failure.mismatch)) == 2
    text = render_failure(failure)
    assert "And one of these" in text and text.index("EXP-06") < text.index("And one of these")


def test_the_replay_file_keeps_which_rules_are_one_of(tmp_path):
    failure = _expired_at_commit()
    path = tmp_path / "f.json"
    path.write_text(json.dumps(failure.to_json()))
    again = load_failure(path)   # the replay schema accepts the field
    assert again.either == failure.either and again.broken == failure.broken and again.blamed == failure.blamed


def test_the_run_fails_the_shared_rule_and_leaves_the_others_one_of(tmp_path):
    record = RunRecord(adapter="simulated", describe={"system": "sim", "version": "1"},
                       capabilities={"areas": ["expiry"], "platforms": [D]}, areas=["expiry"], seed=1, examples=1)
    record.add_failure(_expired_at_commit())
    record.coverage.examples = 1
    record.write(tmp_path / "run")
    rows = {json.loads(line)["rule"]: json.loads(line) for line in (tmp_path / "run" / "rules.jsonl").read_text()
            .splitlines()}
    assert rows["EXP-06"]["verdict"] == "fail"
    assert rows["EXP-02"]["verdict"] == rows["EXP-03"]["verdict"] == "one of"
    assert rows["EXP-02"]["one_of"] == [["EXP-03"]] and rows["EXP-03"]["one_of"] == [["EXP-02"]]
    report = make_report([tmp_path / "run"])
    md = render(report, "md")
    assert "EXP-06, and one of EXP-03 / EXP-02 in area expiry" in md
    cells = json.loads(render(report, "json"))["columns"][0]["counts"]
    assert cells["fail"] == 1 and cells["one of"] == 2, cells


def test_a_rule_of_the_others_shown_broken_elsewhere_settles_them():
    failure = _expired_at_commit()
    coverage = Coverage()
    coverage.count_failure(failure.blamed, failure.one_of, failure.either)
    assert coverage.failed["EXP-06"] == 1 and not coverage.failed["EXP-02"] and not coverage.failed["EXP-03"]
    assert set(coverage.undecided()) == {"EXP-02", "EXP-03"}
    coverage.count_failure(("EXP-03",), False)
    assert coverage.undecided() == {}


def test_another_worker_hears_which_rules_are_one_of(tmp_path):
    record = RunRecord(adapter="simulated", describe={}, capabilities={"areas": ["expiry"], "platforms": [D]},
                       areas=["expiry"], seed=1, examples=1)
    record.add_failure(_expired_at_commit())
    Siblings(tmp_path / "expiry-0.json").publish(record)
    (heard,) = Siblings(tmp_path / "expiry-1.json").found()
    assert set(heard.either) == {"EXP-02", "EXP-03"} and not heard.one_of
