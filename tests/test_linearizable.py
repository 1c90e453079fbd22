"""The checker of concurrent histories (conformance.checker.linearizable), on histories whose answer is known."""

from __future__ import annotations

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conformance.checker.linearizable import INDETERMINATE, LINEARIZABLE, NOT_LINEARIZABLE, Event, check
from reference_model import language as L
from reference_model import model
from reference_model import mqconst as C
from tests.test_checker import SETUP, msg, put

D = C.PLATFORM_DISTRIBUTED
NONE = L.Observation.of(C.MQRC_NO_MSG_AVAILABLE)


def get(conn):
    return L.Get(conn=conn, handle=f"{conn}1")


def ev(client, op, observed, invoked, returned):
    return Event(client=client, op=op, observed=observed, invoked=invoked, returned=returned)


def test_two_overlapping_gets_of_one_message_cannot_both_have_it():
    """One message, two servers getting at once, both given it: no order of the two gets allows that."""
    events = [ev("a", put("a", "a1", "m1"), L.OK, 0, 1),
              ev("a", get("a"), msg("m1"), 2, 5), ev("b", get("b"), msg("m1"), 3, 6)]
    result = check(D, SETUP, events)
    assert result.verdict == NOT_LINEARIZABLE
    assert len(result.order) == 2 and result.order[0] == 0 and result.at in (1, 2)
    assert result.mismatch is not None and result.rules
    # one of them given nothing is what MQ allows (either may be first)
    for other in (1, 2):
        fixed = [attrs.evolve(e, observed=NONE) if n == other else e for n, e in enumerate(events)]
        assert check(D, SETUP, fixed).verdict == LINEARIZABLE


def test_a_get_overlapping_a_put_may_see_its_message_but_not_before_the_put_began():
    overlapping = [ev("a", put("a", "a1", "m1"), L.OK, 1, 4), ev("b", get("b"), msg("m1"), 2, 3)]
    result = check(D, SETUP, overlapping)
    assert result.verdict == LINEARIZABLE and result.order == (0, 1)
    earlier = [ev("a", put("a", "a1", "m1"), L.OK, 5, 6), ev("b", get("b"), msg("m1"), 2, 3)]
    assert check(D, SETUP, earlier).verdict == NOT_LINEARIZABLE
    # and the overlapping get may equally have come first and found nothing
    assert check(D, SETUP, [overlapping[0], attrs.evolve(overlapping[1], observed=NONE)]).verdict == LINEARIZABLE


def test_one_clients_puts_keep_their_order_for_a_concurrent_getter_on_a_fifo_queue():
    puts = [ev("a", put("a", "a1", "m1"), L.OK, 0, 1), ev("a", put("a", "a1", "m2"), L.OK, 2, 3)]
    in_order = puts + [ev("b", get("b"), msg("m1"), 0.5, 3.5), ev("b", get("b"), msg("m2"), 4, 5)]
    assert check(D, SETUP, in_order).verdict == LINEARIZABLE
    swapped = puts + [ev("b", get("b"), msg("m2"), 0.5, 3.5), ev("b", get("b"), msg("m1"), 4, 5)]
    result = check(D, SETUP, swapped)
    assert result.verdict == NOT_LINEARIZABLE and "CORE-05" in result.rules


def test_an_event_of_unknown_effect_may_have_happened_or_not():
    lost = ev("a", put("a", "a1", "m1"), None, 0, None)
    assert check(D, SETUP, [lost, ev("b", get("b"), msg("m1"), 2, 3)]).verdict == LINEARIZABLE
    assert check(D, SETUP, [lost, ev("b", get("b"), NONE, 2, 3)]).verdict == LINEARIZABLE
    assert check(D, SETUP, [lost, ev("b", get("b"), msg("m9"), 2, 3)]).verdict == NOT_LINEARIZABLE
    # a sequential check after the clients: the depth says whether it happened
    depth = L.InquireQueue(queue="Q1", names=("CURDEPTH",))
    for n in (0, 1):
        after = [(depth, L.Observation(attrs=(("CURDEPTH", n),)))]
        assert check(D, SETUP, [lost], after=after).verdict == LINEARIZABLE
    result = check(D, SETUP, [lost], after=[(depth, L.Observation(attrs=(("CURDEPTH", 2),)))])
    assert result.verdict == NOT_LINEARIZABLE and result.at == "after"


def _setup(kind: str, messages: int = 0):
    """A concurrent case's set-up (conformance.runner.concurrent) with the answers MQ gives it."""
    from conformance.checker.sequential import ModelTracker
    from conformance.runner.concurrent import setup_ops

    tracker, out = ModelTracker(D), []
    for op in setup_ops(["a", "b"], messages, kind):
        assert tracker.advance(op, L.OK).mismatch is None, op
        out.append((op, L.OK))
    return out


