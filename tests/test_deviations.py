"""Known deviations describe a behaviour: they match only failures of that shape, and go stale when their
counterexample no longer shows it."""

import json
import shutil
from pathlib import Path

import attrs
import pytest

from conformance.checker.sequential import ModelTracker, check_history
from conformance.records.history import Failure, Step, save_failure, with_alternatives
from reference_model import language as L
from reference_model import mqconst as C
from reports import make_report
from reports.deviations import Signature
from tests.clikit import faulty_run, run_cli
from tests.test_checker import SETUP, msg, put

D = C.PLATFORM_DISTRIBUTED


def _failure(history) -> Failure:
    mm = check_history(D, history)[-1].mismatch
    assert mm is not None
    return with_alternatives(Failure(area="core", adapter="simulated", platform=D, seed=1,
                                     steps=tuple(Step(op=o, observed=b) for o, b in history), mismatch=mm))


ORDER = _failure(SETUP + [(put("a", "a1", "low", 1), L.OK), (put("a", "a1", "high", 7), L.OK),
                          (L.Get(conn="b", handle="b1"), msg("low", priority=1))])
FULL = _failure([(L.DefineQueue(queue="Q1", attrs=(("MAXDEPTH", 1),)), L.OK), (L.Connect(conn="a"), L.OK),
                 (L.Open(conn="a", handle="a1", queue="Q1", options=C.MQOO_OUTPUT | C.MQOO_INQUIRE), L.OK),
                 (put("a", "a1", "one"), L.OK), (put("a", "a1", "two"), L.OK)])


def test_a_signature_names_what_differs_about_a_failure_of_another_shape():
    assert Signature(ops=("Get",), fields=("message.body",)).why_not(ORDER) is None
    assert "not Put" in Signature(ops=("Put",)).why_not(ORDER)
    assert "not message.priority" in Signature(fields=("message.priority",)).why_not(ORDER)
    assert Signature(observed=(("message.priority", 1),), expected=(("message.priority", 7),)).why_not(ORDER) is None
    assert "answered message.priority 1" in Signature(observed=(("message.priority", 9),)).why_not(ORDER)
    assert Signature(ops=("Put",), observed=(("rc", C.MQRC_NONE),), expected=(("rc", C.MQRC_Q_FULL),)).why_not(FULL) \
        is None
    assert "no Restart" in Signature(history=("Restart",)).why_not(FULL)
    assert Signature(lower=("message.priority",)).why_not(ORDER) is None
    assert "not higher" in Signature(higher=("message.priority",)).why_not(ORDER)


def test_a_signature_matches_a_failure_that_also_shows_a_departure_found_before():
    """A BackoutCount lost (the deviation's shape: message.backout_count) seen in the same answer as a MsgId left
    blank, which the run had found broken before (CORE-11): the failure differs in both fields, and the deviation
    still describes it, the other field being a known departure's.  Where the run had not found that one broken,
    the failure is of another shape."""
    std = C.MQOO_INPUT_SHARED | C.MQOO_OUTPUT
    count_lost = Signature(ops=("Get",), fields=("message.backout_count",))
    history = [(L.DefineQueue(queue="Q1"), L.OK), (L.Connect(conn="a"), L.OK),
               (L.Open(conn="a", handle="a1", queue="Q1", options=std), L.OK),
               (put("a", "a1", "m1"), L.OK),
               (L.Get(conn="a", handle="a1", options=C.MQGMO_SYNCPOINT), msg("m1", msg_id="")),
               (L.Backout(conn="a"), L.OK),
               (L.Get(conn="a", handle="a1", options=C.MQGMO_SYNCPOINT), msg("m1", msg_id=""))]
    aside = ("CORE-11",)
    first = check_history(D, history[:5])[-1].mismatch
    assert first is not None and first.rules == aside
    tracker = ModelTracker(D, set_aside=frozenset(aside))
    for op, observed in history:
        check = tracker.advance(op, observed)
        if check.mismatch is not None and op is not history[-1][0]:
            assert tracker.step_past(op, observed)
    mm = check.mismatch
    assert set(mm.fields) == {"message.backout_count", "message.msg_id"}, mm.fields
    mm = attrs.evolve(mm, blamed=("CORE-15", "CORE-17"))   # as its run blamed it, CORE-11 known
    steps = tuple(Step(op=o, observed=b) for o, b in history)
    known = Failure(area="core", adapter="simulated", platform=D, seed=1, steps=steps, mismatch=mm,
                    set_aside=aside, found_broken=aside)
    assert count_lost.why_not(known) is None
    unknown = Failure(area="core", adapter="simulated", platform=D, seed=1, steps=steps, mismatch=mm)
    assert "differing fields" in count_lost.why_not(unknown)


