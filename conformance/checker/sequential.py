"""The checker: a pure function from a history to verdicts, naming the rules broken.

A history is a sequence of (operation, observation) pairs.  The checker runs the
reference model alongside it, keeping every model state consistent with what the
system under test answered so far (the model may allow several outcomes).  A step
whose observation no allowed outcome matches is a :class:`Mismatch`, tagged with
the rule IDs that decide the fields that differ.
"""

from __future__ import annotations

import typing
from typing import Any, Iterable

import attrs

from reference_model import language as L
from reference_model import model
from reference_model import mqconst as C
from reference_model.classes import classify
from reference_model.state import ModelState

#: More candidate states than this means the history is too ambiguous to follow.
MAX_CANDIDATES = 64


@attrs.frozen(kw_only=True)
class Alternative:
    """Another reading of a failing history: a departure at an earlier step instead.

    Where MQ allows several outcomes, an observation picks some and rules the others out (a
    depth that is lower by an expired message MQ may have removed in the background, say).  If,
    from the state of an outcome ruled out at step ``index``, the rest of the history, the failing
    step included, is what MQ gives, then the system may as well have departed there, from
    ``rules``, observing ``fields`` other than ``expected``: the history cannot tell the two apart.
    """

    index: int
    expected: L.Observation
    fields: tuple[str, ...]
    rules: tuple[str, ...]

    def to_json(self) -> dict:
        return {"index": self.index, "expected": L.to_json(self.expected), "fields": list(self.fields),
                "rules": list(self.rules)}

    @classmethod
    def from_json(cls, data: dict) -> "Alternative":
        return cls(index=data["index"], expected=L.from_json(data["expected"]), fields=tuple(data["fields"]),
                   rules=tuple(data["rules"]))


@attrs.frozen(kw_only=True)
class Mismatch:
    """An observation outside the model's allowed set."""

    index: int
    op: L.Op
    observed: L.Observation
    allowed: tuple[L.Observation, ...]
    #: The fields of the closest allowed observation that differ from the observed one.
    fields: tuple[str, ...]
    #: The rules the observation breaks.
    rules: tuple[str, ...]
    #: Earlier steps where a departure explains the history as well (:func:`alternatives`); not
    #: part of what the mismatch is, so not compared.
    alternatives: tuple[Alternative, ...] = attrs.field(default=(), eq=False)
    #: The rules the history breaks, by counterfactual (:mod:`conformance.checker.blame`): each alone, relaxed,
    #: makes it pass (or together the smallest set that does); empty until worked out.
    blamed: tuple[str, ...] = attrs.field(default=(), eq=False)
    #: False when no relaxation explained the history (``blamed`` is then the first rule, unconfirmed).
    confirmed: bool = attrs.field(default=True, eq=False)
    #: True when the rules the run had set aside explain the history alone: nothing new is broken.
    known: bool = attrs.field(default=False, eq=False)
    #: True when ``blamed`` holds more than one rule and each alone explains the history: it breaks one of them,
    #: and does not show which (:attr:`conformance.checker.blame.Blame.each`).
    blamed_each: bool = attrs.field(default=False, eq=False)
    #: Of ``blamed``, those of which the history breaks one, not which, beside the others, each broken
    #: (:attr:`conformance.checker.blame.Blame.either`); empty where it breaks each, or one of all.
    blamed_either: tuple[str, ...] = attrs.field(default=(), eq=False)

    def to_json(self) -> dict:
        return {
            "index": self.index,
            "op": L.to_json(self.op),
            "observed": L.to_json(self.observed),
            "allowed": [L.to_json(o) for o in self.allowed],
            "fields": list(self.fields),
            "rules": list(self.rules),
            **({"alternatives": [a.to_json() for a in self.alternatives]} if self.alternatives else {}),
            **({"blamed": list(self.blamed), "confirmed": self.confirmed} if self.blamed else {}),
            **({"blamed_each": True} if self.blamed_each and len(self.blamed) > 1 else {}),
            **({"blamed_either": list(self.blamed_either)} if self.blamed_either and self.blamed else {}),
        }

    @classmethod
    def from_json(cls, data: dict) -> "Mismatch":
        return cls(
            index=data["index"],
            op=L.from_json(data["op"]),
            observed=L.from_json(data["observed"]),
            allowed=tuple(L.from_json(o) for o in data["allowed"]),
            fields=tuple(data["fields"]),
            rules=tuple(data["rules"]),
            alternatives=tuple(Alternative.from_json(a) for a in data.get("alternatives") or ()),
            blamed=tuple(data.get("blamed") or ()),
            confirmed=data.get("confirmed", True) is not False,
            blamed_each=data.get("blamed_each") is True,
            blamed_either=tuple(data.get("blamed_either") or ()),
        )


@attrs.frozen(kw_only=True)
class StepCheck:
    index: int
    #: Rules the step exercised and checked (the union over matching outcomes).
    rules: tuple[str, ...]
    mismatch: Mismatch | None = None
    #: True when the outcome is in doubt (``rules`` were exercised but not decided).
    in_doubt: bool = False
    #: Rules an in-doubt step still decided (that the call failed as it had to, CORE-48).
    decided: tuple[str, ...] = ()
    #: The input classes of ``rules`` the step was in (``RULE:class``, see :mod:`reference_model.classes`).
    classes: tuple[str, ...] = ()