def test_two_overlapping_exclusive_opens_cannot_both_succeed_but_one_after_the_others_close_can():
    setup = _setup("exclusive")
    in_use = L.Observation.of(C.MQRC_OBJECT_IN_USE)

    def open_(c):
        return L.Open(conn=c, handle=f"{c}2", queue="Q1", options=C.MQOO_INPUT_EXCLUSIVE)

    both = [ev("a", open_("a"), L.OK, 0, 3), ev("b", open_("b"), L.OK, 1, 4)]
    result = check(D, setup, both)
    assert result.verdict == NOT_LINEARIZABLE and result.rules == ("CORE-23",)
    assert check(D, setup, [both[0], attrs.evolve(both[1], observed=in_use)]).verdict == LINEARIZABLE
    # once a's handle is closed, b's open may succeed
    closed = [both[0], ev("a", L.Close(conn="a", handle="a2"), L.OK, 4, 5), attrs.evolve(both[1], invoked=6, returned=7)]
    assert check(D, setup, closed).verdict == LINEARIZABLE


def test_a_message_browsed_with_lock_is_not_also_got_by_an_overlapping_get():
    setup = _setup("queue", messages=1)
    browse = L.Get(conn="a", handle="a1", options=C.MQGMO_BROWSE_FIRST | C.MQGMO_LOCK | C.MQGMO_NO_SYNCPOINT)
    taken = L.Get(conn="b", handle="b1", options=C.MQGMO_NO_SYNCPOINT)
    both = [ev("a", browse, msg("s0"), 0, 3), ev("b", taken, msg("s0"), 1, 4)]
    result = check(D, setup, both)
    assert result.verdict == NOT_LINEARIZABLE and set(result.rules) & {"CORE-21", "CORE-16"}, result.rules
    for n in (0, 1):   # either may have come first, the other then finding nothing
        assert check(D, setup, [attrs.evolve(e, observed=NONE) if i == n else e
                                for i, e in enumerate(both)]).verdict == LINEARIZABLE


def test_two_puts_to_an_empty_first_triggered_queue_give_one_trigger_message():
    from conformance.runner.concurrent import after_ops

    setup = _setup("trigger")
    puts = [ev(c, put(c, f"{c}1", f"{c}0"), L.OK, n, n + 3) for n, c in enumerate("ab")]
    after = after_ops("trigger")

    def depths(q1: int, initq: int):
        return [(after[0], L.Observation(attrs=(("CURDEPTH", q1),))), (after[1], L.Observation(attrs=(("CURDEPTH", initq),)))]

    assert check(D, setup, puts, after=depths(2, 1)).verdict == LINEARIZABLE
    result = check(D, setup, puts, after=depths(2, 2))
    assert result.verdict == NOT_LINEARIZABLE and result.at == "after"
    assert set(result.rules) & {"TRIG-03", "TRIG-16"}, result.rules
    assert check(D, setup, puts, after=depths(2, 0)).verdict == NOT_LINEARIZABLE


def test_a_departure_in_the_sequential_setup_is_named_there():
    setup = SETUP + [(get("a"), msg("ghost"))]
    result = check(D, setup, [])
    assert result.verdict == NOT_LINEARIZABLE and result.at == "setup" and result.order == ()


def test_a_search_past_its_bound_is_indeterminate_never_linearizable():
    events = [ev("a" if n % 2 else "b", put("a" if n % 2 else "b", "a1" if n % 2 else "b1", f"m{n}"), L.OK, 0, 10)
              for n in range(5)]
    events.append(ev("a", get("a"), msg("never-put"), 11, 12))
    assert check(D, SETUP, events, bound=20).verdict == INDETERMINATE
    assert check(D, SETUP, events).verdict == NOT_LINEARIZABLE


def test_an_event_is_well_formed():
    for bad in (dict(observed=None, returned=1.0), dict(observed=L.OK, returned=None),
                dict(observed=L.OK, returned=0.5)):
        try:
            Event(client="a", op=get("a"), invoked=1.0, **bad)
        except ValueError:
            continue
        raise AssertionError(f"accepted {bad}")


# Generated histories: a sequential run of the model, its operations given overlapping intervals that keep the
# order they ran in possible, then shuffled.  Every one is linearizable; with one get's message replaced by one
# never put, none is.
OPS = st.lists(st.tuples(st.sampled_from("ab"), st.sampled_from(("put", "get", "get"))), min_size=2, max_size=8)


