"""Blame by counterfactual: a rule is failed only when relaxing it alone makes the history pass."""

import json
from pathlib import Path

import attrs
import pytest

from conformance.checker import blame as blame_mod
from conformance.checker.blame import DISCARD_ONLY, UNCOUNTED_EXPIRED, blame, blamed_alone, explained_by, follows, known_past_aside
from conformance.checker.sequential import ModelTracker, check_history
from conformance.records.history import Failure, Step, load_failure, with_alternatives
from reference_model import language as L
from reference_model import mqconst as C
from tests.test_checker import SETUP, STD, backed_out_then_restarted, msg, put

D = C.PLATFORM_DISTRIBUTED
ROOT = Path(__file__).resolve().parent.parent


def blamed(history, platform=D):
    mm = check_history(platform, history)[-1].mismatch
    assert mm is not None, "the history passes"
    return mm, blame(history, mm, platform)


def test_same_priority_out_of_order_blames_fifo_within_priority_not_priority_order():
    """A message of another priority is on the queue, so the checker mentions CORE-04; but the one that
    came back has the same priority as MQ's: only FIFO within a priority (CORE-05) was broken."""
    mm, b = blamed(SETUP + [(put("a", "a1", "x", 3), L.OK), (put("a", "a1", "y", 3), L.OK),
                            (put("a", "a1", "z", 1), L.OK), (L.Get(conn="b", handle="b1"), msg("y", priority=3))])
    assert "CORE-04" in mm.rules
    assert b.rules == ("CORE-05",) and "CORE-04" in b.mentioned and b.confirmed


def test_another_priority_first_blames_priority_order():
    _, b = blamed(SETUP + [(put("a", "a1", "low", 1), L.OK), (put("a", "a1", "high", 7), L.OK),
                           (L.Get(conn="b", handle="b1"), msg("low", priority=1))])
    assert b.rules == ("CORE-04",)


def test_a_lower_priority_returned_past_an_older_one_of_its_priority_needs_both_order_rules():
    """Relaxing priority order alone still returns the oldest of the lower priority: returning the newer
    one breaks FIFO within the priority too, so the smallest set that explains it is both."""
    _, b = blamed(SETUP + [(put("a", "a1", "old", 1), L.OK), (put("a", "a1", "new", 1), L.OK),
                           (put("a", "a1", "high", 7), L.OK), (L.Get(conn="b", handle="b1"), msg("new", priority=1))])
    assert set(b.rules) == {"CORE-04", "CORE-05"}


def test_a_backed_out_message_passed_over_blames_the_backout_and_the_order_not_the_count():
    """A backout that lost the message (CORE-15) or an order that passed it over (CORE-05) explain it
    alike; BackoutCount's rule (CORE-17) decides a count, never which message comes."""
    mm, b = blamed(SETUP + [(put("a", "a1", "first"), L.OK), (put("a", "a1", "second"), L.OK),
                            (L.Get(conn="b", handle="b1", options=C.MQGMO_SYNCPOINT), msg("first")),
                            (L.Backout(conn="b"), L.OK), (L.Get(conn="b", handle="b1"), msg("second"))])
    assert set(b.rules) == {"CORE-15", "CORE-05"} and b.rules[0] == "CORE-15"  # the backout comes first
    assert "CORE-17" in mm.rules and "CORE-17" not in b.rules


FULL = [(L.DefineQueue(queue="Q1", attrs=(("MAXDEPTH", 1),)), L.OK),
        (L.Connect(conn="a"), L.OK), (L.Open(conn="a", handle="a1", queue="Q1", options=STD), L.OK),
        (L.Connect(conn="b"), L.OK), (L.Open(conn="b", handle="b1", queue="Q1", options=STD), L.OK),
        (put("a", "a1", "kept", options=C.MQPMO_SYNCPOINT), L.OK), (L.Disconnect(conn="a"), L.OK),
        (put("b", "b1", "more"), L.OK)]


def test_a_put_accepted_on_a_queue_a_disconnect_filled_blames_maxdepth_not_a_disconnect_that_answered_as_mq():
    """MAXDEPTH 1, a message committed by a normal MQDISC, then a put the system accepts.  A disconnect
    that backed out (CORE-30 relaxed) explains it as well as MAXDEPTH (CORE-27), but only by inference: the
    disconnect answered as MQ's does, and a rule of what the history shows explains it alone, so CORE-30 is
    mentioned, never failed (the commit that did what MQ's commit does, named first, was the complaint); the
    same once a depth of 1 after the MQDISC shows the commit happened."""
    _, b = blamed(FULL)
    assert b.rules == ("CORE-27",) and "CORE-30" in b.mentioned
    assert follows(FULL, D, frozenset({"CORE-30"})) is not None   # it does explain it alone
    seen = FULL[:7] + [(L.InquireQueue(queue="Q1", names=("CURDEPTH",)), L.Observation(attrs=(("CURDEPTH", 1),)))] \
        + FULL[7:]
    _, b = blamed(seen)
    assert b.rules == ("CORE-27",)
    # with MAXDEPTH 2, a plain message and MAXDEPTH lowered to 1, the queue is full whatever the disconnect did
    more = [(L.DefineQueue(queue="Q1", attrs=(("MAXDEPTH", 2),)), L.OK)] + FULL[1:5] + [
        (put("b", "b1", "plain"), L.OK)] + FULL[5:7] + [(L.AlterQueue(queue="Q1", attrs=(("MAXDEPTH", 1),)), L.OK)] \
        + FULL[7:]
    _, b = blamed(more)
    assert b.rules == ("CORE-27",)


def test_a_full_queue_never_blames_uncommitted_puts_when_none_are_counted():
    """Refused as full with one committed message on a MAXDEPTH 2 queue: MAXDEPTH alone; CORE-28 (uncommitted
    puts count) and the commit (CORE-29, whichever way it went the message counts) are not broken."""
    history = [(L.DefineQueue(queue="Q1", attrs=(("MAXDEPTH", 2),)), L.OK),
               (L.Connect(conn="a"), L.OK), (L.Open(conn="a", handle="a1", queue="Q1", options=STD), L.OK),
               (put("a", "a1", "one", options=C.MQPMO_SYNCPOINT), L.OK), (L.Commit(conn="a"), L.OK),
               (put("a", "a1", "two"), L.Observation.of(C.MQRC_Q_FULL))]
    mm, b = blamed(history)
    assert b.rules == ("CORE-27",) and "CORE-28" not in mm.rules and "CORE-29" not in mm.rules


def test_an_uncommitted_message_returned_blames_visibility_only():
    _, b = blamed(SETUP + [(put("a", "a1", "u", options=C.MQPMO_SYNCPOINT), L.OK), (L.Get(conn="b", handle="b1"), msg("u"))])
    assert b.rules == ("CORE-02",)


def test_a_history_that_passes_needs_no_relaxation_and_one_that_departs_needs_its_rule():
    good = SETUP + [(put("a", "a1", "m"), L.OK), (L.Get(conn="b", handle="b1"), msg("m"))]
    assert follows(good, D, frozenset()) == -1
    bad = SETUP + [(put("a", "a1", "low", 1), L.OK), (put("a", "a1", "high", 7), L.OK),
                   (L.Get(conn="b", handle="b1"), msg("low", priority=1))]
    assert follows(bad, D, frozenset()) is None
    assert follows(bad, D, frozenset({"CORE-05"})) is None
    assert follows(bad, D, frozenset({"CORE-04"})) == len(bad) - 1


def _committed_counterexamples():
    from conformance.records.races import is_race_file

    return [p for p in sorted((ROOT / "docs" / "compliance").glob("**/failures/*.json")) if not is_race_file(p)] + \
        sorted((ROOT / "docs" / "compliance" / "counterexamples").glob("**/*.json"))


def _published_races():
    from conformance.records.races import is_race_file

    return [p for p in sorted((ROOT / "docs" / "compliance" / "results").glob("*/failures/*.json")) if is_race_file(p)]


@pytest.mark.parametrize("path", _published_races(), ids=lambda p: f"{p.parent.parent.name}/{p.name}")
def test_every_published_race_is_judged_today_as_its_report_says(path):
    """A published race (a run of concurrent cases), judged afresh with the rules its run had set aside: still no
    order of its calls is one MQ allows, it breaks exactly the rules it records, and it reads as the sequential
    departure of its longest order (what known deviations are matched against)."""
    from conformance.checker.linearizable import NOT_LINEARIZABLE, check
    from conformance.records.races import load_race, race_failure

    race = load_race(path)
    again = f"MQCONFORM_RUNS=concurrent bash scripts/compliance.sh {path.parent.parent.name.partition('-')[0]}"
    result = check(race.platform, race.setup, race.events, race.after, set_aside=frozenset(race.set_aside))
    assert result.verdict == NOT_LINEARIZABLE and set(result.rules) == set(race.rules), \
        f"{path.name}: judged {result.verdict} {result.rules} today, recorded {race.rules}: {again}"
    failure = race_failure(race)
    assert failure is not None and set(failure.blamed) == set(race.rules)


@pytest.mark.parametrize("path", _committed_counterexamples(), ids=lambda p: p.name)
def test_every_rule_a_committed_counterexample_fails_alone_explains_it(path):
    """Each committed counterexample, diagnosed afresh: the history departs as recorded, and relaxing
    each blamed rule (or the blamed set together, where no single rule does) makes it pass."""
    failure = load_failure(path)
    pairs = [(s.op, s.observed) for s in failure.steps][:failure.mismatch.index + 1]
    aside = frozenset(failure.set_aside) or _stepped_past(failure, pairs)
    tolerance = _expiry_tolerance(path, failure)
    # diagnosed as its run had it: the rules found broken before it never on trial, the rest of what the run
    # had set aside (rules only mentioned by an earlier departure) tried like any other (a file that does not
    # say which were found broken: every set-aside rule but its own, as a replay of it steps past them)
    failure = attrs.evolve(failure, set_aside=tuple(aside))
    diagnosed = with_alternatives(failure, tolerance, known_by=failure.known_before())
    assert not diagnosed.mismatch.known, f"{path.name}: the rules found broken before it explain it"
    # what the round had set aside stays set aside, but for the rules on trial here (those this failure
    # breaks and those it mentions, but for rules found broken before it), each judged with none of the
    # others set aside
    # (and those the diagnosis put on trial itself and found to explain it by inference alone: a rule its round set
    # aside that the history cannot do without, say)
    verdict = blame(pairs, diagnosed.mismatch, diagnosed.platform, tolerance, frozenset(failure.set_aside),
                    failure.known_before())
    on_trial = {*diagnosed.blamed, *diagnosed.mentioned, *verdict.mentioned, *verdict.inferred}
    # it departs unrelaxed (a rule its round set aside only as mentioned may be the one it breaks)
    assert follows(pairs, diagnosed.platform, frozenset(), tolerance,
                   set_aside=aside - (on_trial - failure.known_before())) is None
    if not diagnosed.mismatch.confirmed:
        # published as unconfirmed (the report says no relaxation explains it, and names the checker's first
        # rule as such); a counterexample published as confirmed must stay explained
        assert failure.mismatch.confirmed is False, f"no relaxation explains {path.name}: {diagnosed.mismatch.rules}"
        return

    def needed_at(relaxed):
        # (the rules found broken before it relaxed as the set-aside ones are, as its diagnosis has them)
        return follows(pairs, diagnosed.platform, frozenset(relaxed), tolerance,
                       set_aside=(aside | failure.known_before()) - (on_trial - failure.known_before()))

    def passes(relaxed):
        return needed_at(relaxed) is not None

    alone = [r for r in diagnosed.blamed if passes({r})]
    assert alone == list(diagnosed.blamed) or (not alone and passes(diagnosed.blamed)), (path.name, diagnosed.blamed)
    # several rules each explaining it alone: it breaks one of them, and says so (never two failures)
    assert diagnosed.one_of == (len(alone) > 1), (path.name, diagnosed.blamed, alone)
    inferred = verdict.inferred
    for rule in diagnosed.mentioned:
        # a rule of discards may explain it alone, but only from a later step than a blamed rule of what the
        # history shows does; a rule that explains it by inference alone gives way to one that explains what the
        # history shows (blame.py)
        shown = [needed_at({r}) for r in alone if r not in DISCARD_ONLY and r != UNCOUNTED_EXPIRED]
        assert not passes({rule}) or rule in inferred or (rule in DISCARD_ONLY and shown and needed_at({rule}) > min(shown)), \
            (path.name, rule)
    assert json.loads(json.dumps(diagnosed.to_json()))["rules"] == list(diagnosed.blamed)


@pytest.mark.parametrize("path", [p for p in _committed_counterexamples() if "results" in p.parts],
                         ids=lambda p: f"{p.parent.parent.name}/{p.name}")
def test_every_published_failure_is_blamed_today_as_its_report_says(path):
    """A published run's verdicts are its failures' blame: diagnosed again as its run had it, each committed
    failure breaks exactly the rules it records.  A change to the checker or the model that blames one otherwise
    (a rule no longer broken by it, or one more) leaves a published report saying fail, or pass, where the kit
    now says otherwise: the run is to be made again (bash scripts/compliance.sh BROKER)."""
    failure = load_failure(path)
    pairs = [(s.op, s.observed) for s in failure.steps][:failure.mismatch.index + 1]
    aside = frozenset(failure.set_aside) or _stepped_past(failure, pairs)
    failure = attrs.evolve(failure, set_aside=tuple(aside))
    diagnosed = with_alternatives(failure, _expiry_tolerance(path, failure), known_by=failure.known_before())
    run = path.parent.parent.name
    broker, _, kind = run.partition("-")
    again = f"MQCONFORM_RUNS={kind or 'plain'} bash scripts/compliance.sh {broker}"
    assert set(diagnosed.blamed) == set(failure.blamed), \
        f"{run}: make the run again ({again}): blamed today {diagnosed.blamed}"
    assert diagnosed.one_of == failure.one_of, \
        f"{path.parent.parent.name}: regenerate it: blamed today on {'one of ' if diagnosed.one_of else ''}{diagnosed.blamed}"


def _expiry_tolerance(path: Path, failure) -> int:
    """How far the system's remaining expiry may be from the exact value, as the run that found ``failure`` had it:
    from the run's run.json, or (a known deviation's evidence, kept apart) the adapter's own."""
    run = path.parent.parent / "run.json"
    if run.exists():
        return json.loads(run.read_text())["capabilities"].get("expiry_tolerance", 0)
    from adapters.activemq.common import ActiveMQShim
    from adapters.rabbitmq.adapter import RabbitMQAdapter

    return {"rabbitmq": RabbitMQAdapter, "activemq": ActiveMQShim, "activemq-stomp": ActiveMQShim}[failure.adapter].expiry_tolerance


def _stepped_past(failure, pairs) -> frozenset:
    """For a file written before failures recorded what their run had set aside: the rules of the earlier
    departures its history passes through, as the keep-going round that found it stepped past them."""
    aside: frozenset = frozenset()
    while True:
        tracker = ModelTracker(failure.platform, set_aside=aside)
        for i, (op, observed) in enumerate(pairs):
            check = tracker.advance(op, observed)
            if check.mismatch is None:
                continue
            if i == len(pairs) - 1:
                return aside
            if set(check.mismatch.rules) <= aside:
                assert tracker.step_past(op, observed), "an earlier departure that changes what follows"
                continue
            aside = aside | set(check.mismatch.rules)
            break
        else:
            return aside


def test_a_departure_the_set_aside_rules_explain_alone_is_known_not_new():
    """A keep-going round sets aside what it found (MAXDEPTH, say); a later history the checker names with
    another rule too (the backout before it) but that passes with the set-aside rules alone relaxed is a
    departure already found: nothing new is blamed, and the engine does not record it."""
    history = [(L.DefineQueue(queue="Q1", attrs=(("MAXDEPTH", 1),)), L.OK), (L.Connect(conn="a"), L.OK),
               (L.Open(conn="a", handle="a1", queue="Q1", options=STD), L.OK),
               (put("a", "a1", "one"), L.OK), (L.Get(conn="a", handle="a1", options=C.MQGMO_SYNCPOINT), msg("one")),
               (L.Backout(conn="a"), L.OK), (put("a", "a1", "two"), L.OK)]
    mm = check_history(D, history)[-1].mismatch
    assert mm is not None and "CORE-27" in mm.rules and set(mm.rules) - {"CORE-27"}
    known = blame(history, mm, D, set_aside=frozenset({"CORE-27"}), known_by=frozenset({"CORE-27"}))
    assert known.known and known.rules == ()
    # set aside but not found broken (only mentioned by the earlier departure): not known, and blamed
    assert not blame(history, mm, D, set_aside=frozenset({"CORE-27"})).known
    fresh = blame(history, mm, D)
    assert not fresh.known and "CORE-27" in fresh.rules


def test_a_message_that_left_comes_back_blames_what_removed_it_not_its_put():
    """A non-persistent message a restart must discard comes back: the restart (CORE-32) is broken; the
    plain put that once placed it there (CORE-01, its provenance) is not."""
    history = [(L.Connect(conn="c1"), L.OK), (L.DefineQueue(queue="QF"), L.OK),
               (L.Open(conn="c1", handle="h1", queue="QF", options=STD), L.OK),
               (L.Put(conn="c1", handle="h1", body="m4", md=L.MessageDescriptor(priority=0, persistence=0),
                      options=C.MQPMO_NO_SYNCPOINT), L.OK),
               (L.Restart(), L.OK), (L.Connect(conn="c1"), L.OK),
               (L.Open(conn="c1", handle="h2", queue="QF", options=STD), L.OK),
               (L.Get(conn="c1", handle="h2", options=C.MQGMO_NO_SYNCPOINT), msg("m4"))]
    mm, b = blamed(history)
    assert "CORE-01" in mm.rules and b.rules == ("CORE-32",)


def test_a_message_mq_never_had_blames_neither_order_nor_put():
    """A message put with segmentation allowed on a queue whose MAXMSGL it exceeds comes back whole where MQ
    returns its first segment: segmentation (CORE-50) is broken, not FIFO order or the plain put."""
    body = "L1-abcdefghijklmnopqrstuvwxyzabc"
    history = [(L.DefineQueue(queue="Q", attrs=(("MAXMSGL", 16), ("MSGDLVSQ", C.MQMDS_FIFO))), L.OK),
               (L.Connect(conn="p"), L.OK), (L.Open(conn="p", handle="h", queue="Q", options=STD), L.OK),
               (L.Put(conn="p", handle="h", body=body, md=L.MessageDescriptor(msg_flags=C.MQMF_SEGMENTATION_ALLOWED),
                      options=C.MQPMO_NO_SYNCPOINT), L.OK),
               (L.Get(conn="p", handle="h", options=C.MQGMO_NO_SYNCPOINT), msg(body))]
    mm, b = blamed(history)
    assert {"CORE-06", "CORE-01"} & set(mm.rules)   # the checker names them along
    assert b.rules == ("CORE-50",), (mm.rules, b)


def test_a_depth_never_blames_how_its_messages_were_put():
    """An expired message that asked for a report is gone from its queue and no report is on the reply
    queue: the missing report (EXP-08) or the depth (CORE-28) explains it, never the plain put (CORE-01)."""
    opts = C.MQOO_INPUT_SHARED | C.MQOO_OUTPUT | C.MQOO_INQUIRE
    history = [(L.DefineQueue(queue="APP.Q"), L.OK), (L.DefineQueue(queue="REPLY.Q"), L.OK),
               (L.Connect(conn="p"), L.OK), (L.Open(conn="p", handle="h", queue="APP.Q", options=opts), L.OK),
               (L.Put(conn="p", handle="h", body="m5", options=C.MQPMO_NO_SYNCPOINT,
                      md=L.MessageDescriptor(expiry=3, report=C.MQRO_EXPIRATION, reply_to_q="REPLY.Q")), L.OK),
               (L.Put(conn="p", handle="h", body="m6", options=C.MQPMO_NO_SYNCPOINT), L.OK),
               (L.AdvanceClock(tenths=8), L.OK),
               (L.InquireQueue(queue="APP.Q", names=("CURDEPTH",)), L.Observation(attrs=(("CURDEPTH", 1),))),
               (L.InquireQueue(queue="REPLY.Q", names=("CURDEPTH",)), L.Observation(attrs=(("CURDEPTH", 0),)))]
    mm = check_history(D, history)[-1].mismatch
    assert mm is not None
    diagnosed = with_alternatives(Failure(area="expiry", adapter="x", platform=D, seed=1, mismatch=mm,
                                          steps=tuple(Step(op=o, observed=b) for o, b in history)))
    assert "EXP-08" in diagnosed.blamed and "CORE-01" not in diagnosed.blamed, diagnosed.mismatch


DEPTH = L.InquireQueue(queue="Q1", names=("CURDEPTH",))


def depth(n):
    return L.Observation(attrs=(("CURDEPTH", n),))


def test_curdepth_blames_the_depth_rule_only_as_far_as_uncommitted_puts_and_held_gets_reach():
    """CORE-28 decides whether uncommitted puts count and held gets do not: relaxed, it moves the depth by
    at most their number.  A depth higher than MQ's with nothing held, or lower by more than the
    uncommitted puts, is not CORE-28's; within their reach it is."""
    held = SETUP + [(put("a", "a1", "m1"), L.OK),
                    (L.Get(conn="b", handle="b1", options=C.MQGMO_SYNCPOINT), msg("m1"))]
    _, b = blamed(held + [(DEPTH, depth(1))])      # the held get counted
    assert "CORE-28" in b.rules
    plain = SETUP + [(put("a", "a1", "m1"), L.OK)]
    pending = SETUP + [(put("a", "a1", "p", options=C.MQPMO_SYNCPOINT), L.OK)]
    _, b = blamed(plain + [(DEPTH, depth(2))])     # one too many, nothing held or uncommitted
    # no relaxation explains a message from nowhere: the depth rule is named, unconfirmed, for want of one
    assert not b.confirmed and b.rules == ("CORE-28",)
    _, b = blamed(pending + [(DEPTH, depth(3))])   # two too many: CORE-28 moves it by none upwards
    assert not (b.confirmed and "CORE-28" in b.rules)
    _, b = blamed(pending + [(DEPTH, depth(0))])   # the uncommitted put not counted
    assert b.rules == ("CORE-28",) and b.confirmed


def test_a_depth_short_of_messages_just_put_outside_syncpoint_blames_their_put_confirmed():
    """A depth asked for right after puts outside syncpoint that leaves some of them out: the puts returned
    before the messages were there (CORE-01, confirmed: relaxed, it gives that depth), not how the depth
    counts (CORE-28 moves it only by uncommitted puts and held gets).  The messages are there for the steps
    after.  Once a call met the queue, or anything but puts, opens and calls on other queues came between, a
    short depth is not the put's."""
    plain = SETUP + [(put("a", "a1", "m1"), L.OK), (put("a", "a1", "m2"), L.OK)]
    for shown in (1, 0):
        _, b = blamed(plain + [(DEPTH, depth(shown))])
        assert b.rules == ("CORE-01",) and b.confirmed, (shown, b)
    # the messages arrived after: the gets that follow return them, as MQ's would
    later = plain + [(DEPTH, depth(0)), (L.Get(conn="b", handle="b1"), msg("m1")),
                     (L.Get(conn="b", handle="b1"), msg("m2")), (DEPTH, depth(0))]
    assert follows(later, D, frozenset({"CORE-01"})) == len(plain)
    assert follows(later, D, frozenset()) is None
    # by no more than the messages put: one from nowhere missing is not the puts'
    two_short = SETUP + [(put("a", "a1", "m0"), L.OK), (L.Get(conn="b", handle="b1", options=C.MQGMO_BROWSE_FIRST),
                                                         msg("m0")), (put("a", "a1", "m1"), L.OK), (DEPTH, depth(0))]
    _, b = blamed(two_short)
    assert not (b.confirmed and b.rules == ("CORE-01",)), b
    for between in [(DEPTH, depth(2)), (L.Get(conn="b", handle="b1", options=C.MQGMO_BROWSE_FIRST), msg("m1")),
                    (L.AdvanceClock(tenths=1), L.OK)]:
        _, b = blamed(plain + [between, (DEPTH, depth(1))])
        assert not (b.confirmed and "CORE-01" in b.rules), (between, b)
    # a depth MQ gives (an expired message removed in the background) tells no story of a message arriving late:
    # the expiration report missing after it is the expiry's (diagnosed as a run diagnoses it, with the rules of
    # the model's other outcomes on trial too: CORE-01 among them)
    opts = C.MQOO_INPUT_SHARED | C.MQOO_OUTPUT | C.MQOO_INQUIRE
    expired = [(L.DefineQueue(queue="APP.Q"), L.OK), (L.DefineQueue(queue="REPLY.Q"), L.OK), (L.Connect(conn="p"), L.OK),
               (L.Open(conn="p", handle="h", queue="APP.Q", options=opts), L.OK),
               (L.Put(conn="p", handle="h", body="m5", options=C.MQPMO_NO_SYNCPOINT,
                      md=L.MessageDescriptor(expiry=3, report=C.MQRO_EXPIRATION, reply_to_q="REPLY.Q")), L.OK),
               (L.AdvanceClock(tenths=8), L.OK), (put("p", "h", "m6"), L.OK), (put("p", "h", "m7"), L.OK),
               (L.InquireQueue(queue="APP.Q", names=("CURDEPTH",)), depth(2)),
               (L.InquireQueue(queue="REPLY.Q", names=("CURDEPTH",)), depth(0))]
    mm = check_history(D, expired)[-1].mismatch
    diagnosed = with_alternatives(Failure(area="expiry", adapter="x", platform=D, seed=1, mismatch=mm,
                                          steps=tuple(Step(op=o, observed=b) for o, b in expired)))
    assert "CORE-01" in diagnosed.mismatch.rules + tuple(r for a in diagnosed.mismatch.alternatives for r in a.rules) \
        or "CORE-01" in diagnosed.mentioned, diagnosed.mismatch
    assert "CORE-01" not in diagnosed.blamed and "EXP-08" in diagnosed.blamed, diagnosed.mismatch
    # a call on another queue meets nothing of this one
    other = [(L.DefineQueue(queue="Q2"), L.OK)] + plain + [
        (L.InquireQueue(queue="Q2", names=("CURDEPTH",)), depth(0)), (DEPTH, depth(1))]
    _, b = blamed(other)
    assert b.rules == ("CORE-01",) and b.confirmed, b


