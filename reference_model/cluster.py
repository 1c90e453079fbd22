"""The cluster workload management algorithm (IBM's topic of that title), as a pure function.

``choose(cluster, message, history)`` applies steps 1-12 to a cluster
description and returns a :class:`Choice`: the destinations still allowed after
each step, the step that eliminated every other candidate, and the set of
destinations the queue manager may pick.  The stateful part of step 12
(DestSeqFactor / DestSeqNumber) lives in :class:`WorkloadHistory`, which
``advance`` returns anew for the destination actually chosen.

Step names follow the topic's numbering: ``CLWL-01`` ... ``CLWL-12`` with ``CLWL-04a``,
``CLWL-04b``, ``CLWL-11a`` ... ``CLWL-11c``.  A put names a queue (steps 1 and
11b) or a queue manager (steps 2 and 11a: the channels to it and to the hosts of
its queue-manager aliases).
"""

from __future__ import annotations

import functools
from typing import Iterable

import attrs

from reference_model import mqconst as C

MQCHS_INACTIVE, MQCHS_BINDING, MQCHS_STARTING, MQCHS_RUNNING, MQCHS_STOPPING = 0, 1, 2, 3, 4
MQCHS_RETRYING, MQCHS_STOPPED, MQCHS_REQUESTING, MQCHS_PAUSED, MQCHS_INITIALIZING = 5, 6, 7, 8, 13
CHANNEL_STATES = (MQCHS_INACTIVE, MQCHS_BINDING, MQCHS_STARTING, MQCHS_RUNNING, MQCHS_STOPPING,
                  MQCHS_RETRYING, MQCHS_STOPPED, MQCHS_REQUESTING, MQCHS_PAUSED, MQCHS_INITIALIZING)
#: Channel-state groups admitted by steps 6 to 9, in order.
STATE_GROUPS = (
    ("CLWL-06", frozenset({MQCHS_INACTIVE, MQCHS_RUNNING})),
    ("CLWL-07", frozenset({MQCHS_BINDING, MQCHS_INITIALIZING, MQCHS_STARTING, MQCHS_STOPPING})),
    ("CLWL-08", frozenset({MQCHS_RETRYING})),
    ("CLWL-09", frozenset({MQCHS_REQUESTING, MQCHS_PAUSED, MQCHS_STOPPED})),
)
USEQ_LOCAL, USEQ_ANY, USEQ_QMGR = "LOCAL", "ANY", "QMGR"
#: DestSeqFactor is advanced by "approximately" 1000 / CLWLWGHT.
FACTOR_SCALE = 1000


@attrs.frozen(kw_only=True)
class QueueManager:
    name: str
    clusters: frozenset[str] = attrs.field(converter=frozenset)
    suspended: bool = False
    clwluseq: str = attrs.field(default=USEQ_LOCAL, validator=attrs.validators.in_((USEQ_LOCAL, USEQ_ANY)))
    clwlmruc: int = attrs.field(default=999999999, validator=attrs.validators.in_(range(1, 1_000_000_000)))


@attrs.frozen(kw_only=True)
class QueueInstance:
    """An instance of a cluster queue hosted by ``qmgr``."""

    name: str
    qmgr: str
    clusters: frozenset[str] = attrs.field(converter=frozenset)
    put_enabled: bool = True
    clwlrank: int = attrs.field(default=0, validator=attrs.validators.in_(range(10)))
    clwlprty: int = attrs.field(default=0, validator=attrs.validators.in_(range(10)))
    clwluseq: str = attrs.field(default=USEQ_QMGR, validator=attrs.validators.in_((USEQ_LOCAL, USEQ_ANY, USEQ_QMGR)))


