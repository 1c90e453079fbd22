"""``mqconform run --recorded``: recorded counterexamples replayed after each area's search, each a departure of
the run where it shows again and the search did not find it (conformance/runner/recorded.py)."""

import json
from pathlib import Path

import attrs

from adapters.registry import create_adapter
from adapters.simulated import SimulatedAdapter
from conformance.records.history import Step, load_failure, with_alternatives
from conformance.runner.engine import DEFAULT_EXAMPLES, run_areas
from conformance.runner.recorded import (CONFIRMED, CONFORMANT, EXPLAINED, FOUND, NOT_EXPRESSIBLE, OTHER_SYSTEM, SHOWN,
                                        Recorded)
from reference_model import language as L
from tests.clikit import run_cli
from tests.faultkit import fault_run_args, seed_of

FAULT = "msg-too-big-accepted"


def _recorded(tmp_path: Path) -> Path:
    """The fault's counterexample, as a run at its measured seed records it."""
    code, out, err = run_cli(*fault_run_args(FAULT, seed_of(FAULT), str(tmp_path / "found")))
    assert code == 1, out + err
    return tmp_path / "found" / "failures"


def _verdicts(results: Path) -> dict[str, str]:
    return {json.loads(line)["rule"]: json.loads(line)["verdict"]
            for line in (results / "rules.jsonl").read_text().splitlines()}


def test_a_recorded_departure_shown_again_is_the_runs_though_its_search_never_meets_it(tmp_path):
    recorded = _recorded(tmp_path)
    files = sorted(recorded.glob("*.json"))
    broken = {r for f in files for r in load_failure(f).blamed}
    tiny = ["run", "--adapter", "simulated", "--faults", FAULT, "--seed", "1", "--examples", "1",
            "--keep-going", "0", "--area", load_failure(files[0]).area]
    # one case searched does not meet it...
    code, out, err = run_cli(*tiny, "--results", tmp_path / "searched")
    assert code == 0, out + err
    assert not broken & {r for r, v in _verdicts(tmp_path / "searched").items() if v in ("fail", "one of")}
    # ...replayed after the search, it is the run's departure, its history the recorded one
    code, out, err = run_cli(*tiny, "--recorded", recorded, "--results", tmp_path / "again")
    assert code == 1, out + err
    verdicts = _verdicts(tmp_path / "again")
    assert all(verdicts[r] in ("fail", "one of") for r in broken), verdicts
    run = json.loads((tmp_path / "again" / "run.json").read_text())
    assert {r["file"] for r in run["recorded"]} == {f.name for f in files}
    # (the first platform's; on the next, the run's own departure replayed there first, as any is)
    assert run["recorded"][0]["shown"] == SHOWN and {r["shown"] for r in run["recorded"]} <= {SHOWN, FOUND}
    mine = [load_failure(tmp_path / "again" / f) for f in run["failures"]]
    for given in map(load_failure, files):   # (each minimal already: minimised again, no longer)
        assert any(f.blamed == given.blamed and f.mismatch.fields == given.mismatch.fields
                   and f.size <= given.size for f in mine), (given.blamed, [(f.blamed, f.size) for f in mine])
    assert f"{len(files)} recorded counterexample" in out and SHOWN in out
    # and the report says which failures are such replays
    code, out, err = run_cli("report", tmp_path / "again", "--format", "md", "--out", tmp_path / "report.md",
                             "--report-only")
    assert code == 0, out + err
    row = next(line for line in (tmp_path / "report.md").read_text().splitlines() if "recorded counterexamples" in line)
    assert f"{SHOWN} 1 ({files[0].name}: the failure is that replay" in row, row