def test_a_returned_expiry_blames_the_expired_message_rule_only_for_a_value_of_zero_or_less():
    """EXP-06 says an expired message is never returned (Expiry after a get above zero): a positive Expiry
    that differs from MQ's is the remaining time's rules' (EXP-02/03), never EXP-06's; with no time
    on the queue there is nothing to decrement, so EXP-02 is not blamed either."""
    timed = SETUP + [(L.Put(conn="a", handle="a1", body="t", md=L.MessageDescriptor(expiry=50)), L.OK)]
    _, b = blamed(timed + [(L.Get(conn="b", handle="b1"), msg("t", expiry=70))])
    assert "EXP-06" not in b.rules and "EXP-02" not in b.rules and "EXP-03" in b.rules
    _, b = blamed(timed + [(L.AdvanceClock(tenths=10), L.OK), (L.Get(conn="b", handle="b1"), msg("t", expiry=50))])
    assert "EXP-06" not in b.rules and {"EXP-02", "EXP-03"} <= set(b.rules)
    _, b = blamed(timed + [(L.Get(conn="b", handle="b1"), msg("t", expiry=0))])
    assert "EXP-06" in b.rules


def test_a_get_that_selects_blames_the_selection_or_the_order_never_both():
    """A message outside MsgId's selection came back: CORE-51 alone (no order among the selected returns it);
    a selected message out of delivery order: the order among the selected (CORE-52), not CORE-51."""
    ids = SETUP + [(L.Put(conn="a", handle="a1", body="one", md=L.MessageDescriptor(msg_id="id-1")), L.OK),
                   (L.Put(conn="a", handle="a1", body="two", md=L.MessageDescriptor(msg_id="id-2")), L.OK),
                   (L.Put(conn="a", handle="a1", body="three", md=L.MessageDescriptor(msg_id="id-2")), L.OK)]
    pick = L.GetMatching(conn="b", handle="b1", match_options=C.MQMO_MATCH_MSG_ID, msg_id="id-2")
    _, b = blamed(ids + [(pick, msg("one", msg_id="id-1"))])
    assert b.rules == ("CORE-51",)
    _, b = blamed(ids + [(pick, msg("three", msg_id="id-2"))])
    assert "CORE-51" not in b.rules and "CORE-52" in b.rules


def test_a_rule_set_aside_only_because_it_was_mentioned_can_still_be_blamed():
    """A keep-going run sets aside every rule a departure named, broken or only mentioned.  A later departure
    that breaks one of the merely mentioned ones is blamed on it (an expired message returned: EXP-06), not
    on a rule it mentions beside (EXP-04, which says how MQ discards it); one found broken makes it known."""
    history = SETUP + [(L.Put(conn="a", handle="a1", body="old", md=L.MessageDescriptor(expiry=5)), L.OK),
                       (L.AdvanceClock(tenths=10), L.OK), (L.Get(conn="b", handle="b1"), msg("old", expiry=1))]
    mm = check_history(D, history)[-1].mismatch
    aside = frozenset({"EXP-06", "EXP-02", "EXP-03"})
    b = blame(history, mm, D, set_aside=aside, known_by=frozenset({"EXP-02"}))
    assert b.rules == ("EXP-06",) and b.confirmed and not b.known, b
    assert blame(history, mm, D, set_aside=aside, known_by=frozenset({"EXP-06"})).known


def test_a_message_lost_at_a_restart_names_the_restart_not_what_its_backout_count_would_have_been():
    """A persistent message backed out once, then a restart, then a get finding nothing: the restart's rule
    (CORE-32) is what lost it; the rules about the BackoutCount it would have carried (CORE-45, SYNC-19,
    CORE-17) never decide whether a message comes back."""
    _, verdict = blamed(backed_out_then_restarted(L.Observation.of(C.MQRC_NO_MSG_AVAILABLE)))
    assert "CORE-32" in verdict.rules, verdict.rules
    assert not {"CORE-45", "SYNC-19", "CORE-17", "CORE-12"} & set(verdict.rules), verdict.rules


def test_an_expired_message_returned_with_its_expiry_untouched_breaks_the_decrement_too():
    """A message put with Expiry 8, got 2 s later: MQ has discarded it.  Returned with Expiry 8 (no time
    counted), returning it (EXP-06) does not explain the history alone: its decrement was broken too, and
    either rule of the decrement (EXP-02, EXP-03) with EXP-06 explains it, neither without it: EXP-06, and one
    of those two, is what is blamed (as the decrement alone is "one of EXP-02 / EXP-03" where nothing had
    expired).  Returned with an Expiry its time on the queue could leave (0 or less), it is EXP-06 alone.  On a system measured within 3 tenths, a message 1 tenth past its expiry may still be
    live: there the Expiry left untouched is the decrement alone, returning it no departure."""
    def history(expiry, wait):
        return SETUP + [
            (L.Put(conn="a", handle="a1", body="m1", md=L.MessageDescriptor(priority=0, expiry=8),
                   options=C.MQPMO_NO_SYNCPOINT), L.OK),
            (L.AdvanceClock(tenths=wait), L.OK),
            (L.Get(conn="b", handle="b1", options=C.MQGMO_NO_SYNCPOINT), msg("m1", expiry=expiry)),
        ]

    _, b = blamed(history(8, 20))
    assert set(b.rules) - set(b.either) == {"EXP-06"} and set(b.either) == {"EXP-02", "EXP-03"} and b.confirmed \
        and not b.each, b
    assert set(b.rules) == {"EXP-06", "EXP-02", "EXP-03"}, b
    _, b = blamed(history(-12, 20))
    assert b.rules == ("EXP-06",) and b.confirmed, b
    h = history(8, 9)
    tracker = ModelTracker(D, expiry_tolerance=3)
    checks = [tracker.advance(op, obs) for op, obs in h]
    mm = checks[-1].mismatch
    assert mm is not None
    b = blame(h, mm, D, expiry_tolerance=3)
    assert "EXP-03" in b.rules and "EXP-06" not in b.rules, b


def test_a_put_accepted_on_a_full_queue_is_followed_with_its_message_there():
    """MAXDEPTH 1 and an expired message still on the queue: MQ refuses the next put (or has removed the
    expired one in the background and accepts it).  A system that accepted it with both there shows depth 2:
    the full queue's check (CORE-27), relaxed, lets the history go on with the message put, and is blamed."""
    history = [
        (L.DefineQueue(queue="Q1"), L.OK),
        (L.Connect(conn="a"), L.OK),
        (L.Open(conn="a", handle="a1", queue="Q1", options=STD), L.OK),
        (L.Put(conn="a", handle="a1", body="m1", md=L.MessageDescriptor(expiry=3), options=C.MQPMO_NO_SYNCPOINT),
         L.OK),
        (L.AdvanceClock(tenths=5), L.OK),
        (L.AlterQueue(queue="Q1", attrs={"MAXDEPTH": 1}), L.OK),
        (L.Put(conn="a", handle="a1", body="m3", md=L.MessageDescriptor(), options=C.MQPMO_NO_SYNCPOINT), L.OK),
        (L.InquireQueue(queue="Q1", names=["CURDEPTH"]), L.Observation(attrs={"CURDEPTH": 2})),
    ]
    _, b = blamed(history)
    assert "CORE-27" in b.rules and b.confirmed, b


def _browsed_after_the_backout(count: int, last: L.Observation) -> list:
    """:func:`backed_out_then_restarted` with a browse between the backout and the restart that shows the
    message with BackoutCount ``count``."""
    history = backed_out_then_restarted(last)
    at = next(i for i, (op, _) in enumerate(history) if isinstance(op, L.Restart))
    probe = [(L.Open(conn="b", handle="bw", queue="Q1", options=C.MQOO_BROWSE), L.OK),
             (L.Get(conn="b", handle="bw", options=C.MQGMO_BROWSE_FIRST | C.MQGMO_NO_SYNCPOINT),
              msg("m", persistence=1, backout_count=count)),
             (L.Close(conn="b", handle="bw"), L.OK)]
    return history[:at] + probe + history[at:]


def test_a_count_lost_at_a_restart_blames_every_count_rule_until_a_call_showed_the_backout_counted():
    """Without a call between the backout and the restart that shows the count, a backout that never
    counted (CORE-15, CORE-17) explains a count of 0 after the restart as well as a count the restart lost
    (CORE-45): each alone passes the history.  A browse after the backout that shows the count right leaves
    the restart alone to blame; one that shows it wrong is the departure, and the backout's."""
    lost = msg("m", persistence=1)   # BackoutCount 0 after the restart, where MQ keeps the backout's 1
    _, b = blamed(backed_out_then_restarted(lost))
    assert set(b.rules) == {"CORE-45", "CORE-15", "CORE-17"}, b
    _, b = blamed(_browsed_after_the_backout(1, lost))
    assert b.rules == ("CORE-45",), b
    mm, b = blamed(_browsed_after_the_backout(0, lost))
    assert isinstance(mm.op, L.Get) and mm.op.handle == "bw"   # the browse departs first
    assert set(b.rules) == {"CORE-15", "CORE-17"}, b


def test_a_count_a_reading_let_differ_is_carried_on_as_shown():
    """The whole history with the browse's wrong count (0) and the restart keeping it: relaxing the
    backout's count (CORE-17) lets the browse show 0, and the message goes on with 0, which the restart
    keeps and the last get shows; the restart's rule is not needed."""
    history = _browsed_after_the_backout(0, msg("m", persistence=1))
    assert follows(history, D, frozenset({"CORE-17"})) is not None
    assert follows(history, D, frozenset({"CORE-45"})) is None


def test_a_trigger_message_written_no_time_ago_is_not_missing_because_it_expired():
    """A DEPTH trigger that fires at the second put, its initiation queue then empty: the trigger condition
    (TRIG-03) is broken; that trigger messages never expire (TRIG-30) is not, no time having passed."""
    process = L.DefineProcess(process="P", appl_id="/bin/app", appl_type=6, env_data="", user_data="")
    history = [(process, L.OK), (L.DefineQueue(queue="INIT.Q"), L.OK),
               (L.DefineQueue(queue="APP.Q", attrs=(("INITQ", "INIT.Q"), ("PROCESS", "P"), ("TRIGGER", 1),
                                                   ("TRIGTYPE", C.MQTT_DEPTH), ("TRIGDPTH", 2))), L.OK),
               (L.Connect(conn="a"), L.OK), (L.Open(conn="a", handle="a1", queue="APP.Q", options=C.MQOO_OUTPUT), L.OK),
               (L.Open(conn="a", handle="i", queue="INIT.Q", options=C.MQOO_INPUT_SHARED), L.OK),
               (put("a", "a1", "m1"), L.OK), (put("a", "a1", "m2"), L.OK),
               (L.InquireQueue(queue="INIT.Q", names=("CURDEPTH",)), L.Observation(attrs=(("CURDEPTH", 0),)))]
    _, b = blamed(history)
    assert "TRIG-03" in b.rules and "TRIG-30" not in b.rules, b
    # the same two seconds later: a trigger message that expired would explain it (TRIG-30)
    later = history[:-1] + [(L.AdvanceClock(tenths=20), L.OK), history[-1]]
    mm, b = blamed(later)
    assert "TRIG-30" in b.rules, (mm.rules, b)


@pytest.mark.parametrize("delivery", [C.MQMDS_FIFO, C.MQMDS_PRIORITY])
def test_nothing_returned_where_a_message_waits_never_blames_delivery_order(delivery):
    """Every delivery order returns one of the messages available: a get that returns none where MQ returns
    one breaks what should have made a message available (its put), never the order among them."""
    fifo = [(L.DefineQueue(queue="Q1", attrs=(("MSGDLVSQ", delivery),)), L.OK)] + SETUP[1:]
    none = L.Observation.of(C.MQRC_NO_MSG_AVAILABLE)
    mm, b = blamed(fifo + [(put("a", "a1", "m1", 4), L.OK), (L.Get(conn="b", handle="b1"), none)])
    assert b.confirmed and b.rules == ("CORE-01",), (mm.rules, b)
    assert not set(b.rules) & {"CORE-04", "CORE-05", "CORE-06"}
    # a browse's cursor is another matter: where it stands depends on the order it went in
    browse = L.Get(conn="b", handle="b1", options=C.MQGMO_BROWSE_NEXT | C.MQGMO_NO_SYNCPOINT)
    _, b = blamed(fifo + [(put("a", "a1", "m1", 4), L.OK), (put("a", "a1", "m2", 4), L.OK),
                          (browse, msg("m2", priority=4)), (browse, none)])
    assert set(b.rules) & {"CORE-05", "CORE-06", "CORE-19"}


@pytest.mark.parametrize("data", [False, True])
def test_an_expiration_report_mq_never_made_blames_when_reports_are_made_not_the_reported_message(data):
    """A put under syncpoint that expires before its unit of work is backed out is never discarded, so MQ
    makes no report; a report on the reply queue breaks when reports are made (EXP-08, EXP-12), not the
    backout of the put (CORE-03), even where the report carries the message's data (its body)."""
    opts = C.MQOO_INPUT_SHARED | C.MQOO_BROWSE | C.MQOO_OUTPUT | C.MQOO_INQUIRE
    report = C.MQRO_EXPIRATION_WITH_FULL_DATA if data else C.MQRO_EXPIRATION
    history = [(L.DefineQueue(queue="APP"), L.OK), (L.DefineQueue(queue="REPLY"), L.OK), (L.Connect(conn="a"), L.OK),
               (L.Open(conn="a", handle="app", queue="APP", options=opts), L.OK),
               (L.Open(conn="a", handle="reply", queue="REPLY", options=opts), L.OK),
               (L.Put(conn="a", handle="app", body="m", options=C.MQPMO_SYNCPOINT,
                      md=L.MessageDescriptor(expiry=3, report=report, reply_to_q="REPLY")), L.OK),
               (L.AdvanceClock(tenths=5), L.OK), (L.Backout(conn="a"), L.OK),
               (L.Get(conn="a", handle="reply"),
                L.Observation(message=L.ReturnedMessage(body="m" if data else "", msg_type=C.MQMT_REPORT,
                                                        feedback=C.MQFB_EXPIRATION, priority=0, persistence=0,
                                                        msg_id="X")))]
    mm, b = blamed(history)
    assert set(mm.rules) == {"EXP-08", "EXP-12"}
    assert b.confirmed and set(b.rules) == {"EXP-08", "EXP-12"} and "CORE-03" not in b.rules


@pytest.mark.parametrize("before, blamed_rules", [(0, {"TRIG-24"}), (1, {"TRIG-24", "TRIG-03"})])
def test_a_missing_trigger_message_blames_the_count_only_where_there_was_something_to_miscount(before, blamed_rules):
    """A FIFO queue compares its DefPriority (5) with TriggerMsgPriority (4): a put of priority 0 triggers
    (FIRST). Where the queue held nothing before, no count could have gone otherwise: a missing trigger message
    breaks TRIG-24 alone. Where a message it held was got under syncpoint (not counted), a count that took it
    in (TRIG-03) explains it as well."""
    opts = C.MQOO_OUTPUT | C.MQOO_INQUIRE   # not for input: a queue open for input is not triggered (TRIG-06)
    history = [(L.DefineProcess(process="P", appl_id="/bin/app"), L.OK), (L.DefineQueue(queue="INIT"), L.OK),
               (L.DefineQueue(queue="APP", attrs=(("DEFPRTY", 5), ("INITQ", "INIT"), ("MSGDLVSQ", C.MQMDS_FIFO),
                                                  ("PROCESS", "P"), ("TRIGGER", 1), ("TRIGMPRI", 4))), L.OK),
               (L.Connect(conn="a"), L.OK), (L.Open(conn="a", handle="app", queue="APP", options=opts), L.OK),
               (L.Open(conn="a", handle="mon", queue="INIT", options=C.MQOO_INPUT_SHARED), L.OK)]
    if before:
        held = L.Observation(message=L.ReturnedMessage(body="held", priority=5, persistence=0, msg_id="X"))
        history += [(L.Connect(conn="b"), L.OK),
                    (L.Open(conn="b", handle="b", queue="APP", options=C.MQOO_OUTPUT | C.MQOO_INPUT_SHARED), L.OK),
                    (L.Put(conn="b", handle="b", body="held", options=C.MQPMO_NO_SYNCPOINT), L.OK),
                    (L.Get(conn="b", handle="b", options=C.MQGMO_SYNCPOINT), held),
                    (L.Close(conn="b", handle="b"), L.OK)]
    history += [(L.Put(conn="a", handle="app", body="m", md=L.MessageDescriptor(priority=0)), L.OK),
                (L.InquireQueue(queue="INIT", names=("CURDEPTH",)), L.Observation(attrs=(("CURDEPTH", 0),)))]
    mm, b = blamed(history)
    assert b.confirmed and set(b.rules) == blamed_rules, (mm.rules, b)


def _dead_letter(body: str, msg_id: str, dest_q: str = "A") -> L.Put1:
    return L.Put1(conn="app", queue="DLQ", body=body, options=C.MQPMO_NO_SYNCPOINT,
                  md=L.MessageDescriptor(format=C.MQFMT_DEAD_LETTER_HEADER, msg_id=msg_id),
                  dlh=L.DeadLetterHeader(dest_q=dest_q, reason=C.MQRC_Q_FULL))


@pytest.mark.parametrize("table, blamed_rules", [
    # FWD to a queue that does not exist: the put fails and MQ backs the get out; gone, the get was not (DLQ-24)
    ("INPUTQ(DLQ)\nACTION(FWD) FWDQ(NOWHERE)\n", {"DLQ-24"}),
    # a rule that discards, missed by its wildcard before it (REPLYQ(?*) on a blank ReplyToQ), explains it too
    ("INPUTQ(DLQ)\nACTION(DISCARD) REPLYQ(?*)\nACTION(FWD) FWDQ(NOWHERE)\n", {"DLQ-24", "DLQ-38", "DLQ-41", "DLQ-37"}),
])
def test_a_dead_letter_seen_discarded_where_mq_backs_it_out_blames_what_could_remove_it_alone(table, blamed_rules):
    """Never the rules of how the handler reached the message or counted its tries, nor how it was put."""
    history = [(L.DefineQueue(queue="DLQ"), L.OK), (L.Connect(conn="app"), L.OK), (_dead_letter("dl", "M1"), L.OK),
               (L.StartDlqHandler(handler="H", table=table), L.OK),
               (L.RunDlqHandler(handler="H"), L.Observation(attrs=(("HANDLER", "RUNNING"), ("M1", "discarded"))))]
    mm, b = blamed(history)
    assert b.confirmed and set(b.rules) <= blamed_rules and "DLQ-24" in b.rules, (mm.rules, b)
    assert not {"DLQ-02", "DLQ-12", "DLQ-18", "DLQ-28", "DLQ-30", "CORE-01", "CORE-44"} & set(mm.rules)


def test_a_dead_letter_the_handler_should_discard_seen_backed_out_blames_the_choice_not_the_discard():
    """Rule 1 discards what it matches; seen with its get backed out, the handler chose rule 2 (whose RETRY to a
    queue that does not exist fails): rule 1 not matched (how its patterns compare), never DLQ-20 (what a
    discard does, which puts nothing anywhere)."""
    table = "APPLIDAT(' ') ACTION(DISCARD)\nACTION(RETRY)\n"
    history = [(L.DefineQueue(queue="DLQ"), L.OK), (L.AlterQueueManager(attrs={"DEADQ": "DLQ"}), L.OK),
               (L.Connect(conn="app"), L.OK), (L.StartDlqHandler(handler="H", table=table), L.OK),
               (_dead_letter("dl", "M1"), L.OK),
               (L.RunDlqHandler(handler="H"), L.Observation(attrs=(("HANDLER", "RUNNING"), ("M1", "backed-out"))))]
    mm, b = blamed(history)
    assert b.confirmed and "DLQ-20" not in mm.rules and set(b.rules) <= {"DLQ-41", "DLQ-37", "DLQ-01", "DLQ-08"}, \
        (mm.rules, b)


def _ended_early(observed_fate: str = "backed-out") -> list:
    """Two dead letters; a first rule that forwards every message to a queue there is not (one try each, which
    fails), then an IGNORE of one application type, then a RETRY: M2, not of that type, waits for the RETRY at a
    later scan, so WAIT(NO) keeps the handler going; a handler that ignores M2 as well (APPLTYPE not compared)
    ends."""
    unix = L.MessageContext(put_appl_type=C.MQAT_UNIX)
    m1 = attrs.evolve(_dead_letter("first", "M1"), md=L.MessageDescriptor(
        format=C.MQFMT_DEAD_LETTER_HEADER, msg_id="M1", context=unix))
    table = "WAIT(NO)\nFWDQ(PARK) ACTION(FWD)\nACTION(IGNORE) APPLTYPE(MQAT_UNIX)\nACTION(RETRY)\n"
    return [(L.DefineQueue(queue="DLQ"), L.OK), (L.AlterQueueManager(attrs={"DEADQ": "DLQ"}), L.OK),
            (L.Connect(conn="app"), L.OK), (m1, L.OK), (_dead_letter("second", "M2"), L.OK),
            (L.StartDlqHandler(handler="H", table=table), L.OK),
            (L.RunDlqHandler(handler="H"),
             L.Observation(attrs=(("HANDLER", "ENDED"), ("M1", observed_fate), ("M2", observed_fate))))]


def test_a_handler_that_ends_while_a_message_awaits_a_later_rule_blames_what_would_have_left_that_message_alone():
    """What keeps the handler going is M2 alone, which a later scan retries: it would be left alone had the rule
    that ignores matched it (how APPLTYPE compares, DLQ-41, first), had its tries been counted otherwise or the
    handler not gone on to the next rule, had the RETRY not matched, or had no rescan come.  Never the rules of
    M1, which is ignored either way (DLQ-19, the table's order), nor how the pass went through the queue
    (RETRYINT, DLQ-28) or what a restart forgets (no restart: DLQ-30)."""
    mm, b = blamed(_ended_early())
    assert b.confirmed and b.rules[0] == "DLQ-41", (mm.rules, b)
    assert set(b.rules) <= {"DLQ-41", "DLQ-04", "DLQ-08", "DLQ-02", "DLQ-18", "DLQ-29"}, (mm.rules, b)
    assert not {"DLQ-01", "DLQ-19", "DLQ-03", "DLQ-25", "DLQ-28", "DLQ-30"} & set(mm.rules), mm.rules


@pytest.mark.parametrize("table, fate, rules", [
    # discarded: the one rule that discards did not match (APPLTYPE): the pattern, or the IGNORE assumed
    ("INPUTQ(DLQ)\nAPPLTYPE(MQAT_UNIX) ACTION(DISCARD)\n", "discarded", ("DLQ-41", "DLQ-06")),
    # put on to B: the rule that forwards there did not match, not the one that discards
    ("INPUTQ(DLQ)\nAPPLTYPE(MQAT_UNIX) ACTION(DISCARD)\nAPPLTYPE(MQAT_JAVA) ACTION(FWD) FWDQ(B)\n", "put:B",
     ("DLQ-41", "DLQ-06")),
    # discarded, where the one rule forwards: matching it would not have discarded the message, so the IGNORE
    # assumed alone
    ("INPUTQ(DLQ)\nAPPLTYPE(MQAT_JAVA) ACTION(FWD) FWDQ(B)\n", "discarded", ("DLQ-06",)),
])
def test_a_message_no_rule_matches_acted_on_names_the_rules_whose_action_it_shows(table, fate, rules):
    """Seen acted on where no rule matches: the handler matched a rule it should not have (one whose action is
    what was seen: how its patterns compare, first), or acted where IGNORE is assumed."""
    history = [(L.DefineQueue(queue="DLQ"), L.OK), (L.DefineQueue(queue="B"), L.OK), (L.Connect(conn="app"), L.OK),
               (_dead_letter("dl", "M1"), L.OK), (L.StartDlqHandler(handler="H", table=table), L.OK),
               (L.RunDlqHandler(handler="H"), L.Observation(attrs=(("HANDLER", "RUNNING"), ("M1", fate))))]
    mm, b = blamed(history)
    assert b.confirmed and b.rules == rules, (mm.rules, b)


def test_a_message_passed_over_by_a_rule_that_ignores_and_acted_on_blames_the_ignore_assumed_alone():
    """Matched or not, the one rule (an IGNORE whose wildcard the message does not match) leaves the message
    where it is: seen discarded, only the IGNORE assumed for a message no rule matches is broken (DLQ-06), never
    how that rule's patterns compare."""
    history = [(L.DefineQueue(queue="DLQ"), L.OK), (L.Connect(conn="app"), L.OK), (_dead_letter("dl", "M1"), L.OK),
               (L.StartDlqHandler(handler="H", table="INPUTQ(DLQ)\nACTION(IGNORE) APPLNAME('payroll?')\n"), L.OK),
               (L.RunDlqHandler(handler="H"), L.Observation(attrs=(("HANDLER", "RUNNING"), ("M1", "discarded"))))]
    mm, b = blamed(history)
    assert b.confirmed and b.rules == ("DLQ-06",) and mm.rules == ("DLQ-06",), (mm.rules, b)


def _alice(msg_id):
    return L.Put1(conn="app", queue="DLQ", body=msg_id, options=C.MQPMO_NO_SYNCPOINT,
                  md=L.MessageDescriptor(format=C.MQFMT_DEAD_LETTER_HEADER, msg_id=msg_id,
                                         context=L.MessageContext(user_id="alice")),
                  dlh=L.DeadLetterHeader(dest_q="A", reason=C.MQRC_Q_FULL))