def _sequential(ops) -> list[tuple[str, L.Op, L.Observation]]:
    state = model.initial_state(D)
    for op, _ in SETUP:
        state = model.step(state, op)[0].state
    out = []
    for n, (client, kind) in enumerate(ops):
        op = put(client, f"{client}1", f"m{n}") if kind == "put" else get(client)
        branch = model.step(state, op)[0]
        observed = branch.observation
        if observed.message is not None and observed.message.msg_id is None:   # the queue manager's own MsgId
            observed = attrs.evolve(observed, message=attrs.evolve(observed.message, msg_id=f"ID.{observed.message.body}"))
        out.append((client, op, observed))
        state = branch.state
    return out


@settings(max_examples=60, deadline=None)
@given(ops=OPS, overlaps=st.lists(st.floats(min_value=0.0, max_value=3.0), min_size=8, max_size=8),
       order=st.randoms(use_true_random=False))
def test_generated_histories_are_linearizable_and_a_message_never_put_is_not(ops, overlaps, order):
    steps = _sequential(ops)
    # each client's own calls one after another; across clients, intervals overlap by up to three steps
    events, ends, last = [], {}, -1.0
    for n, (client, op, observed) in enumerate(steps):
        # invoked in the order they ran (so that order keeps real time), after the client's previous call
        last = invoked = max(float(n), ends.get(client, -1.0) + 0.01, last + 0.01)
        ends[client] = invoked + 0.5 + overlaps[n]
        events.append(ev(client, op, observed, invoked, ends[client]))
    shuffled = list(events)
    order.shuffle(shuffled)
    assert check(D, SETUP, shuffled).verdict == LINEARIZABLE
    got = [n for n, e in enumerate(shuffled) if e.observed.message is not None]
    if got:
        n = got[0]
        forged = attrs.evolve(shuffled[n], observed=msg("never-put"))
        result = check(D, SETUP, shuffled[:n] + [forged] + shuffled[n + 1:])
        assert result.verdict == NOT_LINEARIZABLE and result.mismatch is not None


def test_a_departure_from_rules_set_aside_no_longer_rules_an_order_out_but_any_other_does():
    """A run that keeps going after a race judges later cases with its rules set aside: a put under syncpoint not
    counted in CURDEPTH (CORE-28) then passes, stepped past as a sequential keep-going run steps past it; a message
    never put still fails."""
    setup = SETUP
    events = [ev("a", put("a", "a1", "m1", options=C.MQPMO_SYNCPOINT), L.OK, 0, 1)]
    depth = L.InquireQueue(queue="Q1", names=("CURDEPTH",))
    after = [(depth, L.Observation(attrs=(("CURDEPTH", 0),)))]
    assert check(D, setup, events, after=after).rules == ("CORE-28",)
    assert check(D, setup, events, after=after, set_aside=frozenset({"CORE-28"})).verdict == LINEARIZABLE
    ghost = events + [ev("b", get("b"), msg("ghost"), 2, 3)]
    assert check(D, setup, ghost, after=after, set_aside=frozenset({"CORE-28"})).verdict == NOT_LINEARIZABLE


def _recorded_depth_race():
    import json
    from pathlib import Path

    from conformance.records.races import RaceRecord

    return RaceRecord.from_json(json.loads(
        (Path(__file__).parent / "data" / "races" / "depth-race-one-of-two.json").read_text()))