def test_a_recorded_departure_shown_again_is_minimised_as_any_other(tmp_path):
    """A counterexample recorded longer than it needs to be (a real system's timing ended its minimising early):
    shown again, the run's failure is its departure minimised, without the calls it does not need."""
    failure = load_failure(sorted(_recorded(tmp_path).glob("*.json"))[0])
    pad = [Step(op=L.DefineQueue(queue="PAD.Q"), observed=L.OK),
           Step(op=L.InquireQueue(queue="PAD.Q", names=("CURDEPTH",)), observed=L.Observation(attrs={"CURDEPTH": 0}))]
    long = attrs.evolve(failure, steps=(failure.steps[0], *pad, *failure.steps[1:]),
                        mismatch=attrs.evolve(failure.mismatch, index=failure.mismatch.index + len(pad)))
    adapter = create_adapter("simulated", {"faults": FAULT, "platform": failure.platform})
    record = run_areas(adapter, [failure.area], examples=1, seed=1, keep_going=0,
                       recorded=(Recorded("long.json", long),))
    assert [e["shown"] for e in record.recorded if e["platform"] == failure.platform] == [SHOWN]
    mine = [f for f in record.failures if f.platform == failure.platform]
    assert len(mine) == 1 and mine[0].blamed == failure.blamed, [(f.blamed, f.size) for f in mine]
    assert mine[0].size <= failure.size and not any(getattr(s.op, "queue", None) == "PAD.Q" for s in mine[0].steps)


def test_a_recorded_departure_that_shows_alone_a_rule_the_search_found_only_as_one_of_several_is_replayed():
    """The search met the departure only in a history that breaks one of TRIG-02 / TRIG-12 / TRIG-26 (not which);
    the recorded counterexample shows TRIG-02 broken alone.  TRIG-02 is then not "found by the search": the
    recorded history is replayed, shows again, and settles it (a fail, the others no longer "one of"), as it did
    in the run that recorded it; the verdict does not move with the path the search took."""
    from conformance.runner.engine import run_area
    from conformance.records.results import RunRecord
    from conformance.runner.minimise import minimise
    from reference_model import mqconst as C
    from tests.test_minimise import _trigger_one_of, failure_of

    adapter = create_adapter("simulated", {"faults": "trigmpri-ignored", "platform": C.PLATFORM_ZOS})
    tolerance = adapter.capabilities().expiry_tolerance
    one_of = with_alternatives(failure_of(adapter, "trigger", _trigger_one_of(), platform=C.PLATFORM_ZOS), tolerance)
    alone = with_alternatives(minimise(one_of, adapter), tolerance)
    assert one_of.one_of and alone.blamed == ("TRIG-02",), (one_of.blamed, alone.blamed)
    record = RunRecord(adapter="simulated", describe={}, capabilities=adapter.capabilities().to_json(),
                       areas=["trigger"], seed=1, examples=1)
    record.add_failure(one_of)   # what the search found
    run_area(adapter, "trigger", C.PLATFORM_ZOS, 1, 1, {"faults": "trigmpri-ignored"}, record, keep_going=0,
             recorded_before=(Recorded("trig-02.json", alone),))
    assert [e["shown"] for e in record.recorded] == [SHOWN], record.recorded
    verdicts = {row["rule"]: row["verdict"] for row in record.rule_rows()}
    assert verdicts["TRIG-02"] == "fail" and "one of" not in (verdicts["TRIG-12"], verdicts["TRIG-26"]), verdicts