#: Operations whose outcome is in doubt when the connection breaks during them.
IN_DOUBT_OPS = (L.Commit, L.Backout, L.Disconnect)


#: Fields of a returned message an observation holds as null when the system has no value for them (a system
#: declaring them in ``capabilities.lacks``): never compared.
NULL_IF_LACKING = frozenset({"backout_count", "expiry"})
#: Attributes of an answer held as null when the system has no value for them (the ``attrs.`` fields a system may
#: declare in ``capabilities.lacks``): never compared.  A null anywhere else (a DLQ handler's fate of a message, where
#: a cluster put went, an attribute every queue has) is a value, and differs from the one MQ gives.
NULL_ATTRS_IF_LACKING = frozenset({"CURDEPTH", "IPPROCS", "OPPROCS"})


def differing_fields(expected: L.Observation, observed: L.Observation) -> list[str]:
    """Field paths where ``observed`` falls outside ``expected`` (empty when it matches)."""
    out = []
    if expected.cc != observed.cc or expected.rc != observed.rc:
        out.append("rc")
    em, om = expected.message, observed.message
    if (em is None) != (om is None):
        out.append("message")
    elif em is not None and om is not None and em.body != om.body:
        out.append("message.body")  # another message: its other fields say nothing more
    elif em is not None:
        for a in attrs.fields(typing.cast(Any, L.ReturnedMessage)):
            want, got = getattr(em, a.name), getattr(om, a.name)
            if got is None and a.name in NULL_IF_LACKING:
                ok = True   # the system has no such value (capabilities.lacks): not compared
            elif a.name in ("trigger", "dlh"):
                ok = want == got
            elif a.name == "xmit_header":
                ok = (want is None and got is None) or (
                    want is not None and got is not None and _value_ok(want.expiry, got.expiry))
            elif want is None and a.name != "msg_id":
                ok = True  # any value
            else:
                ok = _value_ok(want, got)
            if not ok:
                out.append(f"message.{a.name}")
    ea, oa = dict(expected.attrs or ()), dict(observed.attrs or ())
    if (expected.attrs is None) != (observed.attrs is None):
        out.append("attrs")
    else:
        for name in sorted(set(ea) | set(oa)):
            if name in oa and oa[name] is None and name in NULL_ATTRS_IF_LACKING:
                continue   # the system has no such value (capabilities.lacks): not compared
            if ea.get(name) != oa.get(name):
                out.append(f"attrs.{name}")
    return out


def _matches(expected: L.Observation, observed: L.Observation) -> bool:
    """``observed`` is within ``expected``: equal, or equal but for what ``expected`` leaves open."""
    if expected == observed:
        # equal values match, but for a returned message's MsgId that must be there (None: any identifier)
        m = observed.message
        if m is None or m.msg_id is not None:
            return True
    return not differing_fields(expected, observed)


#: The rule a generated MsgId met on two messages breaks: MQ generates a unique one for a message put without one.
UNIQUE_ID_RULE = "CORE-11"


def _generated_id(expected: L.Observation, observed: L.Observation) -> str | None:
    """The MsgId the system generated for the message ``observed`` returns, where the model leaves it open (a
    program's message put without one; not a report, trigger message, dead letter or segment, whose MsgId may
    be another message's): None for any other."""
    em, om = expected.message, observed.message
    if em is None or om is None or em.msg_id is not None or not om.msg_id:
        return None
    if om.dlh is not None or om.trigger is not None or om.feedback != C.MQFB_NONE \
            or om.segment_status != C.MQSS_NOT_A_SEGMENT:
        return None
    return om.msg_id


def bind_generated_id(branch: model.Branch, observed: L.Observation,
                      relaxed: frozenset[str] = frozenset()) -> tuple[model.Branch, bool] | None:
    """``branch``, whose outcome ``observed`` matches, with the MsgId the system generated for the message it
    returns noted in its state (:attr:`ModelState.generated`), and whether that needed CORE-11 relaxed (the
    MsgId one the system generated for another message: None unless ``relaxed`` has the rule).  Bodies tell
    messages apart; two with one body and one MsgId are not told apart (a departure missed, never a false one)."""
    mid = _generated_id(branch.observation, observed)
    if mid is None or observed.message is None:
        return branch, False
    body = observed.message.body
    seen = branch.state.generated.get(mid)
    if seen == body:
        return branch, False
    if seen is not None:
        return (branch, True) if UNIQUE_ID_RULE in relaxed else None
    state = branch.state.clone()
    state.generated = {**state.generated, mid: body}
    return attrs.evolve(branch, state=state), False


def _value_ok(want, got) -> bool:
    """An expected value matches: ``None`` is any value (any non-empty identifier), ranges contain."""
    if want is None:
        return got is not None and got != ""
    if isinstance(want, L.IntRange):
        return got in want
    return want == got


def _direction(branch: model.Branch, field: str, observed: L.Observation) -> str:
    """``">"`` or ``"<"`` when an observed attribute is above or below the expected one."""
    if field.startswith("attrs."):
        name = field[len("attrs."):]
        want, got = dict(branch.observation.attrs or ()).get(name), dict(observed.attrs or ()).get(name)
        if isinstance(want, int) and isinstance(got, int) and want != got:
            return ">" if got > want else "<"
    return ""


