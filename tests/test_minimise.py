"""Counterexamples are minimal: delta debugging over the recorded history, 1-minimal, names renumbered."""

import json

import attrs

import pytest

from adapters.registry import create_adapter
from adapters.simulated.faults import FAULTS
from conformance.runner.engine import run_area
from conformance.records.history import with_alternatives
from conformance.runner.minimise import SELECTION_RULES, _Search, minimise
from conformance.records.results import RunRecord
from reference_model import language as L
from reference_model import mqconst as C
from tests.clikit import run_cli

#: Seeds whose short run (100 distributed cases) finds the fault where seed 7's does not.
SHORT_RUN_SEEDS: dict[str, int] = {
    # Seed 7 finds the tries counted per rule with two messages tried once each and both given up at the next
    # scan: not retrying a failed action at all (DLQ-03) explains that history as well as a count shared between
    # the messages (DLQ-02), and the history cannot say which.  Seed 2 finds it where only the shared count does.
    "dlq-retry-count-per-rule": 2,
}

#: A spread of faults over every area; each found with seed 7 (or its SHORT_RUN_SEEDS) on the distributed platform.
SAMPLE = ["priority-ignored", "backout-count-not-incremented", "browse-next-skips", "backout-resets-expiry",
          "depth-keeps-trigger-on", "clwlprty-ignored", "dlq-no-dlh-processed", "disconnect-backs-out"]


def shrunk_failure(fault, seed=7, examples=100):
    spec = FAULTS[fault]
    adapter = create_adapter("simulated", {"faults": fault, "platform": "distributed"})
    caps = adapter.capabilities()
    record = RunRecord(adapter="simulated", describe={}, capabilities=caps.to_json(), areas=[spec.area],
                       seed=seed, examples=examples)
    run_area(adapter, spec.area, "distributed", examples, seed, {"faults": fault}, record,
             minimise_histories=False)
    assert record.failures, fault
    return record.failures[0], adapter


@pytest.mark.parametrize("fault", SAMPLE)
def test_minimised_history_is_one_minimal_and_still_fails_the_same_way(fault):
    failure, adapter = shrunk_failure(fault, seed=SHORT_RUN_SEEDS.get(fault, 7))
    small = minimise(failure, adapter)
    assert len(small.steps) <= len(failure.steps) + 1
    if isinstance(small.mismatch.op, L.InquireQueue) and not isinstance(failure.mismatch.op, L.InquireQueue):
        # a depth witness: the departure shown earlier, by the queue's depth, blamed on fewer of its rules
        tolerance = adapter.capabilities().expiry_tolerance
        assert set(with_alternatives(small, tolerance).blamed) < set(with_alternatives(failure, tolerance).blamed)
    else:
        # the same rules, or fewer: a get that selects may become a plain get, no longer naming the selection's,
        # and a failing BROWSE_FIRST a destructive get, no longer naming the browse's
        assert small.rules and set(small.rules) - SELECTION_RULES <= set(failure.rules) - SELECTION_RULES
        assert small.mismatch.fields == failure.mismatch.fields
    search = _Search(small, adapter, budget=60)
    ops = [s.op for s in small.steps]
    assert search.replay(ops) is not None   # it reproduces
    for i in range(len(ops)):   # and no single operation can go
        assert search.replay(ops[:i] + ops[i + 1:]) is None, (fault, i, ops[i])
    # Handles and connections are renumbered in order of first appearance.
    firsts = list(dict.fromkeys(op.handle for op in ops if getattr(op, "handle", "")))
    assert firsts == [f"h{i + 1}" for i in range(len(firsts))]


def test_the_priority_fault_is_shown_in_six_operations_with_its_queue_attribute(tmp_path):
    code, out, _ = run_cli("run", "--adapter", "simulated", "--faults", "priority-ignored", "--area", "core",
                           "--seed", "1", "--keep-going", "0", "--adapter-opt", "platform=distributed",
                           "--results", tmp_path / "r")
    assert code == 1
    replay = json.loads(next((tmp_path / "r" / "failures").glob("core-*.json")).read_text())
    assert len(replay["steps"]) <= 6, len(replay["steps"])
    first = L.from_json(replay["steps"][0]["op"])
    assert isinstance(first, L.DefineQueue) and "MSGDLVSQ" in dict(first.attrs)
    assert "CORE-04" in replay["rules"]
    # The minimal history still replays as a failure.
    code, out, _ = run_cli("replay", next((tmp_path / "r" / "failures").glob("core-*.json")))
    assert code == 1 and "Still failing" in out


def test_a_failing_browse_first_becomes_a_get_when_that_breaks_fewer_rules():
    """Priorities ignored, seen first through BROWSE_FIRST: the browse's own rule (CORE-18) is named beside
    the order's (CORE-04); as a destructive get the same departure names the order alone, and the
    counterexample is that one.  A browse that breaks its own rule stays a browse (browse-next-skips)."""
    failure = next(f for f in _failures("priority-ignored") if "CORE-18" in f.rules)
    small = minimise(failure, create_adapter("simulated", {"faults": "priority-ignored", "platform": "distributed"}))
    assert small.rules == ("CORE-04",), small.rules
    assert not small.steps[-1].op.options & C.MQGMO_BROWSE_ANY
    skips = next(f for f in _failures("browse-next-skips") if "CORE-19" in f.rules)
    small = minimise(skips, create_adapter("simulated", {"faults": "browse-next-skips", "platform": "distributed"}))
    assert "CORE-19" in small.rules and small.steps[-1].op.options & C.MQGMO_BROWSE_NEXT


def _failures(fault):
    """The failures a few seeds of a short run find, unminimised."""
    for seed in range(8):
        adapter = create_adapter("simulated", {"faults": fault, "platform": "distributed"})
        record = RunRecord(adapter="simulated", describe={}, capabilities=adapter.capabilities().to_json(),
                           areas=["core"], seed=seed, examples=60)
        run_area(adapter, "core", "distributed", 60, seed, {"faults": fault}, record, minimise_histories=False)
        yield from record.failures


def test_no_minimise_keeps_what_hypothesis_shrank(tmp_path):
    args = ["run", "--adapter", "simulated", "--faults", "priority-ignored", "--area", "core", "--seed", "3",
            "--keep-going", "0", "--adapter-opt", "platform=distributed"]
    assert run_cli(*args, "--results", tmp_path / "a")[0] == 1
    assert run_cli(*args, "--no-minimise", "--results", tmp_path / "b")[0] == 1
    length = {d: len(json.loads(next((tmp_path / d / "failures").glob("*.json")).read_text())["steps"])
              for d in ("a", "b")}
    assert length["a"] < length["b"]


#: Faults for which seed 7 gives no clear case within these tests' 100 cases, with a seed that does.
#: (Seed 7 finds disconnect-backs-out where the backed-out put also changes which message a later
#: get returns, so the order's rules come first; it finds browse-next-skips with messages of
#: several priorities, where the order explains the skipped message as well.)
@pytest.mark.parametrize("fault", ["priority-ignored", "fifo-within-priority-broken", "uncommitted-put-visible",
                                   "backout-count-not-incremented", "backout-loses-get", "disconnect-backs-out",
                                   "browse-next-skips", "xmit-inner-not-zeroed", "expiry-zero-accepted",
                                   "no-trigger-at-close", "dlq-context-not-passed", "dlq-failure-not-backed-out",
                                   "dlq-rules-out-of-order", "dlq-retry-count-per-rule", "dlq-retry-ignored",
                                   "dlq-question-matches-trailing-blank", "dlq-table-change-applied",
                                   "lock-expired-returned"])
def test_the_rule_the_fault_breaks_is_named_first(fault):
    """Not a rule that only passed the message along (a browse returning what the order chose): the
    diagnosed failure (blame by counterfactual) fails the fault's rule first."""
    failure, adapter = shrunk_failure(fault, seed=SHORT_RUN_SEEDS.get(fault, 7))
    small = with_alternatives(minimise(failure, adapter), adapter.capabilities().expiry_tolerance)
    assert small.blamed[0] in FAULTS[fault].rules, (small.blamed, small.rules, FAULTS[fault].rules)


def failure_of(adapter, area, ops, platform="distributed"):
    """The departure ``ops`` show on ``adapter``, run as one case (the history must fail)."""
    from conformance.records.results import Coverage
    from conformance.runner.session import NonConformance, Session

    session = Session(adapter, area, {}, 0, coverage=Coverage(), platform=platform)
    session.start_case()
    with pytest.raises(NonConformance) as caught:
        for op in ops:
            session.execute(op)
    session.end_case()
    return caught.value.failure


def _browse_three(first: int) -> list:
    """Priorities 0, 9 and 4 put; a browse ``first`` (BROWSE_FIRST or a get) and a BROWSE_NEXT."""
    ops = [L.DefineQueue(queue="Q"), L.Connect(conn="c"),
           L.Open(conn="c", handle="h", queue="Q", options=C.MQOO_OUTPUT | C.MQOO_BROWSE | C.MQOO_INPUT_SHARED)]
    ops += [L.Put(conn="c", handle="h", body=f"p{p}", options=C.MQPMO_NO_SYNCPOINT, md=L.MessageDescriptor(priority=p))
            for p in (0, 9, 4)]
    return ops + [L.Get(conn="c", handle="h", options=first | C.MQGMO_NO_SYNCPOINT),
                  L.Get(conn="c", handle="h", options=C.MQGMO_BROWSE_NEXT | C.MQGMO_NO_SYNCPOINT)]


def test_a_browse_next_that_passes_a_message_over_names_the_cursor_rule_first():
    """p9 browsed first; BROWSE_NEXT returns p0 where MQ returns p4: the cursor skipped p4 (CORE-19),
    though p0 has another priority, which alone would make the order rule lead."""
    adapter = create_adapter("simulated", {"faults": "browse-next-skips", "platform": "distributed"})
    failure = failure_of(adapter, "core", _browse_three(C.MQGMO_BROWSE_FIRST))
    assert failure.mismatch.observed.message.body == "p0" and failure.rules[0] == "CORE-19", failure.rules
    # where the order is what went wrong, the order rule still leads
    adapter = create_adapter("simulated", {"faults": "priority-ignored", "platform": "distributed"})
    failure = failure_of(adapter, "core", _browse_three(C.MQGMO_BROWSE_FIRST))
    assert failure.mismatch.observed.message.body == "p0" and failure.rules[0] == "CORE-04", failure.rules


def test_connections_and_handles_that_one_could_do_are_merged():
    """Two connections and three handles where one of each does: MQCONNs, MQOPENs and MQCLOSEs go."""
    adapter = create_adapter("simulated", {"faults": "priority-ignored", "platform": "distributed"})
    q = "Q"
    ops = [L.DefineQueue(queue=q, attrs=(("MSGDLVSQ", C.MQMDS_PRIORITY),)),
           L.Connect(conn="putter"), L.Connect(conn="getter"),
           L.Open(conn="putter", handle="low", queue=q, options=C.MQOO_OUTPUT),
           L.Open(conn="putter", handle="high", queue=q, options=C.MQOO_OUTPUT),
           L.Open(conn="getter", handle="in", queue=q, options=C.MQOO_INPUT_SHARED),
           L.Put(conn="putter", handle="low", body="lo", options=C.MQPMO_NO_SYNCPOINT,
                 md=L.MessageDescriptor(priority=1)),
           L.Close(conn="putter", handle="low"),
           L.Put(conn="putter", handle="high", body="hi", options=C.MQPMO_NO_SYNCPOINT,
                 md=L.MessageDescriptor(priority=8)),
           L.Get(conn="getter", handle="in", options=C.MQGMO_NO_SYNCPOINT)]
    small = minimise(failure_of(adapter, "core", ops), adapter)
    kinds = [type(s.op).__name__ for s in small.steps]
    assert kinds.count("Connect") == 1 and kinds.count("Open") == 1 and "Close" not in kinds, kinds
    assert len(small.steps) == 6 and small.rules[0] == "CORE-04", (kinds, small.rules)


def test_clock_advances_are_merged():
    adapter = create_adapter("simulated", {"faults": "expired-message-returned", "platform": "distributed"})
    ops = [L.DefineQueue(queue="Q"), L.Connect(conn="a"),
           L.Open(conn="a", handle="h", queue="Q", options=C.MQOO_OUTPUT | C.MQOO_INPUT_SHARED),
           L.Put(conn="a", handle="h", body="old", options=C.MQPMO_NO_SYNCPOINT, md=L.MessageDescriptor(expiry=3)),
           L.AdvanceClock(tenths=2), L.Put(conn="a", handle="h", body="new", options=C.MQPMO_NO_SYNCPOINT),
           L.AdvanceClock(tenths=2), L.Get(conn="a", handle="h", options=C.MQGMO_NO_SYNCPOINT)]
    small = minimise(failure_of(adapter, "expiry", ops), adapter)
    clocks = [s.op for s in small.steps if isinstance(s.op, L.AdvanceClock)]
    assert len(clocks) == 1 and clocks[0].tenths >= 3, [s.op for s in small.steps]