#: Rule 1 forwards what USERID('al*') matches to PARK (room for one message), rule 2 to the MQDLH's DestQName.
PARK_THEN_DESTQ = [(L.DefineQueue(queue="DLQ"), L.OK), (L.DefineQueue(queue="A", attrs={"MAXDEPTH": 1}), L.OK),
                   (L.DefineQueue(queue="PARK", attrs={"MAXDEPTH": 1}), L.OK),
                   (L.AlterQueueManager(attrs={"DEADQ": "DLQ"}), L.OK), (L.Connect(conn="app"), L.OK),
                   (L.StartDlqHandler(handler="H", table="USERID('al*') ACTION(FWD) FWDQ(PARK)\n"
                                                         "FWDQ(&DESTQ) ACTION(FWD)\n"), L.OK)]


def test_a_message_put_on_by_a_later_rule_where_mq_backs_out_the_first_blames_how_the_choice_was_made():
    """M1 goes to PARK, which is then full: M2's forward fails and MQ backs its get out.  Seen put on to A by rule
    2, the handler passed over rule 1 with its one try left: most likely counting M1's try as M2's (DLQ-02, first,
    as rule 1 has acted on M1), or not matching rule 1, or the table's order; never the back-out of a put that
    fails (DLQ-24), how the message was forwarded, or the queue being full."""
    history = PARK_THEN_DESTQ + [
        (_alice("M1"), L.OK),
        (L.RunDlqHandler(handler="H"), L.Observation(attrs=(("HANDLER", "RUNNING"), ("M1", "put:PARK")))),
        (_alice("M2"), L.OK),
        (L.RunDlqHandler(handler="H"), L.Observation(attrs=(("HANDLER", "RUNNING"), ("M2", "put:A"))))]
    mm, b = blamed(history)
    assert b.confirmed and b.rules[0] == "DLQ-02", (mm.rules, b)
    assert not {"DLQ-24", "DLQ-22", "DLQ-11", "DLQ-12", "CORE-27", "DLQ-17", "DLQ-30"} & set(b.rules), (mm.rules, b)


_RESTART = (L.RestartDlqHandler(handler="H"), L.OK)
_BROKEN = "ACTION(FWD) HEADER(NO)\n"   # (FWD without FWDQ: the handler does not start with it)


@pytest.mark.parametrize("between", [
    [_RESTART], [_RESTART, _RESTART],
    [(L.ChangeDlqTable(handler="H", table=_BROKEN), L.OK), _RESTART,
     (L.ChangeDlqTable(handler="H", table=PARK_THEN_DESTQ[-1][0].table), L.OK), _RESTART],
], ids=["restarted", "twice", "with-a-table-it-cannot-start-with-between"])
def test_a_message_put_on_by_a_later_rule_after_a_restart_blames_the_tries_the_restart_should_have_forgotten(between):
    """As above, but M2's one try of rule 1 failed before the handler was restarted (once, twice in a row, or
    once with a broken table, then with its own): the restarted handler owes rule 1 a try again (DLQ-30,
    first); put on by rule 2 at once, it kept the try it had counted."""
    # (the restart with the broken table answers as MQ: found invalid, the handler not started)
    between = [(op, L.Observation(cc=C.MQCC_FAILED, rc=C.MQRC_NONE, attrs={"TABLE": "INVALID"})
                if op == _RESTART[0] and i == 1 and len(between) == 4 else obs)
               for i, (op, obs) in enumerate(between)]
    history = PARK_THEN_DESTQ + [
        (_alice("M1"), L.OK), (_alice("M2"), L.OK),
        (L.RunDlqHandler(handler="H"), L.Observation(attrs=(("HANDLER", "RUNNING"), ("M1", "put:PARK"),
                                                            ("M2", "backed-out"))))] + between + [
        (L.RunDlqHandler(handler="H"), L.Observation(attrs=(("HANDLER", "RUNNING"), ("M2", "put:A"))))]
    mm, b = blamed(history)
    assert b.confirmed and b.rules[0] == "DLQ-30", (mm.rules, b)
    assert not {"DLQ-24", "DLQ-22", "DLQ-11", "DLQ-12", "CORE-27", "DLQ-17"} & set(b.rules), (mm.rules, b)


#: Rule 1 forwards what USERID('al*') matches to PARK (room for one message), rule 2 discards every message.
PARK_THEN_DISCARD = PARK_THEN_DESTQ[:-1] + [
    (L.StartDlqHandler(handler="H", table="USERID('al*') ACTION(FWD) FWDQ(PARK)\nACTION(DISCARD)\n"), L.OK)]
_ROOM = (L.AlterQueue(queue="PARK", attrs={"MAXDEPTH": 2}), L.OK)


@pytest.mark.parametrize("case", ["counted-with-another", "after-a-restart"])
def test_a_message_discarded_by_a_later_rule_where_mq_forwards_it_blames_how_the_choice_was_made(case):
    """Rule 1 has acted on M1 (counted with M2's tries, DLQ-02), or M2's one try of it failed before a restart
    (owed again, DLQ-30); with room on PARK again, MQ forwards M2 by rule 1.  Seen discarded by rule 2, the
    handler passed over rule 1 with a try left: that comes first, as for a message put on by a later rule, then
    rule 1 not matched and the table's order; the forward's own rules and DLQ-24 stay as the last of the "one of"."""
    if case == "counted-with-another":
        history = PARK_THEN_DISCARD + [
            (_alice("M1"), L.OK),
            (L.RunDlqHandler(handler="H"), L.Observation(attrs=(("HANDLER", "RUNNING"), ("M1", "put:PARK")))),
            _ROOM, (_alice("M2"), L.OK)]
    else:
        history = PARK_THEN_DISCARD + [
            (_alice("M1"), L.OK), (_alice("M2"), L.OK),
            (L.RunDlqHandler(handler="H"), L.Observation(attrs=(("HANDLER", "RUNNING"), ("M1", "put:PARK"),
                                                                ("M2", "backed-out")))),
            _ROOM, _RESTART]
    history += [(L.RunDlqHandler(handler="H"), L.Observation(attrs=(("HANDLER", "RUNNING"), ("M2", "discarded"))))]
    mm, b = blamed(history)
    first = {"counted-with-another": "DLQ-02", "after-a-restart": "DLQ-30"}[case]
    assert b.confirmed and b.rules[0] == first, (mm.rules, b)
    assert b.rules.index("DLQ-01") < b.rules.index("DLQ-22") < b.rules.index("DLQ-24"), b
    assert not {"DLQ-12", "DLQ-17", "DLQ-18", "CORE-27"} & set(b.rules), (mm.rules, b)


@pytest.mark.parametrize("park", [True, False], ids=["put-succeeds", "put-fails"])
def test_a_message_discarded_as_a_changed_table_not_in_force_says_blames_the_change_first(park):
    """The handler's table retries every message; a table that discards them is written but not in force.  Seen
    discarded where MQ puts the message on (or, with no queue to put it to, backs the get out), the changed table
    applied at once comes first (DLQ-10), before the retry's own rules and the back-out."""
    history = [(L.DefineQueue(queue="DLQ"), L.OK)] + ([(L.DefineQueue(queue="PARK"), L.OK)] if park else []) + [
        (L.AlterQueueManager(attrs={"DEADQ": "DLQ"}), L.OK), (L.Connect(conn="app"), L.OK),
        (L.StartDlqHandler(handler="H", table="ACTION(RETRY)\n"), L.OK),
        (L.ChangeDlqTable(handler="H", table="ACTION(DISCARD)\n"), L.OK),
        (_dead_letter("dl", "M1", dest_q="PARK"), L.OK),
        (L.RunDlqHandler(handler="H"), L.Observation(attrs=(("HANDLER", "RUNNING"), ("M1", "discarded"))))]
    mm, b = blamed(history)
    assert b.confirmed and b.rules[0] == "DLQ-10" and mm.rules[0] == "DLQ-10", (mm.rules, b)


def test_a_message_without_a_dead_letter_header_acted_on_blames_dlq_07_alone():
    history = [(L.DefineQueue(queue="DLQ"), L.OK), (L.Connect(conn="app"), L.OK),
               (L.Put1(conn="app", queue="DLQ", body="plain", options=C.MQPMO_NO_SYNCPOINT,
                       md=L.MessageDescriptor(msg_id="M1")), L.OK),
               (L.StartDlqHandler(handler="H", table="INPUTQ(DLQ)\nACTION(DISCARD)\n"), L.OK),
               (L.RunDlqHandler(handler="H"), L.Observation(attrs=(("HANDLER", "RUNNING"), ("M1", "discarded"))))]
    mm, b = blamed(history)
    assert b.confirmed and b.rules == ("DLQ-07",) and mm.rules == ("DLQ-07",), (mm.rules, b)


def _depth(n):
    return (L.InquireQueue(queue="Q1", names=("CURDEPTH",)), L.Observation(attrs=(("CURDEPTH", n),)))


@pytest.mark.parametrize("depth, broken", [(2, ("CORE-03",)), (0, ("CORE-15",))])
def test_a_backout_that_does_half_its_work_blames_the_half_it_left_undone(depth, broken):
    """A unit of work that got one message and put another, backed out: MQ reinstates the got one and deletes the
    put one (depth 1).  A depth of 2 keeps the put (CORE-03 alone: the get came back as CORE-15 says); 0 loses
    the got message (CORE-15 alone: the put went as CORE-03 says)."""
    history = SETUP + [(put("b", "b1", "old"), L.OK),
                       (L.Get(conn="a", handle="a1", options=C.MQGMO_SYNCPOINT), msg("old")),
                       (put("a", "a1", "new", options=C.MQPMO_SYNCPOINT), L.OK),
                       (L.Backout(conn="a"), L.OK), _depth(depth)]
    _, b = blamed(history)
    assert b.rules == broken, b



@pytest.mark.parametrize("ending", [L.Disconnect(conn="a", abnormal=True), L.CutConnection(conn="a")],
                         ids=["abnormal end", "cut connection"])
def test_a_backout_nobody_asked_for_that_loses_its_get_blames_the_backout_of_gets_alone(ending):
    """An abnormal end (or a cut connection) backs the unit of work out as MQBACK does: its put is deleted, its
    get's message reinstated.  A system that deletes the put but loses the message breaks CORE-15 alone: the
    backout relaxed so is followed through the steps that show it (another message got first, the depth),
    where a commit instead (CORE-31, CORE-46 relaxed) would have kept the put, and CORE-03 is kept."""
    history = SETUP + [(put("a", "a1", "m0"), L.OK), (put("a", "a1", "m1", options=C.MQPMO_SYNCPOINT), L.OK),
                       (L.Get(conn="a", handle="a1", options=C.MQGMO_SYNCPOINT), msg("m0")), (ending, L.OK),
                       (put("b", "b1", "m2"), L.OK), (L.Get(conn="b", handle="b1"), msg("m2")),
                       (L.InquireQueue(queue="Q1", names=("CURDEPTH",)), L.Observation(attrs=(("CURDEPTH", 0),)))]
    assert follows(history, D, frozenset({"CORE-15"})) == len(SETUP) + 3   # needed at the ending itself
    for other in ("CORE-31", "CORE-46", "CORE-03", "CORE-05"):
        assert follows(history, D, frozenset({other})) is None, other


def _commit_backed_out_then_get():
    """A put under syncpoint whose commit the system answers MQRC_BACKED_OUT (it backed the unit of work out:
    a broker whose queue filled meanwhile), then a get that finds the queue empty, as it is after a backout."""
    return [(L.DefineQueue(queue="Q1"), L.OK), (L.Connect(conn="c1"), L.OK),
            (L.Open(conn="c1", handle="h1", queue="Q1", options=C.MQOO_INPUT_SHARED | C.MQOO_OUTPUT), L.OK),
            (L.Put(conn="c1", handle="h1", body="m1", options=C.MQPMO_SYNCPOINT), L.OK),
            (L.Commit(conn="c1"), L.Observation.of(C.MQRC_BACKED_OUT)),
            (L.Get(conn="c1", handle="h1", options=C.MQGMO_NO_SYNCPOINT), L.Observation.of(C.MQRC_NO_MSG_AVAILABLE))]


def test_a_commit_answered_backed_out_is_followed_as_backed_out():
    """MQRC_BACKED_OUT says the unit of work was backed out, whatever its completion code: relaxing the commit's
    rule (CORE-29) explains the whole history, and a run that set CORE-29 aside follows the commit as a backout,
    so that the empty queue after it is no departure (it was followed as committed, and the get blamed on the
    delivery order or the put)."""
    pairs = _commit_backed_out_then_get()
    assert follows(pairs, "distributed", frozenset()) is None
    assert follows(pairs, "distributed", frozenset({"CORE-29"})) == 4   # needed first at the commit
    tracker = ModelTracker("distributed", set_aside=frozenset({"CORE-29"}))
    for op, observed in pairs:
        check = tracker.advance(op, observed)
        if check.mismatch is not None:
            assert isinstance(op, L.Commit) and check.mismatch.rules == ("CORE-29",), check.mismatch
            assert tracker.step_past(op, observed)
    assert all(not s.queues["Q1"].messages for s in tracker.candidates)


@pytest.mark.parametrize("answer", [L.OK, L.Observation.of(C.MQRC_BACKED_OUT)])
def test_a_commit_carried_out_in_part_blames_the_commit_alone(answer):
    """A commit that made one of its unit of work's two puts available and dropped the other (RabbitMQ applies a
    transaction queue by queue and refuses, at the commit, a publish a full queue does not take), answered OK or
    MQRC_BACKED_OUT: the depths after it show one message where MQ has both or none.  That is the commit's rule
    (CORE-29) relaxed, not a backout that kept a put (CORE-03), which would keep both."""
    pairs = [(L.DefineQueue(queue="Q1"), L.OK), (L.DefineQueue(queue="Q2"), L.OK), (L.Connect(conn="c1"), L.OK),
             (L.Put1(conn="c1", queue="Q1", body="m1", options=C.MQPMO_SYNCPOINT), L.OK),
             (L.Put1(conn="c1", queue="Q2", body="m2", options=C.MQPMO_SYNCPOINT), L.OK),
             (L.Commit(conn="c1"), answer),
             (L.InquireQueue(queue="Q1", names=("CURDEPTH",)), L.Observation(attrs=(("CURDEPTH", 1),))),
             (L.InquireQueue(queue="Q2", names=("CURDEPTH",)), L.Observation(attrs=(("CURDEPTH", 0),)))]
    mm, found = blamed(pairs)
    assert found.rules == ("CORE-29",) and found.confirmed, found
    assert follows(pairs, D, frozenset({"CORE-03"})) is None
    # a run that set CORE-29 aside knows it
    assert explained_by(pairs, D, frozenset({"CORE-29"}))


def _returned_otherwise(md: L.MessageDescriptor, got: dict):
    return [(L.DefineQueue(queue="Q1", attrs=(("DEFPRTY", 0), ("DEFPSIST", 0))), L.OK), (L.Connect(conn="c1"), L.OK),
            (L.Open(conn="c1", handle="h1", queue="Q1", options=C.MQOO_INPUT_SHARED | C.MQOO_OUTPUT), L.OK),
            (L.Put(conn="c1", handle="h1", body="m1", md=md, options=C.MQPMO_NO_SYNCPOINT), L.OK),
            (L.Get(conn="c1", handle="h1", options=C.MQGMO_NO_SYNCPOINT), msg("m1", **got))]


def test_a_priority_and_persistence_returned_otherwise_blame_the_rule_that_resolved_them_at_the_put():
    """A message put with MQPRI_PRIORITY_AS_Q_DEF and MQPER_PERSISTENCE_AS_Q_DEF comes back with the client's
    own defaults (priority 4, persistent: a JMS client that never read DEFPRTY and DEFPSIST): CORE-07 and
    CORE-10, never CORE-08, which decides a priority only where the one put was above MaxPriority.  A run that
    found CORE-08 broken (set aside) for a capped priority still blames CORE-07 here: the field is not CORE-08's
    (it had been, and a published ActiveMQ-defaults report passed CORE-07 with this departure in hand).  A
    priority put explicitly and returned otherwise is the value put not kept (CORE-11)."""
    as_def = L.MessageDescriptor(priority=C.MQPRI_PRIORITY_AS_Q_DEF, persistence=C.MQPER_PERSISTENCE_AS_Q_DEF)
    pairs = _returned_otherwise(as_def, {"priority": 4, "persistence": 1})
    mm, found = blamed(pairs)
    assert "CORE-08" not in mm.rules and set(found.rules) == {"CORE-07", "CORE-10"}, (mm.rules, found)
    aside = blame(pairs, mm, D, set_aside=frozenset({"CORE-08"}), known_by=frozenset({"CORE-08"}))
    assert set(aside.rules) == {"CORE-07", "CORE-10"} and not aside.known, aside
    explicit = _returned_otherwise(L.MessageDescriptor(priority=3, persistence=0), {"priority": 4, "persistence": 0})
    mm, found = blamed(explicit)
    assert mm.rules == ("CORE-11",) and found.rules == ("CORE-11",), (mm.rules, found)
    # above MaxPriority: the cap is CORE-08's (the reason code, and the value kept as put)
    capped = _returned_otherwise(L.MessageDescriptor(priority=12, persistence=0), {"priority": 9, "persistence": 0})
    capped[-2] = (capped[-2][0], L.Observation.of(C.MQRC_PRIORITY_EXCEEDS_MAXIMUM))
    mm, found = blamed(capped)
    assert found.rules == ("CORE-08",), (mm.rules, found)


def test_a_depth_an_uncommitted_put_explains_never_blames_the_report_of_a_discard_it_only_suggested():
    """An expired message still on its queue (not yet discarded) and a put under syncpoint the system does not
    count give the same depth as the expired message discarded and the put counted: the first reading breaks
    CORE-28 at the depth, the second the expiration report, missing at the next step.  The report's rules
    explain the history alone too, but only from the later step: mentioned, not blamed."""
    opts = C.MQOO_INPUT_SHARED | C.MQOO_OUTPUT | C.MQOO_INQUIRE
    md = L.MessageDescriptor(expiry=8, report=C.MQRO_EXPIRATION_WITH_FULL_DATA, reply_to_q="REPLY")
    depth = lambda q, n: (L.InquireQueue(queue=q, names=("CURDEPTH",)), L.Observation(attrs=(("CURDEPTH", n),)))
    history = [(L.DefineQueue(queue="APP"), L.OK), (L.DefineQueue(queue="REPLY"), L.OK), (L.Connect(conn="a"), L.OK),
               (L.Open(conn="a", handle="app", queue="APP", options=opts), L.OK),
               (L.Put(conn="a", handle="app", body="m1", options=C.MQPMO_NO_SYNCPOINT), L.OK),
               (L.Put(conn="a", handle="app", body="m2", options=C.MQPMO_NO_SYNCPOINT, md=md), L.OK),
               (L.AdvanceClock(tenths=19), L.OK),
               (L.Put(conn="a", handle="app", body="m3", options=C.MQPMO_SYNCPOINT), L.OK),
               depth("APP", 2), depth("REPLY", 0)]
    mm, b = blamed(history)
    assert mm.index == len(history) - 1 and "EXP-08" in mm.rules   # the checker read the depth as a discard
    assert b.confirmed and b.rules == ("CORE-28",) and "EXP-08" in b.mentioned
    # both tell the history alone; the report's rule from the later step
    assert follows(history, D, frozenset({"CORE-28"})) < follows(history, D, frozenset({"EXP-08"}))
    # a get that finds nothing where the expired message stood (the put under syncpoint is not available): MQ
    # discarded it there, and the report missing then breaks the report's rule, no depth rule
    get = L.Get(conn="a", handle="app", options=C.MQGMO_NO_SYNCPOINT)
    shown = history[:-2] + [depth("APP", 3), (get, msg("m1")), (get, L.Observation.of(C.MQRC_NO_MSG_AVAILABLE)),
                            depth("REPLY", 0)]
    mm, b = blamed(shown)
    assert "CORE-28" not in b.rules and set(b.rules) & DISCARD_ONLY, b


def test_rules_of_discards_give_way_only_to_a_rule_of_what_the_history_shows():
    """Among rules that each explain a history alone: a discard rule needed later than a rule of what the history
    shows is not blamed; discard rules alone (which of them is broken, none of the history shows) all are."""
    assert blamed_alone([(9, 0, "CORE-28"), (10, 1, "EXP-08"), (10, 2, "EXP-12")]) == ("CORE-28",)
    assert blamed_alone([(51, 0, "EXP-13"), (60, 1, "EXP-08"), (60, 2, "EXP-12")]) == ("EXP-13", "EXP-08", "EXP-12")
    # a rule of what is shown, needed later, is blamed as before
    assert blamed_alone([(3, 0, "CORE-05"), (7, 1, "CORE-06")]) == ("CORE-05", "CORE-06")
    assert blamed_alone([(4, 1, "EXP-08"), (4, 0, "CORE-28"), (6, 2, "CORE-15")]) == ("CORE-28", "EXP-08", "CORE-15")


def test_a_get_that_saw_another_connections_uncommitted_put_blames_the_unit_of_works_visibility():
    """A system that lets a get see a put not yet committed shows it here only by what the get did to it: the
    message had expired, so the get discarded it (MQRC_NO_MSG_AVAILABLE, as MQ answers too) and wrote its
    expiration report; the put is then backed out, and the report is there.  No field of any answer differs
    where the visibility rule was broken, yet relaxing it (the get seeing the put as if committed, and doing what
    it does to it) is what explains the report: that rule is blamed, not the depth's nor the report's."""
    opts = C.MQOO_INPUT_SHARED | C.MQOO_OUTPUT | C.MQOO_INQUIRE
    md = L.MessageDescriptor(expiry=3, report=C.MQRO_EXPIRATION, reply_to_q="REPLY")
    history = [(L.DefineQueue(queue="APP"), L.OK), (L.DefineQueue(queue="REPLY"), L.OK),
               (L.Connect(conn="p"), L.OK), (L.Open(conn="p", handle="hp", queue="APP", options=opts), L.OK),
               (L.Connect(conn="c"), L.OK), (L.Open(conn="c", handle="hc", queue="APP", options=opts), L.OK),
               (L.Put(conn="p", handle="hp", body="m1", options=C.MQPMO_SYNCPOINT, md=md), L.OK),
               (L.AdvanceClock(tenths=30), L.OK),
               (L.Get(conn="c", handle="hc", options=C.MQGMO_SYNCPOINT), L.Observation.of(C.MQRC_NO_MSG_AVAILABLE)),
               (L.Backout(conn="p"), L.OK),
               (L.InquireQueue(queue="REPLY", names=("CURDEPTH",)), L.Observation(attrs=(("CURDEPTH", 1),)))]
    mm, b = blamed(history)
    assert mm.index == len(history) - 1
    assert b.confirmed and b.rules == ("CORE-02",), b
    # needed at the get, where nothing the system answered differed
    assert follows(history, D, frozenset({"CORE-02"})) == 8
    # and a system that found the visibility rule broken before has nothing new here
    assert blame(history, mm, D, known_by=frozenset({"CORE-02"})).known


def test_a_put_that_fails_where_mq_accepts_it_never_blames_how_its_priority_or_persistence_was_resolved():
    """A put with the queue's default priority and persistence, answered MQRC_CONNECTION_BROKEN on a connection
    nothing broke: resolving DEFPRTY (CORE-07) and DEFPSIST (CORE-10) gives a put no such reason; the put that
    did not place its message is what breaks (CORE-01).  A persistence MQ refuses, answered otherwise, still
    blames CORE-10."""
    opts = C.MQOO_INPUT_SHARED | C.MQOO_OUTPUT
    md = L.MessageDescriptor(priority=C.MQPRI_PRIORITY_AS_Q_DEF, persistence=C.MQPER_PERSISTENCE_AS_Q_DEF)
    setup = [(L.DefineQueue(queue="Q", attrs=(("DEFPRTY", 9), ("DEFPSIST", 0))), L.OK), (L.Connect(conn="a"), L.OK),
             (L.Open(conn="a", handle="h", queue="Q", options=opts), L.OK)]
    put = L.Put(conn="a", handle="h", body="m1", options=C.MQPMO_NO_SYNCPOINT, md=md)
    mm, b = blamed(setup + [(put, L.Observation.of(C.MQRC_CONNECTION_BROKEN))])
    assert {"CORE-07", "CORE-10"} & set(mm.rules), mm.rules   # what the checker names, for the reader
    assert b.confirmed and b.rules == ("CORE-01",), b
    bad = attrs.evolve(put, md=attrs.evolve(md, persistence=7))
    mm, b = blamed(setup + [(bad, L.OK)])
    assert "CORE-10" in b.rules, b


def test_a_dlq_handler_taking_a_priority_queue_in_arrival_order_is_what_ignoring_priority_explains():
    """A queue manager that ignores priority hands its DLQ handler the dead-letter queue in arrival order: the
    handler forwards the first two messages that arrived to a queue with room for two, and the third finds it
    full, where MQ's order leaves another message backed out.  Once CORE-04 is found broken, that is no new
    departure (CORE-04 relaxed lets the handler take the queue in arrival order); without it, it is."""
    failure = load_failure(ROOT / "tests" / "data" / "histories" / "dlq-forwarded-in-arrival-order.json")
    pairs = [(s.op, s.observed) for s in failure.steps]
    mm = check_history(failure.platform, pairs)[-1].mismatch
    assert mm is not None and mm.fields == ("attrs.M3", "attrs.M6")
    assert blame(pairs, mm, failure.platform, known_by=frozenset({"CORE-04"})).known
    assert not blame(pairs, mm, failure.platform, known_by=frozenset({"CORE-19"})).known
    assert follows(pairs, failure.platform, frozenset({"CORE-04"})) == len(pairs) - 1




def _on_simulated(ops, faults: str, platform: str = D) -> list:
    """``ops`` run as one case on the simulated queue manager with ``faults``: the history, (op, observed) pairs."""
    from adapters.registry import create_adapter

    adapter = create_adapter("simulated", {"faults": faults, "platform": platform})
    try:
        adapter.start_case("blame", platform)
        return [(op, adapter.execute(op)) for op in ops]
    finally:
        adapter.close()