def _available_later(branch: model.Branch, body) -> bool:
    """Whether the message ``body`` is on the get's queue, committed and available in the branch (not
    excluded or removed): a get that returns it instead of the expected one broke the delivery order."""
    queue = branch.state.queues.get(branch.field_rules.get("message.body:queue", ("",))[0])
    if queue is None or body is None or body in branch.excluded or body in branch.state.removed:
        return False
    return any(m.body == body and m.got_by is None and m.put_by is None for m in queue.messages)


def _capped(branch: model.Branch, body) -> bool:
    """Whether the message ``body`` on the get's queue was put with a priority above MaxPriority (CORE-08 placed
    it at MaxPriority)."""
    queue = branch.state.queues.get(branch.field_rules.get("message.body:queue", ("",))[0])
    return queue is not None and queue.attr("MSGDLVSQ") == C.MQMDS_PRIORITY and any(
        m.body == body and m.md.priority > C.MAX_PRIORITY for m in queue.messages)


#: When MQ produces an expiration report: on discarding an expired message that asked for one, not before.
EXPIRY_REPORTS = ("EXP-08", "EXP-12")


def report_never_made(branch: model.Branch, observed: L.Observation) -> bool:
    """Whether ``observed`` returned an expiration report that MQ has produced nowhere in ``branch``."""
    got = observed.message
    if got is None or got.msg_type != C.MQMT_REPORT or got.feedback != C.MQFB_EXPIRATION:
        return False
    return not any(m.body == got.body and m.md.msg_type == C.MQMT_REPORT
                   for q in branch.state.queues.values() for m in q.messages)


def _implicated(branch: model.Branch, fields: list[str], observed: L.Observation) -> tuple[str, ...]:
    rules: list[str] = []
    body = observed.message.body if observed.message is not None else None
    if {"message", "message.body", "rc"} & set(fields) and report_never_made(branch, observed):
        # an expiration report MQ never produced (for a message not discarded, or discarded later): the
        # rules of when reports are made, not those of the message it reports on (whose data it may carry)
        return EXPIRY_REPORTS
    # Fields the model says follow from the others (a DLQ handler that ends because a message
    # went otherwise): their rules come after those of the fields they follow from.
    last = branch.field_rules.get("fields:last", ())
    for f in sorted(fields, key=lambda f: f in last):
        full = branch.field_rules.get("rc:full") if f == "rc" and observed.rc == C.MQRC_Q_FULL else None
        if full:   # refused as full where MQ accepts: what should have left the queue stayed
            rules += full
            continue
        # rules for the particular value observed (a reason code, an attribute), where the model gives them
        value = observed.rc if f == "rc" else dict(observed.attrs or ()).get(f[6:]) if f.startswith("attrs.") \
            else None
        alone = branch.field_rules.get(f"{f}=={value}") if value is not None else None
        if alone:   # the model says these rules explain this value by themselves
            rules += alone
            continue
        if f.startswith("attrs."):
            rules += branch.field_rules.get(f"{f}={value}", ())
        later = branch.field_rules.get("message.body:later") if f == "message.body" else None
        if later and _available_later(branch, body):
            # Out of order, or the expected message is gone: the order rules lead, then what the
            # expected message's history adds beyond an application's plain put (a backout, ...).
            plain = set(later) | {"CORE-01", "CORE-02"}
            rules += [*later, *(r for r in branch.field_rules.get("message.body", ()) if r not in plain)]
            # the message returned was put at a priority above MaxPriority and placed at MaxPriority: placed at
            # its own, above the others, it comes first (CORE-08)
            rules += ["CORE-08"] if _capped(branch, body) else []
            continue
        rules += (branch.field_rules.get(f + _direction(branch, f, observed)) or branch.field_rules.get(f)
                  or branch.field_rules.get(f.split(".")[0]) or branch.rules)
    # (trigger messages all have an empty body: one returned is never known by it for one that left before)
    anonymous = observed.message is not None and body == "" and observed.message.format == C.MQFMT_TRIGGER
    hidden: tuple[str, ...] = ()
    if body is not None and not anonymous:
        # A message MQ would not return at all: the rule that excludes it (uncommitted, expired,
        # locked, already got) is what the system broke, before any rule about order or fields.
        delivered = branch.observation.message is not None and branch.observation.message.body == body
        gone = () if delivered else branch.state.removed.get(body, ())   # not the one this get removes
        # (the message the closest outcome delivers is not hidden from it, whatever else may be)
        hidden = () if delivered else (*branch.excluded.get(body, ()), *gone)
        if hidden and set(fields) <= {"message", "message.body"}:
            # A message MQ would not return at all came back: that is the whole departure; the
            # history of the message MQ would have returned instead has nothing to do with it.
            rules = []
        # (the message this get delivers is removed by it: why it left is no part of a departure
        # in its fields)
        rules = [*hidden, *rules, *gone]
    if not rules:
        rules = list(branch.rules)
    want = branch.observation.message
    if "message.body" in fields and want is not None and observed.message is not None \
            and isinstance(want.priority, int) and want.priority != observed.message.priority \
            and not (branch.field_rules.get("message.body:later", ())[:1] == ("CORE-19",)
                     and _available_later(branch, body)):
        # The wrong message came back and it has another priority: the order rule chose it
        # (CORE-04 priority order, CORE-06 FIFO whatever the priority); a browse or cursor
        # rule only passed along what that order chose.  Not so for a browse-next that returned
        # a message further on than the one MQ returns next: the cursor passed that one over
        # (CORE-19 leads), the order having put both where they are.  A get that selects, returning a message it
        # selects: the delivery order among the messages selected (CORE-52) leads the order rules, as the model
        # gives it (one it does not select is what the selection broke: that leads, as it came).
        selected = branch.field_rules.get("message.body:later", ())[:1] == ("CORE-52",) and not hidden
        front = ("CORE-52", "CORE-04", "CORE-06") if selected else ("CORE-04", "CORE-06")
        rules = [r for r in front if r in rules] + [r for r in rules if r not in front]
    return tuple(dict.fromkeys(rules))