class Ticking:
    """The simulated queue manager as if it ran on real time: each call takes a tenth of a second,
    so the session records a clock advance of its own before every call (as it does on a broker)."""

    name = "simulated"

    def __init__(self, fault: str) -> None:
        import attrs

        self.inner = create_adapter("simulated", {"faults": fault, "platform": "distributed"})
        self.caps = attrs.evolve(self.inner.capabilities(), realtime=True)
        self.calls = 0

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def capabilities(self):
        return self.caps

    def start_case(self, name: str, platform: str) -> None:
        self.calls = 0
        self.inner.start_case(name, platform)

    def execute(self, op):
        if not isinstance(op, L.AdvanceClock):
            self.calls += 1
        return self.inner.execute(op)

    def elapsed_tenths(self) -> int:
        return self.calls


def test_on_real_time_the_clock_advances_a_replay_records_do_not_pile_up():
    """Each replay records the time its calls took; a history built from one replay's record would carry
    those advances into the next replay, which adds its own.  The minimal history has the operations the
    failure needs, and no more advances than the time its own calls took."""
    failure, adapter = shrunk_failure("priority-ignored")
    plain = minimise(failure, adapter)
    ticking = Ticking("priority-ignored")
    small = minimise(failure, ticking, replays=400)   # enough to reach the same minimum as ``plain``
    ops = [s.op for s in small.steps if not isinstance(s.op, L.AdvanceClock)]
    advances = [s.op for s in small.steps if isinstance(s.op, L.AdvanceClock)]
    assert set(small.rules) == set(plain.rules)
    assert len(ops) == len([s for s in plain.steps if not isinstance(s.op, L.AdvanceClock)])
    assert sum(a.tenths for a in advances) <= len(ops), small.steps


def test_on_real_time_a_few_replays_take_away_a_whole_case_on_other_queues():
    """The first candidate keeps only the operations on the failing call's queue (and those on none):
    one replay removes the traffic on other queues, which on a broker a count of replays could not."""
    ticking = Ticking("priority-ignored")
    noise = []
    for i in range(12):
        noise += [L.Put(conn="a", handle="other", body=f"n{i}", options=C.MQPMO_NO_SYNCPOINT),
                  L.Get(conn="a", handle="other", options=C.MQGMO_NO_SYNCPOINT)]
    ops = [L.DefineQueue(queue="OTHER"), L.DefineQueue(queue="Q", attrs=(("MSGDLVSQ", C.MQMDS_PRIORITY),)),
           L.Connect(conn="a"),
           L.Open(conn="a", handle="other", queue="OTHER", options=C.MQOO_OUTPUT | C.MQOO_INPUT_SHARED),
           L.Open(conn="a", handle="h", queue="Q", options=C.MQOO_OUTPUT | C.MQOO_INPUT_SHARED),
           *noise[:12],
           L.Put(conn="a", handle="h", body="lo", options=C.MQPMO_NO_SYNCPOINT, md=L.MessageDescriptor(priority=1)),
           *noise[12:],
           L.Put(conn="a", handle="h", body="hi", options=C.MQPMO_NO_SYNCPOINT, md=L.MessageDescriptor(priority=8)),
           L.Get(conn="a", handle="h", options=C.MQGMO_NO_SYNCPOINT)]
    failure = failure_of(ticking, "core", ops)
    small = minimise(failure, ticking, replays=3)
    used = [s.op for s in small.steps if not isinstance(s.op, L.AdvanceClock)]
    kinds = [type(op).__name__ for op in used]
    assert kinds == ["DefineQueue", "Connect", "Open", "Put", "Put", "Get"], used
    assert {op.queue for op in used if hasattr(op, "queue")} == {"Q"}, used
    assert set(small.rules) == set(failure.rules)


def _count_replays(monkeypatch) -> list:
    """The length of each history the minimiser replays, as it replays them."""
    import conformance.runner.minimise as M

    made: list = []
    real = M._Search.replay

    def counted(self, ops, **kw):
        made.append(len(ops))
        return real(self, ops, **kw)

    monkeypatch.setattr(M._Search, "replay", counted)
    return made


def test_on_real_time_minimising_is_bounded_by_a_count_of_replays(monkeypatch):
    """The same departure minimises to the same history whatever the broker's speed: the search stops
    after a count of replays (the confirming ones and a witness's apart), not at a time."""
    import conformance.runner.minimise as M

    failure, _ = shrunk_failure("priority-ignored")
    made = _count_replays(monkeypatch)
    first = minimise(failure, Ticking("priority-ignored"), replays=4)
    count = len(made)
    made.clear()
    second = minimise(failure, Ticking("priority-ignored"), replays=4)
    # the 4 replays asked for, the two that confirm the failure first and the one that confirms the result, and
    # those a witness is given on top (a departure shown by a depth or a browse put in beside it)
    assert count == len(made) <= 2 + 4 + M.WITNESS_PLACES + 1, made
    assert [s.op for s in first.steps] == [s.op for s in second.steps]


def test_a_departure_found_in_a_later_round_replays_past_the_rules_that_round_set_aside():
    """A keep-going round steps past departures from the rules it set aside, so its departure's history
    may hold one; the minimiser's replays step past them too, and the departure is reproduced."""
    from adapters.registry import create_adapter
    from conformance.runner.minimise import minimise
    from conformance.runner.session import NonConformance, Session
    from reference_model import language as L
    from reference_model import mqconst as C

    faulty = create_adapter("simulated", {"faults": "uncommitted-put-not-counted,q-full-ignored"})
    session = Session(faulty, "core", platform=C.PLATFORM_DISTRIBUTED, set_aside=frozenset({"CORE-28"}))
    session.start_case()
    ops = [L.DefineQueue(queue="Q", attrs={"MAXDEPTH": 1}), L.Connect(conn="a"),
           L.Open(conn="a", handle="h", queue="Q", options=C.MQOO_INPUT_SHARED | C.MQOO_OUTPUT),
           L.Put(conn="a", handle="h", body="m1", options=C.MQPMO_SYNCPOINT),
           L.InquireQueue(queue="Q", names=("CURDEPTH",)), L.Commit(conn="a"),
           L.Put(conn="a", handle="h", body="m2")]
    with pytest.raises(NonConformance) as raised:
        for op in ops:
            session.execute(op)
    failure = raised.value.failure
    assert "CORE-27" in failure.rules and isinstance(failure.steps[-1].op, L.Put)
    assert session.coverage.failed["CORE-28"]   # the inquiry's departure was met, and stepped past
    whole = [s.op for s in failure.steps]
    assert _Search(failure, faulty, 5.0).reduce(whole) is None   # a replay of it all stops at the inquiry
    # ... so minimising without the rules set aside keeps a part that leaves the inquiry out
    part = minimise(failure, faulty, budget=5.0)
    assert part.reproduced is True and not [s for s in part.steps if isinstance(s.op, L.InquireQueue)]
    again = minimise(failure, faulty, budget=5.0, set_aside=frozenset({"CORE-28"}))
    assert again.reproduced is True and set(again.rules) == set(failure.rules)


def test_on_real_time_a_long_history_is_given_replays_by_its_length(monkeypatch):
    """The count of replays on real time grows with the history given (ddmin's replays do): 100 for a short one,
    five for each step of a long one, fixed by the history alone; a minimisation without a count given spends
    that many at most (the confirming ones and a witness's apart)."""
    import conformance.runner.minimise as M

    failure, _ = shrunk_failure("priority-ignored")
    assert M.realtime_replays(failure) == max(M.REPLAYS_REALTIME, 5 * len(failure.steps))
    long = attrs.evolve(failure, steps=failure.steps * 30)
    assert M.realtime_replays(long) == 5 * len(long.steps) > M.REPLAYS_REALTIME
    made = _count_replays(monkeypatch)
    monkeypatch.setattr(M, "REPLAYS_REALTIME", 3)
    monkeypatch.setattr(M, "REPLAYS_PER_STEP_REALTIME", 0)
    minimise(failure, Ticking("priority-ignored"))
    assert len(made) <= 2 + 3 + M.WITNESS_PLACES + 1, made


def test_tables_and_messages_keep_only_what_the_departure_needs():
    """A wordy rules table (comments, control data, continuation, rules the message never reaches) and
    a message with every descriptor field set: the minimised table has the one rule and the keywords the
    departure needs, written plainly, and the message only the fields it needs; each that is left is
    needed (putting it back to its default, or leaving it out, loses the departure)."""
    from conformance.runner.minimise import _defaults
    from reference_model import dlq_table

    adapter = create_adapter("simulated", {"faults": "dlq-ignore-not-assumed", "platform": "distributed"})
    table = ("* the payroll rules\n"
             "retryint(10) WAIT(YES)\n"
             "DESTQ(B) USERID('alice') ACTION(DISCARD)\n"
             "REASON(MQRC_Q_FULL), DESTQ(B) +\n"
             "   ACTION(FWD) FWDQ(PARK) HEADER(NO)\n")
    md = L.MessageDescriptor(priority=7, persistence=C.MQPER_PERSISTENT, reply_to_q="B", msg_id="M1",
                             format=C.MQFMT_DEAD_LETTER_HEADER, msg_type=C.MQMT_REQUEST,
                             context=L.MessageContext(user_id="bob", put_appl_name="payroll",
                                                      put_appl_type=C.MQAT_UNIX))
    dlh = L.DeadLetterHeader(reason=C.MQRC_Q_FULL, dest_q="A", dest_qmgr="FAR.QM", format=C.MQFMT_STRING,
                             put_appl_name="payroll")
    ops = [L.DefineQueue(queue="DLQ"), L.AlterQueueManager(attrs={"DEADQ": "DLQ"}), L.Connect(conn="app"),
           L.StartDlqHandler(handler="H1", table=table),
           L.Put1(conn="app", queue="DLQ", body="dead", md=md, dlh=dlh,
                  options=C.MQPMO_NO_SYNCPOINT | C.MQPMO_SET_ALL_CONTEXT),
           L.RunDlqHandler(handler="H1")]
    failure = failure_of(adapter, "dlq", ops)
    small = minimise(failure, adapter)
    assert set(small.rules) == set(failure.rules) and small.mismatch.fields == failure.mismatch.fields
    final = [s.op for s in small.steps]
    start = next(op for op in final if isinstance(op, L.StartDlqHandler))
    entries = dlq_table.entries(start.table)
    assert start.table == dlq_table.spell(entries) and len(entries) == 1, start.table
    assert len(entries[0]) == 2 and entries[0][-1] == ("ACTION", "DISCARD", False), start.table
    put = next(op for op in final if isinstance(op, L.Put1))
    assert put.md.priority == C.MQPRI_PRIORITY_AS_Q_DEF and put.md.reply_to_q == "" and put.dlh.dest_qmgr == ""
    assert put.md.format == C.MQFMT_DEAD_LETTER_HEADER   # the header's format stays: it says what the data is
    search = _Search(small, adapter, budget=60)
    i = final.index(put)
    for part in ("md", "dlh"):
        for lighter in _defaults(getattr(put, part)):
            if part == "md" and lighter.format != put.md.format:
                continue
            assert search.replay(final[:i] + [attrs.evolve(put, **{part: lighter})] + final[i + 1:]) is None, lighter
    j = final.index(start)
    (rule,) = entries
    for k in range(len(rule) - 1):
        lighter = [rule[:k] + rule[k + 1:]]
        assert search.replay(final[:j] + [attrs.evolve(start, table=dlq_table.spell(lighter))] + final[j + 1:]) \
            is None, lighter


def test_a_table_is_written_again_plainly_with_the_same_rules():
    from reference_model import dlq_table

    text = ("* comment\n\nretryint(10) inputq(DLQ)\n"
            "FWDQM (&replyqm) HEADER(YES) FWDQ(&DESTQ) PUTAUT(DEF) ACTION(FWD) -\nRETRY(2)\n"
            "userid('al*'), ACTION(FWD) FWDQ(B) +\n   APPLNAME('it''s')\n")
    entries = dlq_table.entries(text)
    plain = dlq_table.spell(entries)
    assert plain.splitlines()[0] == "RETRYINT(10) INPUTQ(DLQ)" and "APPLNAME('it''s')" in plain
    assert dlq_table.entries(plain) == entries

    def rules(t):
        return [attrs.evolve(r, line=0) for r in dlq_table.parse(t)[0].rules]

    assert rules(plain) == rules(text) and dlq_table.parse(plain)[0].control == dlq_table.parse(text)[0].control
    assert dlq_table.entries("ACTION(FWD)") is None and dlq_table.entries("") is None