@attrs.frozen(kw_only=True)
class QmgrAlias:
    """A queue-manager alias ``name`` hosted by ``qmgr`` and advertised in ``clusters``: a put naming
    queue manager ``name`` may go to ``qmgr`` through it."""

    name: str
    qmgr: str
    clusters: frozenset[str] = attrs.field(converter=frozenset)
    put_enabled: bool = True
    clwlrank: int = attrs.field(default=0, validator=attrs.validators.in_(range(10)))
    clwlprty: int = attrs.field(default=0, validator=attrs.validators.in_(range(10)))


@attrs.frozen(kw_only=True)
class Channel:
    """The cluster-receiver channel to a remote queue manager, as known locally."""

    name: str
    qmgr: str
    clusters: frozenset[str] = attrs.field(converter=frozenset)
    state: int = attrs.field(default=MQCHS_INACTIVE, validator=attrs.validators.in_(CHANNEL_STATES))
    clwlrank: int = attrs.field(default=0, validator=attrs.validators.in_(range(10)))
    clwlprty: int = attrs.field(default=0, validator=attrs.validators.in_(range(10)))
    clwlwght: int = attrs.field(default=50, validator=attrs.validators.in_(range(1, 100)))
    netprty: int = attrs.field(default=0, validator=attrs.validators.in_(range(10)))
    #: A locally defined CLUSSDR (step 10) rather than an auto-defined one.
    local_sender: bool = False


@attrs.frozen(kw_only=True)
class Cluster:
    """What the local queue manager knows of its clusters."""

    local: str
    qmgrs: tuple[QueueManager, ...] = attrs.field(converter=tuple)
    queues: tuple[QueueInstance, ...] = attrs.field(converter=tuple)
    channels: tuple[Channel, ...] = attrs.field(converter=tuple)
    aliases: tuple[QmgrAlias, ...] = attrs.field(default=(), converter=tuple)

    def qmgr(self, name: str) -> QueueManager:
        return next(q for q in self.qmgrs if q.name == name)



@attrs.frozen(kw_only=True)
class Message:
    queue: str
    put_locally: bool = True
    #: A cluster PCF message (publication or subscription) and the queue managers already sent one.
    pcf: bool = False
    already_sent: frozenset[str] = attrs.field(default=frozenset(), converter=frozenset)
    #: The queue manager the put names, or "" when a queue is being chosen (steps 1 and 11b rather
    #: than 2 and 11a).
    qmgr: str = ""


@attrs.frozen
class Destination:
    """Where a message may go: a queue instance (and for a remote one the channel that reaches it),
    or, for a put naming a queue manager, a channel to it or to the host of one of its aliases."""

    queue: QueueInstance | None
    channel: Channel | None = None
    alias: QmgrAlias | None = None
    #: ``QMGR`` for the local instance, ``QMGR/CHANNEL`` for a channel to queue manager QMGR.
    key: str = attrs.field(init=False, eq=False)

    def __attrs_post_init__(self) -> None:
        q = self.queue.qmgr if self.channel is None else self.channel.qmgr
        object.__setattr__(self, "key", q if self.channel is None else f"{q}/{self.channel.name}")

    @property
    def qmgr(self) -> str:
        """The queue manager the message goes to first."""
        return self.queue.qmgr if self.channel is None else self.channel.qmgr

    @property
    def rank(self) -> int | None:
        """Step 4a's CLWLRANK: an alias's own, else the channel's (none for the local instance)."""
        return self.alias.clwlrank if self.alias else (self.channel.clwlrank if self.channel else None)


@attrs.frozen(kw_only=True)
class Choice:
    #: Steps applied, each with the destinations remaining after it.
    trace: tuple[tuple[str, tuple[str, ...]], ...]
    #: Destination key -> the step that eliminated it.
    eliminated: dict = attrs.field(eq=False)
    #: Destinations the queue manager may choose (more than one when step 12 ties).
    allowed: frozenset[str] = attrs.field(converter=frozenset)
    #: The candidates step 12 chose among (for the weighted share).
    finalists: tuple[str, ...] = ()


