"""The step memo: checks taken from histories already followed are the checks the model gives.

The memo is sound only because the model is pure: a step never changes the state it starts from.
"""

import collections
import pickle

import pytest

from adapters.registry import create_adapter
from conformance.checker import sequential as checker
from conformance.checker.sequential import MEMO, ModelTracker
from conformance.runner.engine import run_areas
from reference_model import language as L
from reference_model import model
from reference_model import mqconst as C

AREAS = ("core", "syncpoint", "expiry", "trigger", "cluster", "dlq")


@pytest.fixture
def memo_off():
    limit = MEMO.limit
    MEMO.limit = 0
    MEMO.clear()
    yield
    MEMO.limit = limit
    MEMO.clear()


@pytest.fixture
def fresh_memo():
    MEMO.clear()
    MEMO.hits = MEMO.misses = 0
    yield MEMO
    MEMO.clear()


@pytest.fixture
def fresh_steps():
    checker.STEPS.clear()
    checker.STEPS.hits = checker.STEPS.misses = 0
    yield checker.STEPS
    checker.STEPS.clear()


def _copy(state):
    """A deep copy of a model state, all its own (a pickle's round trip: equal to copy.deepcopy's for the
    model's attrs values, and the purity checks below ran in a quarter of the time with it)."""
    return pickle.loads(pickle.dumps(state, pickle.HIGHEST_PROTOCOL))


def test_no_model_step_changes_the_state_it_starts_from(monkeypatch, memo_off):
    """Every step of a run in every area, with the state it started from compared before and after."""
    real_step = model.step
    steps, changed = [0], []

    def checked_step(state, op):
        before = _copy(state)
        branches = real_step(state, op)
        steps[0] += 1
        if state != before:
            changed.append(type(op).__name__)
        return branches

    monkeypatch.setattr(checker.model, "step", checked_step)
    record = run_areas(create_adapter("simulated", {}), list(AREAS), examples=4, seed=11)
    assert not record.failures and record.error is None
    assert steps[0] > 1000
    assert changed == []


def test_no_state_changes_once_its_step_is_over(monkeypatch, fresh_memo):
    """States share queues and connections until one of them changes its own copy: every state a
    step started from or gave stays as it was through the steps that follow (the latest few dozen
    compared with copies taken when their step ended), with the memo handing states on as it does."""
    real_step = model.step
    recent, steps, changed = collections.deque(), [0], []
    window = 48

    def compare(earlier, kept, after, step):
        if earlier != kept:
            changed.append((after, step))

    def checked_step(state, op):
        branches = real_step(state, op)
        steps[0] += 1
        recent.extend((s, _copy(s), type(op).__name__) for s in [state] + [b.state for b in branches])
        # each state compared with its copy once it has lived through the window's later steps (a change, once
        # made, stays: comparing it after every step as well only repeated the comparison)
        while len(recent) > window:
            compare(*recent.popleft(), steps[0])
        return branches

    monkeypatch.setattr(checker.model, "step", checked_step)
    record = run_areas(create_adapter("simulated", {}), list(AREAS), examples=4, seed=12)
    while recent:
        compare(*recent.popleft(), steps[0])
    assert not record.failures and record.error is None
    assert steps[0] > 1000 and fresh_memo.hits > 0
    assert changed == []


def _outcome(record):
    return ([(f.area, f.platform, f.mismatch.rules, [L.to_json(s.op) for s in f.steps]) for f in record.failures],
            record.coverage.to_json())


@pytest.mark.parametrize("faults", ["", "trigmpri-ignored", "dlq-ignore-not-assumed",
                                    "dlq-context-not-passed,backout-count-not-incremented"])
def test_a_run_with_the_memo_is_the_run_without_it(faults, fresh_memo, fresh_steps):
    """Same seed, same verdicts, same counterexamples blamed on the same rules, same coverage, with and without
    the memo (a keep-going run's steps past the departures it found among them) and the model's outcomes kept
    by the state they start from (:data:`~conformance.checker.sequential.STEPS`: blaming and minimising a
    departure follow its history again and again)."""
    areas = ["trigger", "dlq"] if not faults else (["trigger"] if faults.startswith("trig") else ["dlq"])

    def run():
        return run_areas(create_adapter("simulated", {"faults": faults} if faults else {}), areas,
                         examples=25, seed=5)

    with_memo = run()
    assert fresh_memo.hits > 0
    if faults:   # the test can fail: the departures' checks found most steps again
        assert fresh_steps.hits > fresh_steps.misses
    fresh_memo.limit, limit = 0, fresh_memo.limit
    fresh_steps.limit, steps_limit = 0, fresh_steps.limit
    try:
        without = run()
    finally:
        fresh_memo.limit, fresh_steps.limit = limit, steps_limit
    assert bool(with_memo.failures) == bool(faults)
    assert _outcome(with_memo) == _outcome(without)
    assert [f.mismatch.blamed for f in with_memo.failures] == [f.mismatch.blamed for f in without.failures]