def test_a_get_that_selects_for_nothing_the_failure_needs_is_made_a_plain_get():
    """A departure from delivery order shown by a get that selects by MQCI_NONE: the minimised
    counterexample gets without MatchOptions, and names the order rule alone."""
    adapter = create_adapter("simulated", {"faults": "priority-ignored", "platform": "distributed"})
    ops = [L.DefineQueue(queue="Q", attrs=(("MSGDLVSQ", C.MQMDS_PRIORITY),)), L.Connect(conn="c1"),
           L.Open(conn="c1", handle="h1", queue="Q", options=C.MQOO_INPUT_SHARED | C.MQOO_OUTPUT),
           L.Put(conn="c1", handle="h1", body="low", md=L.MessageDescriptor(priority=0)),
           L.Put(conn="c1", handle="h1", body="high", md=L.MessageDescriptor(priority=5)),
           L.GetMatching(conn="c1", handle="h1", match_options=C.MQMO_MATCH_CORREL_ID, correl_id="")]
    failure = failure_of(adapter, "core", ops)
    assert failure.rules[0] == "CORE-04" and isinstance(failure.steps[-1].op, L.GetMatching)
    small = minimise(failure, adapter)
    assert type(small.steps[-1].op) is L.Get and "CORE-51" not in small.rules and small.rules[0] == "CORE-04"
    # where the selection is what fails, the get stays a selecting one
    adapter = create_adapter("simulated", {"faults": "match-correl-ignored", "platform": "distributed"})
    ops[3] = attrs.evolve(ops[3], md=L.MessageDescriptor(priority=0, correl_id="r1"))
    ops[5] = attrs.evolve(ops[5], correl_id="r1")
    small = minimise(failure_of(adapter, "core", ops), adapter)
    assert isinstance(small.steps[-1].op, L.GetMatching) and small.rules[0] == "CORE-51"


def test_a_put_under_syncpoint_becomes_a_plain_put_where_that_leaves_the_ending_out_of_doubt():
    """A queue filled by a committed put and a put the system accepts past MAXDEPTH: a commit that had backed
    out (CORE-29 relaxed) explains it as well as MAXDEPTH does, but only by inference (the commit answered as
    MQ's), so CORE-27 alone is blamed.  The counterexample makes the put plain all the
    same: with no unit of work, no reading of it is left in doubt."""
    from conformance.checker.sequential import check_history
    from conformance.records.history import Failure, Step

    opts = C.MQOO_INPUT_SHARED | C.MQOO_OUTPUT | C.MQOO_INQUIRE

    def put(body, options):
        return L.Put(conn="a", handle="h", body=body, md=L.MessageDescriptor(), options=options)

    history = [(L.DefineQueue(queue="Q", attrs=(("MAXDEPTH", 2),)), L.OK), (L.Connect(conn="a"), L.OK),
               (L.Open(conn="a", handle="h", queue="Q", options=opts), L.OK), (put("m1", C.MQPMO_NO_SYNCPOINT), L.OK),
               (put("m2", C.MQPMO_SYNCPOINT), L.OK), (L.Commit(conn="a"), L.OK), (put("m3", C.MQPMO_NO_SYNCPOINT), L.OK)]
    failure = Failure(area="core", adapter="simulated", platform="distributed", seed=1,
                      steps=tuple(Step(op=o, observed=b) for o, b in history),
                      mismatch=check_history("distributed", history)[-1].mismatch)
    diagnosed = with_alternatives(failure)
    assert diagnosed.blamed == ("CORE-27",)
    small = minimise(failure, create_adapter("simulated", {"faults": "q-full-ignored", "platform": "distributed"}))
    assert with_alternatives(small).blamed == ("CORE-27",)
    assert not any(isinstance(s.op, (L.Put, L.Commit)) and getattr(s.op, "options", 0) & C.MQPMO_SYNCPOINT
                   or isinstance(s.op, L.Commit) for s in small.steps)


@pytest.mark.parametrize("fault, platform, kept", [("backout-count-lost-at-restart", "distributed", "CORE-45"),
                                                    ("hardenbo-ignored", "zos", "SYNC-19")])
def test_a_count_lost_at_a_restart_is_shown_with_a_browse_that_saw_the_backout_count(fault, platform, kept):
    """A get under syncpoint, a restart (which backs it out), and the message back with BackoutCount 0:
    a backout that never counted explains that as well as a count the restart lost.  The counterexample
    gets a browse before the restart (the unit of work backed out first, which counts as the restart's
    backout would) that shows the count right, and the restart's rule alone is blamed."""
    from conformance.checker.sequential import check_history
    from conformance.records.history import Failure, Step

    opts = C.MQOO_INPUT_SHARED | C.MQOO_OUTPUT | C.MQOO_INQUIRE
    history = [(L.DefineQueue(queue="Q", attrs=(("HARDENBO", 1),)), L.OK), (L.Connect(conn="a"), L.OK),
               (L.Open(conn="a", handle="h", queue="Q", options=opts), L.OK),
               (L.Put(conn="a", handle="h", body="m", md=L.MessageDescriptor(persistence=1)), L.OK),
               (L.Get(conn="a", handle="h", options=C.MQGMO_SYNCPOINT),
                L.Observation(message=L.ReturnedMessage(body="m", persistence=1, priority=0, msg_id="X"))),
               (L.Restart(abrupt=False), L.OK), (L.Connect(conn="a"), L.OK),
               (L.Open(conn="a", handle="h2", queue="Q", options=opts), L.OK),
               (L.Get(conn="a", handle="h2"), L.Observation(message=L.ReturnedMessage(body="m", persistence=1, priority=0,
                                                                                         msg_id="X")))]
    failure = Failure(area="core", adapter="simulated", platform=platform, seed=1,
                      steps=tuple(Step(op=o, observed=b) for o, b in history),
                      mismatch=check_history(platform, history)[-1].mismatch)
    assert set(with_alternatives(failure).blamed) == {kept, "CORE-15", "CORE-17"}
    small = minimise(failure, create_adapter("simulated", {"faults": fault, "platform": platform}))
    assert with_alternatives(small).blamed == (kept,)
    ops = [s.op for s in small.steps]
    browse = next(i for i, op in enumerate(ops) if isinstance(op, L.Get) and op.options & C.MQGMO_BROWSE_FIRST)
    assert browse < next(i for i, op in enumerate(ops) if isinstance(op, L.Restart))
    assert small.steps[browse].observed.message.backout_count == 1


@pytest.mark.parametrize("fault, blamed, at_inquiry", [("syncpoint-puts-queued-at-commit", "CORE-06", False),
                                                       ("disconnect-backs-out", "CORE-30", True)])
def test_another_message_returned_is_shown_with_the_depth_that_tells_loss_from_order(fault, blamed, at_inquiry):
    """A FIFO queue, a put under syncpoint, a later put outside it, MQDISC (which commits), and a get that
    returns the later message: an order that passed the first over explains it as well as an MQDISC that
    backed it out.  The counterexample gets an inquiry of the depth before the get: a depth that counts both
    leaves the order alone to blame; one that does not is the departure, blamed on MQDISC alone (the later put,
    which only the order needed, then goes, with the get or the inquiry: either shows the message lost)."""
    from conformance.checker.sequential import check_history
    from conformance.records.history import Failure, Step

    opts = C.MQOO_INPUT_SHARED | C.MQOO_OUTPUT | C.MQOO_INQUIRE
    history = [(L.DefineQueue(queue="Q", attrs=(("MSGDLVSQ", C.MQMDS_FIFO),)), L.OK),
               (L.Connect(conn="a"), L.OK), (L.Connect(conn="b"), L.OK),
               (L.Open(conn="a", handle="ha", queue="Q", options=opts), L.OK),
               (L.Open(conn="b", handle="hb", queue="Q", options=opts), L.OK),
               (L.Put(conn="a", handle="ha", body="first", md=L.MessageDescriptor(), options=C.MQPMO_SYNCPOINT), L.OK),
               (L.Put(conn="b", handle="hb", body="second", md=L.MessageDescriptor(), options=C.MQPMO_NO_SYNCPOINT),
                L.OK),
               (L.Disconnect(conn="a"), L.OK),
               (L.Get(conn="b", handle="hb"), L.Observation(message=L.ReturnedMessage(body="second", priority=0,
                                                                                        persistence=0, msg_id="X")))]
    failure = Failure(area="core", adapter="simulated", platform="distributed", seed=1,
                      steps=tuple(Step(op=o, observed=b) for o, b in history),
                      mismatch=check_history("distributed", history)[-1].mismatch)
    assert set(with_alternatives(failure).blamed) == {"CORE-06", "CORE-30"}
    small = minimise(failure, create_adapter("simulated", {"faults": fault, "platform": "distributed"}))
    assert with_alternatives(small).blamed == (blamed,)
    ops = [s.op for s in small.steps]
    if at_inquiry:
        # the loss is the departure: shown by the depth, or (the later put and the depth's inquiry taken out
        # together) by the get that finds nothing where MQ returns the message MQDISC committed
        assert [op.body for op in ops if isinstance(op, L.Put)] == ["first"], ops
        last = small.steps[-1].observed
        assert isinstance(ops[-1], (L.InquireQueue, L.Get)) and (
            dict(last.attrs or ()).get("CURDEPTH") == 0 or last.rc == C.MQRC_NO_MSG_AVAILABLE), small.steps[-1]
        return
    inquiry = next(i for i, op in enumerate(ops) if isinstance(op, L.InquireQueue))
    assert inquiry > next(i for i, op in enumerate(ops) if isinstance(op, L.Disconnect))
    assert inquiry < len(ops) - 1
    depth = dict(small.steps[inquiry].observed.attrs)["CURDEPTH"]
    # (where the depth is the departure, the later put, which only the order needed, may go as well)
    puts = sum(isinstance(op, L.Put) for op in ops[:inquiry])
    assert depth == puts and puts >= 1, ops


def test_a_marked_message_gone_after_an_abnormal_end_is_shown_beside_an_unmarked_get(monkeypatch):
    """A get marked to skip backout, an abnormal end (z/OS, where SYNC-07 holds), and the queue's depth one less than MQ gives: an end that
    committed the unit of work (CORE-31) explains that as well as a backout that lost its gets (CORE-15) or one that
    honoured the mark (SYNC-07, the fault's).  The counterexample gets an unmarked get of another message in the
    same unit of work (put just before the marked get): its message back after the end leaves the end's commit out,
    and it stays in the counterexample (taken out again, the departure would be blamed on more rules)."""
    from conformance.checker.sequential import check_history
    from conformance.records.history import Failure, Step
    from conformance.runner import minimise as M

    opts = C.MQOO_INPUT_SHARED | C.MQOO_OUTPUT | C.MQOO_INQUIRE
    history = [(L.DefineQueue(queue="Q"), L.OK), (L.Connect(conn="a"), L.OK),
               (L.Open(conn="a", handle="h", queue="Q", options=opts), L.OK),
               (L.Put(conn="a", handle="h", body="m"), L.OK),
               (L.Get(conn="a", handle="h", options=C.MQGMO_SYNCPOINT | C.MQGMO_MARK_SKIP_BACKOUT),
                L.Observation(message=L.ReturnedMessage(body="m", persistence=0, priority=0, msg_id="X"))),
               (L.Disconnect(conn="a", abnormal=True), L.OK),
               (L.InquireQueue(queue="Q", names=("CURDEPTH",)), L.Observation(attrs=(("CURDEPTH", 0),)))]
    failure = Failure(area="syncpoint", adapter="simulated", platform="zos", seed=1,
                      steps=tuple(Step(op=o, observed=b) for o, b in history),
                      mismatch=check_history("zos", history)[-1].mismatch)
    assert set(with_alternatives(failure).blamed) == {"CORE-31", "CORE-15", "SYNC-07"}
    adapter = create_adapter("simulated", {"faults": "abend-skips-mark", "platform": "zos"})
    small = minimise(failure, adapter)
    assert set(with_alternatives(small).blamed) == {"CORE-15", "SYNC-07"}
    ops = [s.op for s in small.steps]
    marked = next(i for i, op in enumerate(ops) if isinstance(op, L.Get) and op.options & C.MQGMO_MARK_SKIP_BACKOUT)
    assert isinstance(ops[marked - 1], L.Put1) and ops[marked - 1].body == M.WITNESS_BODY
    assert isinstance(ops[marked + 1], L.Get) and small.steps[marked + 1].observed.message.body == M.WITNESS_BODY
    assert dict(small.steps[-1].observed.attrs)["CURDEPTH"] == 1
    # a witness that minimising then took out again (no hold on the rules it narrowed the departure to) is no witness
    monkeypatch.setattr(M._Search, "same", lambda self, other: other.mismatch.fields == self.failure.mismatch.fields
                        and set(other.rules) == set(self.failure.rules))
    undone = minimise(failure, adapter)
    assert set(with_alternatives(undone).blamed) == {"CORE-31", "CORE-15", "SYNC-07"}