def test_a_race_each_of_two_rules_explains_is_one_of_them_in_the_verdicts_and_the_race_file(tmp_path):
    """A recorded race (a CURDEPTH kept outside the queue's lock, two overlapping gets), judged by its count alone
    (the check after the clients cut to the depth inquiry, as a case of opens or triggers checks, and no client's get
    finding the queue empty: nothing saw what was left on it): its longest order's history passes with CORE-16
    relaxed alone, and with CORE-21 relaxed alone.  The race shows that one of
    them is broken, not which: each is *one of* in the run's verdicts, never *fail*, as for a sequential history of
    that kind; the race file keeps it, and its text says so."""
    from conformance.records.races import RaceRecord, race_record, render_race
    from conformance.records.results import FAIL, ONE_OF, RunRecord

    recorded = _recorded_depth_race()
    recorded = attrs.evolve(recorded, after=recorded.after[:1], events=tuple(
        e for e in recorded.events if e.observed.rc != C.MQRC_NO_MSG_AVAILABLE))
    result = check(recorded.platform, recorded.setup, recorded.events, recorded.after)
    assert result.verdict == NOT_LINEARIZABLE
    assert set(result.rules) == {"CORE-16", "CORE-21"} and result.one_of and result.confirmed, result
    race = race_record(adapter="simulated", adapter_options={}, platform=D, seed=recorded.seed, index=0,
                       setup=recorded.setup, events=recorded.events, after=recorded.after, result=result)
    assert race.one_of and RaceRecord.from_json(race.to_json()) == race
    assert "one of CORE-16 / CORE-21" in render_race(race) or "one of CORE-21 / CORE-16" in render_race(race)
    record = RunRecord(adapter="simulated", describe={}, capabilities={"areas": ["core"], "platforms": [D],
                                                                       "operations": []},
                       areas=["core"], seed=recorded.seed, examples=1)
    record.add_race(race)
    verdicts = {row["rule"]: row["verdict"] for row in record.rule_rows()}
    assert (verdicts["CORE-16"], verdicts["CORE-21"]) == (ONE_OF, ONE_OF)
    # the same race counted as breaking both (what every race was counted as before) fails both
    both = RunRecord(adapter="simulated", describe={}, capabilities=record.capabilities, areas=["core"],
                     seed=recorded.seed, examples=1)
    both.add_race(attrs.evolve(race, one_of=False))
    assert {row["rule"]: row["verdict"] for row in both.rule_rows()}["CORE-16"] == FAIL


def test_a_race_whose_drain_bears_out_every_message_but_not_the_count_fails_curdepth_alone():
    """The same recorded race with the drain after the clients: every order breaks at a CURDEPTH one too high, and
    the longest order alone reads it as a got message still counted (CORE-16) or still locked (CORE-21); but the
    drain found the queue empty, and with the CURDEPTH answers left unjudged some order passes, the drain included.
    Only the count departs: CORE-28 (CurrentQDepth), confirmed, never the stories the drain refutes.  Where the
    drain shows a message the depth missed, or one it counted is really there, the count is not alone."""
    recorded = _recorded_depth_race()
    result = check(recorded.platform, recorded.setup, recorded.events, recorded.after)
    assert result.verdict == NOT_LINEARIZABLE
    assert result.rules == ("CORE-28",) and result.confirmed and not result.one_of, result
    # a drain that found a message the count says is still there (one a client got): the count is right, a get
    # did not remove it, and the count is not blamed
    kept = msg("s1")
    gets = [n for n, (op, _) in enumerate(recorded.after) if isinstance(op, L.Get)]
    seen = [(op, kept if n == gets[0] else observed) for n, (op, observed) in enumerate(recorded.after)]
    again = check(recorded.platform, recorded.setup, recorded.events, seen)
    assert again.verdict == NOT_LINEARIZABLE and "CORE-28" not in again.rules, again


def test_a_client_get_finding_the_queue_empty_after_every_other_call_sees_what_the_count_missed():
    """The recorded race with no drain after the clients, but a client's get finding the queue empty when every
    other client's call had returned: the queue was seen then, not only counted, and the count alone departs
    (CORE-28).  The same get overlapping another client's call sees nothing certain: the longest order's reading
    stands (one of CORE-16 / CORE-21)."""
    recorded = _recorded_depth_race()
    cut = attrs.evolve(recorded, after=recorded.after[:1])
    result = check(cut.platform, cut.setup, cut.events, cut.after)
    assert result.rules == ("CORE-28",) and result.confirmed, result
    # every empty get stretched back to overlap the last other call (c's get under the cursor)
    last_other = max(e.returned for e in cut.events if e.client != "a")
    overlapping = tuple(attrs.evolve(e, invoked=min(e.invoked, last_other - 1e-6))
                        if e.observed.rc == C.MQRC_NO_MSG_AVAILABLE else e for e in cut.events)
    again = check(cut.platform, cut.setup, overlapping, cut.after)
    assert set(again.rules) == {"CORE-16", "CORE-21"} and again.one_of, again


def _part_visible(drained: tuple[str, ...], commit_ends: float = 10.0):
    """Two puts under syncpoint by a; its commit runs from 0.5 to ``commit_ends``; meanwhile b gets m1 and then
    finds nothing; the drain after finds ``drained``."""
    sync = C.MQPMO_SYNCPOINT
    setup = SETUP + [(put("a", "a1", "m1", options=sync), L.OK), (put("a", "a1", "m2", options=sync), L.OK)]
    events = [ev("a", L.Commit(conn="a"), L.OK, 0.5, commit_ends),
              ev("b", get("b"), msg("m1"), 1, 2), ev("b", get("b"), NONE, 3, 4)]
    after = [(get("b"), msg(body)) for body in drained] + [(get("b"), NONE)]
    return setup, events, after