def _nothing_changes_next(fields: list[str], expected: L.Observation, observed: L.Observation) -> bool:
    """What differs cannot change what happens next: attribute values, fields of the same returned
    message, or the reason code of a call that did its work either way (a warning against success);
    not which message came back, nor whether the call worked."""
    if {"message", "message.body", "attrs"} & set(fields):
        return False
    if "rc" in fields and C.MQRC_BACKED_OUT in (expected.rc, observed.rc):
        # a warning that says the unit of work was backed out, against one that says it was not (a commit
        # answered MQRC_BACKED_OUT): the state after it is another
        return False
    if any(f.startswith("attrs.") for f in fields) and EFFECTS & {k for k, _ in (expected.attrs or ())}:
        # attributes that say what a call did (a DLQ handler's fates, where a cluster put went), not what an
        # inquiry saw: the state after it is another
        return False
    return "rc" not in fields or C.MQCC_FAILED not in (expected.cc, observed.cc)


#: Observation attributes that report a call's effect, not a value read.
EFFECTS = frozenset({"HANDLER", "DESTINATION"})


def _armed(state: ModelState, conn: str) -> ModelState:
    """``state`` with connection ``conn`` cut by the network while its call was in flight."""
    s = state.clone()
    s.armed = s.armed | {conn}
    return s


def _distinct_states(branches: Iterable[model.Branch]) -> list[ModelState]:
    """The branches' states, each once, at most :data:`MAX_CANDIDATES`."""
    if isinstance(branches, list) and len(branches) == 1:
        return [branches[0].state]
    return _unique(b.state for b in branches)


def _unique(given: Iterable[ModelState]) -> list[ModelState]:
    """``given``, each state once, at most :data:`MAX_CANDIDATES`."""
    states: list[ModelState] = []
    alike: dict[tuple, list[ModelState]] = {}   # by digest: only states with the same one can be equal
    for state in given:
        same = alike.setdefault(state.digest(), [])
        if not any(state is s or state == s for s in same):
            same.append(state)
            states.append(state)
            if len(states) == MAX_CANDIDATES:
                break
    return states


class StepMemo:
    """The checks of histories already followed, shared by every tracker that starts from the same place.

    The model is pure, so a history prefix (its operations and observations) decides the
    candidate states after it and every check along it.  Hypothesis builds most cases from
    parts of earlier ones, and shrinking replays the same beginnings again and again: a
    tracker that is still on a prefix already followed takes its checks from here instead of
    stepping the model.  A machine's run empties it at its end (its cases are what share
    beginnings; held longer, its many objects cost the collector more than they save).
    A step that departs is kept too, with the way a keep-going run went past it (the model's
    states the rules set aside let it reach; they are in the tree's key), so that shrinking, which
    meets the same departures again and again, follows them from here.  The memo holds at most ``limit`` steps
    (a step holds its candidate states: 3 to 8 KB); past that it starts again empty (a limit
    of 0 turns it off).

    Histories that differ may reach the same candidate states (a put then a get, where another
    put nothing; a trigger message made and read): what follows depends on the states alone,
    so the tree's places are merged where the states after them are equal (found by their
    :meth:`~reference_model.state.ModelState.digest` first), and a step taken after one history
    is found again after the other.
    """

    def __init__(self, limit: int = 10_000) -> None:
        self.limit = limit
        self._roots: dict[tuple, dict] = {}
        #: The places of each tree by the candidate states after them: (root key, hash of their
        #: digests) -> [(states, place)].
        self._places: dict[tuple, list[tuple[list, dict]]] = {}
        #: Every place made since the memo was last emptied (a place may outlive its entry in _places).
        self._made: list[dict] = []
        self.size = 0
        #: Steps taken from the memo, and steps the model had to compute (for benchmarks).
        self.hits = 0
        self.misses = 0

    def root(self, key: tuple) -> dict | None:
        """The prefix tree of histories that start in the state ``key`` names (None: the memo is off)."""
        if self.limit <= 0:
            return None
        if self.size >= self.limit:
            self.clear()
        return self._roots.setdefault(key, {})

    @staticmethod
    def key(root: tuple, states: list) -> tuple:
        """Where :meth:`place` keeps the places reached with ``states`` (and with others of the same digests)."""
        return root, hash(tuple(s.digest() for s in states))

    def place(self, root: tuple, states: list) -> dict:
        """The place in ``root``'s tree after which the candidates are ``states``: one another history
        already reached with equal states, or a new one."""
        key = self.key(root, states)
        alike = self._places.get(key)
        if alike is None:
            alike = self._places[key] = []
        for reached, known in alike:
            if reached == states:
                return known
        place: dict = {}
        if len(alike) >= PLACES_PER_DIGEST:
            # states a digest does not tell apart (say, the same queues, and channels that differ
            # only in their attributes): only the latest are compared, so a step costs the same
            # however many there were
            alike.pop(0)
        alike.append((states, place))
        self._made.append(place)
        return place

    def clear(self) -> None:
        # Merged places make the trees a graph with cycles (a step that changes nothing leads back to
        # its own place): emptying every place lets each go when the last reference does, rather
        # than waiting for the cycle collector.
        for place in self._made:
            place.clear()
        self._made.clear()
        self._roots.clear()
        self._places.clear()
        self.size = 0