def test_a_depth_witness_goes_where_a_blamed_rule_took_effect():
    """A commit cut in flight that keeps its puts and backs out its gets leaves the queue it got from one
    too deep; so would a restart, long before, that kept a non-persistent message there.  Both readings
    explain the final depth; the witness goes just after the restart (where the restart's rule began to
    bear on that depth, not among the last steps), and the depth seen there leaves the restart out."""
    from conformance.records.history import blamed_rules
    from conformance.runner.minimise import _depth_witnessed, _effect_places
    from conformance.runner.session import NonConformance, Session

    adapter = create_adapter("simulated", {"faults": "in-flight-commit-half-done", "platform": "distributed"})
    def md(persistence):
        return L.MessageDescriptor(persistence=persistence)
    io = C.MQOO_INPUT_SHARED | C.MQOO_OUTPUT | C.MQOO_INQUIRE
    ops = [L.DefineQueue(queue="Q1", attrs=(("DEFPSIST", 0),)), L.DefineQueue(queue="Q2", attrs=(("DEFPSIST", 0),)),
           L.Connect(conn="c1"), L.Open(conn="c1", handle="h1", queue="Q2", options=io),
           L.Put(conn="c1", handle="h1", body="m1", md=md(C.MQPER_PERSISTENT)),
           L.Put(conn="c1", handle="h1", body="m2", md=md(C.MQPER_NOT_PERSISTENT)),
           L.Restart()]
    ops += [L.AdvanceClock(tenths=1)] * 6    # steps that bear on nothing: latest-first places would try them
    ops += [L.Connect(conn="c2"), L.Open(conn="c2", handle="h2", queue="Q2", options=io),
            L.Open(conn="c2", handle="h3", queue="Q1", options=io),
            L.Get(conn="c2", handle="h2", options=C.MQGMO_SYNCPOINT),
            L.Put(conn="c2", handle="h3", body="m3", options=C.MQPMO_SYNCPOINT),
            L.CutConnection(conn="c2", in_flight=True), L.Commit(conn="c2"),
            L.InquireQueue(queue="Q1", names=("CURDEPTH",)), L.InquireQueue(queue="Q2", names=("CURDEPTH",))]
    session = Session(adapter, "core", {}, 1, platform="distributed")
    session.start_case()
    with pytest.raises(NonConformance) as departed:
        for op in ops:
            session.execute(op)
    found = departed.value.failure
    assert found is not None and isinstance(found.mismatch.op, L.InquireQueue), found
    blamed = set(blamed_rules(found, 0))
    assert "CORE-32" in blamed and len(blamed) >= 2, blamed   # the readings, before the witness
    search = _Search(found, adapter, budget=60)
    ops = [s.op for s in found.steps]
    assert _effect_places(ops, search, "Q2", blamed)[-1] == 7   # just after the restart, among the places
    witnessed = _depth_witnessed(ops, search, blamed, probe=[ops[-1]])
    assert len(witnessed) == len(ops) + 1 and isinstance(witnessed[7], L.InquireQueue)
    narrowed = set(blamed_rules(search.failure, 0))
    assert narrowed and narrowed < blamed and "CORE-32" not in narrowed, narrowed


class NoisyAfterFirst:
    """The simulated queue manager with a fault; from its second case on, a depth asked of queue NOISE is one too
    high (as a real system's timing may answer an earlier step otherwise when a history is replayed)."""

    name = "simulated"

    def __init__(self, fault: str) -> None:
        self.inner = create_adapter("simulated", {"faults": fault, "platform": "distributed"})
        self.cases = 0

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def start_case(self, name: str, platform: str) -> None:
        self.cases += 1
        self.inner.start_case(name, platform)

    def execute(self, op):
        observed = self.inner.execute(op)
        if self.cases > 1 and isinstance(op, L.InquireQueue) and op.queue == "NOISE":
            return attrs.evolve(observed, attrs=tuple((n, v + 1) for n, v in observed.attrs))
        return observed


def test_a_departure_whose_whole_history_replays_otherwise_is_minimised_from_a_part_that_shows_it():
    """The whole history, replayed, departs at an earlier step for another rule; a part of it without that step
    shows the same departure again: that part is the counterexample (reproduced), not the whole marked
    "not reproduced"."""
    adapter = NoisyAfterFirst("priority-ignored")
    prio = (("MSGDLVSQ", C.MQMDS_PRIORITY),)
    ops = [L.DefineQueue(queue="Q", attrs=prio), L.DefineQueue(queue="NOISE"), L.Connect(conn="a"),
           L.Open(conn="a", handle="h", queue="Q", options=C.MQOO_OUTPUT | C.MQOO_INPUT_SHARED),
           L.Open(conn="a", handle="n", queue="NOISE", options=C.MQOO_OUTPUT | C.MQOO_INPUT_SHARED),
           L.Put(conn="a", handle="n", body="x", options=C.MQPMO_NO_SYNCPOINT),
           L.InquireQueue(queue="NOISE", names=("CURDEPTH",)),
           L.Put(conn="a", handle="h", body="lo", options=C.MQPMO_NO_SYNCPOINT, md=L.MessageDescriptor(priority=1)),
           L.Put(conn="a", handle="h", body="hi", options=C.MQPMO_NO_SYNCPOINT, md=L.MessageDescriptor(priority=8)),
           L.Get(conn="a", handle="h", options=C.MQGMO_NO_SYNCPOINT)]
    failure = failure_of(adapter, "core", ops)
    assert isinstance(failure.mismatch.op, L.Get)
    small = minimise(failure, adapter)
    assert small.reproduced is True
    assert set(small.rules) == set(failure.rules) and small.mismatch.fields == failure.mismatch.fields
    assert not [s for s in small.steps if getattr(s.op, "queue", None) == "NOISE"], small.steps
    assert len(small.steps) < len(failure.steps)


class FaultyForCases:
    """The simulated queue manager with a fault in its first ``faulty`` cases and without it after (a departure a
    real system's timing shows on some runs of a history and not on others); ``raises``: a call of a later case
    fails on the system instead."""

    name = "simulated"

    def __init__(self, fault: str, faulty: int, raises: bool = False) -> None:
        self.faulty_qm = create_adapter("simulated", {"faults": fault, "platform": "distributed"})
        self.clean_qm = create_adapter("simulated", {"platform": "distributed"})
        self.faulty, self.raises, self.cases = faulty, raises, 0

    def __getattr__(self, name):
        return getattr(self.faulty_qm, name)

    def _now(self):
        return self.faulty_qm if self.cases <= self.faulty else self.clean_qm

    def start_case(self, name: str, platform: str) -> None:
        self.cases += 1
        self._now().start_case(name, platform)

    def end_case(self) -> None:
        self._now().end_case()

    def execute(self, op):
        if self.raises and self.cases > self.faulty:
            raise ConnectionError("the system under test went away")
        return self._now().execute(op)


def _priority_history_with_others() -> list:
    """Priority order broken on Q, among calls on another queue the departure does not need."""
    prio = (("MSGDLVSQ", C.MQMDS_PRIORITY),)
    ops = [L.DefineQueue(queue="Q", attrs=prio), L.DefineQueue(queue="R"), L.Connect(conn="a"),
           L.Open(conn="a", handle="h", queue="Q", options=C.MQOO_OUTPUT | C.MQOO_INPUT_SHARED),
           L.Open(conn="a", handle="r", queue="R", options=C.MQOO_OUTPUT | C.MQOO_INPUT_SHARED)]
    ops += [L.Put(conn="a", handle="r", body=f"r{i}", options=C.MQPMO_NO_SYNCPOINT) for i in range(4)]
    return ops + [
        L.Put(conn="a", handle="h", body="lo", options=C.MQPMO_NO_SYNCPOINT, md=L.MessageDescriptor(priority=1)),
        L.Get(conn="a", handle="r", options=C.MQGMO_NO_SYNCPOINT),
        L.Put(conn="a", handle="h", body="hi", options=C.MQPMO_NO_SYNCPOINT, md=L.MessageDescriptor(priority=8)),
        L.Get(conn="a", handle="h", options=C.MQGMO_NO_SYNCPOINT)]


@pytest.mark.parametrize("faulty", [3, 6])
def test_a_departure_not_shown_again_at_the_end_of_minimising_is_its_smallest_history_marked(faulty):
    """The first replays show the departure and the search shortens the history; then the system no longer shows
    it, and the confirming replay at the end does not either: the result is the smallest history a replay
    showed it with, marked not reproduced, never the history as first found presented as confirmed."""
    adapter = FaultyForCases("priority-ignored", faulty)
    failure = failure_of(adapter, "core", _priority_history_with_others())
    small = minimise(failure, adapter)
    assert adapter.cases > faulty + 1   # the search went on past the cases that showed it
    assert small.reproduced is False
    assert set(small.rules) == set(failure.rules) and small.mismatch.fields == failure.mismatch.fields
    assert len(small.steps) < len(failure.steps), small.steps


def test_a_departure_whose_replay_fails_on_the_system_is_marked_not_reproduced():
    """The first replay fails on the system (not a verdict): nothing showed the departure again, and the history
    as found is published marked, never as a departure a replay confirmed."""
    adapter = FaultyForCases("priority-ignored", 1, raises=True)
    failure = failure_of(adapter, "core", _priority_history_with_others())
    found = minimise(failure, adapter)
    assert found.reproduced is False and found.steps == failure.steps


def test_a_departure_shown_again_throughout_minimising_is_reproduced():
    """The same history on a system that shows the departure every time: confirmed, smaller, reproduced."""
    adapter = FaultyForCases("priority-ignored", 10 ** 6)
    failure = failure_of(adapter, "core", _priority_history_with_others())
    small = minimise(failure, adapter)
    assert small.reproduced is True and len(small.steps) < len(failure.steps)


class CursorGetMisses:
    """The simulated queue manager, except that a destructive get under the cursor finds nothing there whatever it
    selects (as ActiveMQ as it installs answers one whose message another consumer of the connection prefetched)."""

    name = "simulated"

    def __init__(self) -> None:
        self.inner = create_adapter("simulated", {"platform": "distributed"})

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def execute(self, op):
        if isinstance(op, L.Get) and op.options & C.MQGMO_MSG_UNDER_CURSOR:
            return L.Observation(cc=C.MQCC_FAILED, rc=C.MQRC_NO_MSG_UNDER_CURSOR)
        return self.inner.execute(op)


def _selecting_get_under_cursor() -> list:
    """m1 put, another queue's calls beside, browsed first; a get under the cursor selecting a CorrelId m1 lacks."""
    opts = C.MQOO_INPUT_SHARED | C.MQOO_BROWSE | C.MQOO_OUTPUT
    return [L.DefineQueue(queue="Q"), L.DefineQueue(queue="R"), L.Connect(conn="a"),
            L.Open(conn="a", handle="h", queue="Q", options=opts), L.Open(conn="a", handle="r", queue="R", options=opts),
            L.Put(conn="a", handle="r", body="r1", options=C.MQPMO_NO_SYNCPOINT),
            L.Put(conn="a", handle="h", body="m1", options=C.MQPMO_NO_SYNCPOINT),
            L.Get(conn="a", handle="h", options=C.MQGMO_BROWSE_FIRST),
            L.GetMatching(conn="a", handle="h", options=C.MQGMO_MSG_UNDER_CURSOR | C.MQGMO_NO_SYNCPOINT,
                          match_options=C.MQMO_MATCH_CORREL_ID, correl_id="corr-2")]


def test_a_selection_applied_under_the_cursor_is_shown_by_a_plain_browse_there_and_blamed_alone():
    """A get under the cursor that selects finds nothing there: the selection applied (CORE-53) or the cursor's
    message lost (CORE-20)?  The minimiser asks the system: the same call as a browse under the cursor, right after
    a browse under the cursor that selects nothing.  The queue manager that applies the selection there returns the
    message to the plain browse and not to the selecting one: CORE-53 alone."""
    adapter = create_adapter("simulated", {"faults": "match-under-cursor-honoured", "platform": "distributed"})
    failure = with_alternatives(failure_of(adapter, "core", _selecting_get_under_cursor()))
    assert set(failure.blamed) == {"CORE-53", "CORE-20"}, failure.blamed
    small = with_alternatives(minimise(failure, adapter))
    assert small.blamed == ("CORE-53",) and small.reproduced, small.blamed
    last, before = small.steps[-1], small.steps[-2]
    assert isinstance(last.op, L.GetMatching) and last.op.options & C.MQGMO_BROWSE_MSG_UNDER_CURSOR, last
    assert type(before.op) is L.Get and before.op.options & C.MQGMO_BROWSE_MSG_UNDER_CURSOR, before
    assert before.observed.message.body == "m1"


def test_a_cursor_that_loses_its_message_whatever_is_selected_is_blamed_alone():
    """The system finds nothing under the cursor for any destructive get: the get made plain shows the same, so the
    selection played no part: CORE-20 alone, from a history without MatchOptions."""
    adapter = CursorGetMisses()
    failure = with_alternatives(failure_of(adapter, "core", _selecting_get_under_cursor()))
    assert set(failure.blamed) == {"CORE-53", "CORE-20"}, failure.blamed
    small = with_alternatives(minimise(failure, adapter))
    assert small.blamed == ("CORE-20",), small.blamed
    assert not [s for s in small.steps if isinstance(s.op, L.GetMatching)], small.steps


class _TakesAnything:
    """A search that keeps every candidate it is offered (a failure every history shows)."""

    def out_of_time(self) -> bool:
        return False

    def reduce(self, ops):
        return list(ops)