def _arrival_order_cases():
    opts = C.MQOO_INPUT_SHARED | C.MQOO_BROWSE | C.MQOO_OUTPUT | C.MQOO_INQUIRE
    put = lambda h, body, **md: L.Put(conn="a", handle=h, body=body, options=C.MQPMO_NO_SYNCPOINT,
                                      md=L.MessageDescriptor(**md))
    depth = lambda q: L.InquireQueue(queue=q, names=("CURDEPTH",))
    base = [L.DefineQueue(queue="APP"), L.Connect(conn="a"), L.Open(conn="a", handle="h", queue="APP", options=opts)]
    browse_past_expired = base + [
        put("h", "m1"), put("h", "m2", priority=3, expiry=60), L.AdvanceClock(tenths=61),
        L.Get(conn="a", handle="h", options=C.MQGMO_BROWSE_FIRST), put("h", "m3"),
        L.AlterQueue(queue="APP", attrs=(("MAXDEPTH", 3),)), put("h", "m4")]
    xmitq_get = [
        L.DefineQueue(queue="REPLY"), L.DefineQueue(queue="XQ", attrs=(("USAGE", C.MQUS_TRANSMISSION),)),
        L.DefineRemoteQueue(queue="FAR", rname="ORDERS", rqmname="FAR", xmitq="XQ"), L.Connect(conn="a"),
        L.Open(conn="a", handle="x", queue="XQ", options=opts), put("x", "x1", format=C.MQFMT_XMIT_Q_HEADER),
        L.Put1(conn="a", queue="FAR", body="r2", options=C.MQPMO_NO_SYNCPOINT,
               md=L.MessageDescriptor(priority=3, expiry=8, report=C.MQRO_EXPIRATION, reply_to_q="REPLY")),
        L.AdvanceClock(tenths=22), L.Get(conn="a", handle="x", options=C.MQGMO_NO_SYNCPOINT), depth("REPLY")]
    cursor = base + [
        put("h", "m1", priority=4), L.Get(conn="a", handle="h", options=C.MQGMO_BROWSE_FIRST),
        put("h", "m2", priority=9), L.Get(conn="a", handle="h", options=C.MQGMO_BROWSE_NEXT)]
    return {"browse past an expired message": (browse_past_expired, "CORE-27"),
            "get from a transmission queue": (xmitq_get, "EXP-08"),
            "browse cursor": (cursor, "CORE-13")}


@pytest.mark.parametrize("case", sorted(_arrival_order_cases()))
def test_a_get_or_browse_taking_a_priority_queue_in_arrival_order_is_what_ignoring_priority_explains(case):
    """The simulated queue manager with priority-ignored delivers a MSGDLVSQ(PRIORITY) queue in arrival order;
    these histories show it only by what a get or browse met on its way, never by a message returned out of
    priority order: a browse that returned the oldest message without meeting an expired one of higher priority
    put after it (the queue then fills a message early: the checker names MAXDEPTH's rule); a get from a
    transmission queue likewise (no expiration report: the checker names the report's rules); a browse cursor
    that stands in arrival order (a browse-next then finds a message of higher priority put later, where MQ's
    cursor is past it: the checker names MQRC_NO_MSG_AVAILABLE's rule).  CORE-04 relaxed takes the queue in
    arrival order for each such call, so it alone explains each, from a get or browse on; but nothing the history
    shows says the order was other than MQ's, so the rule the checker named, which explains it alone too, is
    blamed, and CORE-04 mentioned; once CORE-04 is found broken (by a history that shows it), none is a new
    departure."""
    ops, checker_named = _arrival_order_cases()[case]
    pairs = _on_simulated(ops, "priority-ignored")
    mm = check_history(D, pairs)[-1].mismatch
    assert mm is not None and mm.index == len(pairs) - 1 and mm.rules[0] == checker_named, mm
    b = blame(pairs, mm, D)
    assert b.confirmed and checker_named in b.rules and "CORE-04" in b.mentioned and "CORE-04" in b.inferred, b
    first = next(i for i, (op, _) in enumerate(pairs) if isinstance(op, L.Get))
    assert first <= follows(pairs, D, frozenset({"CORE-04"})) <= mm.index
    assert blame(pairs, mm, D, known_by=frozenset({"CORE-04"})).known
    assert not blame(pairs, mm, D, known_by=frozenset({"CORE-05"})).known
    # the same calls on a queue manager that honours priority pass
    assert check_history(D, _on_simulated(ops, ""))[-1].mismatch is None


def _newest_first_cases():
    opts = C.MQOO_INPUT_SHARED | C.MQOO_BROWSE | C.MQOO_OUTPUT | C.MQOO_INQUIRE
    put = lambda h, body, **md: L.Put(conn="a", handle=h, body=body, options=C.MQPMO_NO_SYNCPOINT,
                                      md=L.MessageDescriptor(**md))
    # a get that takes the newest message never meets the older one that expired: no expiration report
    past_expired = [
        L.DefineQueue(queue="APP"), L.DefineQueue(queue="REPLY"), L.Connect(conn="a"),
        L.Open(conn="a", handle="h", queue="APP", options=opts),
        put("h", "m1", expiry=5, report=C.MQRO_EXPIRATION, reply_to_q="REPLY"), put("h", "m2"),
        L.AdvanceClock(tenths=6), L.Get(conn="a", handle="h", options=C.MQGMO_NO_SYNCPOINT),
        L.InquireQueue(queue="REPLY", names=("CURDEPTH",))]
    # trigger messages (bodies alike) on an initiation queue, the newest first: the trigger that comes back is
    # another queue's
    trig = (("INITQ", "INIT.Q"), ("PROCESS", "APP.PROCESS"), ("TRIGGER", C.MQTC_ON), ("TRIGTYPE", C.MQTT_EVERY))
    initq = [
        L.DefineProcess(process="APP.PROCESS", appl_id="/opt/app/server"), L.DefineQueue(queue="INIT.Q"),
        L.DefineQueue(queue="APP.Q", attrs=trig), L.DefineQueue(queue="OTHER.Q", attrs=trig), L.Connect(conn="a"),
        L.Open(conn="a", handle="h1", queue="APP.Q", options=opts), L.Open(conn="a", handle="h2", queue="OTHER.Q",
                                                                          options=opts),
        L.Open(conn="a", handle="h3", queue="INIT.Q", options=opts), put("h1", "m1"), put("h2", "m2"),
        L.Get(conn="a", handle="h3", options=C.MQGMO_NO_SYNCPOINT)]
    # a DLQ handler that takes its queue newest first forwards other messages to a queue with room for two
    dead = lambda mid, dest: L.Put1(conn="a", queue="DLQ", body=f"dead letter {mid}", options=C.MQPMO_NO_SYNCPOINT,
                                    md=L.MessageDescriptor(format=C.MQFMT_DEAD_LETTER_HEADER, msg_id=mid,
                                                           persistence=C.MQPER_PERSISTENT),
                                    dlh=L.DeadLetterHeader(reason=C.MQRC_UNKNOWN_OBJECT_NAME, dest_q=dest))
    handler = [
        L.DefineQueue(queue="DLQ"), L.DefineQueue(queue="A", attrs=(("MAXDEPTH", 2),)),
        L.AlterQueueManager(attrs=(("DEADQ", "DLQ"),)), L.Connect(conn="a"),
        L.StartDlqHandler(handler="H1", table="ACTION(FWD) FWDQ(A)\n"),
        dead("M1", "B"), dead("M2", "B"), dead("M3", "B"), L.RunDlqHandler(handler="H1")]
    # a MSGDLVSQ(FIFO) queue browsed newest first: the browse cursor moves to older messages, so a browse-next
    # never finds one put after the message under it
    fifo = [
        L.DefineQueue(queue="APP", attrs=(("MSGDLVSQ", C.MQMDS_FIFO),)), L.Connect(conn="a"),
        L.Open(conn="a", handle="h", queue="APP", options=opts), put("h", "m1", priority=2),
        L.Get(conn="a", handle="h", options=C.MQGMO_BROWSE_FIRST), put("h", "m2", priority=7),
        L.Get(conn="a", handle="h", options=C.MQGMO_BROWSE_NEXT)]
    return {"a get past an expired message": (past_expired, "CORE-05"),
            "trigger messages": (initq, "CORE-05"),
            "a DLQ handler's pass": (handler, "CORE-05"),
            "a FIFO queue browsed": (fifo, "CORE-06")}


@pytest.mark.parametrize("case", sorted(_newest_first_cases()))
def test_a_queue_taken_newest_first_is_what_first_in_first_out_relaxed_explains(case):
    """The simulated queue manager with fifo-within-priority-broken delivers the messages of one priority newest
    first, for gets, browses and its DLQ handler alike.  A get that takes the newest message shows it only by the
    expired older one it never met (no expiration report); trigger messages alike in body, by the trigger that
    came back; a DLQ handler, by which messages its forwards left room for; a browse, by the message and where its
    cursor then stands.  First in, first out relaxed (CORE-05, or CORE-06 on a MSGDLVSQ(FIFO) queue) takes the
    queue newest first for each such call: it alone explains each, and once it is found broken none is a new
    departure.  (Ignoring priority, CORE-04, does not: the messages taken out of order were of one priority.)
    Where no message returned differs from MQ's, nothing the history shows says the order was other than MQ's:
    the rule that explains what it does show is blamed, the order rule mentioned."""
    ops, rule = _newest_first_cases()[case]
    pairs = _on_simulated(ops, "fifo-within-priority-broken")
    mm = check_history(D, pairs)[-1].mismatch
    assert mm is not None and mm.index == len(pairs) - 1, mm
    b = blame(pairs, mm, D)
    assert b.confirmed and rule in b.rules + b.mentioned, b
    first = next(i for i, (op, _) in enumerate(pairs) if isinstance(op, (L.Get, L.RunDlqHandler)))
    assert first <= follows(pairs, D, frozenset({rule})) <= mm.index
    assert blame(pairs, mm, D, known_by=frozenset({rule})).known
    assert not blame(pairs, mm, D, known_by=frozenset({"CORE-04"})).known
    # the same calls on a queue manager that keeps first in, first out pass
    assert check_history(D, _on_simulated(ops, ""))[-1].mismatch is None


def _handler_backout_cases():
    dead = lambda mid: L.Put1(conn="a", queue="DLQ", body=f"dead letter {mid}", options=C.MQPMO_NO_SYNCPOINT,
                              md=L.MessageDescriptor(format=C.MQFMT_DEAD_LETTER_HEADER, msg_id=mid,
                                                     persistence=C.MQPER_PERSISTENT),
                              dlh=L.DeadLetterHeader(reason=C.MQRC_Q_FULL, dest_q="GONE"))
    base = [L.DefineQueue(queue="DLQ"), L.AlterQueueManager(attrs=(("DEADQ", "DLQ"),)), L.Connect(conn="a")]
    # the retry's put fails (no such queue): the handler backs out its get, and the message is lost
    running = base + [L.StartDlqHandler(handler="H1", table="ACTION(RETRY)\n"), dead("M1"), dead("M2"),
                      L.RunDlqHandler(handler="H1")]
    # WAIT(NO): with the message lost, nothing is left, and the handler ends
    ending = base + [L.StartDlqHandler(handler="H1", table="INPUTQ(DLQ) WAIT(NO)\nACTION(RETRY)\n"), dead("M1"),
                     L.RunDlqHandler(handler="H1")]
    return {"handler running on": running, "handler with WAIT(NO)": ending}


@pytest.mark.parametrize("case", sorted(_handler_backout_cases()))
def test_a_dlq_handlers_backout_that_loses_its_message_is_what_a_backout_reinstating_gets_explains(case):
    """The simulated queue manager with backout-loses-get loses a message got under syncpoint when its unit of work
    is backed out, the DLQ handler's too: where a retry's put fails and the handler backs out its get, the message
    is gone, and the handler reports it discarded (and, with WAIT(NO), ends, nothing left).  CORE-15 relaxed lets
    such a backout lose the message; it alone explains the pass, and once CORE-15 is found broken it is no new
    departure.  What the history shows is the handler's fate, the backout's own rule (DLQ-24), blamed; CORE-15,
    which explains it by what no call shows, is mentioned."""
    ops = _handler_backout_cases()[case]
    pairs = _on_simulated(ops, "backout-loses-get")
    mm = check_history(D, pairs)[-1].mismatch
    assert mm is not None and mm.index == len(pairs) - 1, mm
    assert any(v == "discarded" for _, v in pairs[-1][1].attrs), pairs[-1][1]
    b = blame(pairs, mm, D)
    assert b.confirmed and "DLQ-24" in b.rules and "CORE-15" in b.mentioned and "CORE-15" in b.inferred, b
    assert follows(pairs, D, frozenset({"CORE-15"})) == len(pairs) - 1
    assert blame(pairs, mm, D, known_by=frozenset({"CORE-15"})).known
    assert not blame(pairs, mm, D, known_by=frozenset({"CORE-03"})).known
    assert check_history(D, _on_simulated(ops, ""))[-1].mismatch is None


def test_a_browse_next_that_skipped_a_message_alike_in_body_is_what_browse_next_relaxed_explains():
    """The simulated queue manager with browse-next-skips skips a message when two or more follow the cursor.
    Three trigger messages, alike in body, browsed one by one: the second browse skips one and returns the last
    (no answer differs), the third finds nothing where MQ returns the last.  CORE-19 relaxed lets a browse-next
    return a message past the next; it alone explains the history, and once CORE-19 is found broken it is no new
    departure (first in, first out relaxed, CORE-05, does not: the browses met the messages in delivery order)."""
    trig = (("INITQ", "INIT.Q"), ("PROCESS", "APP.PROCESS"), ("TRIGGER", C.MQTC_ON), ("TRIGTYPE", C.MQTT_EVERY))
    opts = C.MQOO_INPUT_SHARED | C.MQOO_BROWSE | C.MQOO_OUTPUT
    browse = lambda first: L.Get(conn="a", handle="hi", options=C.MQGMO_BROWSE_FIRST if first else C.MQGMO_BROWSE_NEXT)
    ops = [L.DefineProcess(process="APP.PROCESS", appl_id="/opt/app/server"), L.DefineQueue(queue="INIT.Q"),
           L.DefineQueue(queue="APP.Q", attrs=trig), L.Connect(conn="a"),
           L.Open(conn="a", handle="h", queue="APP.Q", options=opts),
           L.Open(conn="a", handle="hi", queue="INIT.Q", options=opts)]
    ops += [L.Put(conn="a", handle="h", body=f"m{i}", options=C.MQPMO_NO_SYNCPOINT) for i in range(3)]
    ops += [browse(True), browse(False), browse(False)]
    pairs = _on_simulated(ops, "browse-next-skips")
    mm = check_history(D, pairs)[-1].mismatch
    assert mm is not None and mm.index == len(pairs) - 1 and pairs[-1][1].rc == C.MQRC_NO_MSG_AVAILABLE, mm
    b = blame(pairs, mm, D)
    assert b.confirmed and "CORE-19" in b.rules + b.mentioned, b
    assert len(pairs) - 2 <= follows(pairs, D, frozenset({"CORE-19"})) <= mm.index
    assert blame(pairs, mm, D, known_by=frozenset({"CORE-19"})).known
    assert not blame(pairs, mm, D, known_by=frozenset({"CORE-05"})).known
    assert check_history(D, _on_simulated(ops, ""))[-1].mismatch is None


def _relaxing_explains(ops, fault: str, rule: str, needed_at: int, not_by: str) -> list:
    """``ops`` on the simulated queue manager with ``fault`` depart at their last step; ``rule`` relaxed alone
    explains them from step ``needed_at`` (blamed, or mentioned where a rule of what the history shows explains
    them too), and once ``rule`` is found broken they are no new departure (``not_by`` found broken leaves them
    one); the same calls without the fault pass.  Returns the history."""
    pairs = _on_simulated(ops, fault)
    mm = check_history(D, pairs)[-1].mismatch
    assert mm is not None and mm.index == len(pairs) - 1, mm
    b = blame(pairs, mm, D)
    assert b.confirmed and rule in b.rules + b.mentioned, b
    assert follows(pairs, D, frozenset({rule})) == needed_at
    assert blame(pairs, mm, D, known_by=frozenset({rule})).known
    assert not blame(pairs, mm, D, known_by=frozenset({not_by})).known
    assert check_history(D, _on_simulated(ops, ""))[-1].mismatch is None
    return pairs


def test_a_commit_cut_in_flight_and_carried_out_in_part_is_what_the_in_flight_rule_relaxed_explains():
    """The simulated queue manager with in-flight-commit-half-done makes a commit cut in flight keep its puts and
    back out its gets.  The program sees MQRC_CONNECTION_BROKEN, as MQ allows, and the depths read after it show
    both halves: the message got is back, the message put is there, where MQ's commit is all or nothing.  CORE-48
    relaxed lets such a commit be carried out in part; it alone explains the history (needed at the commit), and
    once CORE-48 is found broken it is no new departure."""
    opts = C.MQOO_INPUT_SHARED | C.MQOO_OUTPUT | C.MQOO_INQUIRE
    depth = lambda q: L.InquireQueue(queue=q, names=("CURDEPTH",))
    ops = [L.DefineQueue(queue="Q1"), L.DefineQueue(queue="Q2"), L.Connect(conn="c"),
           L.Open(conn="c", handle="h1", queue="Q1", options=opts), L.Open(conn="c", handle="h2", queue="Q2", options=opts),
           L.Put(conn="c", handle="h2", body="m1", options=C.MQPMO_NO_SYNCPOINT),
           L.Put(conn="c", handle="h1", body="m2", options=C.MQPMO_SYNCPOINT),
           L.Get(conn="c", handle="h2", options=C.MQGMO_SYNCPOINT), L.PauseQueueManager(conn="c", tenths=4),
           L.Commit(conn="c"), depth("Q2"), depth("Q1")]
    pairs = _relaxing_explains(ops, "in-flight-commit-half-done", "CORE-48", needed_at=9, not_by="CORE-29")
    assert pairs[9][1].rc == C.MQRC_CONNECTION_BROKEN, pairs[9]


def test_a_cut_connection_whose_unit_of_work_was_committed_is_what_the_cut_rule_relaxed_explains():
    """The simulated queue manager with cut-commits-uow commits the unit of work of a connection the network cuts.
    A message got under syncpoint before the cut stays gone: the depth read after shows it, where MQ backs the
    get out.  CORE-46 relaxed lets the cut commit instead; it alone explains the history (needed at the cut), and
    once CORE-46 is found broken it is no new departure."""
    opts = C.MQOO_INPUT_SHARED | C.MQOO_OUTPUT | C.MQOO_INQUIRE
    ops = [L.DefineQueue(queue="Q"), L.Connect(conn="a"), L.Connect(conn="b"),
           L.Open(conn="a", handle="ha", queue="Q", options=opts), L.Open(conn="b", handle="hb", queue="Q", options=opts),
           L.Put(conn="a", handle="ha", body="m1", options=C.MQPMO_NO_SYNCPOINT),
           L.Get(conn="b", handle="hb", options=C.MQGMO_SYNCPOINT), L.CutConnection(conn="b"),
           L.InquireQueue(queue="Q", names=("CURDEPTH",))]
    pairs = _relaxing_explains(ops, "cut-commits-uow", "CORE-46", needed_at=7, not_by="CORE-31")
    # nothing the cut's unit of work got comes back: that it committed is no inference, the cut's rule is blamed
    assert "CORE-46" in blame(pairs, check_history(D, pairs)[-1].mismatch, D).rules


def _under_cursor_history(backed_out: bool, plainly: bool, destructive: bool = False) -> list:
    """m1 put (and, ``backed_out``, got and backed out), browsed first; then (``plainly``) browsed under the cursor
    selecting nothing; then a browse (``destructive``: a get) under the cursor selecting a CorrelId m1 lacks."""
    opts = C.MQOO_INPUT_SHARED | C.MQOO_BROWSE | C.MQOO_OUTPUT
    ops = [L.DefineQueue(queue="Q"), L.Connect(conn="a"), L.Open(conn="a", handle="h", queue="Q", options=opts),
           L.Put(conn="a", handle="h", body="m1", options=C.MQPMO_NO_SYNCPOINT)]
    if backed_out:
        ops += [L.Get(conn="a", handle="h", options=C.MQGMO_SYNCPOINT), L.Backout(conn="a")]
    ops += [L.Get(conn="a", handle="h", options=C.MQGMO_BROWSE_FIRST)]
    if plainly:
        ops += [L.Get(conn="a", handle="h", options=C.MQGMO_BROWSE_MSG_UNDER_CURSOR)]
    under = C.MQGMO_MSG_UNDER_CURSOR | C.MQGMO_NO_SYNCPOINT if destructive else C.MQGMO_BROWSE_MSG_UNDER_CURSOR
    return ops + [L.GetMatching(conn="a", handle="h", options=under, match_options=C.MQMO_MATCH_CORREL_ID,
                                correl_id="corr-2")]


@pytest.mark.parametrize("backed_out", [False, True])
def test_a_selection_applied_under_the_cursor_blames_the_rule_that_ignores_it_there_alone(backed_out):
    """The simulated queue manager with match-under-cursor-honoured applies a get's match options under the cursor:
    the message there, whose CorrelId is not the one given, is not returned (MQRC_NO_MSG_UNDER_CURSOR), where MQ
    ignores the selection there and returns it.  The same browse under the cursor selecting nothing returned it
    just before, so neither the rule of what is under the cursor (CORE-20) nor how the message came there (its
    put; or, backed out before, its backout, CORE-15) is broken: CORE-53 alone is blamed."""
    ops = _under_cursor_history(backed_out, plainly=True)
    pairs = _on_simulated(ops, "match-under-cursor-honoured")
    assert pairs[-2][1].message.body == "m1" and pairs[-1][1].rc == C.MQRC_NO_MSG_UNDER_CURSOR, pairs[-2:]
    mm = check_history(D, pairs)[-1].mismatch
    assert mm is not None and mm.index == len(pairs) - 1, mm
    b = blame(pairs, mm, D)
    assert b.confirmed and b.rules == ("CORE-53",), b
    assert check_history(D, _on_simulated(ops, ""))[-1].mismatch is None


@pytest.mark.parametrize("destructive", [False, True])
def test_nothing_under_the_cursor_for_a_selecting_call_is_one_of_the_selection_and_the_cursor(destructive):
    """Without the same call selecting nothing just before, nothing found under the cursor by a call that selects
    is as well a cursor that lost its message (CORE-20: ActiveMQ as it installs, a destructive get under the cursor
    finding the message another consumer of the connection had prefetched, whatever it selected) as a selection
    applied (CORE-53): one of them, not CORE-53 alone.  A browse first just returned the message: a browse under
    the cursor, or a get, is another call."""
    pairs = _on_simulated(_under_cursor_history(False, plainly=False, destructive=destructive),
                          "match-under-cursor-honoured")
    mm = check_history(D, pairs)[-1].mismatch
    b = blame(pairs, mm, D)
    assert b.confirmed and set(b.rules) == {"CORE-53", "CORE-20"} and b.each, b
    assert b.rules[0] == "CORE-53", b


def test_mqmi_none_taken_as_a_blank_msgid_blames_the_selection_alone():
    """The simulated queue manager with match-none-is-literal selects by MQMI_NONE as by a blank MsgId: a get
    selecting by it finds nothing (every MsgId is generated), where MQ's MQMI_NONE selects any message.  The
    selection (CORE-51) is broken, not how the message was put (CORE-01): CORE-51 alone is blamed; likewise a
    browse selecting by MQCI_NONE that returns the message with a blank CorrelId (not the first) blames CORE-51
    (with first in, first out, which a queue taken newest first would break as well)."""
    opts = C.MQOO_INPUT_SHARED | C.MQOO_BROWSE | C.MQOO_OUTPUT
    base = [L.DefineQueue(queue="Q"), L.Connect(conn="a"), L.Open(conn="a", handle="h", queue="Q", options=opts)]
    put = lambda body, correl="": L.Put(conn="a", handle="h", body=body, options=C.MQPMO_NO_SYNCPOINT,
                                         md=L.MessageDescriptor(correl_id=correl))
    by_id = base + [put("m1"), L.GetMatching(conn="a", handle="h", options=C.MQGMO_SYNCPOINT,
                                             match_options=C.MQMO_MATCH_MSG_ID, msg_id="")]
    by_correl = base + [put("m1", "corr-1"), put("m2"),
                        L.GetMatching(conn="a", handle="h", options=C.MQGMO_BROWSE_FIRST,
                                      match_options=C.MQMO_MATCH_CORREL_ID, correl_id="")]
    for ops, want in ((by_id, ("CORE-51",)), (by_correl, ("CORE-05", "CORE-51"))):
        pairs = _on_simulated(ops, "match-none-is-literal")
        mm = check_history(D, pairs)[-1].mismatch
        assert mm is not None and mm.index == len(pairs) - 1, mm
        b = blame(pairs, mm, D)
        assert b.confirmed and set(b.rules) == set(want), b
        assert blame(pairs, mm, D, known_by=frozenset({"CORE-51"})).known
        assert check_history(D, _on_simulated(ops, ""))[-1].mismatch is None