def test_a_signature_tells_operations_apart_by_their_options():
    """Two causes of one rule's departure on one system (puts under syncpoint not counted, or a limit applied
    late to puts outside it) are two behaviours: an operation in a signature may say which option flags
    its call had, at the breaking step and earlier in the history."""
    assert Signature(ops=("Put-MQPMO_SYNCPOINT",)).why_not(FULL) is None
    assert "not Put+MQPMO_SYNCPOINT" in Signature(ops=("Put+MQPMO_SYNCPOINT",)).why_not(FULL)
    assert Signature(ops=("Put+MQPMO_NO_SYNCPOINT",)).why_not(FULL) is None
    assert Signature(history=("Open+MQOO_OUTPUT+MQOO_INQUIRE",)).why_not(FULL) is None
    assert "no Open+MQOO_INPUT_SHARED" in Signature(history=("Open+MQOO_INPUT_SHARED",)).why_not(FULL)


@pytest.fixture(scope="session")
def _faulty(tmp_path_factory):
    """The run of :func:`runs`, made once: its replay file."""
    return faulty_run(tmp_path_factory.mktemp("deviations") / "bad")


@pytest.fixture
def runs(tmp_path, _faulty):
    """A run of the simulated queue manager with a priority fault (a copy of its own), and a replay file of its
    failure."""
    shutil.copytree(_faulty.parent.parent, tmp_path / "bad")
    failure = tmp_path / "bad" / "failures" / _faulty.name
    (tmp_path / "evidence.json").write_text(failure.read_text())
    return tmp_path / "bad", json.loads(failure.read_text())


def _deviation(tmp_path, rule, extra=""):
    known = tmp_path / "known.toml"
    known.write_text(f'[[deviation]]\nrule = "{rule}"\nadapter = "simulated"\nseen = "s."\nreason = """Why."""\n'
                     f'counterexample = "evidence.json"\n{extra}')
    return known


def test_a_deviation_explains_failures_of_its_shape_only(runs, tmp_path):
    bad, data = runs
    rule = data["rules"][0]
    known = _deviation(tmp_path, rule)
    report = make_report([bad], known_deviations=[known])
    [status] = report.deviations
    assert status.status == "matched" and report.columns[0].cells[rule].verdict == "known deviation"

    # the same rule, described as another departure (a reason code where MQ gives another): the failure stands
    known = _deviation(tmp_path, rule, '[deviation.match]\nfields = ["rc"]\n')
    report = make_report([bad], known_deviations=[known])
    [status] = report.deviations
    assert status.status == "does not match" and "the differing fields are" in status.note
    assert report.columns[0].cells[rule].verdict == "fail" and report.any_failure
    code, out, _ = run_cli("report", bad, "--known-deviations", known, "--out", tmp_path / "r.md")
    label = report.columns[0].label
    assert code == 1 and f"known deviation {rule} on {label} does not explain its failure" in out, out
    md = (tmp_path / "r.md").read_text()
    shown = label.replace("[", "\\[").replace("]", "\\]")   # as Markdown shows it: brackets escaped
    assert f"on {shown}: does not match" in md and "It does not explain the failure" in md