@pytest.mark.parametrize("handler_runs", [True, False])
def test_plainer_messages_keep_their_msgid_where_a_dlq_handler_reports_by_it(handler_runs):
    """Messages are made plainer field by field, MsgId among them; but where a DLQ handler runs, the host reports
    each message's fate by its MsgId, and a blank one would be generated by the queue manager, a name the model
    cannot know: it stays (elsewhere it goes back to MQMI_NONE like any field a failure does not need)."""
    from conformance.runner.minimise import _plainer_messages

    md = L.MessageDescriptor(msg_id="M1", format=C.MQFMT_DEAD_LETTER_HEADER, priority=3, expiry=50)
    ops = [L.DefineQueue(queue="DLQ"), L.Connect(conn="app"),
           L.Put1(conn="app", queue="DLQ", body="dead letter M1", md=md,
                  dlh=L.DeadLetterHeader(reason=C.MQRC_Q_FULL, dest_q="A"))]
    if handler_runs:
        ops += [L.StartDlqHandler(handler="H1", table="ACTION(DISCARD)\n"), L.RunDlqHandler(handler="H1")]
    plain = _plainer_messages(ops, _TakesAnything())[2].md
    assert (plain.priority, plain.expiry) == (L.MessageDescriptor().priority, L.MessageDescriptor().expiry)
    assert plain.msg_id == ("M1" if handler_runs else L.MessageDescriptor().msg_id)


def test_a_story_no_answer_showed_is_told_apart_by_a_browse_that_shows_it():
    """A message put as the queue's default persistence (DEFPSIST(0)) that a system made persistent
    (``defpsist-ignored``) is still there after an abrupt restart: the depth alone reads as well as a restart that
    kept a non-persistent message (CORE-32), and the put's default resolved otherwise (CORE-10) gave way to that
    as a story nothing showed.  A browse of the message before the restart shows its persistence: the
    departure, earlier, and CORE-10's alone."""
    from conformance.records.history import blamed_rules

    adapter = create_adapter("simulated", {"faults": "defpsist-ignored", "platform": "distributed"})
    io = C.MQOO_INPUT_SHARED | C.MQOO_OUTPUT | C.MQOO_INQUIRE
    md = L.MessageDescriptor(persistence=C.MQPER_PERSISTENCE_AS_Q_DEF)
    ops = [L.DefineQueue(queue="Q1"), L.Connect(conn="c1"), L.Open(conn="c1", handle="h1", queue="Q1", options=io),
           L.Put(conn="c1", handle="h1", body="m1", md=md, options=C.MQPMO_NO_SYNCPOINT),
           L.Restart(abrupt=True), L.InquireQueue(queue="Q1", names=("CURDEPTH",))]
    found = failure_of(adapter, "core", ops)
    assert blamed_rules(found) == ("CORE-32",)   # the depth alone: the restart's rule, the put's inferred
    small = minimise(found, adapter)
    assert blamed_rules(small) == ("CORE-10",), (small.mismatch, [s.op for s in small.steps])
    assert not any(isinstance(s.op, (L.Restart, L.InquireQueue)) for s in small.steps)
    assert "message.persistence" in small.mismatch.fields


def _pending_table_history() -> list:
    """A handler started with a table that retries what APPLNAME('payroll*') matches, then given a table that
    discards every message (not in force until it is restarted), and a dead letter from payroll run through it."""
    put = L.Put1(conn="app", queue="DLQ", body="dead letter M2", options=C.MQPMO_NO_SYNCPOINT,
                 md=L.MessageDescriptor(format=C.MQFMT_DEAD_LETTER_HEADER, msg_id="M2",
                                        context=L.MessageContext(put_appl_name="payroll")),
                 dlh=L.DeadLetterHeader(reason=C.MQRC_UNKNOWN_OBJECT_NAME, dest_q="PARK"))
    return [L.DefineQueue(queue="DLQ"), L.DefineQueue(queue="PARK"), L.AlterQueueManager(attrs={"DEADQ": "DLQ"}),
            L.Connect(conn="app"),
            L.StartDlqHandler(handler="H1", table="ACTION(RETRY) APPLNAME('payroll*')\nACTION(IGNORE)\n"),
            L.ChangeDlqTable(handler="H1", table="ACTION(DISCARD)\n"), put, L.RunDlqHandler(handler="H1")]


@pytest.mark.parametrize("fault, kept", [("dlq-rules-out-of-order", False), ("dlq-table-change-applied", True)])
def test_a_step_that_only_adds_a_rule_to_the_one_of_goes_and_one_the_departure_needs_stays(fault, kept):
    """The table changed but not in force puts DLQ-10 first in the "one of" (a system that did otherwise most
    likely applied it): where the handler takes the rules out of order, the history without the change departs
    the same way with DLQ-10 out of doubt, and minimising takes the change out though the checker then names
    another rule first; where the handler applies the change at once, the change is the departure, and stays."""
    adapter = create_adapter("simulated", {"faults": fault, "platform": "distributed"})
    failure = failure_of(adapter, "dlq", _pending_table_history())
    assert failure.rules[0] == "DLQ-10", failure.rules
    small = minimise(failure, adapter)
    ops = [s.op for s in small.steps]
    assert any(isinstance(op, L.ChangeDlqTable) for op in ops) is kept, ops
    assert ("DLQ-10" in small.rules) is kept and set(small.rules) <= set(failure.rules), small.rules
    assert small.blamed[0] in FAULTS[fault].rules, small.blamed


def test_an_alteration_keeps_only_the_attributes_the_departure_needs_and_leaves_fewer_rules_in_doubt():
    """A shared queue served on the other member, its trigger turned on by an alteration that also makes it EVERY
    at TriggerMsgPriority 4: on a queue manager that counts the other member's input handle, no trigger message
    is one of TRIG-07 (judged by its own type and priority, the message at 0 would not trigger) or TRIG-08.  The
    alteration's other attributes go, TRIGGER stays, and the departure is TRIG-08's alone."""
    from tests.test_blame import _shared_queue_served_on_qm2

    z = C.PLATFORM_ZOS
    ops = _shared_queue_served_on_qm2((("TRIGGER", 1), ("TRIGTYPE", C.MQTT_EVERY), ("TRIGMPRI", 4), ("TRIGDPTH", 2)))
    ops[1] = attrs.evolve(ops[1], attrs=tuple((k, v) for k, v in ops[1].attrs if k != "TRIGGER"))
    adapter = create_adapter("simulated", {"faults": "open-input-counted-group-wide", "platform": z})
    failure = failure_of(adapter, "trigger", ops, platform=z)
    assert {"TRIG-07", "TRIG-08"} <= set(failure.rules), failure.rules
    small = with_alternatives(minimise(failure, adapter))
    alter = [s.op for s in small.steps if isinstance(s.op, L.AlterQueue)]
    assert alter == [L.AlterQueue(queue="SHARED.Q", attrs=(("TRIGGER", 1),))] or not alter, alter
    assert small.blamed == ("TRIG-08",) and "TRIG-07" not in small.rules, (small.rules, small.blamed)


def test_a_last_segment_not_marked_as_such_is_the_segmentation_rule_not_the_commit_that_made_it_available():
    """A segment's SegmentStatus and Offset are how the queue manager split what was put (CORE-50): a message put
    under syncpoint and committed, got back with its last segment marked as a middle one, once blamed the commit
    that made the segments available (CORE-29), the rule that put them there."""
    adapter = create_adapter("simulated", {"faults": "last-segment-unmarked", "platform": "distributed"})
    body = "L1-" + "abcdefghijklmnopqrstuvwxyz" + "abcdefghijklmnopqrs"
    ops = [L.DefineQueue(queue="APP.Q", attrs={"MAXMSGL": 16}), L.Connect(conn="putter"),
           L.Open(conn="putter", handle="h1", queue="APP.Q", options=C.MQOO_INPUT_SHARED | C.MQOO_OUTPUT),
           L.Put(conn="putter", handle="h1", body=body, md=L.MessageDescriptor(msg_flags=C.MQMF_SEGMENTATION_ALLOWED),
                 options=C.MQPMO_SYNCPOINT),
           L.Commit(conn="putter")] + [L.Get(conn="putter", handle="h1", options=C.MQGMO_NO_SYNCPOINT)] * 3
    failure = with_alternatives(failure_of(adapter, "trigger", ops), 0)
    assert failure.mismatch.fields == ("message.segment_status",)
    assert failure.blamed == ("CORE-50",), failure.blamed


def test_a_get_marked_outside_syncpoint_that_comes_back_at_an_abnormal_end_is_the_marks_rule():
    """A get with MQGMO_MARK_SKIP_BACKOUT and MQGMO_NO_SYNCPOINT made in a unit of work after all: the depth seen
    0 after it, then 1 after an abnormal end backed that unit of work out.  It is SYNC-10's departure (the mark
    is effective only with MQGMO_SYNCPOINT), where no rule's relaxation explained it before."""
    adapter = create_adapter("simulated", {"faults": "mark-honoured-without-syncpoint", "platform": "zos"})
    depth = L.InquireQueue(queue="WORK.Q", names=("CURDEPTH",))
    ops = [L.DefineQueue(queue="WORK.Q"), L.Connect(conn="w2"),
           L.Open(conn="w2", handle="h1", queue="WORK.Q", options=C.MQOO_INPUT_SHARED | C.MQOO_OUTPUT | C.MQOO_INQUIRE),
           L.Put(conn="w2", handle="h1", body="work1", options=C.MQPMO_NO_SYNCPOINT),
           L.Get(conn="w2", handle="h1", options=C.MQGMO_NO_SYNCPOINT | C.MQGMO_MARK_SKIP_BACKOUT),
           depth, L.Disconnect(conn="w2", abnormal=True), depth]
    failure = with_alternatives(failure_of(adapter, "syncpoint", ops, platform="zos"), 0)
    assert failure.mismatch.index == len(ops) - 1 and failure.mismatch.fields == ("attrs.CURDEPTH",)
    assert failure.blamed == ("SYNC-10",), failure.blamed


def test_a_mark_refused_after_a_backout_that_a_loose_mark_skipped_is_the_marks_rule():
    """A get marked with MQGMO_NO_SYNCPOINT that a system made in a unit of work with its mark, a put under
    syncpoint, an MQBACK: that system skips the backout with the marked get (SYNC-03), so the new unit of work
    holds it and a marked get under syncpoint is refused as a second mark.  That refusal is SYNC-10's departure
    (or SYNC-06's); it was blamed on CORE-01 alone while the model forgot the loose mark at every backout, and
    then on CORE-01 beside them while the message a refused get cannot return was read as a message lost."""
    adapter = create_adapter("simulated", {"faults": "mark-honoured-without-syncpoint", "platform": "zos"})
    mark = C.MQGMO_MARK_SKIP_BACKOUT
    ops = [L.DefineQueue(queue="WORK.Q"), L.Connect(conn="w2"),
           L.Open(conn="w2", handle="h1", queue="WORK.Q", options=C.MQOO_INPUT_SHARED | C.MQOO_OUTPUT),
           L.Put(conn="w2", handle="h1", body="work1", options=C.MQPMO_NO_SYNCPOINT),
           L.Put(conn="w2", handle="h1", body="work2", options=C.MQPMO_NO_SYNCPOINT),
           L.Get(conn="w2", handle="h1", options=C.MQGMO_NO_SYNCPOINT | mark),
           L.Put(conn="w2", handle="h1", body="work3", options=C.MQPMO_SYNCPOINT),
           L.Backout(conn="w2"),
           L.Get(conn="w2", handle="h1", options=C.MQGMO_SYNCPOINT | mark)]
    failure = with_alternatives(failure_of(adapter, "syncpoint", ops, platform="zos"), 0)
    assert failure.mismatch.index == len(ops) - 1
    assert failure.mismatch.observed.rc == C.MQRC_SECOND_MARK_NOT_ALLOWED
    assert failure.rules[:2] == ("SYNC-10", "SYNC-06") and failure.blamed[0] == "SYNC-10", (failure.rules, failure.blamed)
    assert failure.blamed == ("SYNC-10", "SYNC-06") and failure.one_of and not failure.broken, failure