def test_a_departure_that_settles_a_one_of_the_run_found_itself_is_recorded():
    """The run itself records "one of CORE-53 / CORE-20" (nothing under the cursor for a get that selects); then a
    departure blamed on CORE-20 alone (the same get made plain finds nothing there either) shows: it is recorded,
    CORE-20 fails and CORE-53 is no longer "one of".  Diagnosed with the run's "one of" rules relaxed as found
    broken, it was explained by them and dropped ("explained by the departures found"): ActiveMQ's defaults run
    had its 7-step CORE-20 counterexample so."""
    from conformance.records.results import RunRecord
    from conformance.runner.engine import run_area
    from reference_model import mqconst as C
    from tests.test_minimise import CursorGetMisses, _selecting_get_under_cursor, failure_of

    adapter = CursorGetMisses()
    ops = _selecting_get_under_cursor()
    one_of = with_alternatives(failure_of(adapter, "core", ops))
    plain = ops[:-1] + [L.Get(conn="a", handle="h", options=C.MQGMO_MSG_UNDER_CURSOR | C.MQGMO_NO_SYNCPOINT)]
    alone = with_alternatives(failure_of(adapter, "core", plain))
    assert one_of.one_of and set(one_of.blamed) == {"CORE-53", "CORE-20"} and alone.blamed == ("CORE-20",)
    record = RunRecord(adapter="simulated", describe={}, capabilities=adapter.capabilities().to_json(),
                       areas=["core"], seed=1, examples=1)
    # (the "one of" first, as the run's own, not minimised, which would narrow it)
    run_area(adapter, "core", C.PLATFORM_DISTRIBUTED, 1, 1, {}, record, keep_going=0, minimise_histories=False,
             recorded_before=(Recorded("one-of.json", one_of), Recorded("alone.json", alone)))
    assert [e["shown"] for e in record.recorded] == [SHOWN, SHOWN], record.recorded
    verdicts = {row["rule"]: row["verdict"] for row in record.rule_rows()}
    assert verdicts["CORE-20"] == "fail" and verdicts["CORE-53"] != "one of", verdicts
    # each recorded with what its diagnosis took as found broken: CORE-53, then only one of two, was on trial, and
    # a diagnosis of the record again (a report's test, a replay) blames what the run did
    settled = record.failures[-1]
    assert settled.blamed == ("CORE-20",) and "CORE-53" not in settled.found_broken, settled.found_broken
    for f in record.failures:
        again = with_alternatives(f, known_by=f.known_before())
        assert (set(again.blamed), again.one_of) == (set(f.blamed), f.one_of), (f.blamed, again.blamed)


def test_a_recorded_departure_the_search_finds_is_not_replayed_and_the_searchs_counterexample_is_the_runs(tmp_path):
    recorded = _recorded(tmp_path)
    code, out, err = run_cli(*fault_run_args(FAULT, seed_of(FAULT), str(tmp_path / "again")), "--recorded", recorded)
    assert code == 1, out + err
    run = json.loads((tmp_path / "again" / "run.json").read_text())
    assert {r["shown"] for r in run["recorded"]} == {FOUND}
    assert sorted(run["failures"]) == sorted(f"failures/{f.name}" for f in recorded.glob("*.json"))