def test_a_deviation_whose_counterexample_no_longer_shows_it_is_stale(runs, tmp_path):
    """An entry for a rule its counterexample's departure is not blamed on describes nothing that file shows."""
    bad, data = runs
    other = next(r for r in ("CORE-05", "CORE-06") if r not in data["rules"])
    known = _deviation(tmp_path, other)
    report = make_report([bad], known_deviations=[known])
    [status] = report.deviations
    assert status.status == "stale" and f"not {other}" in status.note
    # a counterexample that departs before its own step (a keep-going round's, its set-aside rules lost)
    early = dict(data)
    early["steps"] = [dict(s) for s in data["steps"]]
    step = early["mismatch"]["index"]
    early["steps"].insert(step, early["steps"][step])   # the failing get once more, before its own step
    early["mismatch"] = dict(early["mismatch"], index=step + 1)
    (tmp_path / "evidence.json").write_text(json.dumps(early))
    known = _deviation(tmp_path, data["rules"][0])
    [status] = make_report([bad], known_deviations=[known]).deviations
    assert status.status == "stale" and f"before its own step {step + 2}" in status.note


def test_a_file_read_again_unchanged_is_not_replayed_and_one_changed_is(runs, tmp_path, monkeypatch):
    """A known-deviations file is read once a process while neither it nor any counterexample it names changes
    (reading replays each counterexample on the model); a counterexample rewritten is read again, and what it
    now shows is what the deviation says."""
    from reports import deviations as D

    bad, data = runs
    known = _deviation(tmp_path, data["rules"][0])
    first = D.load_deviations(known)
    assert not first[0].stale_because
    reads = []
    monkeypatch.setattr(D, "_read_deviations", lambda p, read=D._read_deviations: reads.append(p) or read(p))
    assert D.load_deviations(known) is first and reads == []
    early = dict(data, steps=[dict(s) for s in data["steps"]])
    step = early["mismatch"]["index"]
    early["steps"].insert(step, early["steps"][step])   # departs before its own step now
    early["mismatch"] = dict(early["mismatch"], index=step + 1)
    (tmp_path / "evidence.json").write_text(json.dumps(early))
    again = D.load_deviations(known)
    assert reads == [known] and f"before its own step {step + 2}" in again[0].stale_because
    known.write_text(known.read_text() + "\n")   # the file itself changed: read again as well
    D.load_deviations(known)
    assert reads == [known, known]


def _matching_shape(tmp_path, rule):
    """A replay file of ``rule``'s departure in another shape than the faulty run's (a GetMatching that selects
    every message returns the lower priority first, where the run's is a plain Get)."""
    failure = _failure(SETUP + [(put("a", "a1", "low", 1), L.OK), (put("a", "a1", "high", 7), L.OK),
                                (L.GetMatching(conn="b", handle="b1", match_options=C.MQMO_MATCH_CORREL_ID),
                                 msg("low", priority=1))])
    assert failure.blamed == (rule,) and type(failure.mismatch.op).__name__ == "GetMatching"
    return save_failure(failure, tmp_path).name