def test_a_selecting_browse_next_that_starts_again_from_the_head_blames_the_selecting_gets_rule_alone():
    """The simulated queue manager with match-browse-next-restarts starts a selecting BROWSE_NEXT again from the head
    of the queue: it returns the message its cursor is on.  No delivery order does that (CORE-05 relaxed does not
    explain it), and which selected message comes next after the cursor is the selecting get's rule (CORE-52), not
    the plain browse's (CORE-19): CORE-52 alone is blamed."""
    opts = C.MQOO_INPUT_SHARED | C.MQOO_BROWSE | C.MQOO_OUTPUT
    put = lambda body: L.Put(conn="a", handle="h", body=body, options=C.MQPMO_NO_SYNCPOINT,
                             md=L.MessageDescriptor(msg_id="id-2"))
    browse = lambda how: L.GetMatching(conn="a", handle="h", options=how, match_options=C.MQMO_MATCH_MSG_ID,
                                       msg_id="id-2")
    ops = [L.DefineQueue(queue="Q"), L.Connect(conn="a"), L.Open(conn="a", handle="h", queue="Q", options=opts),
           put("m1"), put("m2"), browse(C.MQGMO_BROWSE_FIRST), browse(C.MQGMO_BROWSE_NEXT)]
    pairs = _on_simulated(ops, "match-browse-next-restarts")
    assert pairs[-1][1].message.body == "m1", pairs[-1]
    mm = check_history(D, pairs)[-1].mismatch
    assert mm is not None and mm.index == len(pairs) - 1, mm
    b = blame(pairs, mm, D)
    assert b.confirmed and b.rules == ("CORE-52",), b
    assert follows(pairs, D, frozenset({"CORE-05"})) is None
    assert check_history(D, _on_simulated(ops, ""))[-1].mismatch is None


def test_a_put_checked_against_a_depth_without_uncommitted_puts_is_what_the_depth_rule_relaxed_explains():
    """The simulated queue manager with uncommitted-put-not-counted leaves a unit of work's puts out of CURDEPTH until
    it commits, and checks MAXDEPTH against that depth: a put MQ refuses as full (the uncommitted put counts) is
    accepted.  The check is MQ's, the depth it checks is not: CORE-28 relaxed lets the put be checked against a
    depth counted without the uncommitted puts, so it explains the history alone (as the check relaxed, CORE-27,
    does too), and once CORE-28 is found broken (a depth read that shows it) the put is no new departure."""
    opts = C.MQOO_INPUT_SHARED | C.MQOO_OUTPUT | C.MQOO_INQUIRE
    put = lambda conn, body, sync: L.Put(conn=conn, handle=f"h{conn}", body=body,
                                         options=C.MQPMO_SYNCPOINT if sync else C.MQPMO_NO_SYNCPOINT)
    ops = [L.DefineQueue(queue="Q", attrs=(("MAXDEPTH", 3),)), L.Connect(conn="a"),
           L.Open(conn="a", handle="ha", queue="Q", options=opts), put("a", "m1", True), put("a", "m2", True),
           put("a", "m3", False), put("a", "m4", False), put("a", "m5", False)]
    pairs = _on_simulated(ops, "uncommitted-put-not-counted")
    mm = next(c.mismatch for c in check_history(D, pairs) if c.mismatch is not None)
    assert mm.index == len(pairs) - 2 and [o.rc for _, o in pairs[-2:]] == [C.MQRC_NONE] * 2, mm
    b = blame(pairs, mm, D)
    assert b.confirmed and "CORE-28" in b.rules + b.mentioned, b
    # the put accepted goes on with its message there: the next put, accepted too, is the same story
    assert follows(pairs, D, frozenset({"CORE-28"})) == len(pairs) - 2
    assert explained_by(pairs, D, frozenset({"CORE-28"}))
    assert not explained_by(pairs, D, frozenset({"CORE-02"}))
    assert check_history(D, _on_simulated(ops, ""))[-1].mismatch is None


def _trigger_cases():
    trig = (("INITQ", "INIT.Q"), ("PROCESS", "APP.PROCESS"), ("TRIGGER", C.MQTC_ON))
    setup = [L.DefineProcess(process="APP.PROCESS", appl_id="/opt/app/server"), L.DefineQueue(queue="INIT.Q")]
    depth = L.InquireQueue(queue="INIT.Q", names=("CURDEPTH",))
    put = lambda body, **md: L.Put(conn="p", handle="h1", body=body, options=C.MQPMO_NO_SYNCPOINT,
                                   md=L.MessageDescriptor(**md))
    fifo = setup + [
        L.DefineQueue(queue="APP.Q", attrs=trig + (("MSGDLVSQ", C.MQMDS_FIFO), ("TRIGMPRI", 4))), L.Connect(conn="p"),
        L.Open(conn="p", handle="h1", queue="APP.Q", options=C.MQOO_OUTPUT | C.MQOO_INQUIRE),
        L.Open(conn="p", handle="h2", queue="INIT.Q", options=C.MQOO_INPUT_AS_Q_DEF), put("m1", priority=8), depth]
    alter = setup + [
        L.DefineQueue(queue="APP.Q", attrs=trig), L.Connect(conn="p"),
        L.Open(conn="p", handle="h1", queue="APP.Q", options=C.MQOO_OUTPUT | C.MQOO_INQUIRE), put("m1"),
        L.AlterQueue(queue="APP.Q", attrs=(("TRIGMPRI", 4),)), depth]
    return {"a FIFO queue's put": (fifo, "TRIG-24"), "TriggerMsgPriority altered": (alter, "TRIG-12")}


@pytest.mark.parametrize("case", sorted(_trigger_cases()))
def test_a_trigger_made_for_a_message_below_trigger_msg_priority_is_what_ignoring_it_explains(case):
    """The simulated queue manager with trigmpri-ignored counts every message toward triggering.  On a FIFO queue
    whose DefPriority is below TriggerMsgPriority, a put of a message of higher priority triggers: the checker names
    the FIFO rule (TRIG-24: the queue's DefPriority is compared), but no comparison at all (TRIG-02 relaxed) explains
    it as well.  A message below TriggerMsgPriority on the queue when TriggerMsgPriority is altered (an event that
    needs no trigger monitor) triggers: the checker names the trigger monitor's condition that had stopped the put's
    own event, and TRIG-02 relaxed explains it too.  Once TRIG-02 is found broken, neither is new."""
    ops, checker_named = _trigger_cases()[case]
    pairs = _on_simulated(ops, "trigmpri-ignored")
    mm = check_history(D, pairs)[-1].mismatch
    assert mm is not None and mm.index == len(pairs) - 1 and checker_named in mm.rules, mm
    b = blame(pairs, mm, D)
    assert b.confirmed and "TRIG-02" in b.rules, b
    assert blame(pairs, mm, D, known_by=frozenset({"TRIG-02"})).known
    assert not blame(pairs, mm, D, known_by=frozenset({"TRIG-03"})).known


@pytest.mark.parametrize("shown_by", ["depth", "get"])
def test_a_committed_persistent_message_a_restart_lost_blames_the_restart_from_the_restart_on(shown_by):
    """A persistent message put outside syncpoint, a restart, then calls MQ answers alike with the message there or
    not, and only then a depth (or a get) that shows it gone: what a restart keeps (CORE-32) is broken, from the
    restart on; no rule of how the message was put, nor of the depth.  A restart that lost only the
    non-persistent message it was to lose passes.  (Had the message been put under syncpoint and committed, a
    commit that backed out while answering OK would tell the same history: both would be blamed.)"""
    opts = C.MQOO_INPUT_SHARED | C.MQOO_OUTPUT | C.MQOO_INQUIRE
    persistent = L.MessageDescriptor(persistence=C.MQPER_PERSISTENT)
    history = [(L.DefineQueue(queue="Q"), L.OK), (L.DefineQueue(queue="OTHER"), L.OK), (L.Connect(conn="a"), L.OK),
               (L.Open(conn="a", handle="h", queue="Q", options=opts), L.OK),
               (L.Put(conn="a", handle="h", body="m1", options=C.MQPMO_NO_SYNCPOINT, md=persistent), L.OK),
               (L.Put(conn="a", handle="h", body="m2", options=C.MQPMO_NO_SYNCPOINT), L.OK),
               (L.Restart(abrupt=True), L.OK), (L.AdvanceClock(tenths=20), L.OK),
               (L.Connect(conn="a"), L.OK), (L.Open(conn="a", handle="h2", queue="Q", options=opts), L.OK),
               (L.InquireQueue(queue="OTHER", names=("CURDEPTH",)), L.Observation(attrs=(("CURDEPTH", 0),)))]
    restart = next(i for i, (op, _) in enumerate(history) if isinstance(op, L.Restart))
    if shown_by == "depth":
        last = (L.InquireQueue(queue="Q", names=("CURDEPTH",)), L.Observation(attrs=(("CURDEPTH", 0),)))
    else:
        last = (L.Get(conn="a", handle="h2", options=C.MQGMO_NO_SYNCPOINT), L.Observation.of(C.MQRC_NO_MSG_AVAILABLE))
    mm, b = blamed(history + [last])
    assert "CORE-32" not in mm.rules   # the checker cannot see it: nothing at the failing step names the restart
    # first, as needed first (a get finding nothing is told as well by a put that answered OK and placed nothing:
    # that is blamed beside it, needed only at the get)
    assert b.confirmed and b.rules[0] == "CORE-32" and set(b.rules) <= {"CORE-32", "CORE-01"}, b
    assert shown_by == "get" or b.rules == ("CORE-32",), b
    assert follows(history + [last], D, frozenset({"CORE-32"})) == restart
    assert blame(history + [last], mm, D, known_by=frozenset({"CORE-32"})).known
    kept = (last[0], L.Observation(attrs=(("CURDEPTH", 1),))) if shown_by == "depth" else \
        (last[0], msg("m1", persistence=C.MQPER_PERSISTENT))
    assert check_history(D, history + [kept])[-1].mismatch is None



def test_non_persistent_messages_a_restart_kept_blame_the_restart_not_the_full_queue_they_make():
    """The simulated queue manager with restart-keeps-nonpersistent: three non-persistent messages fill a queue of
    MAXDEPTH 3 and survive a restart; the depth shows them, and a put is refused as full, where MQ's queue is
    empty.  What a restart keeps (CORE-32) is broken, from the restart on, and explains the refused put too: once
    CORE-32 is found broken, the put is no new departure of MAXDEPTH's rule."""
    opts = C.MQOO_INPUT_SHARED | C.MQOO_OUTPUT | C.MQOO_INQUIRE
    put = lambda body: L.Put(conn="a", handle="h", body=body, options=C.MQPMO_NO_SYNCPOINT)
    ops = [L.DefineQueue(queue="Q", attrs=(("MAXDEPTH", 3),)), L.Connect(conn="a"),
           L.Open(conn="a", handle="h", queue="Q", options=opts), put("m1"), put("m2"), put("m3"),
           L.Restart(abrupt=True), L.Connect(conn="a"), L.Open(conn="a", handle="h", queue="Q", options=opts)]
    depth = L.InquireQueue(queue="Q", names=("CURDEPTH",))
    pairs = _on_simulated([*ops, depth, put("m4")], "restart-keeps-nonpersistent")
    assert pairs[-2][1].attrs == (("CURDEPTH", 3),) and pairs[-1][1].rc == C.MQRC_Q_FULL
    mm, b = blamed(pairs[:-1])
    assert b.confirmed and b.rules == ("CORE-32",), b
    assert follows(pairs[:-1], D, frozenset({"CORE-32"})) == 6
    # the depth read past as its round steps past a rule found broken: the round goes on from the restart that
    # kept them as well (ModelTracker._went_back), and the put refused as full is then what MQ gives, no departure
    def followed(goes_back: bool):
        tracker = ModelTracker(D, set_aside=frozenset({"CORE-32", "CORE-28"}))
        tracker.goes_back = goes_back
        for op, observed in pairs[:-1]:
            if tracker.advance(op, observed).mismatch is not None:
                assert tracker.step_past(op, observed)
        return tracker.advance(*pairs[-1]).mismatch

    assert followed(True) is None
    # from the depth's own states alone the put departs as MAXDEPTH's rule, which the rule found broken explains
    mm = followed(False)
    assert mm is not None and "CORE-27" in mm.rules
    assert blame(pairs, mm, D, known_by=frozenset({"CORE-32"})).known


def test_an_expired_message_returned_breaks_never_returning_it_not_when_mq_may_remove_it_unseen():
    """RabbitMQ (a default run's counterexample): a message put under syncpoint with Expiry 3 tenths, its unit of
    work committed 2 s later, is returned by a get with its full Expiry (the broker starts the expiry at the
    commit, where the message enters its queue).  In MQ's model it has expired: discarded by the get, or before,
    unseen, by the queue manager (EXP-26, a latitude: MQ may remove it; a system that does not breaks nothing).
    Returning it breaks EXP-06; the rule of when MQ may remove it unseen is only mentioned, and once EXP-06 is
    found broken (as the run had) the departure is no new one."""
    failure = load_failure(ROOT / "tests" / "data" / "histories" / "rabbitmq-expiry-from-commit.json")
    fresh = with_alternatives(failure, 3)
    assert fresh.mismatch.confirmed and "EXP-06" in fresh.blamed and "EXP-26" not in fresh.blamed, fresh.mismatch
    assert "EXP-26" in fresh.mentioned
    assert "EXP-06" in failure.known_before()
    assert with_alternatives(failure, 3, known_by=failure.known_before()).mismatch.known


def test_an_order_of_commits_shown_by_a_get_is_the_order_rule_s_not_the_commit_s():
    """On a queue that enqueues a unit of work's puts at its commit (syncpoint-puts-queued-at-commit), two units
    of work committed in the other order than they put give their messages back in commit order.  Each commit
    answered as MQ's does: that the second one did not make its message available in its place (CORE-29
    relaxed, a backout) is a story told by inference alone, and gives way to the rule the get shows broken,
    first in first out (CORE-06 on a MSGDLVSQ(FIFO) queue).  Where the departure is at the commit itself, the
    commit's rule stays named."""
    opts = C.MQOO_INPUT_SHARED | C.MQOO_OUTPUT
    ops = [L.DefineQueue(queue="Q", attrs=(("MSGDLVSQ", C.MQMDS_FIFO),)), L.Connect(conn="a"), L.Connect(conn="b"),
           L.Open(conn="a", handle="ha", queue="Q", options=opts), L.Open(conn="b", handle="hb", queue="Q", options=opts),
           L.Put(conn="a", handle="ha", body="m1", options=C.MQPMO_SYNCPOINT),
           L.Put(conn="b", handle="hb", body="m2", options=C.MQPMO_SYNCPOINT),
           L.Commit(conn="b"), L.Commit(conn="a"), L.Get(conn="a", handle="ha", options=C.MQGMO_NO_SYNCPOINT)]
    pairs = _on_simulated(ops, "syncpoint-puts-queued-at-commit")
    assert pairs[-1][1].message.body == "m2"
    mm = next(c.mismatch for c in check_history(D, pairs) if c.mismatch is not None)
    assert mm.index == len(pairs) - 1
    b = blame(pairs, mm, D)
    assert b.confirmed and b.rules == ("CORE-06",), b
    assert "CORE-29" not in b.rules
    # the commit relaxed alone explains it too (nothing later shows the message of the second commit)
    assert follows(pairs, D, frozenset({"CORE-29"})) is not None
    assert check_history(D, _on_simulated(ops, ""))[-1].mismatch is None


def _dead(mid: str, dest: str = "A"):
    return L.Put1(conn="app", queue="DLQ", body=f"dead letter {mid}", options=C.MQPMO_NO_SYNCPOINT,
                  md=L.MessageDescriptor(format=C.MQFMT_DEAD_LETTER_HEADER, msg_id=mid, msg_type=C.MQMT_DATAGRAM),
                  dlh=L.DeadLetterHeader(reason=C.MQRC_Q_FULL, dest_q=dest))


@pytest.mark.parametrize("case", ["the handler's pass skips", "the host's browse before the pass skips",
                                  "the host's browse after the pass skips", "every other message skipped"])
def test_a_dlq_handler_meeting_a_browse_that_skips_is_what_browse_next_relaxed_explains(case):
    """The DLQ handler reads its queue by browsing it, and the host that reports each message's fate browses it
    before and after each pass: on a queue manager whose browse-next skips a message (browse-next-skips), the
    handler leaves a message it never met alone, or the host does not list it, or reports discarded a message
    still there.  CORE-19 relaxed for the handler's run lets its browses skip messages (never the queue's first):
    once a browse-next was found to skip, these are no new departure.  Told by inference alone, the reading gives
    way to a DLQ rule that explains the history (that rule is what a run that never saw a skipping browse
    fails)."""
    start = [L.DefineQueue(queue="DLQ"), L.AlterQueueManager(attrs=(("DEADQ", "DLQ"),)), L.Connect(conn="app")]
    ops = {
        # M1 acted on; then M2 and M3 beyond the cursor: the pass's browse-next skips M2 and discards M3
        "the handler's pass skips": start + [
            L.StartDlqHandler(handler="H1", table="ACTION(DISCARD)\n"), _dead("M1"),
            L.RunDlqHandler(handler="H1"), _dead("M2"), _dead("M3"), L.RunDlqHandler(handler="H1")],
        # a handler that could not start (the first holds the queue): every message kept, but M2 not listed
        "the host's browse before the pass skips": start + [
            L.StartDlqHandler(handler="H1", table="ACTION(DISCARD)\n"), _dead("M1"), _dead("M2"),
            L.AlterQueue(queue="DLQ", attrs=(("DEFSOPT", C.MQOO_INPUT_EXCLUSIVE),)),   # DEFSOPT(EXCL)
            L.StartDlqHandler(handler="H2", table="ACTION(RETRY)\n"), _dead("M3"), L.RunDlqHandler(handler="H2")],
        # a handler that leaves M1..M3 alone (its rule matches none): the host's browse after skips M2
        "the host's browse after the pass skips": start + [
            L.StartDlqHandler(handler="H1", table="DESTQ(NONE) ACTION(DISCARD)\n"), _dead("M1"), _dead("M2"),
            _dead("M3"), _dead("M4"), L.RunDlqHandler(handler="H1")],
        # seven messages: each browse-next skips one, so the pass and the host's browse before it meet every other,
        # and the gets after it find every one the pass left
        "every other message skipped": start + [
            L.StartDlqHandler(handler="H1", table="ACTION(DISCARD)\n"), *[_dead(f"M{n}") for n in range(1, 8)],
            L.RunDlqHandler(handler="H1"),
            L.Open(conn="app", handle="d", queue="DLQ", options=C.MQOO_INPUT_SHARED),
            *[L.Get(conn="app", handle="d", options=C.MQGMO_NO_SYNCPOINT) for _ in range(4)]],
    }[case]
    pairs = _on_simulated(ops, "browse-next-skips")
    mm = check_history(D, pairs)[-1].mismatch
    assert mm is not None and isinstance(mm.op, L.RunDlqHandler), mm
    assert follows(pairs, D, frozenset({"CORE-19"})) == mm.index
    assert explained_by(pairs, D, frozenset({"CORE-19"}))
    pairs = pairs[:mm.index + 1]
    assert blame(pairs, mm, D, known_by=frozenset({"CORE-19"})).known
    b = blame(pairs, mm, D)
    assert b.confirmed and "CORE-19" not in b.rules and all(r.startswith("DLQ-") for r in b.rules), b
    assert "CORE-19" in b.inferred, b
    assert check_history(D, _on_simulated(ops, ""))[-1].mismatch is None


def test_a_dlq_handler_meeting_its_backed_out_message_again_is_what_the_backout_rule_relaxed_explains():
    """On a queue manager that puts a backed-out message back behind the others of its priority
    (backout-requeues-at-tail), a DLQ handler whose forward fails backs out its get, and its pass, browsing on,
    meets the message again past its cursor and tries it once more: with RETRY(2) and WAIT(NO) the second
    failure spends its retries and the handler ends, where MQ's handler (the message back in its place, behind
    the cursor) tries it once and runs on.  CORE-15 relaxed (where a backout reinstates a message) lets the
    pass meet it again; once CORE-15 is found broken this is no new departure."""
    ops = [L.DefineQueue(queue="DLQ"), L.Connect(conn="app"),
           L.StartDlqHandler(handler="H1", table="INPUTQ(DLQ) WAIT(NO)\nACTION(FWD) FWDQ(PARK) RETRY(2)\n"),
           _dead("M1", "NEW.Q"), L.RunDlqHandler(handler="H1")]
    pairs = _on_simulated(ops, "backout-requeues-at-tail")
    assert dict(pairs[-1][1].attrs) == {"HANDLER": "ENDED", "M1": "backed-out"}, pairs[-1][1]
    mm = check_history(D, pairs)[-1].mismatch
    assert mm is not None and mm.index == len(pairs) - 1, mm
    assert follows(pairs, D, frozenset({"CORE-15"})) == len(pairs) - 1
    assert blame(pairs, mm, D, known_by=frozenset({"CORE-15"})).known
    assert not blame(pairs, mm, D, known_by=frozenset({"CORE-19"})).known
    b = blame(pairs, mm, D)
    assert b.confirmed and "CORE-15" not in b.rules, b
    assert check_history(D, _on_simulated(ops, ""))[-1].mismatch is None


def test_a_cut_seen_to_back_out_leaves_its_other_ending_to_inference():
    """On a queue manager that puts a backed-out message back behind the others (backout-requeues-at-tail), a
    connection that got m2, then m1, under syncpoint is cut: its unit of work is backed out, m2 and m1 back at the
    tail in that order, and the next get returns m2 where MQ returns m1.  The cut did back out (m2, got in its unit
    of work, came back): that it committed instead (CORE-46 relaxed) is a story by inference alone, and gives way
    to the rule of where a backout puts its messages (CORE-15).  A cut whose messages never come back keeps the
    cut's rule blamed (see the cut-commits-uow test above)."""
    opts = C.MQOO_INPUT_SHARED | C.MQOO_OUTPUT
    put = lambda body: L.Put(conn="a", handle="ha", body=body, options=C.MQPMO_NO_SYNCPOINT,
                             md=L.MessageDescriptor(msg_id=body.upper()))
    ops = [L.DefineQueue(queue="Q"), L.Connect(conn="a"), L.Connect(conn="b"),
           L.Open(conn="a", handle="ha", queue="Q", options=opts), L.Open(conn="b", handle="hb", queue="Q", options=opts),
           put("m1"), put("m2"),
           L.GetMatching(conn="b", handle="hb", options=C.MQGMO_SYNCPOINT, match_options=C.MQMO_MATCH_MSG_ID,
                         msg_id="M2"),
           L.Get(conn="b", handle="hb", options=C.MQGMO_SYNCPOINT), L.CutConnection(conn="b"),
           L.Get(conn="a", handle="ha", options=C.MQGMO_NO_SYNCPOINT)]
    pairs = _on_simulated(ops, "backout-requeues-at-tail")
    assert pairs[-1][1].message.body == "m2", pairs[-1]
    mm = check_history(D, pairs)[-1].mismatch
    assert mm is not None and mm.index == len(pairs) - 1, mm
    assert follows(pairs, D, frozenset({"CORE-46"})) is not None   # the cut relaxed explains it too
    b = blame(pairs, mm, D)
    assert b.confirmed and "CORE-15" in b.rules and "CORE-46" not in b.rules, b
    assert "CORE-46" in b.inferred or "CORE-46" in b.mentioned, b
    assert check_history(D, _on_simulated(ops, ""))[-1].mismatch is None


def _expiring_dead(mid: str, expiry: int, priority: int = 0):
    return L.Put1(conn="app", queue="DLQ", body=f"expiring {mid}", options=C.MQPMO_NO_SYNCPOINT,
                  md=L.MessageDescriptor(format=C.MQFMT_DEAD_LETTER_HEADER, msg_id=mid, msg_type=C.MQMT_DATAGRAM,
                                         expiry=expiry, priority=priority),
                  dlh=L.DeadLetterHeader(reason=C.MQRC_Q_FULL, dest_q="A"))


def test_a_dlq_handler_meeting_an_expired_message_is_what_the_expiry_rule_relaxed_explains_pass_after_pass():
    """On a queue manager that returns expired messages (expired-message-returned), a DLQ handler whose rule
    keeps what it meets keeps an expired dead letter, pass after pass, where MQ's discards it when the first
    pass's browse reaches it.  EXP-06 relaxed lets the handler's browses meet it as any other message, and the
    history goes on with it kept: the second pass, which lists it again, is no new departure."""
    ops = [L.DefineQueue(queue="DLQ"), L.AlterQueueManager(attrs=(("DEADQ", "DLQ"),)), L.Connect(conn="app"),
           L.StartDlqHandler(handler="H1", table="ACTION(IGNORE)\n"), _dead("M1"), _expiring_dead("M2", 20),
           L.AdvanceClock(tenths=50), L.RunDlqHandler(handler="H1"), L.RunDlqHandler(handler="H1")]
    pairs = _on_simulated(ops, "expired-message-returned")
    assert dict(pairs[-1][1].attrs).get("M2") == "kept", pairs[-1]
    mm = check_history(D, pairs)[-1].mismatch
    assert mm is not None and mm.index == len(pairs) - 2, mm
    assert follows(pairs, D, frozenset({"EXP-06"})) == len(pairs) - 2
    assert explained_by(pairs, D, frozenset({"EXP-06"}))
    b = blame(pairs[:mm.index + 1], mm, D)
    assert b.confirmed and b.rules[0] == "EXP-06" and "CORE-19" not in b.rules, b
    assert check_history(D, _on_simulated(ops, ""))[-1].mismatch is None