def test_a_trigger_message_at_close_for_a_message_below_triggermsgpriority_is_the_prioritys_rule_first():
    """The only server closes the queue with one message left, below TriggerMsgPriority: condition 12 counts the
    messages of sufficient priority (condition 2), so a trigger message then is one of TRIG-02 (no priority
    compared) or TRIG-18 (a close that triggers whatever is left), TRIG-02 first; it was blamed on TRIG-18
    alone where the initiation queue had been seen empty since the put (the put's own reading then forgotten)."""
    adapter = create_adapter("simulated", {"faults": "trigmpri-ignored", "platform": "distributed"})
    ops = [L.DefineProcess(process="APP.PROCESS"), L.DefineQueue(queue="INIT.Q"),
           L.DefineQueue(queue="APP.Q", attrs={"INITQ": "INIT.Q", "PROCESS": "APP.PROCESS", "TRIGGER": 1,
                                               "TRIGMPRI": 4}),
           L.Connect(conn="monitor"),
           L.Open(conn="monitor", handle="h1", queue="INIT.Q", options=C.MQOO_INPUT_SHARED | C.MQOO_BROWSE),
           L.Connect(conn="server"),
           L.Open(conn="server", handle="h2", queue="APP.Q", options=C.MQOO_INPUT_SHARED | C.MQOO_OUTPUT),
           L.Put(conn="server", handle="h2", body="m1", options=C.MQPMO_NO_SYNCPOINT),
           # the initiation queue seen empty: no earlier event's trigger message is still to come
           L.Get(conn="monitor", handle="h1", options=C.MQGMO_BROWSE_FIRST | C.MQGMO_NO_SYNCPOINT),
           L.Close(conn="server", handle="h2"),
           L.InquireQueue(queue="INIT.Q", names=("CURDEPTH",))]
    failure = with_alternatives(failure_of(adapter, "trigger", ops), 0)
    assert failure.mismatch.index == len(ops) - 1 and failure.mismatch.fields == ("attrs.CURDEPTH",)
    assert failure.blamed == ("TRIG-02", "TRIG-18") and failure.one_of, (failure.blamed, failure.one_of)


def test_a_marked_message_gone_after_an_abnormal_end_is_the_marks_rule_first():
    """A marked get and a plain one under syncpoint, an abnormal end, the depth one short: a system whose
    abnormal end skipped the marked get (SYNC-07) or one whose backout lost a get (CORE-15) shows that alike, so
    it is one of them; SYNC-07 leads, the rule of the one message whose history differs from the other's.  It
    led with CORE-15, the rule of every reinstated message, and no reading had the abnormal end skip the mark."""
    adapter = create_adapter("simulated", {"faults": "abend-skips-mark", "platform": "zos"})
    ops = [L.DefineQueue(queue="WORK.Q"), L.Connect(conn="w1"),
           L.Open(conn="w1", handle="h1", queue="WORK.Q", options=C.MQOO_INPUT_SHARED | C.MQOO_OUTPUT),
           L.Put(conn="w1", handle="h1", body="work1", options=C.MQPMO_NO_SYNCPOINT),
           L.Put1(conn="w1", queue="WORK.Q", body="witness", options=C.MQPMO_NO_SYNCPOINT),
           L.Get(conn="w1", handle="h1", options=C.MQGMO_SYNCPOINT | C.MQGMO_MARK_SKIP_BACKOUT),
           L.Get(conn="w1", handle="h1", options=C.MQGMO_SYNCPOINT),
           L.Disconnect(conn="w1", abnormal=True), L.InquireQueue(queue="WORK.Q", names=("CURDEPTH",))]
    failure = with_alternatives(failure_of(adapter, "syncpoint", ops, platform="zos"), 0)
    assert failure.mismatch.index == len(ops) - 1 and failure.mismatch.fields == ("attrs.CURDEPTH",)
    assert failure.blamed == ("SYNC-07", "CORE-15") and failure.one_of, (failure.blamed, failure.one_of)


def test_an_expired_message_left_out_of_the_depth_is_one_of_the_counting_rule_or_a_missing_report():
    """A message that asked for an expiration report expires; the depth then 0, and no report on the reply-to
    queue.  Where expired messages may go in the background (EXP-26) the 0 was read as the message discarded
    alone, and the missing report blamed (EXP-08, EXP-12, EXP-13): the fault here keeps the message and leaves
    it out of the depth, which no rule of those breaks.  The history cannot tell the two apart (a broker that
    dropped it without a report shows the same): one of EXP-11 (expired messages count until discarded), needed
    from the first depth, or the report's rules."""
    adapter = create_adapter("simulated", {"faults": "expired-not-counted", "platform": "distributed"})
    md = L.MessageDescriptor(expiry=8, report=C.MQRO_EXPIRATION, reply_to_q="REPLY.Q")
    ops = [L.DefineQueue(queue="APP.Q"), L.DefineQueue(queue="REPLY.Q"), L.Connect(conn="producer"),
           L.Open(conn="producer", handle="h1", queue="APP.Q", options=C.MQOO_OUTPUT),
           L.Put(conn="producer", handle="h1", body="m7", md=md, options=C.MQPMO_NO_SYNCPOINT),
           L.AdvanceClock(tenths=11), L.InquireQueue(queue="APP.Q", names=("CURDEPTH",)),
           L.InquireQueue(queue="REPLY.Q", names=("CURDEPTH",))]
    failure = with_alternatives(failure_of(adapter, "expiry", ops), 0)
    assert failure.mismatch.index == len(ops) - 1 and failure.mismatch.fields == ("attrs.CURDEPTH",)
    assert failure.blamed[0] == "EXP-11" and "EXP-08" in failure.blamed and failure.one_of, failure.blamed


def test_a_none_correl_id_taken_literally_is_the_selection_first():
    """A get matching MQCI_NONE (any CorrelId) returns the one message with a blank CorrelId, of priority 0, where
    MQ returns the priority 9 message with CorrelId corr-1.  Priority order relaxed (CORE-04) allows that message
    among others; the selection taken literally (CORE-51) gives exactly it: one of the two, CORE-51 first."""
    adapter = create_adapter("simulated", {"faults": "match-none-is-literal"})
    ops = [L.DefineQueue(queue="Q1", attrs={"MSGDLVSQ": C.MQMDS_PRIORITY}), L.Connect(conn="c1"),
           L.Open(conn="c1", handle="h1", queue="Q1",
                  options=C.MQOO_INPUT_SHARED | C.MQOO_BROWSE | C.MQOO_OUTPUT | C.MQOO_INQUIRE),
           L.Put(conn="c1", handle="h1", body="m4", options=C.MQPMO_NO_SYNCPOINT,
                 md=L.MessageDescriptor(priority=9, correl_id="corr-1")),
           L.Put(conn="c1", handle="h1", body="m36", options=C.MQPMO_NO_SYNCPOINT),
           L.GetMatching(conn="c1", handle="h1", options=C.MQGMO_NO_SYNCPOINT, match_options=C.MQMO_MATCH_CORREL_ID)]
    failure = with_alternatives(failure_of(adapter, "core", ops), 0)
    assert failure.mismatch.index == len(ops) - 1
    assert failure.blamed == ("CORE-51", "CORE-04") and failure.one_of, (failure.blamed, failure.one_of)


def test_candidates_that_begin_alike_are_judged_well_formed_as_the_model_runs_each_afresh():
    """The minimiser walks the model once over the beginning candidates share; each candidate is still
    judged as a run of the model from its start would judge it (a handle closed earlier in one candidate,
    reopened in another, a connection never made)."""
    from adapters.reference import ReferenceAdapter

    adapter = create_adapter("simulated", {"faults": "priority-ignored", "platform": "distributed"})
    opened = [L.DefineQueue(queue="Q"), L.Connect(conn="c"),
              L.Open(conn="c", handle="h", queue="Q", options=C.MQOO_OUTPUT | C.MQOO_INPUT_SHARED)]
    put = L.Put(conn="c", handle="h", body="x", options=C.MQPMO_NO_SYNCPOINT)
    candidates = [opened + [put, L.Close(conn="c", handle="h"), put],
                  opened + [put],
                  opened + [L.Close(conn="c", handle="h"), opened[2], put],
                  opened[:2] + [put],
                  [L.Connect(conn="c"), opened[0], L.Connect(conn="c")],
                  opened + [put, L.Close(conn="c", handle="h")],
                  opened[1:] + [put],
                  opened + [put, L.Close(conn="c", handle="h"), put]]

    def afresh(ops) -> bool:
        model = ReferenceAdapter(platform="distributed")
        try:
            for op in ops:
                model.execute(op)
        except Exception:  # noqa: BLE001 - what well_formed counts as not a history
            return False
        return True

    search = _Search(failure_of(adapter, "core", opened + [put] * 3 + [
        L.Put(conn="c", handle="h", body="hi", options=C.MQPMO_NO_SYNCPOINT, md=L.MessageDescriptor(priority=8)),
        L.Get(conn="c", handle="h", options=C.MQGMO_NO_SYNCPOINT)]), adapter, budget=60.0)
    judged = [search.well_formed(ops) for ops in candidates]
    assert judged == [afresh(ops) for ops in candidates]
    assert True in judged and False in judged, judged


def test_a_departure_shown_again_is_diagnosed_once_and_one_that_came_blamed_keeps_its_blame(monkeypatch):
    """Two replays that show the same departure (equal histories and mismatches, separate objects) are
    diagnosed once; a departure given with the rules it is blamed on (a run's diagnosis) is not taken for one
    that came without, nor the other way round, though they compare equal."""
    import conformance.records.history as history

    adapter = create_adapter("simulated", {"faults": "browse-next-skips", "platform": "distributed"})
    ops = _browse_three(C.MQGMO_BROWSE_FIRST)
    first, again = failure_of(adapter, "core", ops), failure_of(adapter, "core", ops)
    assert first == again and first is not again
    diagnosed = []
    real = history.blamed_rules
    monkeypatch.setattr(history, "blamed_rules", lambda f, *a: diagnosed.append(f) or real(f, *a))
    search = _Search(first, adapter, budget=60)
    assert search.blamed(first) == search.blamed(again) == real(first)
    assert diagnosed == [first]
    given = attrs.evolve(again, mismatch=attrs.evolve(again.mismatch, blamed=("CORE-04",)))
    assert given == first and search.blamed(given) == ("CORE-04",)
    assert search.blamed(first) == real(first) and diagnosed == [first, given]


def _trigger_one_of() -> list:
    """A message put on a FIRST-triggered queue before any trigger monitor (condition 12 triggers it when one opens
    the initiation queue), then one below TRIGMPRI on another triggered queue: a trigger message too many on the
    initiation queue.  From the history alone: a trigger below TRIGMPRI (TRIG-02), one without a monitor (TRIG-12),
    or two for condition 12 (TRIG-26); without the first put it can only be TRIG-02."""
    md = L.MessageDescriptor(priority=-1, persistence=2)
    return [L.DefineQueue(queue="SHARED.Q", attrs=(("INITQ", "INIT.Q"), ("PROCESS", "APP.PROCESS"))),
            L.DefineProcess(process="APP.PROCESS", appl_type=6, appl_id="/opt/app/server"),
            L.DefineQueue(queue="INIT.Q"),
            L.DefineQueue(queue="APP.Q", attrs=(("INITQ", "INIT.Q"), ("PROCESS", "APP.PROCESS"), ("TRIGGER", 1))),
            L.Connect(conn="c"),
            L.Open(conn="c", handle="h1", queue="APP.Q", options=C.MQOO_OUTPUT | C.MQOO_INQUIRE),
            L.Open(conn="c", handle="h2", queue="SHARED.Q", options=C.MQOO_OUTPUT | C.MQOO_INQUIRE),
            L.Put(conn="c", handle="h1", body="m6", md=md, options=C.MQPMO_NO_SYNCPOINT),
            L.AlterQueue(queue="SHARED.Q", attrs=(("TRIGGER", 1), ("TRIGMPRI", 4))),
            L.Open(conn="c", handle="h3", queue="INIT.Q", options=C.MQOO_INPUT_AS_Q_DEF),
            L.Put(conn="c", handle="h2", body="s7", md=md, options=C.MQPMO_NO_SYNCPOINT),
            L.InquireQueue(queue="INIT.Q", names=("CURDEPTH",))]


def test_a_long_history_s_one_of_is_narrowed_once_its_history_is_short():
    """A departure met at the end of a long history (here 70 steps, most of them on queues it does not use) that
    breaks one of three rules as its minimal history shows it, where a part of that history breaks one of them
    alone: minimised, it is that part, blamed on TRIG-02 alone.  (Whether a smaller departure blames fewer rules
    was asked only where the history minimising began with was short, so that a departure met late in a case was
    published as "one of TRIG-02 / TRIG-26 / TRIG-12", on a queue manager that breaks TRIG-02 alone.)"""
    adapter = create_adapter("simulated", {"faults": "trigmpri-ignored", "platform": "zos"})
    padding = [L.DefineQueue(queue=f"OTHER.{i}") for i in range(58)]
    failure = failure_of(adapter, "trigger", padding + _trigger_one_of(), platform="zos")
    assert len(failure.steps) == 70 and {"TRIG-02", "TRIG-12", "TRIG-26"} <= set(failure.rules), failure.rules
    tolerance = adapter.capabilities().expiry_tolerance
    assert set(with_alternatives(failure_of(adapter, "trigger", _trigger_one_of(), platform="zos"), tolerance)
               .blamed) == {"TRIG-02", "TRIG-12", "TRIG-26"}
    small = minimise(failure, adapter)
    assert small.rules == ("TRIG-02",) and with_alternatives(small, tolerance).blamed == ("TRIG-02",), small.rules
    assert not any(isinstance(op, L.Put) and op.body == "m6" for op in (s.op for s in small.steps))