def test_a_commit_that_makes_its_puts_available_one_at_a_time_while_it_runs_fails_the_commit_rule():
    """A getter sees one of a unit of work's two puts while the commit runs, then nothing, and the drain after
    finds the other: no order of the commit and the gets allows that (before both gets, the second finds m2; after
    them, the first cannot have m1).  With a commit read as making its puts available in parts while it runs, the
    whole history passes: the race breaks CORE-29 (a commit makes its unit of work's puts available, all at once),
    confirmed by that search, whatever the longest order alone was put down to."""
    setup, events, after = _part_visible(("m2",))
    assert check(D, setup, events, after, split_commits=True).verdict == LINEARIZABLE
    result = check(D, setup, events, after)
    assert result.verdict == NOT_LINEARIZABLE
    assert result.rules == ("CORE-29",) and result.confirmed, result


@pytest.mark.parametrize("recorded,alone", [("commit-in-parts-read-as-a-lock.json", "CORE-21"),
                                             ("commit-in-parts-read-as-a-held-get.json", "CORE-14")])
def test_recorded_races_of_a_commit_not_atomic_fail_the_commit_rule_not_the_story_of_their_longest_order(
        recorded, alone):
    """Two races recorded on the simulated queue manager with commit-not-atomic (seeds 1 and 3): a getter found
    nothing while a commit was making its puts available one by one.  The longest order alone is put down to
    another rule (a browse lock that outlived its unlock, CORE-21; a get under syncpoint still holding its message,
    CORE-14), which the drain after it does not bear out; the search with commits read in parts explains the whole
    history: CORE-29, confirmed."""
    import json
    from pathlib import Path

    import conformance.checker.linearizable as lin
    from conformance.records.races import RaceRecord

    race = RaceRecord.from_json(json.loads((Path(__file__).parent / "data" / "races" / recorded).read_text()))
    result = check(race.platform, race.setup, race.events, race.after)
    assert result.verdict == NOT_LINEARIZABLE and result.rules == ("CORE-29",) and result.confirmed, result
    # the same race judged by its longest order alone: the other rule
    prefix = lin._blamed(race.platform, race.setup, race.events, race.after,
                         {"order": result.order, "mismatch": result.mismatch, "at": result.at}, 0)
    assert prefix is not None and prefix.rules == (alone,), prefix


def test_a_commit_read_in_parts_explains_nothing_the_drain_refutes_nor_a_commit_that_ran_alone():
    """The same race with m2 never seen again (lost, not late): no commit in parts explains it.  A commit that returned before the gets began is whole by the time they run: read in
    parts or not, no order explains the same answers."""
    from conformance.checker.linearizable import _commit_overlapped

    setup, events, after = _part_visible(())
    assert check(D, setup, events, after, split_commits=True).verdict == NOT_LINEARIZABLE
    setup, events, after = _part_visible(("m2",), commit_ends=0.9)
    assert not _commit_overlapped(events)
    assert check(D, setup, events, after, split_commits=True).verdict == NOT_LINEARIZABLE


def test_two_overlapping_calls_each_order_of_which_breaks_another_rule_are_one_of_them():
    """A browse with LOCK and another connection's get overlap, and both return the one message.  Either order
    places one call and breaks at the other: the lock first, the get returned a message locked by another handle
    (CORE-21); the get first, the browse returned a message already got (CORE-16).  Nothing tells which came first:
    the race breaks one of CORE-16 / CORE-21, and each is *one of*, not the reading of whichever order the search
    tried first."""
    import conformance.checker.linearizable as lin

    setup = SETUP + [(put("a", "a1", "s0"), L.OK)]
    lock = L.Get(conn="a", handle="a1", options=C.MQGMO_NO_SYNCPOINT | C.MQGMO_BROWSE_FIRST | C.MQGMO_LOCK)
    events = [ev("a", lock, msg("s0"), 0, 5), ev("b", get("b"), msg("s0"), 1, 4)]
    result = check(D, setup, events)
    assert result.verdict == NOT_LINEARIZABLE
    assert set(result.rules) == {"CORE-16", "CORE-21"} and result.one_of and result.confirmed, result
    # the longest order alone (the get first, as it returned first) reads it as the got message still there
    first = lin._blamed(D, setup, events, (), {"order": result.order, "mismatch": result.mismatch,
                                              "at": result.at}, 0)
    assert first is not None and len(first.rules) == 1, first
    # two calls that do not overlap have one order: its reading stands
    apart = [ev("a", lock, msg("s0"), 0, 1), ev("b", get("b"), msg("s0"), 2, 3)]
    assert check(D, setup, apart).rules == ("CORE-21",)