#: Places the memo keeps for merging under one digest of candidate states (the latest).
PLACES_PER_DIGEST = 8


class StateSteps:
    """The model's outcomes of an operation from states already stepped from, found again by the state.

    :class:`StepMemo` finds a step again by the history before it; a check that follows one history many
    times over (blaming a departure: the same history under each rule relaxed in turn, most of its steps
    answered alike under every one; minimising: each candidate a history with a few steps removed) steps
    from the same states again and again by other ways.  The model is pure, so the outcomes of ``op`` from a
    state equal to one already stepped from are those again; a DLQ handler's pass, which the model takes
    message by message, costs a hundred times a put.  States are found by their
    :meth:`~reference_model.state.ModelState.digest` first, then compared in full.  What is kept is a copy of
    the state stepped from, and each caller is given its own list of the outcomes, whose states it must not
    change (as it must not change any outcome of the model's: the next step starts from them).  At most
    ``limit`` outcomes are kept; past that it starts again empty (0 turns it off).
    """

    def __init__(self, limit: int = 20_000) -> None:
        self.limit = limit
        self._known: dict[tuple, list[tuple[ModelState, list[model.Branch]]]] = {}
        self.size = 0
        #: Steps found again, and steps the model had to take (for benchmarks and tests).
        self.hits = 0
        self.misses = 0

    def step(self, state: ModelState, op: L.Op) -> list[model.Branch]:
        """``model.step(state, op)``, from what is kept where it can be."""
        if self.limit <= 0:
            return model.step(state, op)
        key = (state.digest(), op)
        alike = self._known.get(key)
        if alike is not None:
            for known, branches in alike:
                if known == state:   # (a copy is kept, never the state given)
                    self.hits += 1
                    return list(branches)
        self.misses += 1
        branches = model.step(state, op)
        if self.size >= self.limit:
            self.clear()
            alike = None
        if alike is None:
            alike = self._known[key] = []
        # a copy: a caller may go on to change the state it gave (a clone it is building), never the model's
        alike.append((state.clone(), branches))
        self.size += 1
        return list(branches)

    def clear(self) -> None:
        self._known.clear()
        self.size = 0


#: The outcomes of states already stepped from (see :class:`StateSteps`), for the checks that follow a history
#: again and again: blaming a departure (conformance.checker.blame).  (Not a tracker's: a tracker off the memo
#: mostly meets states of its own, as a crash campaign's thousands of schedules do, and keeping each cost it
#: more than finding a few again saved.)
STEPS = StateSteps()

#: The memo :class:`ModelTracker` uses when asked to (``memo=True``).
MEMO = StepMemo()