def _expired_on_the_transmission_queue() -> list:
    """A message put to a remote queue definition with Expiry 8 tenths, got from its transmission queue 9 tenths
    later."""
    io = C.MQOO_INPUT_SHARED | C.MQOO_OUTPUT | C.MQOO_INQUIRE
    return [L.DefineQueue(queue="XMIT.Q", attrs=(("USAGE", C.MQUS_TRANSMISSION),)),
            L.DefineRemoteQueue(queue="FAR.ORDERS", rname="ORDERS", rqmname="FAR", xmitq="XMIT.Q"),
            L.Connect(conn="producer"), L.Open(conn="producer", handle="h1", queue="XMIT.Q", options=io),
            L.Put1(conn="producer", queue="FAR.ORDERS", body="r1", md=L.MessageDescriptor(expiry=8)),
            L.AdvanceClock(tenths=9), L.Get(conn="producer", handle="h1")]


@pytest.mark.parametrize("fault, twin", [("expired-message-returned", True),
                                         ("transmission-queue-never-expires", False)])
def test_a_message_got_by_its_route_is_told_apart_by_a_twin_put_to_a_plain_queue(fault, twin):
    """An expired message got from a transmission queue reads as a message returned once expired (EXP-06) as
    well as a put that gave the transmission header another expiry (EXP-18) or expiry on a transmission queue
    (EXP-07): the twelve-fault run published "one of" the three.  The same message put at the same moment to a
    plain local queue and got there at the same moment tells them apart: returned there too, it is the
    departure (EXP-06 alone, and what only the route needed goes); not returned there (a queue manager whose
    transmission queues alone never expire), the route is to blame and the counterexample keeps it."""
    from conformance.records.history import blamed_rules
    from conformance.runner.minimise import TWIN_QUEUE

    adapter = create_adapter("simulated", {"faults": fault, "platform": "distributed"})
    found = failure_of(adapter, "expiry", _expired_on_the_transmission_queue())
    assert {"EXP-06", "EXP-07"} <= set(blamed_rules(found)), blamed_rules(found)
    small = minimise(found, adapter)
    queues = {getattr(s.op, "queue", None) for s in small.steps}
    if twin:
        assert blamed_rules(small) == ("EXP-06",), (small.mismatch, [s.op for s in small.steps])
        assert queues == {TWIN_QUEUE, None} and len(small.steps) == 6, [s.op for s in small.steps]
        assert small.steps[-1].observed.message is not None and small.mismatch.index == 5
    else:
        assert TWIN_QUEUE not in queues and "XMIT.Q" in queues, [s.op for s in small.steps]
        assert {"EXP-06", "EXP-07"} <= set(blamed_rules(small)), blamed_rules(small)


@pytest.mark.parametrize("fault, gets", [("priority-ignored", True), ("browse-next-skips", False)])
def test_a_browse_next_out_of_order_is_told_apart_by_the_same_browses_made_gets(fault, gets):
    """Priorities 9, 0 and 9 put to a priority queue, a BROWSE_FIRST, and a BROWSE_NEXT that returns the
    priority-0 message where MQ returns the second priority-9 one: a cursor that passed a message over (CORE-19)
    reads as well as a delivery order broken for every get (CORE-04), and the twelve-fault run published "one
    of" the two.  The browses made gets take the messages as a get does: a queue manager that delivers in
    arrival order departs there too (CORE-04 alone, shown by gets); one whose BROWSE_NEXT skips a message gets
    them in order, and the browse stays, blamed on the cursor."""
    from conformance.records.history import blamed_rules

    adapter = create_adapter("simulated", {"faults": fault, "platform": "distributed"})
    io = C.MQOO_INPUT_SHARED | C.MQOO_BROWSE | C.MQOO_OUTPUT | C.MQOO_INQUIRE
    ops = [L.DefineQueue(queue="Q2", attrs=(("MSGDLVSQ", C.MQMDS_PRIORITY),)), L.Connect(conn="c1"),
           L.Open(conn="c1", handle="h1", queue="Q2", options=io),
           *(L.Put(conn="c1", handle="h1", body=body, md=L.MessageDescriptor(priority=priority))
             for body, priority in (("m2", 9), ("m3", 0), ("m4", 9))),
           L.Get(conn="c1", handle="h1", options=C.MQGMO_BROWSE_FIRST | C.MQGMO_NO_SYNCPOINT),
           L.Get(conn="c1", handle="h1", options=C.MQGMO_BROWSE_NEXT | C.MQGMO_NO_SYNCPOINT)]
    found = failure_of(adapter, "core", ops)
    assert set(blamed_rules(found)) == {"CORE-04", "CORE-19"}, blamed_rules(found)
    small = minimise(found, adapter)
    browsed = [s.op for s in small.steps if isinstance(s.op, L.Get) and s.op.options & C.MQGMO_BROWSE_ANY]
    if gets:
        assert blamed_rules(small) == ("CORE-04",), (small.mismatch, [s.op for s in small.steps])
        assert not browsed and small.steps[-1].observed.message.body == "m3", [s.op for s in small.steps]
    else:
        assert "CORE-19" in blamed_rules(small) and browsed, (small.mismatch, [s.op for s in small.steps])


class GetsWaitForDispatch:
    """The simulated queue manager with ``faults``, except that a destructive get that does not wait finds nothing (as
    ActiveMQ as it installs answers a get right after the puts: the broker dispatches to the consumer a moment
    later); one that waits finds what the queue manager gives, unless ``waits_too``."""

    name = "simulated"

    def __init__(self, faults: str, waits_too: bool = False) -> None:
        self.inner = create_adapter("simulated", {"faults": faults, "platform": "distributed"})
        self.waits_too = waits_too

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def execute(self, op):
        if type(op) is L.Get and not op.options & (C.MQGMO_BROWSE_ANY | C.MQGMO_MSG_UNDER_CURSOR) \
                and (self.waits_too or not op.options & C.MQGMO_WAIT):
            return L.Observation(cc=C.MQCC_FAILED, rc=C.MQRC_NO_MSG_AVAILABLE)
        return self.inner.execute(op)


def _browsed_first_out_of_order(adapter):
    """ActiveMQ's published history as it installs, found on ``adapter``: priorities 0 and 9 put to a priority queue,
    and a BROWSE_FIRST that returns the first put (CORE-18 or CORE-04)."""
    from conformance.records.history import blamed_rules

    io = C.MQOO_INPUT_SHARED | C.MQOO_BROWSE | C.MQOO_OUTPUT | C.MQOO_INQUIRE
    ops = [L.DefineQueue(queue="Q2", attrs=(("MSGDLVSQ", C.MQMDS_PRIORITY),)), L.Connect(conn="c1"),
           L.Open(conn="c1", handle="h1", queue="Q2", options=io),
           *(L.Put(conn="c1", handle="h1", body=body, md=L.MessageDescriptor(priority=priority),
                   options=C.MQPMO_NO_SYNCPOINT) for body, priority in (("m1", 0), ("m2", 9))),
           L.Get(conn="c1", handle="h1", options=C.MQGMO_BROWSE_FIRST | C.MQGMO_NO_SYNCPOINT)]
    found = failure_of(adapter, "core", ops)
    assert set(blamed_rules(found)) == {"CORE-04", "CORE-18"}, blamed_rules(found)
    return found


@pytest.mark.parametrize("waits_too", [False, True])
def test_a_browse_first_out_of_order_is_told_apart_by_a_get_that_waits_where_one_that_does_not_finds_nothing(
        waits_too):
    """ActiveMQ as it installs: a priority-0 message and a priority-9 one put to a priority queue, and a BROWSE_FIRST
    that returns the first put: a browse that took another than the first message (CORE-18) reads as well as a
    delivery order broken for every get (CORE-04), and its published report said "one of" the two.  The browse made
    a get finds nothing there (a get that does not wait, right after the puts): that departure is another rule's.
    The get made to wait takes the messages as a get does, in arrival order: CORE-04 alone, shown by a get.  A
    system whose gets find nothing, waiting or not, shows nothing more, and the browse stays "one of"."""
    adapter = GetsWaitForDispatch("priority-ignored", waits_too)
    small = minimise(_browsed_first_out_of_order(adapter), adapter)
    _told_by_a_get_that_waits(small, waits_too, {"CORE-04", "CORE-18"}, "m1")


def _told_by_a_get_that_waits(small, waits_too: bool, one_of: set, first: str) -> None:
    from conformance.records.history import blamed_rules

    last = small.steps[-1]
    if waits_too:
        assert set(blamed_rules(small)) == one_of, (small.mismatch, [s.op for s in small.steps])
        assert not last.op.options & C.MQGMO_WAIT, last
    else:
        assert blamed_rules(small) == ("CORE-04",), (small.mismatch, [s.op for s in small.steps])
        assert type(last.op) is L.Get and not last.op.options & C.MQGMO_BROWSE_ANY, last
        assert last.op.options & C.MQGMO_WAIT and last.observed.message.body == first and small.reproduced, last


@pytest.mark.parametrize("waits_too", [False, True])
def test_a_browse_next_out_of_order_is_told_apart_by_gets_that_wait(waits_too):
    """The browse-next history of ActiveMQ's published report as it installs (priorities 9, the queue's default and
    9; BROWSE_FIRST, then a BROWSE_NEXT that returns the second put): the browses made gets find nothing right after
    the puts; made gets that wait, they take the messages in arrival order too: CORE-04 alone."""
    adapter = GetsWaitForDispatch("priority-ignored", waits_too)
    io = C.MQOO_INPUT_SHARED | C.MQOO_BROWSE | C.MQOO_OUTPUT | C.MQOO_INQUIRE
    ops = [L.DefineQueue(queue="Q2"), L.Connect(conn="c1"), L.Open(conn="c1", handle="h1", queue="Q2", options=io),
           *(L.Put(conn="c1", handle="h1", body=body, md=L.MessageDescriptor(priority=priority),
                   options=C.MQPMO_NO_SYNCPOINT) for body, priority in (("m2", 9), ("m3", -1), ("m4", 9))),
           L.Get(conn="c1", handle="h1", options=C.MQGMO_BROWSE_FIRST | C.MQGMO_NO_SYNCPOINT),
           L.Get(conn="c1", handle="h1", options=C.MQGMO_BROWSE_NEXT | C.MQGMO_NO_SYNCPOINT)]
    from conformance.records.history import blamed_rules

    found = failure_of(adapter, "core", ops)
    assert set(blamed_rules(found)) == {"CORE-04", "CORE-19"}, blamed_rules(found)
    small = minimise(found, adapter)
    _told_by_a_get_that_waits(small, waits_too, {"CORE-04", "CORE-19"}, "m3")


class RacesDispatch(GetsWaitForDispatch):
    """A system on real time whose destructive gets that do not wait find the message at the first call and every
    other after it (a get racing the broker's dispatch to its consumer); one that waits always does."""

    def __init__(self, faults: str) -> None:
        super().__init__(faults)
        self.calls = 0

    def capabilities(self):
        return attrs.evolve(self.inner.capabilities(), realtime=True)

    def execute(self, op):
        if type(op) is L.Get and not op.options & (C.MQGMO_BROWSE_ANY | C.MQGMO_MSG_UNDER_CURSOR | C.MQGMO_WAIT):
            self.calls += 1
            if not self.calls % 2:
                return L.Observation(cc=C.MQCC_FAILED, rc=C.MQRC_NO_MSG_AVAILABLE)
        return self.inner.execute(op)


def test_on_real_time_a_get_made_of_a_browse_waits_from_its_first_try():
    """On a system that runs on real time a get right after the puts may find the message at one try and not at the
    next: the get made of a failing BROWSE_FIRST, tried plainly, could show the order once and not when the result
    is confirmed.  There it waits from its first try, and the counterexample is confirmed: CORE-04 alone."""
    from conformance.records.history import blamed_rules

    adapter = RacesDispatch("priority-ignored")
    small = minimise(_browsed_first_out_of_order(adapter), adapter)
    last = small.steps[-1]
    assert blamed_rules(small) == ("CORE-04",) and small.reproduced, (small.mismatch, small.reproduced)
    assert type(last.op) is L.Get and last.op.options & C.MQGMO_WAIT and last.observed.message.body == "m1", last


@pytest.mark.parametrize("waits_too", [False, True])
def test_a_selecting_get_out_of_order_is_told_apart_by_a_plain_get_that_waits(waits_too):
    """ActiveMQ as it installs: messages of priorities 0 and 4 with one CorrelId put to a priority queue, and a get
    selecting that CorrelId returns the priority-0 one: the order among the selected (CORE-52) or the queue's
    delivery order (CORE-04)?  The get made plain finds nothing right after the puts, another rule's departure;
    made plain and waiting it takes the priority-0 message too: CORE-04 alone, shown without MatchOptions."""
    adapter = GetsWaitForDispatch("priority-ignored", waits_too)
    io = C.MQOO_INPUT_SHARED | C.MQOO_BROWSE | C.MQOO_OUTPUT | C.MQOO_INQUIRE
    ops = [L.DefineQueue(queue="Q1"), L.Connect(conn="c1"), L.Open(conn="c1", handle="h1", queue="Q1", options=io),
           *(L.Put(conn="c1", handle="h1", body=body, options=C.MQPMO_NO_SYNCPOINT,
                   md=L.MessageDescriptor(priority=priority, correl_id="corr-1")) for body, priority in (("m2", 0),
                                                                                                          ("m4", 4))),
           L.GetMatching(conn="c1", handle="h1", options=C.MQGMO_NO_SYNCPOINT, match_options=C.MQMO_MATCH_CORREL_ID,
                         correl_id="corr-1")]
    from conformance.records.history import blamed_rules

    found = failure_of(adapter, "core", ops)
    assert set(blamed_rules(found)) == {"CORE-04", "CORE-52"}, blamed_rules(found)
    small = minimise(found, adapter)
    _told_by_a_get_that_waits(small, waits_too, {"CORE-04", "CORE-52"}, "m2")