@attrs.frozen(kw_only=True)
class WorkloadHistory:
    """Step 12's state: DestSeqFactor and DestSeqNumber per destination, and what they were computed for.

    Equal histories have equal factors and numbers (which decide the next choice); the hash leaves
    those dicts out."""

    factors: dict = attrs.field(factory=dict, hash=False)
    numbers: dict = attrs.field(factory=dict, hash=False)
    last_number: int = 0
    #: The workload attributes of the available destinations when the factors were last reset.
    signature: tuple = ()


def _step(trace, eliminated, skip: str, step: str, before: list[Destination],
          after: list[Destination]) -> list[Destination]:
    if step == skip:
        after = before
    kept = {d.key for d in after}
    for d in before:
        if d.key not in kept and d.key not in eliminated:
            eliminated[d.key] = step
    trace.append((step, tuple(sorted(kept))))
    return after


def choose(cluster: Cluster, message: Message, history: WorkloadHistory | None = None, skip: str = "") -> Choice:
    """Apply steps 1-12 for a message put to the cluster queue ``message.queue``; ``skip``: a step (a rule ID,
    CLWL-01 to CLWL-11c) applied as a queue manager that ignores it would, keeping every candidate it is given."""
    history = history or WorkloadHistory()
    trace: list = []
    eliminated: dict = {}
    apply = functools.partial(_step, trace, eliminated, skip)
    keep_max = functools.partial(_keep_max, trace, eliminated, skip)
    local_qm = cluster.qmgr(cluster.local)
    cands = _destinations(cluster, message)
    trace.append(("start", tuple(sorted(d.key for d in cands))))
    if message.qmgr:
        # Step 2: PUT-enabled queue-manager aliases, over channels in a cluster of the local queue manager.
        cands = apply("CLWL-02", cands, [
            d for d in cands if (d.alias is None or d.alias.put_enabled) and d.channel.clusters & local_qm.clusters])
    else:
        # Step 1: PUT-enabled queues, sharing a cluster with the local queue manager, over channels in the
        # queue's cluster.
        cands = apply("CLWL-01", cands, [
            d for d in cands if d.queue.put_enabled
            and (d.channel is None or (d.queue.clusters & local_qm.clusters and d.channel.clusters & d.queue.clusters))])
    # Step 3: the local instance under CLWLUSEQ(LOCAL), or for messages from a cluster channel.
    local = [d for d in cands if d.channel is None]
    if local:
        useq = local[0].queue.clwluseq
        if useq == USEQ_QMGR:
            useq = local_qm.clwluseq
        if (useq == USEQ_LOCAL or not message.put_locally) and skip != "CLWL-03":
            cands = apply("CLWL-03", cands, local)
            return Choice(trace=tuple(trace), eliminated=eliminated, allowed=[d.key for d in cands])
    # Step 4: cluster PCF messages skip queue managers already sent one.
    if message.pcf:
        cands = apply("CLWL-04", cands, [d for d in cands if d.qmgr not in message.already_sent])
    # Step 4a: channel (and queue-manager alias) rank; 4b: queue rank.
    cands = keep_max("CLWL-04a", cands, lambda d: d.rank)
    cands = keep_max("CLWL-04b", cands, lambda d: d.queue.clwlrank if d.queue else None)
    # Step 5: resumed queue managers before suspended ones, when only remote instances remain.
    if cands and all(d.channel is not None for d in cands):
        resumed = [d for d in cands if not cluster.qmgr(d.qmgr).suspended]
        if resumed:
            cands = apply("CLWL-05", cands, resumed)
    # Steps 6-9: with more than one remote instance, keep INACTIVE and RUNNING channels; while
    # none is left, widen to the next group of states.
    remote = [d for d in cands if d.channel is not None]
    if len(remote) > 1:
        admitted: set[int] = set()
        chosen: list[Destination] = []
        step = "CLWL-06"
        for step, states in STATE_GROUPS:
            admitted |= states
            chosen = [d for d in remote if d.channel.state in admitted]
            if chosen:
                break
            trace.append((step, ()))  # nothing left yet: the next step widens
        cands = apply(step, cands, [d for d in cands if d.channel is None] + chosen)
    # Step 10: cluster PCF messages prefer locally defined CLUSSDR channels.
    if message.pcf and len([d for d in cands if d.channel]) > 1:
        senders = [d for d in cands if d.channel is None or d.channel.local_sender]
        if any(d.channel for d in senders):
            cands = apply("CLWL-10", cands, senders)
    # Step 11: highest NETPRTY per queue manager.
    best: dict[str, int] = {}
    for d in cands:
        if d.channel is not None:
            best[d.qmgr] = max(best.get(d.qmgr, -1), d.channel.netprty)
    cands = apply("CLWL-11", cands,
                  [d for d in cands if d.channel is None or d.channel.netprty == best[d.qmgr]])
    if message.qmgr:
        # Step 11a: a queue manager is being chosen: the highest CLWLPRTY of channels and aliases; an
        # alias's channels are kept with it.
        cands = keep_max("CLWL-11a", cands,
                          lambda d: d.alias.clwlprty if d.alias else d.channel.clwlprty)
    else:
        # Step 11b: a queue is being chosen: the highest queue CLWLPRTY; channels are kept.
        cands = keep_max("CLWL-11b", cands, lambda d: d.queue.clwlprty)
    # Step 11c: the CLWLMRUC most recently used channels.
    mruc = local_qm.clwlmruc
    if len(cands) > mruc:
        ranked = sorted(cands, key=lambda d: -history.numbers.get(d.key, 0))
        cut = history.numbers.get(ranked[mruc - 1].key, 0)
        cands = apply("CLWL-11c", cands,
                      [d for d in cands if history.numbers.get(d.key, 0) >= cut])
    # Step 12: least recently used (lowest DestSeqFactor), then lowest DestSeqNumber.
    keys = [d.key for d in cands]
    if len(cands) <= 1:
        return Choice(trace=tuple(trace), eliminated=eliminated, allowed=keys, finalists=tuple(keys))
    factors = _factors(cluster, cands, history)
    low = min(factors[k] for k in keys)
    lowest = [k for k in keys if factors[k] == low]
    low_n = min(history.numbers.get(k, 0) for k in lowest)
    allowed = [k for k in lowest if history.numbers.get(k, 0) == low_n]
    trace.append(("CLWL-12", tuple(sorted(allowed))))
    for k in keys:
        if k not in allowed:
            eliminated.setdefault(k, "CLWL-12")
    return Choice(trace=tuple(trace), eliminated=eliminated, allowed=allowed, finalists=tuple(sorted(keys)))