class ModelTracker:
    """Follows a history step by step, keeping the model states consistent with it.

    ``memo``: follow the history in :data:`MEMO` where an earlier tracker already followed it (only
    from an initial state the tracker makes itself).  ``place``: the place in :data:`MEMO` the candidates were
    reached at, by a tracker of the same platform, tolerance, set-aside rules and counting of classes (a search
    that goes on from where another tracker stood).
    """

    def __init__(self, platform: str, initial: ModelState | None = None, expiry_tolerance: int = 0,
                 set_aside: frozenset[str] = frozenset(), memo: bool = False, classes: bool = True,
                 place: dict | None = None) -> None:
        self.candidates: list[ModelState] = [initial or model.initial_state(platform, expiry_tolerance)]
        self.platform = platform
        self.expiry_tolerance = expiry_tolerance
        #: Whether each step's check says the input classes it reached (False: a search that only asks whether
        #: an order is allowed, and counts nothing).
        self.classes = classes
        self.index = 0
        #: Rules already found broken (keep-going rounds): an observation they decide is known to
        #: depart, so it never rules out a state the history is otherwise consistent with.
        self.set_aside = frozenset(set_aside)
        #: This history's place in the memo (None: off it, or no memo), and the key of its tree (a tracker that
        #: counts no input classes keeps its own tree: the checks it leaves there say none).
        self._root = (platform, expiry_tolerance, self.set_aside, self.classes)
        self._node: dict | None = place if place is not None else (
            MEMO.root(self._root) if memo and initial is None else None)
        #: Where the last step departed in the memo (its place and key), for :meth:`step_past` to take its
        #: way past from there, or to leave it there for the next history that departs alike.
        self._departed: tuple[dict, tuple] | None = None
        #: What the last step past showed held: the rules of the readings it went on with that decide none of
        #: what differed, and their input classes (``RULE:class``).
        self.held: tuple[tuple[str, ...], tuple[str, ...]] = ((), ())
        #: The steps followed so far: (the candidates before, op, observed), for a step past to go back to the step
        #: where a set-aside rule was broken unseen (:meth:`_went_back`); started again where the candidates were
        #: set from outside (:attr:`_after` is then not them).
        self._trail: list[tuple[list[ModelState], L.Op, L.Observation]] = []
        self._after: list[ModelState] | None = self.candidates
        #: The rules the last step's departure names (what a step past goes back for).
        self._departed_rules: tuple[str, ...] = ()
        #: Whether a step past may go back (not in a tracker that follows a history again for one).
        self.goes_back = True
        #: Whether the last step past went on with states that the answer departs from (:func:`_nothing_changes_next`).
        self._stayed = False

    def expect(self, op: L.Op) -> list[model.Branch]:
        branches: list[model.Branch] = []
        for state in self.candidates:
            branches += model.step(state, op)
        return branches

    def advance(self, op: L.Op, observed: L.Observation) -> StepCheck:
        if self._after is not self.candidates:
            self._trail = []
        self._trail.append((self.candidates, op, observed))
        check = self._advance_memo(op, observed)
        self._after = self.candidates
        self._departed_rules = check.mismatch.rules if check.mismatch is not None else ()
        return check

    def _advance_memo(self, op: L.Op, observed: L.Observation) -> StepCheck:
        node = self._node
        self._departed = None
        if node is None:
            return self._advance(op, observed)
        key = (op, observed)
        known = node.get(key)
        if known is not None:
            MEMO.hits += 1
            check, self.candidates, self._node = known
            if check.index != self.index:   # a place reached at another step by another history
                check = attrs.evolve(check, index=self.index)
                if check.mismatch is not None:
                    check = attrs.evolve(check, mismatch=attrs.evolve(check.mismatch, index=self.index))
            if check.mismatch is not None:
                self._departed = (node, key)
            self.index += 1
            return check
        MEMO.misses += 1
        before = self.candidates
        check = self._advance(op, observed)
        if check.mismatch is not None:
            # kept too: a keep-going run steps past it (see step_past), and shrinking meets it again and again
            node[key] = (check, self.candidates, None)
            MEMO.size += 1
            self._node = None
            self._departed = (node, key)
            return check
        # A step that changed nothing (an inquiry, a call refused) stays at its place; another
        # goes to the place of the states it reached.
        if len(before) != len(self.candidates) or any(a is not b for a, b in zip(before, self.candidates)):
            self._node = MEMO.place(self._root, self.candidates)
        node[key] = (check, self.candidates, self._node)
        MEMO.size += 1
        return check

    def _advance(self, op: L.Op, observed: L.Observation) -> StepCheck:
        if observed.rc == C.MQRC_CONNECTION_BROKEN and isinstance(op, IN_DOUBT_OPS) \
                and not any(op.conn in s.armed | s.broken for s in self.candidates):
            # The connection broke by itself while the call was in flight: as if the network had cut it.
            self.candidates = [_armed(s, op.conn) if op.conn in s.conns else s for s in self.candidates]
        before = self.candidates[0] if self.candidates else None
        per_state = [model.step(state, op) for state in self.candidates]
        branches = [b for bs in per_state for b in bs]
        matching = [b for b in branches if _matches(b.observation, observed)]
        # A state ruled out by this step only through what set-aside rules decide stays a candidate:
        # a known departure (say a depth that leaves out uncommitted puts) may not decide which
        # outcome of a commit cut in flight happened.
        kept: list[model.Branch] = []
        if matching and self.set_aside:
            matched = {id(b) for b in matching}
            for bs in per_state:
                if not any(id(b) in matched for b in bs):
                    kept += [b for b in bs if self._departs_only_as_set_aside(b, observed)]
        index = self.index
        self.index += 1
        bound = [x[0] for x in (bind_generated_id(b, observed, self.set_aside) for b in matching) if x is not None]
        if matching and not bound:
            # the message came back as MQ allows, but with a MsgId the system had generated for another
            allowed = tuple(dict.fromkeys(b.observation for b in branches))
            mismatch = Mismatch(index=index, op=op, observed=observed, allowed=allowed, fields=("message.msg_id",),
                                rules=(UNIQUE_ID_RULE,))
            return StepCheck(index=index, rules=mismatch.rules, mismatch=mismatch)
        matching = bound
        if not matching:
            closest = min(branches, key=lambda b: len(differing_fields(b.observation, observed)))
            fields = differing_fields(closest.observation, observed)
            allowed = tuple(dict.fromkeys(b.observation for b in branches))
            mismatch = Mismatch(
                index=index, op=op, observed=observed, allowed=allowed, fields=tuple(fields),
                rules=_implicated(closest, fields, observed),
            )
            return StepCheck(index=index, rules=mismatch.rules, mismatch=mismatch)
        self.candidates = _distinct_states(matching + kept)
        rules = tuple(dict.fromkeys(r for b in matching for r in b.rules))
        if len(matching) > 1 and any("CORE-48" in b.rules for b in matching):
            # A call the network cut in flight: which outcome happened is for later steps to show.
            return StepCheck(index=index, rules=tuple(r for r in rules if r != "CORE-48"), in_doubt=True,
                             decided=("CORE-48",))
        return StepCheck(index=index, rules=rules,
                         classes=classify(before, op, rules) if before is not None and self.classes else ())

    def _departs_only_as_set_aside(self, branch: model.Branch, observed: L.Observation) -> bool:
        """``observed`` differs from ``branch``'s outcome only in values set-aside rules decide, and in
        nothing that changes what happens next."""
        fields = differing_fields(branch.observation, observed)
        return bool(fields) and _nothing_changes_next(fields, branch.observation, observed) \
            and set(_implicated(branch, fields, observed)) <= self.set_aside

    def step_past(self, op: L.Op, observed: L.Observation) -> bool:
        """Follow a mismatching step when what differs cannot change what happens next (keep-going runs).

        That is when the closest allowed observations differ from ``observed`` only in
        attribute values, in fields of the same returned message, or in the reason code
        of a call that did its work either way (a warning against success): the model
        goes on from those branches' states.  Returns False (and changes nothing) when
        the difference is in which message came back or whether the call worked.
        A step past taken from a place in the memo is kept there, with the place it leads to.
        """
        went = self._step_past_memo(op, observed)
        if went and self._stayed and self.goes_back:
            back = self._went_back()
            if back:
                self.candidates = _unique(self.candidates + back)
                if self._node is not None:
                    self._node = MEMO.place(self._root, self.candidates)
        self._after = self.candidates
        return went

    def _step_past_memo(self, op: L.Op, observed: L.Observation) -> bool:
        departed, self._departed = self._departed, None
        self.held = ((), ())
        self._stayed = False
        if departed is None or departed[1] != (op, observed):
            self._node = None
            return self._step_past(op, observed)
        node, key = departed
        known = node.get(("past", key))
        if known is not None:
            MEMO.hits += 1
            went, candidates, self._node, self.held, self._stayed = known
            if went:
                self.candidates = candidates
            return went
        MEMO.misses += 1
        went = self._step_past(op, observed)
        self._node = MEMO.place(self._root, self.candidates) if went else None
        node[("past", key)] = (went, self.candidates, self._node, self.held, self._stayed)
        MEMO.size += 1
        return went

    def _step_past(self, op: L.Op, observed: L.Observation) -> bool:
        before = self.candidates[0] if self.candidates else None
        branches = self.expect(op)
        if not branches:
            return False
        scored = [(differing_fields(b.observation, observed), b) for b in branches]
        least = min(len(f) for f, _ in scored)
        closest = [(f, b) for f, b in scored if len(f) == least]
        if not all(_nothing_changes_next(fields, b.observation, observed) for fields, b in closest):
            # what the set-aside rules, broken, let happen instead (a put accepted past a check of the
            # queue, another message got), where that is exactly what the system did
            followed = self._as_broken(op, observed)
            if not followed:
                return False
            self.candidates = _distinct_states(_noting_ids(followed, observed, self.set_aside))
            self._hold(before, op, [[r for r in b.rules if r not in self.set_aside] for b in followed])
            return True
        if not (isinstance(op, L.InquireQueue) and any("attrs.CURDEPTH" in fields for fields, _ in closest)):
            self.candidates = _distinct_states(_noting_ids([b for _, b in closest], observed, self.set_aside))
        # (a depth other than MQ's goes on from the states before it: what a depth as MQ gives it would have told
        # the model, that no event before wrote a trigger message MQ did not, or which expired messages the
        # background had removed, it did not tell)
        self._hold(before, op, [_held(b, fields, observed) for fields, b in closest])
        self._stayed = True
        return True

    def _went_back(self) -> list[ModelState]:
        """The states a step past that went on from states the answer departs from (a depth that counts a
        message the model has not got) goes on from as well: those of the history followed again from the latest
        earlier step where a set-aside rule the departure names, broken there unseen, gives what the system
        answered then, every step after it, and now exactly (a trigger message written at a put that answered as
        MQ's did, TriggerMsgPriority ignored, and counted now).  None within :data:`BACK_STEPS` model steps:
        an empty list."""
        from conformance.checker.blame import _relaxed_step

        trail = self._trail
        relaxed = frozenset(self._departed_rules) & self.set_aside
        if not trail or not relaxed:
            return []
        budget = [BACK_STEPS]
        for j in range(len(trail) - 1, -1, -1):
            states_j, op_j, observed_j = trail[j]
            if budget[0] <= 0:
                return []
            budget[0] -= len(states_j)
            plain: list[ModelState] = []
            extra: list[ModelState] = []
            for state in states_j:
                mq, relaxing = _relaxed_step(state, op_j, relaxed, observed_j)
                plain += [b.state for b in mq if _matches(b.observation, observed_j)]
                extra += [b.state for b in relaxing if _matches(b.observation, observed_j)]
            extra = [s for s in _unique(extra) if not any(s == p for p in plain)]
            if not extra:
                continue
            found = self._followed(extra, trail[j + 1:], budget)
            if found:
                return found
        return []

    def _followed(self, states: list[ModelState], rest, budget: list[int]) -> list[ModelState]:
        """``states`` followed through ``rest`` as a keep-going run does, the last step answered as one of them
        gives it exactly (an empty list where not, or past ``budget``)."""
        follower = ModelTracker(self.platform, initial=states[0], expiry_tolerance=self.expiry_tolerance,
                                set_aside=self.set_aside, classes=False)
        follower.candidates = list(states)
        follower.goes_back = False   # no going back within going back
        for k, (_, op, observed) in enumerate(rest):
            budget[0] -= len(follower.candidates)
            if budget[0] <= 0:
                return []
            if k == len(rest) - 1:
                if follower._advance(op, observed).mismatch is not None:
                    return []
            elif not _follow(follower, op, observed):
                return []
        return follower.candidates

    def _hold(self, before: ModelState | None, op: L.Op, readings: list[list[str]]) -> None:
        """Note as :attr:`held` the rules every reading the step past went on with held."""
        held = [r for r in readings[0] if all(r in other for other in readings[1:])] if readings else []
        self.held = (tuple(held), classify(before, op, held) if before is not None and held else ())

    def _as_broken(self, op: L.Op, observed: L.Observation) -> list[model.Branch]:
        """The outcomes of ``op`` in which a set-aside rule was broken the way it is when relaxed
        (:func:`conformance.checker.blame._relaxed_step`) and the outcome is ``observed`` exactly."""
        from conformance.checker.blame import _relaxed_step

        out: list[model.Branch] = []
        for state in self.candidates:
            out += [b for b in _relaxed_step(state, op, self.set_aside, observed)[1]
                    if _matches(b.observation, observed)]
        return out