def test_a_report_missing_after_a_refresh_is_told_apart_by_the_depth_the_refresh_left():
    """On z/OS, a message put with an expiration report asked for, expired, and REFRESH QMGR TYPE(EXPIRY) on its
    queue: no report on the reply queue after it reads as the message discarded without its report (EXP-08,
    EXP-12, EXP-13), as the history shows, where a refresh that left the message where it was (EXP-24) explains it
    as well; the twelve-fault run published the reports' rules for a queue manager that never expires a message.
    The queue's depth inquired just after the refresh still counts the message there: that is the departure, the
    refresh's alone, and the reply queue goes."""
    from conformance.records.history import blamed_rules

    adapter = create_adapter("simulated", {"faults": "expired-message-returned", "platform": "zos"})
    io = C.MQOO_INPUT_SHARED | C.MQOO_BROWSE | C.MQOO_OUTPUT | C.MQOO_INQUIRE
    ops = [L.DefineQueue(queue="APP.Q"), L.DefineQueue(queue="REPLY.Q"), L.Connect(conn="c1"),
           L.Open(conn="c1", handle="h1", queue="APP.Q", options=io),
           L.Open(conn="c1", handle="h2", queue="REPLY.Q", options=io),
           L.Put(conn="c1", handle="h1", body="m1", md=L.MessageDescriptor(
               expiry=8, report=C.MQRO_EXPIRATION_WITH_FULL_DATA, reply_to_q="REPLY.Q")),
           L.AdvanceClock(tenths=12), L.RefreshExpiry(queues="APP.*"),
           L.Get(conn="c1", handle="h2", options=C.MQGMO_NO_SYNCPOINT)]
    found = failure_of(adapter, "expiry", ops, platform=C.PLATFORM_ZOS)
    assert "EXP-24" not in blamed_rules(found) and "EXP-08" in blamed_rules(found), blamed_rules(found)
    small = minimise(found, adapter)
    assert blamed_rules(small) == ("EXP-24",), (small.mismatch, [s.op for s in small.steps])
    last = small.steps[-1].op
    assert isinstance(last, L.InquireQueue) and last.queue == "APP.Q", [s.op for s in small.steps]
    assert isinstance(small.steps[-2].op, L.RefreshExpiry) and "REPLY.Q" not in {
        getattr(s.op, "queue", None) for s in small.steps}, [s.op for s in small.steps]


def _trigger_after_alter(sync: bool = False, probe: bool = False) -> list:
    """A priority-0 message put to a FIRST-triggered queue with no trigger monitor, TriggerMsgPriority then
    altered to 4, and the initiation queue's depth inquired (``probe``: also just after the put; ``sync``: the
    put under syncpoint, committed after that inquiry)."""
    depth = L.InquireQueue(queue="INIT.Q", names=("CURDEPTH",))
    return [L.DefineProcess(process="APP.PROCESS", appl_type=6, appl_id="/opt/app/server"),
            L.DefineQueue(queue="INIT.Q"),
            L.DefineQueue(queue="APP.Q", attrs=(("INITQ", "INIT.Q"), ("PROCESS", "APP.PROCESS"), ("TRIGGER", 1))),
            L.Connect(conn="putter"),
            L.Open(conn="putter", handle="h1", queue="APP.Q", options=C.MQOO_OUTPUT | C.MQOO_INQUIRE),
            L.Put(conn="putter", handle="h1", body="m1",
                  options=C.MQPMO_SYNCPOINT if sync else C.MQPMO_NO_SYNCPOINT),
            *([depth] if probe else []), *([L.Commit(conn="putter")] if sync else []),
            L.AlterQueue(queue="APP.Q", attrs=(("TRIGMPRI", 4),)), depth]


def test_an_initiation_queue_seen_empty_tells_which_event_wrote_a_trigger_message_later():
    """A trigger message on the initiation queue after TriggerMsgPriority was raised above the only message's
    priority reads as the alter's event counting the message whatever its priority (TRIG-02) as well as the put's
    event, which had no trigger monitor, writing one (TRIG-12): the twelve-fault run published "one of" the two.
    The initiation queue's depth seen empty just after the put, as MQ gives it, shows the put's event wrote none:
    TRIG-02 alone (the model forgets what an event before it could explain, as after a get that finds the queue
    empty), and minimising puts that inquiry in.  A put under syncpoint, not yet committed at the inquiry, could
    still have its trigger message held: there the depth does not tell them apart."""
    from conformance.records.history import blamed_rules

    adapter = create_adapter("simulated", {"faults": "trigmpri-ignored", "platform": "distributed"})
    assert set(blamed_rules(failure_of(adapter, "trigger", _trigger_after_alter()))) == {"TRIG-02", "TRIG-12"}
    assert blamed_rules(failure_of(adapter, "trigger", _trigger_after_alter(probe=True))) == ("TRIG-02",)
    held = failure_of(adapter, "trigger", _trigger_after_alter(sync=True, probe=True))
    assert set(blamed_rules(held)) == {"TRIG-02", "TRIG-12"}, blamed_rules(held)
    small = minimise(failure_of(adapter, "trigger", _trigger_after_alter()), adapter)
    assert blamed_rules(small) == ("TRIG-02",), (small.mismatch, [s.op for s in small.steps])
    ops = [s.op for s in small.steps]
    seen = [i for i, op in enumerate(ops) if isinstance(op, L.InquireQueue)]
    assert len(seen) == 2 and small.steps[seen[0]].observed.attrs == (("CURDEPTH", 0),), ops
    assert seen[0] > next(i for i, op in enumerate(ops) if isinstance(op, L.Put))
    assert seen[0] < next(i for i, op in enumerate(ops) if isinstance(op, L.AlterQueue)), ops


def test_on_real_time_one_replay_takes_away_the_calls_that_changed_nothing():
    """Inquiries, and calls the system refused (a get that found no message), changed nothing as the system
    answered them: on a system that runs on real time they are tried gone all at once, in one replay, before
    the search that removes calls a few at a time."""
    ticking = Ticking("priority-ignored")
    opts = C.MQOO_OUTPUT | C.MQOO_INPUT_SHARED | C.MQOO_INQUIRE
    quiet = [L.InquireQueue(queue="Q", names=("CURDEPTH",)), L.Get(conn="a", handle="h", options=C.MQGMO_NO_SYNCPOINT)]
    ops = [L.DefineQueue(queue="Q", attrs=(("MSGDLVSQ", C.MQMDS_PRIORITY),)), L.Connect(conn="a"),
           L.Open(conn="a", handle="h", queue="Q", options=opts), *quiet * 4,
           L.Put(conn="a", handle="h", body="lo", options=C.MQPMO_NO_SYNCPOINT, md=L.MessageDescriptor(priority=1)),
           L.InquireQueue(queue="Q", names=("CURDEPTH",)),
           L.Put(conn="a", handle="h", body="hi", options=C.MQPMO_NO_SYNCPOINT, md=L.MessageDescriptor(priority=8)),
           L.Get(conn="a", handle="h", options=C.MQGMO_NO_SYNCPOINT)]
    failure = failure_of(ticking, "core", ops)
    assert sum(s.observed.rc == C.MQRC_NO_MSG_AVAILABLE for s in failure.steps) == 4
    small = minimise(failure, ticking, replays=2)
    used = [type(s.op).__name__ for s in small.steps if not isinstance(s.op, L.AdvanceClock)]
    assert used == ["DefineQueue", "Connect", "Open", "Put", "Put", "Get"], used
    assert set(small.rules) == set(failure.rules)


def test_on_real_time_a_departing_call_of_a_connection_keeps_that_connections_calls_first():
    """A commit on a connection already disconnected, answered as if it worked (MQ: MQRC_HCONN_ERROR): the call
    names no queue, so the first cut by queue keeps everything; on real time the calls of its own connection
    (and what is on none of the others' queues) are tried first, in one replay, and another connection's traffic
    on another queue goes."""
    ticking = Ticking("disconnected-connection-works")
    noise = []
    for i in range(6):
        noise += [L.Put(conn="b", handle="o", body=f"n{i}", options=C.MQPMO_NO_SYNCPOINT),
                  L.Get(conn="b", handle="o", options=C.MQGMO_NO_SYNCPOINT)]
    ops = [L.DefineQueue(queue="OTHER"), L.Connect(conn="b"),
           L.Open(conn="b", handle="o", queue="OTHER", options=C.MQOO_OUTPUT | C.MQOO_INPUT_SHARED),
           *noise[:6], L.Connect(conn="a"), *noise[6:], L.Disconnect(conn="a"), L.Commit(conn="a")]
    failure = failure_of(ticking, "core", ops)
    assert failure.mismatch.op == L.Commit(conn="a")
    small = minimise(failure, ticking, replays=1)
    used = [s.op for s in small.steps if not isinstance(s.op, L.AdvanceClock)]
    assert used == [L.Connect(conn="a"), L.Disconnect(conn="a"), L.Commit(conn="a")], used
    assert set(small.rules) == set(failure.rules)


def test_a_lost_context_shown_behind_an_order_set_aside_minimises_to_the_context_alone():
    """A handler that forwards without its messages' context, on a queue manager ignoring priority (CORE-04,
    found broken and set aside): the run's history showed the lost context only behind another message in
    the place of MQ's (a priority-0 message forwarded first and got first), the differing field the body.
    The departure named for fewer rules, blamed on the same one, is the message got with its context lost:
    the minimiser keeps it, and the priority-4 message goes."""
    from conformance.records.history import blamed_rules, load_failure
    from conformance.records.render import render_failure
    from conformance.runner.minimise import minimise
    from reference_model import language as L

    from pathlib import Path

    failure = load_failure(Path(__file__).parent / "data" / "histories" / "dlq-context-lost-behind-an-order.json")
    assert failure.mismatch.fields == ("message.body",) and failure.rules[0] == "CORE-04"
    faulty = create_adapter("simulated", {"faults": "dlq-context-not-passed,priority-ignored"})
    found = minimise(failure, faulty, set_aside=frozenset({"CORE-04"}))
    assert found.reproduced is True
    assert found.mismatch.fields == ("message.context",) and "CORE-04" not in found.rules
    assert blamed_rules(found, 0, frozenset({"CORE-04"})) == ("DLQ-12",)
    puts = [s.op for s in found.steps if isinstance(s.op, (L.Put, L.Put1))]
    assert len(puts) == 1 and len(found.steps) < len(failure.steps)
    # the text says what the context was: the message was put with a context set, every field of it blank
    text = render_failure(found)
    assert "context was the queue manager's default where MQ gives (all blank)" in text, text
    assert "context=(all blank)" in text, text


def test_an_alteration_left_with_no_attribute_goes():
    """The forward queue defined put-inhibited and enabled by an alteration before the handler runs: neither call
    can go alone while the other stays, so both stay until their attributes are dropped one by one (the queue
    then as MQ defines it), which leaves an alteration of nothing. It goes too."""
    from pathlib import Path

    from conformance.records.history import load_failure
    from conformance.runner.minimise import minimise

    failure = load_failure(Path(__file__).parent / "data" / "histories" / "dlq-context-lost-behind-an-order.json")
    steps = list(failure.steps)
    define = next(i for i, s in enumerate(steps) if isinstance(s.op, L.DefineQueue) and s.op.queue == "PARK")
    alter = next(i for i, s in enumerate(steps) if isinstance(s.op, L.AlterQueue) and s.op.queue == "PARK")
    steps[define] = attrs.evolve(steps[define], op=attrs.evolve(steps[define].op,
                                                                attrs=(("PUT", C.MQQA_PUT_INHIBITED),)))
    steps[alter] = attrs.evolve(steps[alter], op=attrs.evolve(steps[alter].op, attrs=(("PUT", C.MQQA_PUT_ALLOWED),)))
    faulty = create_adapter("simulated", {"faults": "dlq-context-not-passed,priority-ignored"})
    found = minimise(attrs.evolve(failure, steps=tuple(steps)), faulty, set_aside=frozenset({"CORE-04"}))
    assert found.reproduced is True and found.mismatch.fields == ("message.context",)
    assert not [s for s in found.steps if isinstance(s.op, L.AlterQueue)], [s.op for s in found.steps]
    assert not [s for s in found.steps if isinstance(s.op, L.DefineQueue) and s.op.attrs]