STD = C.MQOO_INPUT_SHARED | C.MQOO_BROWSE | C.MQOO_OUTPUT
PREFIX = [(L.DefineQueue(queue="Q"), L.OK), (L.Connect(conn="a"), L.OK),
          (L.Open(conn="a", handle="h", queue="Q", options=STD), L.OK),
          (L.Put(conn="a", handle="h", body="x", md=L.MessageDescriptor(priority=1)), L.OK)]
GET = L.Get(conn="a", handle="h", options=C.MQGMO_NO_SYNCPOINT)


def _follow(history, memo=True):
    tracker = ModelTracker(C.PLATFORM_DISTRIBUTED, memo=memo)
    return [tracker.advance(op, obs) for op, obs in history], tracker


def test_a_history_that_leaves_a_known_prefix_is_checked_by_the_model(fresh_memo):
    got = L.Observation(message=L.ReturnedMessage(body="x", priority=1, persistence=0, msg_id="M"))
    plain, _ = _follow(PREFIX + [(GET, got)], memo=False)
    first, _ = _follow(PREFIX + [(GET, got)])
    assert fresh_memo.misses == len(PREFIX) + 1 and fresh_memo.hits == 0
    again, tracker = _follow(PREFIX + [(GET, got)])
    assert fresh_memo.hits == len(PREFIX) + 1
    assert plain == first == again and tracker.index == len(PREFIX) + 1
    # the same beginning, then an observation the model does not allow: a mismatch, never the memo's check
    wrong = L.Observation(message=L.ReturnedMessage(body="y", priority=1, persistence=0, msg_id="M"))
    checks, tracker = _follow(PREFIX + [(GET, wrong)])
    assert checks[:-1] == plain[:-1] and checks[-1].mismatch is not None
    assert checks[-1].mismatch.fields == ("message.body",)
    # a mismatch is kept too: the next tracker on that history meets the same one, from the memo
    hits = fresh_memo.hits
    again, _ = _follow(PREFIX + [(GET, wrong)])
    assert again == checks and fresh_memo.hits == hits + len(PREFIX) + 1


def test_checks_that_count_no_classes_are_kept_apart_from_those_that_do(fresh_memo):
    """The concurrent checker's search follows its histories in the memo with trackers that count no input
    classes: a sequential tracker that then follows the same history still gets each step's classes, not the
    search's empty ones (the coverage of a run that checked races first would have lost them)."""
    got = L.Observation(message=L.ReturnedMessage(body="x", priority=1, persistence=0, msg_id="M"))
    history = PREFIX + [(GET, got)]
    counted, _ = _follow(history, memo=False)
    assert any(check.classes for check in counted)   # the test can fail: some step reaches a class
    blind = ModelTracker(C.PLATFORM_DISTRIBUTED, memo=True, classes=False)
    assert not any(blind.advance(op, obs).classes for op, obs in history)
    again, _ = _follow(history)
    assert [c.classes for c in again] == [c.classes for c in counted]


def test_a_step_past_a_departure_is_kept_with_where_it_leads(fresh_memo):
    """A keep-going run's way past a departure (the rules it set aside relaxed) is the memo's too: a second
    tracker on the same history takes it from there, reaching the same states, and goes on in the memo after
    it; a third whose history then departs otherwise is checked by the model from where the step past led."""
    got = L.Observation(message=L.ReturnedMessage(body="x", priority=1, persistence=0, msg_id="M", backout_count=3))
    after = [(L.InquireQueue(queue="Q", names=("CURDEPTH",)), L.Observation(attrs=(("CURDEPTH", 0),)))]

    def follow(history, memo=True):
        tracker = ModelTracker(C.PLATFORM_DISTRIBUTED, set_aside=frozenset({"CORE-17"}), memo=memo)
        checks = []
        for op, obs in history:
            checks.append(tracker.advance(op, obs))
            if checks[-1].mismatch is not None:
                assert tracker.step_past(op, obs)
        return checks, tracker

    plain, plain_tracker = follow(PREFIX + [(GET, got)] + after, memo=False)
    assert plain[len(PREFIX)].mismatch is not None and plain[-1].mismatch is None
    first, _ = follow(PREFIX + [(GET, got)] + after)
    misses = fresh_memo.misses
    again, tracker = follow(PREFIX + [(GET, got)] + after)
    assert fresh_memo.misses == misses and plain == first == again
    assert tracker.candidates == plain_tracker.candidates
    # after the step past, a depth the model does not allow: checked from the states the step past reached
    wrong = [(after[0][0], L.Observation(attrs=(("CURDEPTH", 1),)))]
    checks, _ = follow(PREFIX + [(GET, got)] + wrong)
    # (two steps new to the memo: the depth, and the way past it this helper takes)
    assert checks[-1].mismatch is not None and fresh_memo.misses == misses + 2