#: Model steps a step past may spend going back to where a set-aside rule was broken unseen (:meth:`ModelTracker._went_back`).
BACK_STEPS = 2_000


def _noting_ids(branches: list[model.Branch], observed: L.Observation, relaxed: frozenset[str]) -> list[model.Branch]:
    """``branches`` a step past went on with, each with the MsgId the system generated for the message ``observed``
    returns noted (:func:`bind_generated_id`; the step past is of the same message); one whose state already
    has that MsgId for another message is left as it was (a departure missed, never a false one)."""
    out = []
    for b in branches:
        bound = bind_generated_id(b, observed, relaxed)
        out.append(b if bound is None else bound[0])
    return out


def _held(branch: model.Branch, fields: list[str], observed: L.Observation) -> list[str]:
    """The rules of ``branch`` that decide none of ``fields``, where ``observed`` differs from its outcome: in
    a step past, what they say the system did."""
    deciding = set(_implicated(branch, fields, observed))
    for f in fields:
        deciding.update(branch.field_rules.get(f, ()))
    return [r for r in branch.rules if r not in deciding]


def check_history(platform: str, steps: Iterable[tuple[L.Op, L.Observation]]) -> list[StepCheck]:
    """Check a whole history; stops at the first mismatch (later states are undefined)."""
    tracker = ModelTracker(platform)
    out = []
    for op, observed in steps:
        check = tracker.advance(op, observed)
        out.append(check)
        if check.mismatch:
            break
    return out