def test_a_deviation_seen_in_several_shapes_lists_a_counterexample_of_each(runs, tmp_path):
    """One behaviour (priority ignored) shows as a get and as a get that selects: an entry listing a counterexample
    of each matches a failure of either shape; with the other shape's alone, the run's failure stands; and a
    listed counterexample that no longer shows the departure makes the entry stale, named."""
    bad, data = runs
    rule = data["rules"][0]
    assert rule == "CORE-04" and data["mismatch"]["op"]["type"] == "Get"
    other = _matching_shape(tmp_path, rule)
    known = _deviation(tmp_path, rule).read_text().replace('"evidence.json"', f'["evidence.json", "{other}"]')
    (tmp_path / "known.toml").write_text(known)
    report = make_report([bad], known_deviations=[tmp_path / "known.toml"])
    [status] = report.deviations
    assert status.status == "matched" and report.columns[0].cells[rule].verdict == "known deviation"
    assert status.deviation.counterexamples == ("evidence.json", other)
    assert "breaking at Get;" in status.deviation.describe() and "breaking at GetMatching" in status.deviation.describe()
    code, _, _ = run_cli("report", bad, "--known-deviations", tmp_path / "known.toml", "--out", tmp_path / "r.md")
    assert code == 0 and f"`{other}`" in (tmp_path / "r.md").read_text()

    (tmp_path / "known.toml").write_text(known.replace(f'["evidence.json", "{other}"]', f'["{other}"]'))
    [status] = make_report([bad], known_deviations=[tmp_path / "known.toml"]).deviations
    assert status.status == "does not match" and "not GetMatching" in status.note

    broken = json.loads((tmp_path / other).read_text())
    mqs = dict(broken["mismatch"]["allowed"][0])   # the system now gives MQ's answer
    mqs["message"] = dict(mqs["message"], msg_id="X")   # (MQ's own MsgId, which the model leaves open)
    broken["steps"][-1]["observed"] = broken["mismatch"]["observed"] = mqs
    (tmp_path / other).write_text(json.dumps(broken))
    (tmp_path / "known.toml").write_text(known)
    [status] = make_report([bad], known_deviations=[tmp_path / "known.toml"]).deviations
    assert status.status == "stale" and status.note.startswith(f"{other}: ") and "no longer departs" in status.note


@pytest.mark.parametrize("match, message", [
    ('fields = ["message.Body!"]', "does not match"),
    ('observed = { "rc" = [1] }', "is not of type"),
    ('op = []', "should be non-empty"),
    ('colour = "red"', "Additional properties"),
    ('op = ["Put+MQPMO_NO_SUCH_FLAG"]', "MQPMO_NO_SUCH_FLAG is no MQ option"),
    ('history = ["Put with syncpoint"]', "is not an operation"),
])
def test_a_bad_signature_is_one_line_and_nothing_is_written(runs, tmp_path, match, message):
    bad, data = runs
    known = _deviation(tmp_path, data["rules"][0], f"[deviation.match]\n{match}\n")
    out = tmp_path / "r.md"
    code, _, err = run_cli("report", bad, "--known-deviations", known, "--out", out)
    assert code == 2 and message in err and err.count("\n") == 1, err
    assert not out.exists()


def test_save_failure_keeps_blame_and_set_aside(tmp_path):
    path = save_failure(ORDER, tmp_path)
    data = json.loads(path.read_text())
    assert data["rules"] == ["CORE-04"] and data["mismatch"]["blamed"] == ["CORE-04"]
    assert path.name.startswith("core-distributed-CORE-04-")


def test_one_rule_may_show_several_behaviours_each_an_entry_of_its_own(runs, tmp_path):
    """Entries of one rule and system told apart by their signatures: a failure is known if one of them
    describes it; two entries with the same signature are refused."""
    bad, data = runs
    rule = data["rules"][0]
    known = _deviation(tmp_path, rule, '[deviation.match]\nfields = ["rc"]\n')
    text = known.read_text()
    known.write_text(text + "\n" + _deviation(tmp_path, rule).read_text())
    report = make_report([bad], known_deviations=[known])
    assert report.columns[0].cells[rule].verdict == "known deviation"
    assert sorted(d.status for d in report.deviations) == ["matched", "not shown"]
    known.write_text(_deviation(tmp_path, rule).read_text() * 2)
    code, _, err = run_cli("report", bad, "--known-deviations", known, "--out", tmp_path / "r.md")
    assert code == 2 and "is already deviation 1, with the same signature" in err


def test_a_failure_text_names_the_fields_that_follow_from_the_judged_one():
    """The low-priority message came first: message.body is judged, and its priority differs with it; the text
    lists both, saying which is which, not "differing fields: message.body" alone."""
    from conformance.records.render import render_failure

    text = render_failure(ORDER)
    assert "differing fields: message.body (and, following from it, message.priority)" in text, text