def test_the_memo_is_bounded(fresh_memo):
    fresh_memo.limit, limit = 3, fresh_memo.limit
    try:
        _follow(PREFIX)
        assert fresh_memo.size == len(PREFIX)
        _follow(PREFIX)   # starts again empty: the limit was reached
        assert fresh_memo.hits == 0 and fresh_memo.size == len(PREFIX)
    finally:
        fresh_memo.limit = limit


def test_the_bench_measures_each_run_without_the_memo_of_the_last(fresh_memo):
    from conformance.bench.suite import _kit_run

    _kit_run("core", C.PLATFORM_DISTRIBUTED, 5, 1)
    first = fresh_memo.hits
    _kit_run("core", C.PLATFORM_DISTRIBUTED, 5, 1)
    assert fresh_memo.hits - first == first


def _depth(n):
    return L.InquireQueue(queue="Q", names=["CURDEPTH"]), L.Observation(attrs={"CURDEPTH": n})


def test_histories_that_reach_equal_states_share_what_follows(fresh_memo):
    """Two histories that differ (a depth inquired before a message came and went, or inquired once more
    after) reach equal states: a step taken after one is found in the memo after the other, at its own
    index.  (A depth inquired after a message left witnesses its leaving, and so changes the state.)"""
    put = (L.Put(conn="a", handle="h", body="y", md=L.MessageDescriptor(priority=1)), L.OK)
    got = L.Observation(message=L.ReturnedMessage(body="x", priority=1, persistence=0, msg_id="M"))
    first = PREFIX + [_depth(1), (GET, got), _depth(0), put]
    second = PREFIX + [(GET, got), _depth(0), _depth(0), put]
    plain, _ = _follow(second, memo=False)
    _follow(first)
    hits, misses = fresh_memo.hits, fresh_memo.misses
    checks, tracker = _follow(second)
    # The first inquiry in ``first`` changed nothing, so GET was taken from the place after the prefix,
    # and the depth 0 after it is found too; the second depth 0 is new, and leads back to the place
    # after the first, where the put (from ``first``) is found.
    assert fresh_memo.misses == misses + 1
    assert fresh_memo.hits == hits + len(PREFIX) + 3
    assert checks == plain and [c.index for c in checks] == list(range(len(second)))
    assert tracker.index == len(second)


def test_a_memo_of_merged_places_is_let_go_without_the_cycle_collector(fresh_memo):
    """A step that changes nothing leads back to its own place; emptying the memo breaks such cycles."""
    import gc
    import weakref

    _follow(PREFIX + [_depth(1), _depth(1)])
    tracker = ModelTracker(C.PLATFORM_DISTRIBUTED, memo=True)
    for op, obs in PREFIX:
        tracker.advance(op, obs)
    state = weakref.ref(tracker.candidates[0])
    del tracker
    gc.disable()
    try:
        fresh_memo.clear()
        assert state() is None
    finally:
        gc.enable()