def ignored(cluster: Cluster, message: Message, history: WorkloadHistory, choice: Choice) -> dict[str, frozenset]:
    """For each step of ``choice`` that eliminated a destination, the destinations allowed when a queue manager
    ignores it (the steps after it then choose among more)."""
    out = {}
    before: tuple[str, ...] = ()
    for step, kept in choice.trace:
        if step.startswith("CLWL") and step != "CLWL-12" and set(kept) < set(before):
            out[step] = choose(cluster, message, history, skip=step).allowed
        # (steps 6 to 8 that admit no channel state found leave nothing for the next to widen from: not a cut)
        before = kept or before
    return out


def _keep_max(trace, eliminated, skip, step, cands, value):
    values = [value(d) for d in cands if value(d) is not None]
    if not values:
        return cands
    top = max(values)
    return _step(trace, eliminated, skip, step, cands, [d for d in cands if value(d) is None or value(d) == top])


def _signature(cluster: Cluster, cands: Iterable[Destination]) -> tuple:
    return tuple(sorted((d.key, *((d.queue.clwlrank, d.queue.clwlprty) if d.queue else
                                  (d.alias.clwlrank, d.alias.clwlprty) if d.alias else (None, None)),
                         None if d.channel is None else (d.channel.clwlrank, d.channel.clwlprty,
                                                         d.channel.clwlwght, d.channel.netprty))
                        for d in cands))