def test_a_deviation_may_cite_the_systems_own_tracker_and_every_report_shows_it(runs, tmp_path):
    bad, data = runs
    rule = data["rules"][0]
    known = _deviation(tmp_path, rule, 'upstream = ["rabbitmq/rabbitmq-server#4563", "https://example.org/bug/7"]\n'
                                       'affects = "RabbitMQ before 3.11.0"\n')
    [status] = make_report([bad], known_deviations=[known]).deviations
    assert status.deviation.upstream == ("rabbitmq/rabbitmq-server#4563", "https://example.org/bug/7")
    cited = "Upstream: rabbitmq/rabbitmq-server#4563, https://example.org/bug/7 (affects RabbitMQ before 3.11.0)."
    for fmt in ("md", "html", "json"):
        code, out, _ = run_cli("report", bad, "--known-deviations", known, "--format", fmt, "--out",
                               tmp_path / f"r.{fmt}")
        text = (tmp_path / f"r.{fmt}").read_text()
        shown = cited.replace("#", "\\#") if fmt == "md" else "rabbitmq/rabbitmq-server#4563"   # (Markdown escapes #)
        assert code == 0 and shown in text and "RabbitMQ before 3.11.0" in text, fmt
    # a reference that is neither owner/repo#N nor a URL is one line, and no report is written
    known = _deviation(tmp_path, rule, 'upstream = ["the tracker"]\n')
    code, out, err = run_cli("report", bad, "--known-deviations", known, "--out", tmp_path / "none.md")
    assert code == 2 and "upstream" in err and err.count("\n") == 1 and not (tmp_path / "none.md").exists()


def test_a_race_is_matched_against_a_deviation_as_a_failure_is(tmp_path):
    """A run of concurrent cases records a race (two exclusive opens both granted: CORE-23, breaking at the second
    Open, which answered OK where MQ gives MQRC_OBJECT_IN_USE).  A deviation of the rule that describes that
    departure explains it (the verdict is a known deviation); one describing another shape (a Get) does not: the
    race stands, the verdict stays fail, and the note names the race file."""
    from conformance.records.races import load_race, race_failure

    # up to 200 cases, stopping at the first race: one case in five is of exclusive opens, and whether two of them
    # overlap depends on how the machine schedules the clients' threads (40 cases once raced none on a loaded one)
    code, out, err = run_cli("run", "--adapter", "simulated", "--faults", "exclusive-open-not-atomic", "--adapter-opt",
                             "call-ms=0.2", "--concurrency", "3", "--seed", "1", "--examples", "200",
                             "--keep-going", "0", "--results", tmp_path / "r")
    assert code == 1, out + err
    [name] = json.loads((tmp_path / "r" / "run.json").read_text())["races"]
    race = load_race(tmp_path / "r" / name)
    failure = race_failure(race)
    assert failure is not None and failure.blamed == race.rules == ("CORE-23",)
    assert type(failure.mismatch.op).__name__ == "Open" and failure.mismatch.fields == ("rc",)

    def known(match: str):
        path = tmp_path / "known.toml"
        path.write_text('[[deviation]]\nrule = "CORE-23"\nadapter = "simulated"\nseen = "s."\nreason = """Why."""\n'
                        f'[deviation.match]\n{match}\n')
        return path

    report = make_report([tmp_path / "r"], known_deviations=[known('op = ["Open"]\nfields = ["rc"]')])
    [status] = report.deviations
    assert status.status == "matched" and report.columns[0].cells["CORE-23"].verdict == "known deviation"
    report = make_report([tmp_path / "r"], known_deviations=[known('op = ["Get"]')])
    [status] = report.deviations
    assert status.status == "does not match" and report.columns[0].cells["CORE-23"].verdict == "fail"
    assert f"race {Path(name).name}" in status.note and "not Get" in status.note, status.note