def test_a_dlq_handler_going_on_from_its_cursor_in_arrival_order_composes_with_an_expired_message_met():
    """A DLQ handler goes on from its browse cursor: a dead letter of higher priority that arrives after a pass
    sorts before the cursor, and MQ's handler does not meet it until it rescans; on a queue manager that ignores
    priority (priority-ignored) it lies past the cursor and the next pass discards it.  CORE-04 relaxed takes the
    queue in arrival order from the cursor too.  With expired messages returned as well
    (expired-message-returned), the history passes only with both relaxed: each reading goes on from the
    other's."""
    start = [L.DefineQueue(queue="DLQ"), L.AlterQueueManager(attrs=(("DEADQ", "DLQ"),)), L.Connect(conn="app"),
             L.StartDlqHandler(handler="H1", table="PERSIST(MQPER_NOT_PERSISTENT) ACTION(DISCARD)\n")]
    high = L.Put1(conn="app", queue="DLQ", body="dead letter M3", options=C.MQPMO_NO_SYNCPOINT,
                  md=L.MessageDescriptor(format=C.MQFMT_DEAD_LETTER_HEADER, msg_id="M3", msg_type=C.MQMT_DATAGRAM,
                                         priority=9, persistence=C.MQPER_NOT_PERSISTENT),
                  dlh=L.DeadLetterHeader(reason=C.MQRC_Q_FULL, dest_q="A"))
    kept = L.MessageDescriptor(format=C.MQFMT_DEAD_LETTER_HEADER, msg_id="M1", msg_type=C.MQMT_DATAGRAM,
                               persistence=C.MQPER_PERSISTENT)
    first = L.Put1(conn="app", queue="DLQ", body="dead letter M1", options=C.MQPMO_NO_SYNCPOINT, md=kept,
                   dlh=L.DeadLetterHeader(reason=C.MQRC_Q_FULL, dest_q="A"))
    # priority alone: the second pass meets M3 past the cursor
    ops = start + [first, L.RunDlqHandler(handler="H1"), high, L.RunDlqHandler(handler="H1")]
    pairs = _on_simulated(ops, "priority-ignored")
    assert dict(pairs[-1][1].attrs).get("M3") == "discarded", pairs[-1]
    mm = check_history(D, pairs)[-1].mismatch
    assert mm is not None and mm.index == len(pairs) - 1, mm
    assert follows(pairs, D, frozenset({"CORE-04"})) == len(pairs) - 1
    assert check_history(D, _on_simulated(ops, ""))[-1].mismatch is None
    # and an expired message the first pass met and kept: both relaxed, each reading goes on from the other's
    expiring = attrs.evolve(_expiring_dead("M2", 20), md=attrs.evolve(_expiring_dead("M2", 20).md,
                                                                       persistence=C.MQPER_PERSISTENT))
    ops = start + [first, expiring, L.AdvanceClock(tenths=50), L.RunDlqHandler(handler="H1"), high,
                   L.RunDlqHandler(handler="H1"), L.RunDlqHandler(handler="H1")]
    pairs = _on_simulated(ops, "priority-ignored,expired-message-returned")
    assert dict(pairs[-2][1].attrs).get("M3") == "discarded" and dict(pairs[-1][1].attrs).get("M2") == "kept", pairs
    assert explained_by(pairs, D, frozenset({"CORE-04", "EXP-06"}))
    assert not explained_by(pairs, D, frozenset({"CORE-04"})) and not explained_by(pairs, D, frozenset({"EXP-06"}))


@pytest.mark.parametrize("rule", ["CORE-15", "CORE-17"])
def test_a_dlq_handler_backout_that_leaves_the_count_is_what_the_count_rules_relaxed_explain(rule):
    """On a queue manager whose backouts do not raise BackoutCount (backout-count-not-incremented), a DLQ handler
    whose forward fails backs out its get, and the host, which tells a backout by the count, reports the message
    kept where MQ's is backed out.  Either rule of the count relaxed lets the handler's backout leave it, and the
    history goes on from there: a later pass, after the handler's rescan, is no new departure."""
    ops = [L.DefineQueue(queue="DLQ"), L.AlterQueueManager(attrs=(("DEADQ", "DLQ"),)), L.Connect(conn="app"),
           L.StartDlqHandler(handler="H1", table="RETRYINT(5)\nACTION(FWD) FWDQ(NO.SUCH.Q) RETRY(5)\n"),
           _dead("M1"), L.RunDlqHandler(handler="H1"), L.AdvanceClock(tenths=60), L.RunDlqHandler(handler="H1")]
    pairs = _on_simulated(ops, "backout-count-not-incremented")
    assert dict(pairs[5][1].attrs).get("M1") == "kept", pairs[5]
    mm = check_history(D, pairs)[-1].mismatch
    assert mm is not None and mm.index == 5, mm
    assert follows(pairs, D, frozenset({rule})) == 5
    assert explained_by(pairs, D, frozenset({rule}))
    assert not explained_by(pairs, D, frozenset({"CORE-19"}))
    assert check_history(D, _on_simulated(ops, ""))[-1].mismatch is None


def test_a_trigger_message_returned_is_never_taken_for_one_a_restart_removed():
    """Trigger messages all have an empty body.  A restart removes the trigger message a put wrote (trigger
    messages are non-persistent); later, on a queue manager whose triggering ignores TriggerMsgPriority
    (trigmpri-ignored), raising TRIGMPRI writes one where MQ writes none, as the messages there are below it.
    The trigger message returned is not the one the restart removed: the rule of the trigger event that MQ
    did not fire (TRIG-02) is named, and once found broken it explains the history."""
    msg = lambda body: L.Put(conn="putter", handle="h2" if body < "m5" else "h3", body=body,
                             options=C.MQPMO_NO_SYNCPOINT)
    ops = [L.DefineProcess(process="APP.PROCESS", appl_type=6, appl_id="/opt/app/server", env_data="env",
                           user_data="user"),
           L.DefineQueue(queue="INIT.Q"),
           L.DefineQueue(queue="APP.Q", attrs=(("INITQ", "INIT.Q"), ("MSGDLVSQ", C.MQMDS_FIFO),
                                               ("PROCESS", "APP.PROCESS"), ("TRIGGER", C.MQTC_ON))),
           L.AlterQueueManager(attrs=(("TRIGINT", 0),)), L.Connect(conn="putter"),
           L.Open(conn="putter", handle="h1", queue="INIT.Q", options=C.MQOO_INPUT_AS_Q_DEF),
           L.Open(conn="putter", handle="h2", queue="APP.Q", options=C.MQOO_OUTPUT | C.MQOO_INQUIRE),
           msg("m3"), msg("m4"), L.Restart(), L.Connect(conn="putter"),
           L.Open(conn="putter", handle="h3", queue="APP.Q", options=C.MQOO_OUTPUT | C.MQOO_INQUIRE),
           L.Open(conn="putter", handle="h4", queue="INIT.Q", options=C.MQOO_BROWSE | C.MQOO_INQUIRE),
           msg("m7"), L.Get(conn="putter", handle="h4", options=C.MQGMO_BROWSE_NEXT | C.MQGMO_NO_SYNCPOINT),
           L.AlterQueue(queue="APP.Q", attrs=(("TRIGMPRI", 4),)),
           L.Get(conn="putter", handle="h4", options=C.MQGMO_BROWSE_NEXT | C.MQGMO_NO_SYNCPOINT)]
    pairs = _on_simulated(ops, "trigmpri-ignored")
    assert pairs[-1][1].message is not None and pairs[-1][1].message.format == C.MQFMT_TRIGGER, pairs[-1]
    mm = check_history(D, pairs)[-1].mismatch
    assert mm is not None and mm.index == len(pairs) - 1, mm
    assert "TRIG-02" in mm.rules, mm
    assert blame(pairs, mm, D, known_by=frozenset({"TRIG-02"})).known
    assert check_history(D, _on_simulated(ops, ""))[-1].mismatch is None


def test_a_departure_a_keep_going_run_went_on_past_leaves_a_later_one_known():
    """Twelve faults at once (recorded): a DLQ handler's backout that does not raise the count
    (backout-count-not-incremented) shows its message kept where MQ's is backed out, a departure the run
    stepped past with the DLQ rules it had set aside (reported before); then an expired message the handler
    meets and keeps (expired-message-returned, EXP-06 found broken).  Where the rules of the count are not
    among those found broken, they do not follow the history from the start (the first departure is no rule of
    theirs); from where the run stood, having gone on past it, EXP-06 explains the last step: no new departure.
    Without EXP-06 found broken, it is one.  (With the count rules found broken too, the history is followed
    from the start: the handler's backout that leaves the count is their reading.)"""
    failure = load_failure(ROOT / "tests" / "data" / "histories" / "dlq-backout-uncounted-then-expired-kept.json")
    pairs = [(s.op, s.observed) for s in failure.steps][:failure.mismatch.index + 1]
    aside = frozenset(failure.set_aside)
    assert {"CORE-15", "CORE-17", "EXP-06"} <= failure.known_before()
    assert explained_by(pairs, failure.platform, failure.known_before())
    known = failure.known_before() - {"CORE-15", "CORE-17"}
    assert "EXP-06" in known and not {"DLQ-24", "DLQ-01"} & known and {"DLQ-24", "DLQ-01"} <= aside
    assert not explained_by(pairs, failure.platform, known)
    assert known_past_aside(pairs, failure.platform, known, 0, aside)
    assert blame(pairs, failure.mismatch, failure.platform, 0, aside, known).known
    assert not known_past_aside(pairs, failure.platform, known - {"EXP-06"}, 0, aside)
    assert not blame(pairs, failure.mismatch, failure.platform, 0, aside, known - {"EXP-06"}).known


def test_a_trigger_message_an_alter_wrote_below_trigmpri_is_what_the_priority_rule_relaxed_explains():
    """On a queue manager whose triggering ignores TriggerMsgPriority (trigmpri-ignored), raising TRIGMPRI above
    the message on a triggered queue writes a trigger message (the change is an event, and the message counts),
    where MQ writes none.  TRIG-02 relaxed lets that event write it: the initiation queue's depth shows it, a get
    returns it, and the history goes on from there (a depth read after the get is no departure)."""
    opts = C.MQOO_OUTPUT | C.MQOO_INQUIRE
    depth = L.InquireQueue(queue="INIT.Q", names=("CURDEPTH",))
    ops = [L.DefineProcess(process="P", appl_type=6, appl_id="/opt/app/server"), L.DefineQueue(queue="INIT.Q"),
           L.DefineQueue(queue="APP.Q", attrs=(("INITQ", "INIT.Q"), ("PROCESS", "P"), ("TRIGGER", C.MQTC_ON))),
           L.Connect(conn="a"), L.Open(conn="a", handle="app", queue="APP.Q", options=opts),
           L.Open(conn="a", handle="init", queue="INIT.Q", options=C.MQOO_INPUT_SHARED | C.MQOO_INQUIRE),
           L.Put(conn="a", handle="app", body="m1", options=C.MQPMO_NO_SYNCPOINT),
           L.Get(conn="a", handle="init", options=C.MQGMO_NO_SYNCPOINT),
           L.AlterQueue(queue="APP.Q", attrs=(("TRIGMPRI", 4),)), depth,
           L.Get(conn="a", handle="init", options=C.MQGMO_NO_SYNCPOINT), depth]
    pairs = _on_simulated(ops, "trigmpri-ignored")
    assert pairs[7][1].message is not None and pairs[10][1].message is not None, pairs
    assert dict(pairs[9][1].attrs)["CURDEPTH"] == 1, pairs[9]
    mm = check_history(D, pairs)[-1].mismatch
    assert mm is not None and mm.index == 9 and "TRIG-02" in mm.rules, mm
    assert follows(pairs, D, frozenset({"TRIG-02"})) == 8
    assert explained_by(pairs, D, frozenset({"TRIG-02"}))
    assert "TRIG-02" in blame(pairs[:10], mm, D).rules
    assert check_history(D, _on_simulated(ops, ""))[-1].mismatch is None


def test_an_expiry_refresh_that_left_an_expired_message_is_what_the_refresh_rule_relaxed_explains():
    """z/OS: REFRESH QMGR TYPE(EXPIRY) discards the expired messages of the queues it names.  On a queue manager
    that keeps expired messages (expired-message-returned) the refresh leaves one there, and every depth read
    after it counts it.  EXP-24 relaxed lets the refresh discard nothing: needed at the refresh, it explains the
    first depth and the second alike (a depth read witnesses what removed a message, so without the reading
    the second depth would be a departure of its own)."""
    Z = C.PLATFORM_ZOS
    opts = C.MQOO_INPUT_SHARED | C.MQOO_OUTPUT | C.MQOO_INQUIRE
    depth = L.InquireQueue(queue="APP.Q", names=("CURDEPTH",))
    ops = [L.DefineQueue(queue="APP.Q"), L.Connect(conn="a"), L.Open(conn="a", handle="h", queue="APP.Q", options=opts),
           L.Put(conn="a", handle="h", body="m1", options=C.MQPMO_NO_SYNCPOINT, md=L.MessageDescriptor(expiry=8)),
           L.AdvanceClock(tenths=10), L.RefreshExpiry(queues="APP.*"), depth, depth]
    pairs = _on_simulated(ops, "expired-message-returned", Z)
    assert dict(pairs[-1][1].attrs)["CURDEPTH"] == 1, pairs[-1]
    mm = check_history(Z, pairs)[-1].mismatch
    assert mm is not None and mm.index == 6, mm
    assert follows(pairs, Z, frozenset({"EXP-24"})) == 5
    assert explained_by(pairs, Z, frozenset({"EXP-24"}))
    assert blame(pairs, attrs.evolve(mm, index=7), Z).rules == ("EXP-24",)
    assert check_history(Z, _on_simulated(ops, "", Z))[-1].mismatch is None


def _put_as_q_def(conn, handle, body):
    md = L.MessageDescriptor(priority=C.MQPRI_PRIORITY_AS_Q_DEF, persistence=C.MQPER_PERSISTENCE_AS_Q_DEF)
    return L.Put(conn=conn, handle=handle, body=body, md=md, options=C.MQPMO_NO_SYNCPOINT)


@pytest.mark.parametrize("puts", [1, 6])
def test_a_default_persistence_not_resolved_shows_at_a_restart_as_its_own_rule(puts):
    """A queue manager that makes every message persistent whatever DEFPSIST says (``defpsist-ignored``; a JMS
    client's default delivery mode) keeps, through a restart, messages MQ makes non-persistent and discards.
    Nothing shows the persistence before the restart: the message that comes back after it (persistent) is
    CORE-10's departure, read as the put resolving its default otherwise, not a restart that kept a non-persistent
    message (CORE-32), which would return it non-persistent.  Many such puts are read one way for all of them
    (the system's own default), so the readings stay one per put; a run that found CORE-10 broken knows it."""
    std = C.MQOO_INPUT_SHARED | C.MQOO_OUTPUT
    ops = [L.DefineQueue(queue="Q1"), L.Connect(conn="c1"), L.Open(conn="c1", handle="h1", queue="Q1", options=std)]
    ops += [_put_as_q_def("c1", "h1", f"m{n}") for n in range(1, puts + 1)]
    ops += [L.Restart(), L.Connect(conn="c1"), L.Open(conn="c1", handle="h2", queue="Q1", options=std),
            L.Get(conn="c1", handle="h2", options=C.MQGMO_NO_SYNCPOINT)]
    history = _on_simulated(ops, "defpsist-ignored")
    assert history[-1][1].message is not None and history[-1][1].message.persistence == C.MQPER_PERSISTENT
    mm, found = blamed(history)
    assert found.rules == ("CORE-10",) and found.confirmed, (mm.rules, found)
    assert explained_by(history, D, frozenset({"CORE-10"}))
    assert follows(history, D, frozenset({"CORE-32"})) is None


def test_a_default_priority_not_resolved_is_what_orders_a_priority_queue_otherwise():
    """Messages put with MQPRI_PRIORITY_AS_Q_DEF on a DEFPRTY(8) queue given a JMS client's 4 instead
    (``defprty-ignored``) come after an explicit priority 6.  That first get alone reads as well as a queue that
    ignores priority (CORE-04); the next, which shows priority 4, is CORE-07's departure alone, and the order
    with it (a run that found CORE-07 broken knows the first get too)."""
    std = C.MQOO_INPUT_SHARED | C.MQOO_OUTPUT
    ops = [L.DefineQueue(queue="Q1", attrs=(("DEFPRTY", 8),)), L.Connect(conn="c1"),
           L.Open(conn="c1", handle="h1", queue="Q1", options=std),
           _put_as_q_def("c1", "h1", "m1"), _put_as_q_def("c1", "h1", "m2"),
           L.Put(conn="c1", handle="h1", body="m3", md=L.MessageDescriptor(priority=6), options=C.MQPMO_NO_SYNCPOINT),
           L.Get(conn="c1", handle="h1", options=C.MQGMO_NO_SYNCPOINT)]
    history = _on_simulated(ops + [ops[-1]], "defprty-ignored")
    assert history[-2][1].message.body == "m3"   # MQ returns m1 (priority 8) first
    assert explained_by(history[:-1], D, frozenset({"CORE-07"}))
    assert history[-1][1].message.body == "m1" and history[-1][1].message.priority == 4
    check = check_history(D, history)
    mm = next(c.mismatch for c in check if c.mismatch is not None)
    found = blame(history, attrs.evolve(mm, index=len(history) - 1), D)
    assert found.rules == ("CORE-07",) and found.confirmed, (mm.rules, found)


def test_a_message_that_comes_back_after_it_left_blames_what_removed_it_not_how_it_had_come_there():
    """A persistent message backed out once (CORE-15 put it back), then got outside syncpoint, comes back after
    an abrupt restart (a broker that returned it before its removal was in its log): the get's removal (CORE-16)
    is what is broken, not the backout that had reinstated it before (its provenance), nor the restart."""
    std = C.MQOO_INPUT_SHARED | C.MQOO_OUTPUT
    md = L.MessageDescriptor(priority=0, persistence=C.MQPER_PERSISTENT, msg_id="X")
    back = msg("m1", persistence=1, backout_count=1, msg_id="X")
    history = [(L.DefineQueue(queue="Q1"), L.OK), (L.Connect(conn="a"), L.OK),
               (L.Open(conn="a", handle="a1", queue="Q1", options=std), L.OK),
               (L.Put(conn="a", handle="a1", body="m1", md=md, options=C.MQPMO_NO_SYNCPOINT), L.OK),
               (L.Get(conn="a", handle="a1", options=C.MQGMO_SYNCPOINT), msg("m1", persistence=1, msg_id="X")),
               (L.Backout(conn="a"), L.OK),
               (L.Get(conn="a", handle="a1", options=C.MQGMO_NO_SYNCPOINT), back),
               (L.Restart(abrupt=True), L.OK), (L.Connect(conn="a"), L.OK),
               (L.Open(conn="a", handle="a2", queue="Q1", options=std), L.OK),
               (L.Get(conn="a", handle="a2", options=C.MQGMO_NO_SYNCPOINT), back)]
    mm, found = blamed(history)
    assert "CORE-15" in mm.rules, mm.rules   # the checker names how it had come there too
    assert found.rules == ("CORE-16",) and found.confirmed, (mm.rules, found)


def test_a_default_priority_not_resolved_on_a_fifo_queue_is_the_defaults_rule_alone():
    """On a MSGDLVSQ(FIFO) queue a priority asked as the queue's default and returned as JMS's 4 is CORE-07's
    departure alone: CORE-06 keeps a priority the put named, not one DEFPRTY gives."""
    std = C.MQOO_INPUT_SHARED | C.MQOO_OUTPUT
    ops = [L.DefineQueue(queue="Q1", attrs=(("MSGDLVSQ", C.MQMDS_FIFO),)), L.Connect(conn="c1"),
           L.Open(conn="c1", handle="h1", queue="Q1", options=std), _put_as_q_def("c1", "h1", "m1"),
           L.Get(conn="c1", handle="h1", options=C.MQGMO_NO_SYNCPOINT)]
    history = _on_simulated(ops, "defprty-ignored")
    assert history[-1][1].message.priority == 4
    mm, found = blamed(history)
    assert mm.rules == ("CORE-07",) and found.rules == ("CORE-07",), (mm.rules, found)


@pytest.mark.parametrize("options", [C.MQGMO_NO_SYNCPOINT, C.MQGMO_BROWSE_FIRST], ids=["get", "browse-first"])
def test_a_message_returned_first_with_a_priority_resolved_otherwise_is_not_the_order_broken(options):
    """A DEFPRTY(2) queue: MQ returns the explicit priority 3 first; the system (``defprty-ignored``) gave the
    message put as the queue's default its own 4 and returns that one first.  Which message came is what the
    order rules decide, but that message as MQ returns it shows priority 2: a queue ignoring priority (CORE-04,
    or browse-first's order, CORE-18) would return it with 2, so only the default resolved otherwise (CORE-07)
    explains the history."""
    std = C.MQOO_INPUT_SHARED | C.MQOO_OUTPUT | C.MQOO_BROWSE
    ops = [L.DefineQueue(queue="Q1", attrs=(("DEFPRTY", 2),)), L.Connect(conn="c1"),
           L.Open(conn="c1", handle="h1", queue="Q1", options=std),
           L.Put(conn="c1", handle="h1", body="m1", md=L.MessageDescriptor(priority=3), options=C.MQPMO_NO_SYNCPOINT),
           _put_as_q_def("c1", "h1", "m2"), L.Get(conn="c1", handle="h1", options=options)]
    history = _on_simulated(ops, "defprty-ignored")
    assert (history[-1][1].message.body, history[-1][1].message.priority) == ("m2", 4)
    mm, found = blamed(history)
    assert "CORE-04" in mm.rules
    assert found.rules == ("CORE-07",) and found.confirmed and "CORE-04" in found.mentioned, (mm.rules, found)


@pytest.mark.parametrize("options", [C.MQGMO_NO_SYNCPOINT, C.MQGMO_BROWSE_FIRST], ids=["get", "browse-first"])
def test_a_message_out_of_order_that_also_shows_a_field_otherwise_needs_both_rules(options):
    """The default-priority message (the system's 4 where DEFPRTY gives 2) returned before an explicit 7 by a
    queue that ignores priority as well: neither rule alone explains it (with the default resolved as 4 the 7
    still comes first; with the order relaxed the message shows 2), both together do.  A browse-first's message
    out of priority order is as well its own order's (CORE-18) as the queue's (CORE-04), and the history does not
    show which: there it is CORE-07, and one of the two."""
    std = C.MQOO_INPUT_SHARED | C.MQOO_OUTPUT | C.MQOO_BROWSE
    ops = [L.DefineQueue(queue="Q1", attrs=(("DEFPRTY", 2),)), L.Connect(conn="c1"),
           L.Open(conn="c1", handle="h1", queue="Q1", options=std), _put_as_q_def("c1", "h1", "m2"),
           L.Put(conn="c1", handle="h1", body="m1", md=L.MessageDescriptor(priority=7), options=C.MQPMO_NO_SYNCPOINT),
           L.Get(conn="c1", handle="h1", options=options)]
    history = _on_simulated(ops, "defprty-ignored,priority-ignored")
    assert (history[-1][1].message.body, history[-1][1].message.priority) == ("m2", 4)
    _, found = blamed(history)
    if options == C.MQGMO_BROWSE_FIRST:
        assert set(found.rules) - set(found.either) == {"CORE-07"} and set(found.either) == {"CORE-04", "CORE-18"}, found
        assert set(found.rules) == {"CORE-07", "CORE-04", "CORE-18"} and found.confirmed and not found.each, found
        assert follows(history, D, frozenset({"CORE-18"})) is None
    else:
        assert set(found.rules) == {"CORE-04", "CORE-07"} and found.confirmed and found.either == (), found
    assert follows(history, D, frozenset({"CORE-04"})) is None and follows(history, D, frozenset({"CORE-07"})) is None


def test_many_puts_given_the_systems_own_defaults_are_read_as_one_system_not_one_put_at_a_time():
    """A run that found CORE-07, CORE-10 and CORE-11 broken (``defprty-ignored``, ``defpsist-ignored``,
    ``msgid-not-generated``) knows a later get that returns a default-priority message before an explicit
    priority 4 put after it: the system gives its own 4.  Read put by put, each of many such puts on queues of
    other defaults is MQ's or the system's in any mix, and the readings passed the cap on candidates before the
    get (which was then blamed on the order, CORE-04); once a put is read as given the system's own default,
    every later one is."""
    std = C.MQOO_INPUT_SHARED | C.MQOO_OUTPUT
    q2 = [_put_as_q_def("c1", "h2", f"n{i}") for i in range(1, 3)]
    explicit = L.Put(conn="c1", handle="h2", body="p4", md=L.MessageDescriptor(
        priority=4, persistence=C.MQPER_PERSISTENCE_AS_Q_DEF), options=C.MQPMO_NO_SYNCPOINT)
    ops = [L.DefineQueue(queue="Q1", attrs=(("DEFPRTY", 4), ("DEFPSIST", 1))), L.DefineQueue(queue="Q2"),
           L.Connect(conn="c1"), L.Open(conn="c1", handle="h1", queue="Q1", options=std),
           L.Open(conn="c1", handle="h2", queue="Q2", options=std), *q2, explicit,
           *[_put_as_q_def("c1", "h1", f"k{i}") for i in range(1, 5)],
           *[_put_as_q_def("c1", "h2", f"n{i}") for i in range(3, 6)],
           L.Get(conn="c1", handle="h2", options=C.MQGMO_NO_SYNCPOINT)]
    history = _on_simulated(ops, "defprty-ignored,defpsist-ignored,msgid-not-generated")
    assert history[-1][1].message.body == "n1"   # MQ returns p4, the only priority above DEFPRTY(0)
    known = frozenset({"CORE-07", "CORE-10", "CORE-11"})
    assert explained_by(history, D, known)
    mm = check_history(D, history)[-1].mismatch
    assert blame(history, mm, D, known_by=known).known


def test_a_rule_found_broken_later_in_the_round_is_relaxed_in_every_reading_of_a_diagnosis():
    """A round records as found broken the rules found later in it too (``found_broken``), which it had not set
    aside when it met the departure.  Diagnosed again with them known, they are relaxed in every reading, as the
    rules set aside are: a queue that ignores priority (CORE-04) returns the priority 5 before the 9, and the
    message shows the persistence the system gives by default (CORE-10, found broken): CORE-04 alone is blamed,
    confirmed."""
    std = C.MQOO_INPUT_SHARED | C.MQOO_OUTPUT
    md = {p: L.MessageDescriptor(priority=p, persistence=C.MQPER_PERSISTENCE_AS_Q_DEF) for p in (5, 9)}
    ops = [L.DefineQueue(queue="Q1"), L.Connect(conn="c1"), L.Open(conn="c1", handle="h1", queue="Q1", options=std),
           L.Put(conn="c1", handle="h1", body="m1", md=md[5], options=C.MQPMO_NO_SYNCPOINT),
           L.Put(conn="c1", handle="h1", body="m2", md=md[9], options=C.MQPMO_NO_SYNCPOINT),
           L.Get(conn="c1", handle="h1", options=C.MQGMO_NO_SYNCPOINT)]
    history = _on_simulated(ops, "priority-ignored,defpsist-ignored")
    assert (history[-1][1].message.body, history[-1][1].message.persistence) == ("m1", 1)
    mm = check_history(D, history)[-1].mismatch
    found = blame(history, mm, D, set_aside=frozenset(), known_by=frozenset({"CORE-10"}))
    assert found.rules == ("CORE-04",) and found.confirmed, found