def _factors(cluster: Cluster, cands: list[Destination], history: WorkloadHistory) -> dict:
    """Step 12: factors reset to zero when workload attributes change or new destinations appear."""
    if _reset_needed(cluster, cands, history):
        return {d.key: 0 for d in cands}
    return {d.key: history.factors.get(d.key, 0) for d in cands}


def _reset_needed(cluster: Cluster, cands: list[Destination], history: WorkloadHistory) -> bool:
    sig = _signature(cluster, cands)
    old = dict((k, rest) for k, *rest in history.signature)
    new = dict((k, rest) for k, *rest in sig)
    appeared = set(new) - set(old)
    altered = any(old[k] != new[k] for k in set(old) & set(new))
    return bool(history.signature) and (bool(appeared) or altered)


def advance(cluster: Cluster, message: Message, history: WorkloadHistory, chosen: str,
            choice: Choice | None = None) -> WorkloadHistory:
    """Step 12's bookkeeping after the queue manager chose ``chosen`` (``choice``: what
    :func:`choose` gave for this cluster, message and history, if already known)."""
    choice = choice or choose(cluster, message, history)
    if chosen not in choice.allowed:
        raise ValueError(f"{chosen!r} is not an allowed destination ({sorted(choice.allowed)})")
    numbers = dict(history.numbers)
    numbers[chosen] = history.last_number + 1
    if len(choice.finalists) <= 1:  # no workload choice was made: only the sequence number moves
        return WorkloadHistory(factors=history.factors, numbers=numbers, last_number=history.last_number + 1,
                               signature=history.signature)
    cands = [d for d in _destinations(cluster, message) if d.key in choice.finalists]
    factors = dict(_factors(cluster, cands, history)) if cands else {}
    weight = next((d.channel.clwlwght for d in cands if d.key == chosen and d.channel), 50)
    factors[chosen] = factors.get(chosen, 0) + FACTOR_SCALE // weight
    return WorkloadHistory(factors=factors, numbers=numbers, last_number=history.last_number + 1,
                           signature=_signature(cluster, cands) if cands else history.signature)


def _destinations(cluster: Cluster, message: Message) -> list[Destination]:
    if message.qmgr:
        if message.qmgr == cluster.local:
            return []
        out = [Destination(None, ch) for ch in cluster.channels if ch.qmgr == message.qmgr]
        for a in cluster.aliases:
            if a.name == message.qmgr and a.qmgr not in (cluster.local, message.qmgr):
                out += [Destination(None, ch, a) for ch in cluster.channels if ch.qmgr == a.qmgr]
        return out
    out = []
    for q in cluster.queues:
        if q.name != message.queue:
            continue
        if q.qmgr == cluster.local:
            out.append(Destination(q))
        else:
            out += [Destination(q, ch) for ch in cluster.channels if ch.qmgr == q.qmgr]
    return out


def expected_shares(cluster: Cluster, message: Message) -> dict[str, float]:
    """Over many messages, the share each finalist receives: proportional to its CLWLWGHT."""
    choice = choose(cluster, message)
    weights = {}
    for d in _destinations(cluster, message):
        if d.key in choice.finalists:
            weights[d.key] = d.channel.clwlwght if d.channel else 50
    total = sum(weights.values()) or 1
    return {k: w / total for k, w in weights.items()}


__all__ = ["Channel", "Choice", "Cluster", "Message", "QueueInstance", "QueueManager", "WorkloadHistory",
           "advance", "choose", "expected_shares", "C"]


# ---------------------------------------------------------------- the model's ops