@pytest.mark.parametrize("area", AREAS)
def test_states_the_memo_takes_for_equal_behave_alike(area, fresh_memo, monkeypatch):
    """Where the memo merges two histories (their candidate states compare equal), the operation the
    run went on to make, and others of the run, have the same outcomes from either: equality leaves
    out nothing that decides what happens next (say, a cluster queue's round-robin numbers)."""
    merged, ops, followed = [], [], []
    real_place, real_step, real_advance = checker.StepMemo.place, model.step, ModelTracker.advance

    def place(self, root, states):
        made = len(self._made)
        found = real_place(self, root, states)
        if len(self._made) == made:   # not a new place: one another history reached with equal states
            alike = self._places[self.key(root, states)]
            twin = next(s for s, p in alike if p is found)
            if twin is not states:
                merged.append((twin, states))
        return found

    def advance(self, op, observed):
        if getattr(self, "twins", None) is not None:
            followed.append((*self.twins, op))
            self.twins = None
        count = len(merged)
        check = real_advance(self, op, observed)
        if len(merged) > count:
            self.twins = merged[-1]
        return check

    def step(state, op):
        if len(ops) < 5000:
            ops.append(op)
        return real_step(state, op)

    monkeypatch.setattr(checker.StepMemo, "place", place)
    monkeypatch.setattr(ModelTracker, "advance", advance)
    monkeypatch.setattr(checker.model, "step", step)
    record = run_areas(create_adapter("simulated", {}), [area], examples=60, seed=20261124)
    assert not record.failures and record.error is None
    assert followed
    probes = list(dict.fromkeys(ops))[::11][:30]

    def outcomes(states, op):
        try:
            return sorted(repr(b.observation) for s in states for b in model.step(s, op))
        except model.HistoryError as exc:   # an operation this history cannot make (a handle in use)
            return str(exc)

    for k, (twin, states, op) in enumerate(followed[:2000]):
        for probe in [op] + (probes if k % 50 == 0 else []):
            assert outcomes(twin, probe) == outcomes(states, probe), probe


def test_merging_compares_a_bounded_number_of_states_per_step(fresh_memo, monkeypatch):
    """States a digest does not tell apart (here: cluster channels differing in an attribute) are
    compared with the latest few only, so a step's cost does not grow with the run."""
    from reference_model.state import ModelState

    compared = [0]
    real_eq = ModelState.__eq__

    def eq(self, other):
        compared[0] += 1
        return real_eq(self, other)

    monkeypatch.setattr(ModelState, "__eq__", eq)
    root = ("test",)
    base = model.initial_state()
    for n in range(200):
        s = base.clone()
        s.cluster = {**s.cluster, "channels": {"TO.QM2": {"weight": n}}}
        assert fresh_memo.place(root, [s]) is not fresh_memo.place(root, [base])
    assert compared[0] <= 2 * 200 * checker.PLACES_PER_DIGEST
    again = base.clone()
    assert fresh_memo.place(root, [again]) is fresh_memo.place(root, [base])


def _blaming_run(faults: str, area: str, seed: int):
    """A run that finds ``faults``' departures, shrinks, blames and minimises them (the checks that follow one
    history again and again, from the states kept in :data:`~conformance.checker.sequential.STEPS`)."""
    adapter = create_adapter("simulated", {"faults": faults, "platform": C.PLATFORM_DISTRIBUTED})
    return run_areas(adapter, [area], examples=200, seed=seed)


def test_the_outcomes_kept_stay_the_models_own(monkeypatch, fresh_steps):
    """Every outcome kept, and the state it was kept for, is still what the model gives from that state when the
    run lets go of them: no check that was handed one changed it (blame's readings build states of their own
    from the model's, and must clone before they change one)."""
    compared, differ = [0], []
    real_clear = checker.StateSteps.clear

    def clear(self):
        for (digest, op), alike in list(self._known.items()):
            for state, branches in alike:
                compared[0] += 1
                again = model.step(_copy(state), op)
                if state.digest() != digest or [(b.observation, b.rules, b.state) for b in again] != \
                        [(b.observation, b.rules, b.state) for b in branches]:
                    differ.append(type(op).__name__)
        real_clear(self)

    monkeypatch.setattr(checker.StateSteps, "clear", clear)
    # a DLQ handler's retries, and a BackoutCount not raised (blame's readings go on with the count the system
    # showed, in a state of their own)
    for faults, area, seed in [("dlq-retry-ignored", "dlq", 8), ("backout-count-not-incremented", "core", 6)]:
        record = _blaming_run(faults, area, seed)
        assert record.failures and compared[0] > 100
    assert differ == []


def test_the_states_kept_are_bounded(fresh_steps):
    fresh_steps.limit, limit = 3, fresh_steps.limit
    try:
        state = model.initial_state()
        for op, _ in PREFIX:
            state = fresh_steps.step(state, op)[0].state
        assert fresh_steps.size == 1 and fresh_steps.misses == len(PREFIX)   # emptied at the fourth
        again = model.initial_state()
        fresh_steps.step(again, PREFIX[0][0])
        assert fresh_steps.hits == 0   # the first step was let go of
        fresh_steps.step(again, PREFIX[0][0])
        assert fresh_steps.hits == 1
    finally:
        fresh_steps.limit = limit