def test_a_pair_that_explains_by_a_story_no_answer_showed_gives_way_to_a_pair_the_history_shows():
    """A system that places a put under syncpoint at its commit (``syncpoint-puts-queued-at-commit``) and generates
    no MsgId (``msgid-not-generated``): the message put outside syncpoint later comes first, with a blank MsgId.
    No rule alone explains it; a commit that did not commit (CORE-29) with the MsgId's rule explains it as well
    as the order (CORE-05) with it, but every commit answered as MQ's does: the order and the MsgId are blamed,
    the commit's other ending is inferred."""
    std = C.MQOO_INPUT_SHARED | C.MQOO_OUTPUT
    ops = [L.DefineQueue(queue="Q1"), *[L.Connect(conn=c) for c in ("c1", "c2", "c3")],
           *[L.Open(conn=c, handle=f"h{c}", queue="Q1", options=std) for c in ("c1", "c2", "c3")],
           L.Put(conn="c2", handle="hc2", body="m1", md=L.MessageDescriptor(), options=C.MQPMO_SYNCPOINT),
           L.Put(conn="c3", handle="hc3", body="m2", md=L.MessageDescriptor(), options=C.MQPMO_NO_SYNCPOINT),
           L.Commit(conn="c2"), L.Get(conn="c1", handle="hc1", options=C.MQGMO_NO_SYNCPOINT)]
    history = _on_simulated(ops, "syncpoint-puts-queued-at-commit,msgid-not-generated")
    assert (history[-1][1].message.body, history[-1][1].message.msg_id) == ("m2", "")
    mm, found = blamed(history)
    assert set(found.rules) == {"CORE-05", "CORE-11"} and found.confirmed, (mm.rules, found)
    assert "CORE-29" in found.inferred, found


def test_nothing_returned_by_a_get_selecting_mqci_none_is_not_the_blank_taken_literally_where_blank_ones_wait():
    """MQCI_NONE taken as the blank CorrelId selects the messages whose CorrelId is blank: where such a message is
    there for the get, a literal reading returns it, and a get that returns nothing is no such reading, so not the
    selection's alone: a system that hid the queue's messages from a fresh consumer (CORE-01; ActiveMQ with its
    default prefetch) explains it too, and a run that found that broken knows it.  Where no blank one is there,
    nothing is what the literal reading gives, and the selection alone is blamed."""
    std = C.MQOO_INPUT_SHARED | C.MQOO_OUTPUT
    md = L.MessageDescriptor(correl_id="corr-2")
    get = L.GetMatching(conn="c1", handle="h1", options=C.MQGMO_NO_SYNCPOINT, match_options=C.MQMO_MATCH_CORREL_ID)
    history = [(L.DefineQueue(queue="Q1"), L.OK), (L.Connect(conn="c1"), L.OK),
               (L.Open(conn="c1", handle="h1", queue="Q1", options=std), L.OK),
               (L.Put(conn="c1", handle="h1", body="m1", md=md, options=C.MQPMO_NO_SYNCPOINT), L.OK),
               (L.Put(conn="c1", handle="h1", body="m2", md=L.MessageDescriptor(), options=C.MQPMO_NO_SYNCPOINT), L.OK),
               (get, L.Observation.of(C.MQRC_NO_MSG_AVAILABLE))]
    assert follows(history, D, frozenset({"CORE-01"})) is not None
    mm = check_history(D, history)[-1].mismatch
    assert blame(history, mm, D, known_by=frozenset({"CORE-01"})).known
    # with no blank CorrelId there, nothing is what the literal reading gives: the selection's departure alone
    no_blank = history[:4] + [history[5]]
    assert follows(no_blank, D, frozenset({"CORE-51"})) is not None
    assert follows(no_blank, D, frozenset({"CORE-01"})) is None


def _browsed_in_arrival_order_blank_ids():
    """A queue that ignores priority and generates no MsgId (``priority-ignored``, ``msgid-not-generated``): a
    browse-first returns the priority 0 put first, the browse-next after it the priority 4, with a blank MsgId,
    where MQ's delivery order has nothing after the priority 0 one."""
    std = C.MQOO_INPUT_SHARED | C.MQOO_OUTPUT | C.MQOO_BROWSE
    ops = [L.DefineQueue(queue="Q1"), L.Connect(conn="c1"), L.Open(conn="c1", handle="h1", queue="Q1", options=std),
           L.Put(conn="c1", handle="h1", body="m1", md=L.MessageDescriptor(priority=0, msg_id="id-1"),
                 options=C.MQPMO_NO_SYNCPOINT),
           L.Put(conn="c1", handle="h1", body="m2", md=L.MessageDescriptor(priority=4), options=C.MQPMO_NO_SYNCPOINT),
           L.Get(conn="c1", handle="h1", options=C.MQGMO_NO_SYNCPOINT | C.MQGMO_BROWSE_FIRST),
           L.Get(conn="c1", handle="h1", options=C.MQGMO_NO_SYNCPOINT | C.MQGMO_BROWSE_NEXT)]
    history = _on_simulated(ops, "priority-ignored,msgid-not-generated")
    assert [o.message.body for _, o in history[-2:]] == ["m1", "m2"] and history[-1][1].message.msg_id == ""
    return history


def test_a_browse_in_arrival_order_showing_a_blank_msgid_is_known_by_both_rules_found_broken():
    """The rules found broken (the order, CORE-04, and the MsgId's, CORE-11) explain the browse-next together:
    the reading that takes the queue in arrival order returns the message as MQ does, with a generated MsgId,
    and the MsgId left blank is the other rule's.  Each reading of a rule relaxed is checked field by field
    against the rules relaxed with it (it had to match the answer whole: the browse-next was blamed on finding
    nothing, CORE-13 and CORE-19)."""
    history = _browsed_in_arrival_order_blank_ids()
    both = frozenset({"CORE-04", "CORE-11"})
    assert explained_by(history, D, both)
    assert not explained_by(history, D, frozenset({"CORE-04"}))
    first = check_history(D, history)[-1].mismatch   # the browse-first departs (CORE-04's)
    assert first is not None and first.index == len(history) - 2 and "CORE-04" in first.rules
    # a run that set its rules aside steps past it and meets the browse-next
    aside = frozenset(first.rules)
    tracker = ModelTracker(D, set_aside=aside)
    for op, observed in history[:-1]:
        assert tracker.advance(op, observed).mismatch is None or tracker.step_past(op, observed)
    last = tracker.advance(*history[-1]).mismatch
    assert last is not None and {"CORE-13", "CORE-19"} & set(last.rules)
    last = attrs.evolve(last, index=len(history) - 1)
    assert blame(history, last, D, set_aside=aside, known_by=both).known
    # known only the order, the MsgId's rule is blamed, not a browse that found something where MQ finds nothing
    found = blame(history, last, D, set_aside=aside, known_by=frozenset({"CORE-04"}))
    assert found.rules == ("CORE-11",) and found.confirmed, found
    # neither known: both, the order first
    found = blame(history, last, D, set_aside=aside)
    assert set(found.rules) == both and found.confirmed, found


def test_a_trigger_a_shared_queue_made_below_trigmpri_is_what_the_priority_rule_relaxed_explains():
    """A shared queue of a queue-sharing group (z/OS) with TriggerMsgPriority 4, a put of a message at the queue's
    default priority (0), and a queue manager that counts it anyway (``trigmpri-ignored``): the other queue
    manager's initiation queue's depth is 1 where MQ's is 0 (as the search found it: the local one's get first
    finds nothing).  A shared queue's event is each queue manager's own, and the reading of
    TRIG-02 relaxed had left it out: a run that knew TRIG-02 blamed the default priority's rule (CORE-07, the
    message given a priority of 4 or more) for the trigger message.  Both explain it alone (the message's
    priority is never seen), so neither known, both are blamed."""
    z = C.PLATFORM_ZOS
    put = _put_as_q_def("putter", "h1", "s2")   # DEFPRTY 0
    ops = [L.DefineQueueSharingGroup(qmgrs=("QM2",)), L.DefineQueue(queue="INIT.Q", qmgr="QM2"),
           L.DefineQueue(queue="SHARED.Q", attrs=(("INITQ", "INIT.Q"), ("PROCESS", "APP.PROCESS"), ("QSGDISP", 2))),
           L.DefineProcess(process="APP.PROCESS", appl_type=6, appl_id="/opt/app/server"),
           L.DefineQueue(queue="INIT.Q"), L.Connect(conn="putter"),
           L.Open(conn="putter", handle="h1", queue="SHARED.Q", options=C.MQOO_OUTPUT | C.MQOO_INQUIRE),
           L.Connect(conn="qm2-monitor", qmgr="QM2"),
           L.Open(conn="qm2-monitor", handle="h2", queue="INIT.Q", options=C.MQOO_INPUT_SHARED | C.MQOO_INQUIRE),
           L.Open(conn="putter", handle="h3", queue="INIT.Q", options=C.MQOO_INPUT_AS_Q_DEF),
           L.AlterQueue(queue="INIT.Q", attrs=(("PUT", 1),)),
           L.AlterQueue(queue="SHARED.Q", attrs=(("GET", 0), ("TRIGDPTH", 2), ("TRIGGER", 1), ("TRIGMPRI", 4),
                                                 ("TRIGTYPE", 1))),
           put, L.Get(conn="putter", handle="h3", options=C.MQGMO_NO_SYNCPOINT),
           L.InquireQueue(queue="INIT.Q", names=("CURDEPTH",), qmgr="QM2")]
    history = _on_simulated(ops, "trigmpri-ignored", z)
    assert history[-1][1].attrs == (("CURDEPTH", 1),), history[-1]
    mm = check_history(z, history)[-1].mismatch
    assert mm is not None and mm.index == len(history) - 1
    assert explained_by(history, z, frozenset({"TRIG-02"}))
    assert blame(history, mm, z, known_by=frozenset({"TRIG-02"})).known
    assert set(blame(history, mm, z).rules) == {"TRIG-02", "CORE-07"}


def _shared_queue_served_on_qm2(alter: tuple = (), uncommitted: bool = False) -> list:
    """A shared queue (z/OS) with a trigger on, FIRST at TriggerMsgPriority 0 unless ``alter`` says otherwise, whose
    server is on the other queue manager (QM2, shared input), and a put to it (after another put under syncpoint,
    not committed, with ``uncommitted``); then the initiation queue's depth."""
    shared = (("INITQ", "INIT.Q"), ("PROCESS", "APP.PROCESS"), ("QSGDISP", 2), ("TRIGGER", 1))
    return ([L.DefineQueueSharingGroup(qmgrs=("QM2",)), L.DefineQueue(queue="SHARED.Q", attrs=shared),
             L.DefineProcess(process="APP.PROCESS", appl_type=6, appl_id="/opt/app/server"),
             L.DefineQueue(queue="INIT.Q"), L.Connect(conn="putter"), L.Connect(conn="other"),
             L.Open(conn="putter", handle="h1", queue="SHARED.Q", options=C.MQOO_OUTPUT),
             L.Open(conn="other", handle="h4", queue="SHARED.Q", options=C.MQOO_OUTPUT),
             L.Connect(conn="qm2-server", qmgr="QM2"),
             L.Open(conn="putter", handle="h2", queue="INIT.Q", options=C.MQOO_INPUT_AS_Q_DEF),
             L.Open(conn="qm2-server", handle="h3", queue="SHARED.Q", options=C.MQOO_INPUT_SHARED)]
            + ([L.AlterQueue(queue="SHARED.Q", attrs=alter)] if alter else [])
            + ([L.Put(conn="other", handle="h4", body="u1", options=C.MQPMO_SYNCPOINT)] if uncommitted else [])
            + [L.Put(conn="putter", handle="h1", body="s1", options=C.MQPMO_NO_SYNCPOINT),
               L.InquireQueue(queue="INIT.Q", names=("CURDEPTH",))])


@pytest.mark.parametrize("alter, uncommitted, rules", [
    # FIRST at 0 judged as FIRST at 0 is the same: only counting the other member's input handle explains it
    ((), False, {"TRIG-08"}),
    # judged by its own trigger type (EVERY at 4, the message at 0), it would not trigger either: TRIG-07 as well
    ((("TRIGTYPE", C.MQTT_EVERY), ("TRIGMPRI", 4)), False, {"TRIG-07", "TRIG-08"}),
    # another member's uncommitted message on the queue: counting it would stop the trigger too
    ((), True, {"TRIG-08", "TRIG-05", "TRIG-03"}),
], ids=["first-at-0", "every-at-4", "with-an-uncommitted-message"])
def test_no_trigger_where_a_server_on_another_member_has_the_shared_queue_open_names_what_that_decided(
        alter, uncommitted, rules):
    """A queue manager that counts the other members' input handles as its own (``open-input-counted-group-wide``)
    writes no trigger message for a put to an empty shared queue served on QM2.  TRIG-07 (judged as FIRST at
    TriggerMsgPriority 0 while another member has it open for shared input) is to blame only where that changes
    how the queue is judged; TRIG-05 (committed messages alone count) and TRIG-03 (the count before the put) only
    where there is another message to count."""
    z = C.PLATFORM_ZOS
    history = _on_simulated(_shared_queue_served_on_qm2(alter, uncommitted), "open-input-counted-group-wide", z)
    assert history[-1][1].attrs == (("CURDEPTH", 0),), history[-1]
    mm, b = blamed(history, z)
    assert set(b.rules) == rules and b.confirmed, (mm.rules, b)
    assert not {"TRIG-05", "TRIG-03"} - rules & set(mm.rules), mm.rules


@pytest.mark.parametrize("fault, priority, first, rules", [
    # the message's own priority would pass: comparing it where FIFO compares DefPriority leads, no comparison
    # at all explains it as well
    ("fifo-uses-message-priority", 4, "TRIG-24", {"TRIG-24", "TRIG-02"}),
    # the message's own priority would not pass either: no comparison at all, alone
    ("trigmpri-ignored", 0, "TRIG-02", {"TRIG-02"}),
], ids=["own-priority-passes", "own-priority-below"])
def test_a_trigger_from_a_fifo_queue_below_trigmpri_names_what_compared_the_priority(fault, priority, first, rules):
    """A MSGDLVSQ(FIFO) queue with TriggerMsgPriority 4 and DefPriority 0: MQ compares DefPriority (TRIG-24), so a
    put writes no trigger message whatever the message's own priority; one written names first the reading
    that fits what the message carried."""
    ops = [L.DefineProcess(process="APP.PROCESS", appl_type=6, appl_id="/opt/app/server"),
           L.DefineQueue(queue="INIT.Q"),
           L.DefineQueue(queue="APP.Q", attrs=(("INITQ", "INIT.Q"), ("MSGDLVSQ", C.MQMDS_FIFO),
                                               ("PROCESS", "APP.PROCESS"), ("TRIGGER", 1), ("TRIGMPRI", 4))),
           L.Connect(conn="putter"),
           L.Open(conn="putter", handle="h1", queue="APP.Q", options=C.MQOO_OUTPUT),
           L.Open(conn="putter", handle="h2", queue="INIT.Q", options=C.MQOO_INPUT_AS_Q_DEF),
           L.Put(conn="putter", handle="h1", body="m", md=L.MessageDescriptor(priority=priority),
                 options=C.MQPMO_NO_SYNCPOINT),
           L.InquireQueue(queue="INIT.Q", names=("CURDEPTH",))]
    history = _on_simulated(ops, fault)
    assert history[-1][1].attrs == (("CURDEPTH", 1),), history[-1]
    mm, b = blamed(history)
    assert b.rules[0] == first and set(b.rules) == rules and b.confirmed, (mm.rules, b)


def test_a_second_trigger_from_a_shared_queue_another_member_serves_names_the_first_override_first():
    """A shared EVERY queue open for shared input on the queue manager under test: QM2 judges it as FIRST at
    TriggerMsgPriority 0 (TRIG-07), so of two puts only the first writes a trigger message to QM2's initiation
    queue.  A QM2 that judges it as EVERY (``no-first-override``) writes two: the override not applied leads;
    a FIRST queue triggered again before its TriggerInterval (TRIG-16) explains it as well."""
    z = C.PLATFORM_ZOS
    shared = (("INITQ", "INIT.Q"), ("PROCESS", "APP.PROCESS"), ("QSGDISP", 2), ("TRIGGER", 1),
              ("TRIGTYPE", C.MQTT_EVERY))
    ops = [L.DefineQueueSharingGroup(qmgrs=("QM2",)), L.DefineQueue(queue="INIT.Q", qmgr="QM2"),
           L.DefineQueue(queue="SHARED.Q", attrs=shared),
           L.DefineProcess(process="APP.PROCESS", appl_type=6, appl_id="/opt/app/server"),
           L.Connect(conn="putter"),
           L.Open(conn="putter", handle="h1", queue="SHARED.Q", options=C.MQOO_INPUT_SHARED | C.MQOO_OUTPUT),
           L.Connect(conn="qm2-monitor", qmgr="QM2"),
           L.Open(conn="qm2-monitor", handle="h2", queue="INIT.Q", options=C.MQOO_INPUT_SHARED),
           L.Put(conn="putter", handle="h1", body="s1", options=C.MQPMO_NO_SYNCPOINT),
           L.Put(conn="putter", handle="h1", body="s2", options=C.MQPMO_NO_SYNCPOINT),
           L.InquireQueue(queue="INIT.Q", names=("CURDEPTH",), qmgr="QM2")]
    history = _on_simulated(ops, "no-first-override", z)
    assert history[-1][1].attrs == (("CURDEPTH", 2),), history[-1]
    mm, b = blamed(history, z)
    assert b.rules[:2] == ("TRIG-07", "TRIG-16") and b.confirmed, (mm.rules, b)


@pytest.mark.parametrize("selecting, first", [(True, "CORE-52"), (False, "CORE-04")], ids=["selecting", "plain"])
def test_a_lower_priority_returned_first_names_the_selection_s_order_where_the_get_selects(selecting, first):
    """Two messages with one CorrelId, priorities 0 then 4, on a priority queue; a get returns the one at 0.  A get
    that selects by the CorrelId breaks the order among the messages selected (CORE-52) first, the queue's priority
    order (CORE-04) as well; a plain get, priority order alone."""
    std = C.MQOO_INPUT_SHARED | C.MQOO_OUTPUT
    get = (L.GetMatching(conn="c1", handle="h1", options=C.MQGMO_NO_SYNCPOINT, match_options=C.MQMO_MATCH_CORREL_ID,
                         correl_id="corr-1") if selecting else L.Get(conn="c1", handle="h1",
                                                                      options=C.MQGMO_NO_SYNCPOINT))
    ops = [L.DefineQueue(queue="Q1", attrs=(("MSGDLVSQ", C.MQMDS_PRIORITY),)), L.Connect(conn="c1"),
           L.Open(conn="c1", handle="h1", queue="Q1", options=std),
           L.Put(conn="c1", handle="h1", body="low", md=L.MessageDescriptor(correl_id="corr-1", priority=0),
                 options=C.MQPMO_NO_SYNCPOINT),
           L.Put(conn="c1", handle="h1", body="high", md=L.MessageDescriptor(correl_id="corr-1", priority=4),
                 options=C.MQPMO_NO_SYNCPOINT), get]
    history = _on_simulated(ops, "match-in-arrival-order" if selecting else "priority-ignored")
    assert history[-1][1].message.body == "low", history[-1]
    mm, b = blamed(history)
    assert b.rules[0] == first and mm.rules[0] == first and b.confirmed, (mm.rules, b)
    assert set(b.rules) == ({"CORE-52", "CORE-04"} if selecting else {"CORE-04"}), b


@pytest.mark.parametrize("sync", [True], ids=["put-under-syncpoint"])
def test_an_expired_message_that_asks_for_a_report_left_out_of_the_depth_blames_the_counting_of_expired_ones(sync):
    """A message put under syncpoint that expires and asks for an expiration report, then the depth of its queue
    and of the reply-to queue.  A queue manager that leaves expired messages out of CURDEPTH
    (``expired-not-counted``) shows 0 and no report: EXP-11 (expired messages still on the queue count) explains
    it, as CORE-28 (uncommitted puts count) does; not the report's rules alone.  (Put outside syncpoint, the depth
    is one that removal in the background allows, and the missing report is blamed on EXP-08: EXP-11, which
    explains it as well, is not yet named there, as that changes the published verdicts.)"""
    std = C.MQOO_INPUT_SHARED | C.MQOO_OUTPUT | C.MQOO_INQUIRE
    ops = [L.DefineQueue(queue="APP.Q"), L.DefineQueue(queue="REPLY.Q"), L.Connect(conn="p"),
           L.Open(conn="p", handle="h1", queue="APP.Q", options=std),
           L.Put(conn="p", handle="h1", body="m1", options=C.MQPMO_SYNCPOINT if sync else C.MQPMO_NO_SYNCPOINT,
                 md=L.MessageDescriptor(expiry=3, report=C.MQRO_EXPIRATION, reply_to_q="REPLY.Q")),
           L.AdvanceClock(tenths=5), L.InquireQueue(queue="APP.Q", names=("CURDEPTH",)),
           L.InquireQueue(queue="REPLY.Q", names=("CURDEPTH",))]
    history = _on_simulated(ops, "expired-not-counted")
    assert [obs.attrs for _, obs in history[-2:]] == [(("CURDEPTH", 0),), (("CURDEPTH", 0),)], history[-2:]
    mm = check_history(D, history)[-1].mismatch
    # (the depth of APP.Q is one MQ allows, had the message left in the background; the missing report is the
    # departure, and the earlier depth the one that explains it as well)
    failure = with_alternatives(Failure(area="expiry", adapter="simulated", platform=D, seed=1, mismatch=mm,
                                        steps=tuple(Step(op=o, observed=b) for o, b in history)))
    assert "EXP-11" in failure.blamed and set(failure.blamed) <= {"EXP-11", "CORE-28"}, failure.blamed
    assert (failure.blamed == ("EXP-11",)) is not sync, failure.blamed


def test_a_second_expiration_report_after_a_backout_blames_the_discard_taken_into_the_unit_of_work():
    """A get under syncpoint walks past an expired message that asks for a report (discarded, its report put) and
    returns the next; the unit of work is backed out.  A queue manager that brings the discarded message back with
    the backout (``discard-rolled-back``) discards it again at the next browse, with a second report: the discard
    made part of the unit of work (EXP-13) is to blame, not when or whether reports are made (EXP-12, EXP-08)."""
    std = C.MQOO_INPUT_SHARED | C.MQOO_BROWSE | C.MQOO_OUTPUT
    report = L.MessageDescriptor(report=C.MQRO_EXPIRATION, reply_to_q="REPLY.Q")
    ops = [L.DefineQueue(queue="APP.Q"), L.DefineQueue(queue="REPLY.Q"), L.Connect(conn="p"),
           L.Open(conn="p", handle="h1", queue="APP.Q", options=std),
           L.Put(conn="p", handle="h1", body="m2", md=attrs.evolve(report, expiry=8), options=C.MQPMO_NO_SYNCPOINT),
           L.Put(conn="p", handle="h1", body="m3", md=report, options=C.MQPMO_NO_SYNCPOINT),
           L.AdvanceClock(tenths=17), L.Get(conn="p", handle="h1", options=C.MQGMO_SYNCPOINT), L.Backout(conn="p"),
           L.Get(conn="p", handle="h1", options=C.MQGMO_BROWSE_FIRST),
           L.InquireQueue(queue="REPLY.Q", names=("CURDEPTH",))]
    history = _on_simulated(ops, "discard-rolled-back")
    assert history[-1][1].attrs == (("CURDEPTH", 2),), history[-1]
    mm, b = blamed(history)
    assert b.rules[0] == "EXP-13" and b.confirmed and mm.rules[0] == "EXP-13", (mm.rules, b)


def test_a_forwarded_message_got_out_of_order_and_stripped_of_its_header_blames_the_header_rules_only():
    """Two dead letters forwarded to PARK with HEADER(YES) (the default), the one of lower priority got first and
    without its MQDLH, priority order set aside (found broken before).  The forwarded message is on PARK and
    available, though the handler removed a message of its body from the dead-letter queue; that it came first is
    the order set aside, and its missing header is one of DLQ-22 (HEADER) or DLQ-11 (unaltered): never how the
    handler chose an action for the other message, which would explain only which message came first."""
    m9 = attrs.evolve(_dead_letter("dl 9", "M9", dest_q="B"), md=L.MessageDescriptor(
        format=C.MQFMT_DEAD_LETTER_HEADER, msg_id="M9", priority=4))
    history = [(L.DefineQueue(queue="DLQ"), L.OK), (L.DefineQueue(queue="PARK"), L.OK),
               (L.AlterQueueManager(attrs={"DEADQ": "DLQ"}), L.OK), (L.Connect(conn="app"), L.OK),
               (L.Open(conn="app", handle="h1", queue="PARK", options=C.MQOO_INPUT_SHARED | C.MQOO_OUTPUT), L.OK),
               (L.StartDlqHandler(handler="H", table="FWDQ(PARK) ACTION(FWD)\n"), L.OK),
               (_dead_letter("dl 8", "M8"), L.OK), (m9, L.OK),
               (L.RunDlqHandler(handler="H"),
                L.Observation(attrs=(("HANDLER", "RUNNING"), ("M8", "put:PARK"), ("M9", "put:PARK"))))]
    tracker = ModelTracker(D, set_aside=frozenset({"CORE-04"}))
    for op, observed in history:
        assert tracker.advance(op, observed).mismatch is None, op
    get = L.Get(conn="app", handle="h1", options=C.MQGMO_NO_SYNCPOINT)
    (mq,) = {b.observation for b in tracker.expect(get)}
    assert mq.message.body == "dl 9"   # MQ: the higher priority first, with its header
    stripped = attrs.evolve(mq.message, body="dl 8", msg_id="M8", priority=0, format="", dlh=None)
    history.append((get, L.Observation(message=stripped)))
    mm = tracker.advance(get, L.Observation(message=stripped)).mismatch
    assert mm is not None and mm.index == len(history) - 1
    found = blame(history, mm, D, set_aside=frozenset({"CORE-04"}))
    assert found.confirmed and set(found.rules) == {"DLQ-22", "DLQ-11"}, (mm.rules, found)