from reference_model import language as L  # noqa: E402
from reference_model.model import Branch, HistoryError, handles  # noqa: E402


#: The last few tables read by :func:`cluster_of` (by identity; the tables are replaced, never
#: changed, once a state holds them) and what was built from them.  Memoisation only.
_BUILT: dict[int, tuple[dict, Cluster]] = {}


def cluster_of(state) -> Cluster:
    objs = state.cluster
    hit = _BUILT.get(id(objs))
    if hit is not None and hit[0] is objs:
        return hit[1]
    built = _build(objs)
    if len(_BUILT) >= 16:
        _BUILT.clear()
    _BUILT[id(objs)] = (objs, built)
    return built


def _build(objs: dict) -> Cluster:
    local = next((q["name"] for q in objs["qmgrs"].values() if q["local"]), None)
    if local is None:
        raise HistoryError("no local cluster queue manager defined")
    qmgrs = [QueueManager(**{k: v for k, v in q.items() if k != "local"}) for q in objs["qmgrs"].values()]
    # A remote queue manager becomes known through its cluster-receiver channel (a CLUSQMGR
    # record): one named only by a channel is known with its defaults (not suspended).
    known = {q.name for q in qmgrs}
    for c in objs["channels"].values():
        if c["qmgr"] not in known:
            known.add(c["qmgr"])
            qmgrs.append(QueueManager(name=c["qmgr"], clusters=c["clusters"]))
    return Cluster(
        local=local,
        qmgrs=qmgrs,
        queues=[QueueInstance(**q) for q in objs["instances"].values()],
        channels=[Channel(**c) for c in objs["channels"].values()],
        aliases=[QmgrAlias(**a) for a in objs.get("aliases", {}).values()],
    )


def _set(state, table: str, key, fields: dict) -> list[Branch]:
    s = state.clone()
    s.cluster = {k: dict(v) for k, v in s.cluster.items()}
    s.cluster.setdefault(table, {})[key] = fields
    try:
        cluster_of(s) if any(q["local"] for q in s.cluster["qmgrs"].values()) else None
    except (TypeError, ValueError) as exc:
        raise HistoryError(f"invalid cluster object: {exc}") from None
    return [Branch(observation=L.OK, state=s)]


@handles(L.SetClusterQueueManager)
def set_qmgr(state, op):
    return _set(state, "qmgrs", op.name, dict(name=op.name, clusters=op.clusters, local=op.local,
                                             suspended=op.suspended, clwluseq=op.clwluseq, clwlmruc=op.clwlmruc))


@handles(L.SetClusterInstance)
def set_instance(state, op):
    return _set(state, "instances", (op.qmgr, op.queue), dict(
        name=op.queue, qmgr=op.qmgr, clusters=op.clusters, put_enabled=op.put_enabled, clwlrank=op.clwlrank,
        clwlprty=op.clwlprty, clwluseq=op.clwluseq))


@handles(L.SetClusterChannel)
def set_channel(state, op):
    return _set(state, "channels", op.name, dict(
        name=op.name, qmgr=op.qmgr, clusters=op.clusters, state=op.state, clwlrank=op.clwlrank,
        clwlprty=op.clwlprty, clwlwght=op.clwlwght, netprty=op.netprty, local_sender=op.local_sender))


@handles(L.SetClusterAlias)
def set_alias(state, op):
    return _set(state, "aliases", (op.name, op.qmgr), dict(
        name=op.name, qmgr=op.qmgr, clusters=op.clusters, put_enabled=op.put_enabled, clwlrank=op.clwlrank,
        clwlprty=op.clwlprty))


@handles(L.RemoveClusterInstance)
def remove_instance(state, op):
    s = state.clone()
    s.cluster = {k: dict(v) for k, v in s.cluster.items()}
    s.cluster["instances"].pop((op.qmgr, op.queue), None)
    return [Branch(observation=L.OK, state=s)]