def test_a_recorded_departure_shown_again_replaces_the_searchs_history_of_it_that_was_not(tmp_path):
    """The search found the departure only in a long history whose confirming replay passed (a real system's
    timing: "not shown again"); the recorded counterexample of the same rule, shown again when recorded, is
    replayed, shows again, and is the run's failure in its place: counted once, the run not "not reproduced",
    and the search's replay file gone from the results.  A recorded one that was not shown again itself, or that
    no longer shows, leaves the search's failure as it was."""
    from conformance.records.results import RunRecord
    from conformance.runner.engine import run_area

    failure = load_failure(sorted(_recorded(tmp_path).glob("*.json"))[0])
    assert failure.reproduced and len(failure.blamed) == 1, failure.blamed
    rule = failure.blamed[0]
    pad = [Step(op=L.DefineQueue(queue="PAD.Q"), observed=L.OK),
           Step(op=L.InquireQueue(queue="PAD.Q", names=("CURDEPTH",)), observed=L.Observation(attrs={"CURDEPTH": 0}))]
    searched = attrs.evolve(failure, steps=(failure.steps[0], *pad, *failure.steps[1:]), reproduced=False,
                            mismatch=attrs.evolve(failure.mismatch, index=failure.mismatch.index + len(pad)))

    def run(recorded, faults=FAULT):
        adapter = create_adapter("simulated", {"faults": faults, "platform": failure.platform})
        record = RunRecord(adapter="simulated", describe={}, capabilities=adapter.capabilities().to_json(),
                           areas=[failure.area], seed=1, examples=1)
        record.add_failure(searched)   # what the search found
        results = tmp_path / f"results-{len(list(tmp_path.iterdir()))}"
        record.write(results)   # (as a run writes what it found as it goes)
        outcome, _ = run_area(adapter, failure.area, failure.platform, 1, 1, {"faults": faults}, record,
                              keep_going=0, recorded_before=(Recorded("given.json", recorded),))
        record.write(results)
        files = [load_failure(f) for f in sorted((results / "failures").glob("*.json"))]
        return record, outcome, files

    record, outcome, files = run(failure)
    assert [e["shown"] for e in record.recorded] == [CONFIRMED], record.recorded
    assert len(record.failures) == 1 and record.failures[0].reproduced and record.failures[0].size < searched.size
    assert record.coverage.failed[rule] == 1, record.coverage.failed
    assert outcome.startswith("NON-CONFORMANT (") and "not reproduced" not in outcome, outcome
    assert [(f.size, f.reproduced) for f in files] == [(record.failures[0].size, True)]
    assert {row["rule"]: row["verdict"] for row in record.rule_rows()}[rule] == "fail"
    # a recorded one not shown again itself is not replayed; one the system no longer shows leaves the search's
    for given, faults, shown in [(attrs.evolve(failure, reproduced=False), FAULT, FOUND), (failure, "", CONFORMANT)]:
        record, outcome, files = run(given, faults)
        assert [e["shown"] for e in record.recorded] == [shown], record.recorded
        assert record.failures == [searched] and not record.failures[0].reproduced
        assert record.coverage.failed[rule] == 1 and [f.size for f in files] == [searched.size]


def test_a_recorded_departure_the_system_no_longer_shows_is_named_and_fails_nothing(tmp_path):
    recorded = _recorded(tmp_path)
    fixed = ["run", "--adapter", "simulated", "--seed", "1", "--examples", "2",
             "--area", load_failure(sorted(recorded.glob("*.json"))[0]).area]
    code, out, err = run_cli(*fixed, "--recorded", recorded, "--results", tmp_path / "fixed")
    assert code == 0, out + err
    run = json.loads((tmp_path / "fixed" / "run.json").read_text())
    assert run["recorded"] and {r["shown"] for r in run["recorded"]} == {CONFORMANT}
    assert all(f"{r['file']} ({r['area']} on {r['platform']}): {CONFORMANT}" in out for r in run["recorded"])
    # its steps were checked as any case's are (evidence for the rules they reach), beside the search's own
    # cases, which are those of the same run without it
    assert run_cli(*fixed, "--results", tmp_path / "alone")[0] == 0
    alone = json.loads((tmp_path / "alone" / "run.json").read_text())
    steps = sum(len(load_failure(f).steps) for f in recorded.glob("*.json"))
    assert run["steps_run"] >= alone["steps_run"] + steps - len(run["recorded"]), (run["steps_run"], alone)


def test_a_recorded_departure_shown_again_that_what_the_search_found_explains_adds_nothing(tmp_path):
    """Recorded as "one of" its rule and another the search never finds broken, it is replayed, shows again, and
    is diagnosed as the run's departures have it: its rule found broken explains it, and it is not recorded."""
    failure = load_failure(sorted(_recorded(tmp_path).glob("*.json"))[0])
    rule = failure.blamed[0]
    loose = attrs.evolve(failure, mismatch=attrs.evolve(failure.mismatch, blamed=(rule, "CORE-99"), blamed_each=True))
    adapter = create_adapter("simulated", {"faults": FAULT, "platform": failure.platform})
    # (the fault's run as test_faults.py makes it: the default budget, stopping at the first departure)
    record = run_areas(adapter, [failure.area], examples=DEFAULT_EXAMPLES, seed=int(seed_of(FAULT)), keep_going=0,
                       recorded=(Recorded("loose.json", loose),))
    assert rule in {r for f in record.failures for r in f.blamed}
    assert [e["shown"] for e in record.recorded if e["platform"] == failure.platform] == [EXPLAINED]
    assert all(f.steps != failure.steps or f.blamed == failure.blamed for f in record.failures)