def _locked_then_closed():
    """Handle a1 browses 'x' with MQGMO_LOCK and is closed; MQ releases the lock then (CORE-21)."""
    return SETUP + [(put("a", "a1", "x", 9), L.OK),
                    (L.Get(conn="a", handle="a1", options=C.MQGMO_BROWSE_FIRST | C.MQGMO_LOCK | C.MQGMO_NO_SYNCPOINT),
                     msg("x", priority=9)),
                    (L.Close(conn="a", handle="a1"), L.OK)]


def test_a_message_still_locked_after_its_handle_closed_blames_the_lock_not_the_put():
    """The browse showed the message available after its put; gone from another handle's get once the locking
    handle closed, it is the lock's release that failed (CORE-21), not the put (CORE-01).  Where the get returns a
    later message of lower priority instead, that history shows one of the lock kept and priority order broken."""
    get = L.Get(conn="b", handle="b1", options=C.MQGMO_NO_SYNCPOINT)
    mm, b = blamed(_locked_then_closed() + [(get, L.Observation.of(C.MQRC_NO_MSG_AVAILABLE))])
    assert mm.rules == ("CORE-21",) and b.rules == ("CORE-21",) and b.confirmed
    assert explained_by(_locked_then_closed() + [(get, L.Observation.of(C.MQRC_NO_MSG_AVAILABLE))], D,
                        frozenset({"CORE-21"}))
    history = _locked_then_closed() + [(put("b", "b1", "y", 0), L.OK), (get, msg("y"))]
    _, b = blamed(history)
    assert set(b.rules) == {"CORE-21", "CORE-04"} and b.each
    # a run that found CORE-21 broken already knows this departure: it is no new one of priority order
    assert explained_by(history, D, frozenset({"CORE-21"}))


def test_a_message_got_from_another_connections_uncommitted_put_and_backed_out_is_the_visibility_departure():
    """A system that shows a unit of work's put to other connections (CORE-02): a get under syncpoint takes it,
    a backout puts it back (BackoutCount 1), and the next get returns it again where MQ returns a committed one.
    Relaxed, CORE-02 lets the gets see the put; the backout then reinstates the message as any other (it had kept
    it with the other unit of work, its count unchanged, and the history looked like a commit that never deleted a
    get, CORE-14): a run that found CORE-02 broken knows this departure."""
    opts = C.MQGMO_SYNCPOINT
    history = SETUP + [(put("a", "a1", "theirs", options=C.MQPMO_SYNCPOINT), L.OK), (put("b", "b1", "mine"), L.OK),
                       (L.Get(conn="b", handle="b1", options=opts), msg("theirs")), (L.Backout(conn="b"), L.OK),
                       (L.Get(conn="b", handle="b1", options=C.MQGMO_NO_SYNCPOINT), msg("theirs", backout_count=1))]
    _, b = blamed(history)
    assert b.rules == ("CORE-02",) and b.confirmed
    assert explained_by(history, D, frozenset({"CORE-02"}))


def test_a_commit_that_keeps_its_gets_is_blamed_where_the_put_it_committed_rules_out_a_backout():
    """MQDISC commits: its put is on the other queue, and the message its get took is still on the first, where
    MQ deleted it.  A disconnect that backed out (CORE-30) would have taken the put away too: only a commit that
    left its get's message (CORE-14 relaxed) explains both depths.  With the put gone from the history, either
    explains it: one of them."""
    depth = lambda queue: L.InquireQueue(queue=queue, names=("CURDEPTH",))   # noqa: E731
    at = lambda n: L.Observation(attrs=(("CURDEPTH", n),))   # noqa: E731
    start = SETUP + [(L.DefineQueue(queue="Q2"), L.OK),
                         (L.Open(conn="a", handle="a2", queue="Q2", options=STD), L.OK),
                         (put("a", "a1", "x"), L.OK), (L.Get(conn="a", handle="a1", options=C.MQGMO_SYNCPOINT), msg("x"))]
    # ... and got again, as it was: a reading that follows the history on from the depth, not only explains it
    both = start + [(put("a", "a2", "y", options=C.MQPMO_SYNCPOINT), L.OK), (L.Disconnect(conn="a"), L.OK),
                    (depth("Q2"), at(1)), (depth("Q1"), at(1)), (depth("Q1"), at(1)),
                    (L.Get(conn="b", handle="b1", options=C.MQGMO_NO_SYNCPOINT), msg("x"))]
    _, b = blamed(both)
    assert b.rules == ("CORE-14",) and b.confirmed
    assert explained_by(both, D, frozenset({"CORE-14"})) and not explained_by(both, D, frozenset({"CORE-30"}))
    alone = start + [(L.Disconnect(conn="a"), L.OK), (depth("Q1"), at(1))]
    _, b = blamed(alone)
    assert set(b.rules) == {"CORE-14", "CORE-30"} and b.each


def test_a_priority_above_maxpriority_placed_above_it_is_blamed_on_the_cap():
    """A message put at priority 12 is placed at MaxPriority (9), after the 9s put before it (CORE-08).  Returned
    before an older message of 9, it is one of the cap not applied and first in, first out broken among the 9s
    (it had been failed under CORE-05 alone); a run that found the cap broken knows the next get's answer too."""
    warned = L.Observation.of(C.MQRC_PRIORITY_EXCEEDS_MAXIMUM)
    two = SETUP + [(put("a", "a1", "old", 9), L.OK), (put("a", "a1", "high", 12), warned)]
    get = (L.Get(conn="b", handle="b1"), msg("high", priority=12))
    mm, b = blamed(two + [get])
    assert "CORE-08" in mm.rules and b.rules == ("CORE-08", "CORE-05") and b.each
    assert explained_by(two + [get, (L.Get(conn="b", handle="b1"), msg("old", priority=9))], D, frozenset({"CORE-08"}))


def test_a_persistent_message_got_outside_the_unit_of_work_it_was_asked_into_is_one_of_the_backout_and_the_option():
    """MQGMO_SYNCPOINT_IF_PERSISTENT gets a persistent message under syncpoint (CORE-36); a system that took it
    outside shows that only by the backout after: the message is not back.  A backout that lost it (CORE-15)
    explains that as well: one of them, where the option's rule had been left out."""
    persistent = L.Put(conn="a", handle="a1", body="p", md=L.MessageDescriptor(persistence=C.MQPER_PERSISTENT),
                       options=C.MQPMO_NO_SYNCPOINT)
    history = SETUP + [(persistent, L.OK),
                       (L.Get(conn="b", handle="b1", options=C.MQGMO_SYNCPOINT_IF_PERSISTENT),
                        msg("p", persistence=C.MQPER_PERSISTENT)),
                       (L.Backout(conn="b"), L.OK),
                       (L.Get(conn="b", handle="b1", options=C.MQGMO_NO_SYNCPOINT),
                        L.Observation.of(C.MQRC_NO_MSG_AVAILABLE))]
    _, b = blamed(history)
    assert set(b.rules) == {"CORE-15", "CORE-36"} and b.each
    assert explained_by(history, D, frozenset({"CORE-36"}))


def test_a_msgid_generated_for_two_messages_is_core_11_and_nothing_else():
    """MQ generates a unique MsgId for a message put without one: a second message returned with the MsgId
    the system generated for the first breaks CORE-11 alone; the same message returned twice (browsed, then
    got) with its one MsgId is no departure."""
    ok = SETUP + [(put("a", "a1", "m1"), L.OK), (put("a", "a1", "m2"), L.OK),
                  (L.Get(conn="b", handle="b1", options=C.MQGMO_BROWSE_FIRST), msg("m1", msg_id="G1")),
                  (L.Get(conn="b", handle="b1"), msg("m1", msg_id="G1"))]
    assert all(c.mismatch is None for c in check_history(D, ok))
    history = ok + [(L.Get(conn="b", handle="b1"), msg("m2", msg_id="G1"))]
    mm, b = blamed(history)
    assert (mm.index, mm.fields, mm.rules) == (len(history) - 1, ("message.msg_id",), ("CORE-11",))
    assert b.rules == ("CORE-11",) and b.confirmed
    # a program's own MsgId may be any: two messages put with one are no departure
    md = L.MessageDescriptor(priority=0, msg_id="mine")
    own = SETUP + [(L.Put(conn="a", handle="a1", body=body, md=md, options=C.MQPMO_NO_SYNCPOINT), L.OK)
                   for body in ("m1", "m2")] + [(L.Get(conn="b", handle="b1"), msg(body, msg_id="mine"))
                                                for body in ("m1", "m2")]
    assert all(c.mismatch is None for c in check_history(D, own))


def test_a_run_that_keeps_going_past_a_msgid_generated_twice_sets_core_11_aside():
    history = SETUP + [(put("a", "a1", f"m{n}"), L.OK) for n in range(3)] + [
        (L.Get(conn="b", handle="b1"), msg(f"m{n}", msg_id="SAME")) for n in range(3)]
    tracker = ModelTracker(D, set_aside=frozenset({"CORE-11"}))
    assert all(tracker.advance(op, observed).mismatch is None for op, observed in history)
    assert explained_by(history, D, frozenset({"CORE-11"}))


def test_a_msgid_generated_for_a_message_a_run_stepped_past_is_noted_as_well():
    """A keep-going run steps past a message returned with a field MQ does not give it (here its priority): the
    MsgId the system generated for it is noted all the same, so a second message returned with it later is CORE-11,
    as it is where the first came back as MQ gives it."""
    history = SETUP + [(put("a", "a1", "m1"), L.OK), (put("a", "a1", "m2"), L.OK)]
    tracker = ModelTracker(D)
    assert all(tracker.advance(op, observed).mismatch is None for op, observed in history)
    odd = msg("m1", msg_id="G1", priority=7)
    get = L.Get(conn="b", handle="b1")
    assert tracker.advance(get, odd).mismatch is not None and tracker.step_past(get, odd)
    again = tracker.advance(get, msg("m2", msg_id="G1")).mismatch
    assert again is not None and again.rules == ("CORE-11",), again


def _trigmpri_queues(*names_trigmpri) -> list:
    """A process, an initiation queue, and application queues served by it (name, TriggerMsgPriority)."""
    ops = [L.DefineProcess(process="P", appl_id="/bin/app", appl_type=6, env_data="", user_data=""),
           L.DefineQueue(queue="INIT.Q")]
    for name, trigmpri in names_trigmpri:
        ops.append(L.DefineQueue(queue=name, attrs=(("INITQ", "INIT.Q"), ("PROCESS", "P"), ("TRIGGER", 1),
                                                    ("TRIGMPRI", trigmpri))))
    return ops + [L.Connect(conn="a")]


def test_a_queue_counting_every_message_writes_none_where_mq_counts_only_those_at_triggermsgpriority():
    """TRIGMPRI 4, a trigger monitor open: a system that ignores TriggerMsgPriority writes a trigger message for
    a first message of priority 0 (MQ none), and then, that message counted, none for one of priority 4 (MQ writes
    one: none before it at or above 4).  The depth of the initiation queue shows both (the first trigger message
    got in between).  TriggerMsgPriority relaxed (TRIG-02: every message counts) explains both; until 2026-12-07
    its relaxation only added the trigger messages MQ does not write, and did not explain the second depth (a run
    that had found TRIG-02 broken went on past the first and blamed a later step on another trigger rule)."""
    inq = L.InquireQueue(queue="INIT.Q", names=("CURDEPTH",))
    ops = _trigmpri_queues(("APP.Q", 4)) + [
        L.Open(conn="a", handle="a1", queue="APP.Q", options=C.MQOO_OUTPUT),
        L.Open(conn="a", handle="i", queue="INIT.Q", options=C.MQOO_INPUT_SHARED | C.MQOO_BROWSE),
        put("a", "a1", "low", 0), inq, L.Get(conn="a", handle="i", options=C.MQGMO_NO_SYNCPOINT),
        put("a", "a1", "high", 4), inq]
    history = _on_simulated(ops, "trigmpri-ignored")
    assert [obs.attrs for op, obs in history if op == inq] == [(("CURDEPTH", 1),), (("CURDEPTH", 0),)]
    _, b = blamed(history)
    assert b.rules == ("TRIG-02",) and b.confirmed, b
    assert follows(history, D, frozenset({"TRIG-02"})) is not None


def test_a_trigger_monitor_opening_writes_the_messages_of_every_queue_counting_every_message_in_its_order():
    """z/OS, a queue-sharing group: a shared queue and a private one with TriggerMsgPriority 4 served by one
    initiation queue, a message of priority 0 on each while no monitor has it open; then a monitor opens it
    (TRIG-23).  MQ triggers the shared queue only; a system ignoring TriggerMsgPriority triggers both, the private
    queue's first, and a browse shows it.  TRIG-02 relaxed is the event with TriggerMsgPriority 0, its messages in
    the order it writes them, as the put is the put with TriggerMsgPriority 0 (the test before); an event of an
    open that wrote the private queue's message after the shared queue's (as the relaxation did) left a run that had
    found TRIG-02 broken blaming the browse on the monitor's event (TRIG-23).  (Met first, the browse is
    still blamed on TRIG-23, the rule of the step's own field, TRIG-02 being a story by inference there: see
    docs/testing.md.)"""
    z = C.PLATFORM_ZOS
    ops = [L.DefineQueueSharingGroup(qmgrs=("QM2",)),
           L.DefineQueue(queue="SHARED.Q", attrs=(("INITQ", "INIT.Q"), ("PROCESS", "P"), ("TRIGGER", 1)))]
    ops += _trigmpri_queues(("APP.Q", 4))[:2] + _trigmpri_queues(("APP.Q", 4))[2:]
    ops += [L.Open(conn="a", handle="h1", queue="APP.Q", options=C.MQOO_OUTPUT | C.MQOO_INQUIRE),
            L.Open(conn="a", handle="h2", queue="SHARED.Q", options=C.MQOO_OUTPUT | C.MQOO_INQUIRE),
            L.Open(conn="a", handle="h3", queue="INIT.Q", options=C.MQOO_BROWSE | C.MQOO_INQUIRE),
            put("a", "h2", "s1", 0), put("a", "h1", "m1", 0),
            L.Open(conn="a", handle="h4", queue="INIT.Q", options=C.MQOO_INPUT_AS_Q_DEF),
            L.Get(conn="a", handle="h3", options=C.MQGMO_BROWSE_NEXT | C.MQGMO_NO_SYNCPOINT)]
    history = _on_simulated(ops, "trigmpri-ignored", z)
    assert history[-1][1].message.trigger.q_name == "APP.Q"
    assert follows(history, z, frozenset({"TRIG-02"})) is not None
    mm = check_history(z, history)[-1].mismatch
    assert blame(history, mm, z, set_aside=frozenset({"TRIG-02"}), known_by=frozenset({"TRIG-02"})).known


def test_a_commit_applied_in_part_on_a_unit_of_work_of_many_puts_is_the_commits_departure():
    """RabbitMQ (a default run's counterexample): a unit of work of four puts to one queue (its length limit
    reached, which the run had found broken as CORE-28: the uncommitted puts not counted) and one to another;
    the commit answers MQRC_BACKED_OUT, and the other queue's message is got: the broker refused the full
    queue's publishes at tx.commit and applied the rest.  That is a commit carried out in part (CORE-29, which
    the run had found broken), read queue by queue past four puts; it was blamed on CORE-03 (a backout that kept
    its puts), with CORE-02 and CORE-13, where every subset of five puts was too many to read."""
    failure = load_failure(ROOT / "tests" / "data" / "histories" / "rabbitmq-commit-in-part-five-puts.json")
    pairs = [(s.op, s.observed) for s in failure.steps]
    commit = next(s.op for s in failure.steps if isinstance(s.op, L.Commit))
    puts = [s.op for s in failure.steps if isinstance(s.op, L.Put) and s.op.conn == commit.conn]
    assert len(puts) > blame_mod.MAX_PART_PUTS and len({p.handle for p in puts}) == 2
    assert explained_by(pairs, failure.platform, frozenset({"CORE-28", "CORE-29"}), 0)
    assert not explained_by(pairs, failure.platform, frozenset({"CORE-28"}), 0)
    assert {"CORE-28", "CORE-29"} <= failure.known_before()
    assert with_alternatives(failure, 0, frozenset(failure.set_aside), known_by=failure.known_before()).mismatch.known


def test_a_report_missing_after_a_get_outside_syncpoint_is_never_that_the_discard_joined_a_unit_of_work():
    """RabbitMQ (a default run's counterexample): a message asking for an expiration report expires, a get with
    MQGMO_NO_SYNCPOINT walks past it, and its reply-to queue stays empty: RabbitMQ makes no reports.  One of
    EXP-08 (the report is made) or EXP-12 (made when the message is discarded); not EXP-13 (the discard and its
    report never part of the caller's unit of work), as a get outside syncpoint has none.  Under syncpoint the
    report could have been held in the unit of work, and EXP-13 is one of those that explain it."""
    failure = load_failure(ROOT / "tests" / "data" / "histories" / "rabbitmq-no-expiration-report.json")
    fresh = with_alternatives(failure, 3)
    assert fresh.blamed == ("EXP-08", "EXP-12") and fresh.one_of, fresh.mismatch
    get = next(i for i, s in enumerate(failure.steps) if isinstance(s.op, L.Get))
    assert failure.steps[get].op.options & C.MQGMO_NO_SYNCPOINT
    steps = list(failure.steps)
    steps[get] = attrs.evolve(steps[get], op=attrs.evolve(steps[get].op, options=C.MQGMO_SYNCPOINT))
    under = with_alternatives(attrs.evolve(failure, steps=tuple(steps)), 3)
    assert set(under.blamed) == {"EXP-08", "EXP-12", "EXP-13"} and under.one_of, under.mismatch


def test_a_full_queue_that_drops_its_oldest_message_breaks_the_full_queue_rule_not_a_backout():
    """A queue of MAXDEPTH 2 takes a third message and drops its first (a broker's length limit with drop-head
    overflow, RabbitMQ's default): a get then returns the second.  CORE-27 relaxed reads a full queue that keeps
    the message as either that keeps every message or that drops from its head, and explains it; order rules
    do not (the first message is gone, not passed over: a second get finds nothing more than MQ's two)."""
    opts = C.MQOO_INPUT_SHARED | C.MQOO_OUTPUT
    ops = [L.DefineQueue(queue="Q", attrs=(("MAXDEPTH", 2),)), L.Connect(conn="a"),
           L.Open(conn="a", handle="h", queue="Q", options=opts)]
    pairs = [(op, L.OK) for op in ops] + [
        (put("a", "h", "m1"), L.OK), (put("a", "h", "m2"), L.OK), (put("a", "h", "m3"), L.OK),
        (L.Get(conn="a", handle="h"), msg("m2")), (L.Get(conn="a", handle="h"), msg("m3")),
        (L.Get(conn="a", handle="h"), L.Observation.of(C.MQRC_NO_MSG_AVAILABLE))]
    assert explained_by(pairs, D, frozenset({"CORE-27"}))
    assert not explained_by(pairs, D, frozenset({"CORE-05"}))
    # one that took the third message and lost it (the newest dropped) is no such reading
    get = L.Get(conn="a", handle="h")
    newest = pairs[:6] + [(get, msg("m1")), (get, msg("m2")), (get, L.Observation.of(C.MQRC_NO_MSG_AVAILABLE))]
    assert not explained_by(newest, D, frozenset({"CORE-27"}))


def test_a_commit_past_a_drop_head_limit_is_what_the_defaults_run_found_broken_explains():
    """RabbitMQ with the broker's defaults (mapping=defaults, a 51-step counterexample): units of work put past
    a queue's MAXDEPTH (accepted, CORE-28's depth leaving their puts out), a commit enqueues them, and the broker,
    whose length limit drops from the head by default, drops the oldest message, one a backout had put back.
    It was blamed on CORE-15 (a backout that did not reinstate that message), the only single reading that left
    the depth one short.  The rules the run had found broken, with CORE-27 read as a queue dropping its head,
    explain it: no new departure."""
    failure = load_failure(ROOT / "tests" / "data" / "histories" / "rabbitmq-defaults-overflow-drops-head.json")
    pairs = [(s.op, s.observed) for s in failure.steps]
    known = frozenset(failure.found_broken)
    assert "CORE-15" not in known and "CORE-27" in known
    assert explained_by(pairs, failure.platform, known, 0)
    assert not explained_by(pairs, failure.platform, known - {"CORE-27"}, 0)
    assert with_alternatives(failure, 0, frozenset(failure.set_aside), known_by=failure.known_before()).mismatch.known


@pytest.mark.parametrize("browse", [C.MQGMO_BROWSE_FIRST, C.MQGMO_BROWSE_NEXT])
def test_a_trigger_message_below_trigmpri_browsed_is_the_priority_rules_not_one_of_a_get_finding_nothing(browse):
    """A queue manager whose triggering ignores TriggerMsgPriority (trigmpri-ignored) writes a trigger message
    for a put below it, and a browse of the initiation queue returns it where MQ's finds nothing.  Relaxing the
    rule of a get that finds nothing (CORE-13, or the browse's CORE-18 / CORE-19) lets a message come, not this
    one; TRIG-02 relaxed writes exactly the message returned.  TRIG-02 is blamed alone, the others mentioned
    (they were "one of" the three).  A message returned that no reading has anywhere still blames the rules of
    a get that finds nothing."""
    ops = [L.DefineProcess(process="P", appl_type=6, appl_id="/opt/app/server"), L.DefineQueue(queue="INIT.Q"),
           L.DefineQueue(queue="APP.Q", attrs=(("INITQ", "INIT.Q"), ("PROCESS", "P"), ("TRIGGER", C.MQTC_ON),
                                               ("TRIGMPRI", 4))),
           L.Connect(conn="a"), L.Open(conn="a", handle="app", queue="APP.Q", options=C.MQOO_OUTPUT),
           L.Open(conn="a", handle="monitor", queue="INIT.Q", options=C.MQOO_INPUT_SHARED),
           L.Open(conn="a", handle="init", queue="INIT.Q", options=C.MQOO_BROWSE),
           L.Put(conn="a", handle="app", body="m1", options=C.MQPMO_NO_SYNCPOINT),
           L.Get(conn="a", handle="init", options=browse | C.MQGMO_NO_SYNCPOINT)]
    pairs = _on_simulated(ops, "trigmpri-ignored")
    assert pairs[-1][1].message is not None and pairs[-1][1].message.format == C.MQFMT_TRIGGER, pairs[-1]
    mm = check_history(D, pairs)[-1].mismatch
    assert mm is not None and mm.index == len(pairs) - 1 and {"TRIG-02", "CORE-13"} <= set(mm.rules), mm
    b = blame(pairs, mm, D)
    assert b.rules == ("TRIG-02",) and not b.each and "CORE-13" in b.mentioned, b
    # a message returned from an empty queue, put nowhere: no reading says where it came from
    plain = [L.DefineQueue(queue="Q"), L.Connect(conn="a"),
             L.Open(conn="a", handle="h", queue="Q", options=C.MQOO_INPUT_SHARED | C.MQOO_OUTPUT | C.MQOO_BROWSE),
             L.Put(conn="a", handle="h", body="m1", options=C.MQPMO_NO_SYNCPOINT),
             L.Get(conn="a", handle="h", options=browse | C.MQGMO_NO_SYNCPOINT)]
    ghost = [p for i, p in enumerate(_on_simulated(plain, "")) if i != 3]
    mm = check_history(D, ghost)[-1].mismatch
    b = blame(ghost, mm, D)
    assert "CORE-13" in b.rules and b.each, b


def test_three_fields_each_decided_by_its_own_rule_blame_the_three_together():
    """A broker as it installs (RabbitMQ's defaults, published): a message put with the queue's default priority
    and persistence comes back with neither the queue's DEFPRTY nor its DEFPSIST, and no MsgId generated: three
    fields, each decided by its own rule (CORE-07, CORE-10, CORE-11).  No rule alone, nor any pair, explains the
    get; the three together do, and are blamed, confirmed (the checker's first alone, unconfirmed, was blamed
    before).  With the MsgId generated, two fields: the pair, as before."""
    ops = [L.DefineQueue(queue="Q", attrs=(("DEFPRTY", 4), ("DEFPSIST", C.MQPER_PERSISTENT))), L.Connect(conn="c"),
           L.Open(conn="c", handle="h", queue="Q", options=C.MQOO_INPUT_SHARED | C.MQOO_OUTPUT),
           L.Put(conn="c", handle="h", body="m1", options=C.MQPMO_NO_SYNCPOINT),
           L.Get(conn="c", handle="h", options=C.MQGMO_NO_SYNCPOINT)]
    pairs = _on_simulated(ops, "")
    got = pairs[-1][1]
    for msg_id, rules in (("", {"CORE-07", "CORE-10", "CORE-11"}), (got.message.msg_id, {"CORE-07", "CORE-10"})):
        message = attrs.evolve(got.message, priority=0, persistence=C.MQPER_NOT_PERSISTENT, msg_id=msg_id)
        shown = pairs[:-1] + [(pairs[-1][0], attrs.evolve(got, message=message))]
        mm = check_history(D, shown)[-1].mismatch
        assert mm is not None and mm.index == len(shown) - 1, mm
        b = blame(shown, mm, D)
        assert b.confirmed and set(b.rules) == rules and not b.each, (msg_id, b)