def share_expectation(state, op) -> dict[str, float]:
    """For one put to a cluster queue: each finalist's expected share of it (proportional to CLWLWGHT).

    Summed over the puts of a run, this is how many messages each destination should have
    received if the choices among equals follow the weights.
    """
    try:
        cl = cluster_of(state)
    except HistoryError:
        return {}
    msg = message_of(op)
    hit = _SHARES.get((id(cl), msg))
    if hit is not None and hit[0] is cl:
        return dict(hit[1])
    try:
        shares = expected_shares(cl, msg)
    except StopIteration:
        shares = {}
    if len(_SHARES) >= 16:
        _SHARES.clear()
    _SHARES[(id(cl), msg)] = (cl, shares)
    return dict(shares)


_SHARES: dict = {}


def message_of(op: L.ClusterPut) -> Message:
    return Message(queue=op.queue, put_locally=op.put_locally, pcf=op.pcf, already_sent=op.already_sent,
                   qmgr=op.qmgr)


_WORKED: dict = {}


def worked_out(state, op: L.ClusterPut) -> tuple[Message, WorkloadHistory, Choice, dict[str, frozenset]]:
    """The cluster put ``op`` from ``state``: its message, the workload history, MQ's choice and each step ignored
    (:func:`ignored`); worked out once per state and put, which the model's step and the input classes both ask
    for.  Raises StopIteration where a queue or channel names an undefined queue manager."""
    key = (id(state), op)
    hit = _WORKED.get(key)
    if hit is not None and hit[0] is state:
        return hit[1]
    cl, msg = cluster_of(state), message_of(op)
    history = state.workload.get(op.queue) or WorkloadHistory()
    choice = choose(cl, msg, history)
    out = (msg, history, choice, ignored(cl, msg, history, choice))
    if len(_WORKED) >= 64:
        _WORKED.clear()
    _WORKED[key] = (state, out)
    return out


@handles(L.ClusterPut)
def cluster_put(state, op):
    cl = cluster_of(state)
    known = {q.name for q in cl.qmgrs}
    if any(i["qmgr"] not in known for i in state.cluster["instances"].values()):
        raise HistoryError("a cluster queue names a queue manager with no definition and no channel")
    try:
        msg, history, choice, skips = worked_out(state, op)
    except StopIteration:
        raise HistoryError("a cluster queue or channel names an undefined queue manager") from None
    steps = tuple(dict.fromkeys(step for step, _ in choice.trace if step.startswith("CLWL")))
    # A destination a step eliminated is what that step alone decides: relaxed (any subset of the candidates
    # kept), the step could have kept that one alone, which every later step then chooses.
    field_rules = {f"attrs.DESTINATION=={key}": (step,) for key, step in choice.eliminated.items()}
    # So is one a queue manager that ignored a step that eliminated anything reaches by the steps after it: the
    # destinations it keeps change what the later steps choose among (a channel state ignored, and the most
    # recently used channels, step 11c, are then others), though no destination it eliminated is chosen.
    for step, allowed in skips.items():
        for key in sorted(allowed - choice.allowed):
            named = field_rules.get(f"attrs.DESTINATION=={key}", ())
            if step not in named:
                field_rules[f"attrs.DESTINATION=={key}"] = named + (step,)
    field_rules["attrs.DESTINATION"] = ("CLWL-12",) + steps
    if not choice.allowed:
        # MQ reports no usable destination; which reason code is not in the topic.
        return [Branch(observation=L.Observation(attrs={"DESTINATION": ""}), state=state, rules=steps,
                       field_rules=field_rules)]
    out = []
    for key in sorted(choice.allowed):
        s = state.clone()
        s.workload = dict(s.workload)
        s.workload[op.queue] = advance(cl, msg, history, key, choice)
        out.append(Branch(observation=L.Observation(attrs={"DESTINATION": key}), state=s,
                          rules=steps, field_rules=field_rules))
    return out