class _WithoutBackout(SimulatedAdapter):
    """The simulated queue manager, declaring that it cannot back out (as a system with no units of work)."""

    def capabilities(self):
        caps = super().capabilities()
        return attrs.evolve(caps, operations=frozenset(
            c.__name__ for c in L.OPERATIONS if c.__name__ != "Backout"))


def test_a_history_the_system_cannot_express_or_recorded_on_another_system_is_not_replayed(tmp_path):
    code, out, err = run_cli("run", "--adapter", "simulated", "--faults", "backout-count-not-incremented",
                             "--area", "core", "--seed", seed_of("backout-count-not-incremented"),
                             "--keep-going", "0", "--results", tmp_path / "found")
    assert code == 1, out + err
    failure = load_failure(sorted((tmp_path / "found" / "failures").glob("*.json"))[0])
    at = next(i for i, s in enumerate(failure.steps) if isinstance(s.op, L.Backout))
    narrow = _WithoutBackout(faults="backout-count-not-incremented", platform=failure.platform)
    record = run_areas(narrow, ["core"], examples=1, seed=1, keep_going=0, recorded=(Recorded("x.json", failure),))
    assert record.recorded == [{"file": "x.json", "area": "core", "platform": failure.platform,
                                      "shown": f"{NOT_EXPRESSIBLE} (Backout at step {at + 1})"}]
    other = run_areas(create_adapter("reference", {"platform": failure.platform}), ["core"], examples=1, seed=1,
                      keep_going=0, recorded=(Recorded("x.json", failure),))
    assert other.recorded[0]["shown"] == f"{OTHER_SYSTEM} (simulated)"


def test_bad_or_unsuited_replay_files_are_one_line_and_nothing_runs(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    empty = tmp_path / "empty"
    empty.mkdir()
    for args, said in [(["--recorded", bad], "not JSON"),
                       (["--recorded", empty], "no replay file"),
                       (["--recorded", bad, "--jobs", "2"], "--jobs 1")]:
        code, out, err = run_cli("run", "--adapter", "simulated", "--area", "core", "--examples", "1",
                                 "--results", tmp_path / "r", *args)
        assert code == 2 and said in err and len(err.strip().splitlines()) == 1, (args, code, err)
        assert not (tmp_path / "r" / "run.json").exists()


def test_a_departure_the_kit_now_names_fewer_rules_for_is_the_same_departure():
    """ActiveMQ's recorded counterexample of a missing expiration report named EXP-13 beside EXP-08 and EXP-12;
    after a get outside syncpoint the model no longer names it.  Replayed, the departure at the same call in the
    same fields, named by fewer of the rules it named then, is the recorded one (still failing, shown again);
    one naming a rule it did not name, or at another call or in other fields, is not."""
    from conformance.runner.regression import same_departure

    root = Path(__file__).resolve().parent
    fresh = with_alternatives(load_failure(root / "data" / "histories" / "rabbitmq-no-expiration-report.json"), 3)
    assert set(fresh.blamed) == {"EXP-08", "EXP-12"}
    now = attrs.evolve(fresh, mismatch=attrs.evolve(fresh.mismatch, rules=("EXP-08", "EXP-12", "CORE-28")))
    then = attrs.evolve(now, mismatch=attrs.evolve(now.mismatch, rules=(*now.rules, "EXP-13"),
                                                   blamed=(*now.blamed, "EXP-13")))
    assert same_departure(now, then)
    assert not same_departure(then, now)   # more rules than recorded: another departure
    other = attrs.evolve(now, mismatch=attrs.evolve(now.mismatch, rules=("EXP-08", "CORE-28"),
                                                    blamed=("EXP-08", "CORE-28")))
    assert not same_departure(other, then)
    moved = attrs.evolve(now, mismatch=attrs.evolve(now.mismatch, fields=("rc",)))
    assert not same_departure(moved, then)