#: Model steps :func:`alternatives` may spend following the rest of a history from ruled-out outcomes.
ALTERNATIVE_STEPS = 20_000


def alternatives(steps, mismatch: Mismatch, platform: str, expiry_tolerance: int = 0,
                 set_aside: frozenset[str] = frozenset()) -> tuple[Alternative, ...]:
    """The earlier steps of a failing history where a departure explains it as well as ``mismatch``.

    ``steps`` are the history's (op, observed) pairs (:class:`~conformance.records.history.Step` or tuples),
    the last at ``mismatch.index``.  At each earlier step the outcomes MQ allows that the observation
    ruled out are followed: one from whose state every later step, the failing one included, is
    what MQ gives is an :class:`Alternative`, with the rules the observation breaks against it.  A
    reader then sees both readings (say, the report of a message MQ may have expired in the
    background is missing; or it was not expired and the depth that left it out was wrong), instead
    of only the one the checker happened to follow.  Pure: the model alone, no system.  The search
    is bounded by :data:`ALTERNATIVE_STEPS` model steps; what it finds within them is returned.
    """
    pairs = [(s.op, s.observed) if hasattr(s, "op") else tuple(s) for s in steps][:mismatch.index + 1]
    budget = [ALTERNATIVE_STEPS]
    found: dict[tuple, Alternative] = {}

    def consistent(state: ModelState, rest) -> bool:
        follower = ModelTracker(platform, initial=state, expiry_tolerance=expiry_tolerance, set_aside=set_aside)
        for op, observed in rest:
            budget[0] -= len(follower.candidates)
            if budget[0] < 0:
                return False
            if not _follow(follower, op, observed):
                return False
        return True

    tracker = ModelTracker(platform, expiry_tolerance=expiry_tolerance, set_aside=set_aside)
    for k, (op, observed) in enumerate(pairs[:-1]):
        ruled_out = [b for state in tracker.candidates for b in model.step(state, op)
                     if not _matches(b.observation, observed)]
        for branch in ruled_out:
            if budget[0] < 0:
                break
            fields = differing_fields(branch.observation, observed)
            rules = _implicated(branch, fields, observed)
            if (k, rules) in found or (set_aside and set(rules) <= set_aside):
                continue
            if consistent(branch.state, pairs[k + 1:]):
                found[(k, rules)] = Alternative(index=k, expected=branch.observation, fields=tuple(fields),
                                                rules=rules)
        if not _follow(tracker, op, observed):
            break
    return tuple(found.values())


def follow(tracker: ModelTracker, op: L.Op, observed: L.Observation) -> tuple[StepCheck, Mismatch | None]:
    """Advance ``tracker`` by one step as a keep-going run does: (the step's check, the mismatch that stops the
    history there, or None).  A mismatch every rule of which the tracker has set aside is stepped past where what
    differs cannot change what happens next (:meth:`ModelTracker.step_past`), and then stops nothing."""
    check = tracker.advance(op, observed)
    mismatch = check.mismatch
    if mismatch is not None and tracker.set_aside and set(mismatch.rules) <= tracker.set_aside \
            and tracker.step_past(op, observed):
        mismatch = None
    return check, mismatch


def _follow(tracker: ModelTracker, op: L.Op, observed: L.Observation) -> bool:
    """Advance ``tracker`` as a session does: past a departure only from its set-aside rules."""
    return follow(tracker, op, observed)[1] is None
