"""The operation language: what is done to a queue manager and what it answers.

Every operation and observation is a small frozen attrs class.  The model, every
adapter, the machines, saved histories, replays and reports all speak it.  Each
value has a lossless JSON form (:func:`to_json` / :func:`from_json`) tagged with
its class name.

Names are symbolic and chosen by whoever writes the history: a connection is
``"c1"``, an object handle ``"c1.Q1"``, a queue ``"Q1"``.  Adapters map them onto
real handles and onto a per-case namespace of real queue names.
"""

from __future__ import annotations

import json
import typing
from typing import Any, Mapping

import attrs

from reference_model import mqconst as C

# --------------------------------------------------------------------------
# helpers


def _attr_pairs(value: Any) -> tuple[tuple[str, Any], ...]:
    """Normalise a mapping or a sequence of pairs to a sorted tuple of pairs."""
    items: typing.Iterable[tuple[Any, ...]]
    if isinstance(value, (dict, Mapping)):   # a dict first: typing's Mapping check is slow
        items = value.items()
    else:
        items = (tuple(pair) for pair in value)
    out = []
    for name, val in items:
        if not isinstance(name, str):
            raise TypeError(f"attribute name must be a string, not {name!r}")
        out.append((name.upper(), val))
    return tuple(sorted(out))


def _str_tuple(value: Any) -> tuple[str, ...]:
    return tuple(str(v).upper() for v in value)


#: Queue attributes the language knows, by MQSC name: (allowed values, default).
#: ``None`` as allowed values means any non-negative integer; ``str`` any string.
QUEUE_ATTRIBUTES: dict[str, tuple[Any, Any]] = {
    "DEFPRTY": (range(0, C.MAX_PRIORITY + 1), 0),
    "DEFPSIST": ((C.MQPER_NOT_PERSISTENT, C.MQPER_PERSISTENT), C.MQPER_NOT_PERSISTENT),
    "DEFSOPT": ((C.MQOO_INPUT_SHARED, C.MQOO_INPUT_EXCLUSIVE), C.MQOO_INPUT_SHARED),
    "MSGDLVSQ": ((C.MQMDS_PRIORITY, C.MQMDS_FIFO), C.MQMDS_PRIORITY),
    "GET": ((C.MQQA_GET_ALLOWED, C.MQQA_GET_INHIBITED), C.MQQA_GET_ALLOWED),
    "PUT": ((C.MQQA_PUT_ALLOWED, C.MQQA_PUT_INHIBITED), C.MQQA_PUT_ALLOWED),
    "MAXDEPTH": (None, 5000),
    "MAXMSGL": (None, C.DEFAULT_MAX_MSG_LENGTH),
    "USAGE": ((C.MQUS_NORMAL, C.MQUS_TRANSMISSION), C.MQUS_NORMAL),
    "BOTHRESH": (None, 0),
    "BOQNAME": (str, ""),
    "HARDENBO": ((C.MQQA_BACKOUT_NOT_HARDENED, C.MQQA_BACKOUT_HARDENED), C.MQQA_BACKOUT_NOT_HARDENED),
    "TRIGGER": ((C.MQTC_OFF, C.MQTC_ON), C.MQTC_OFF),
    "TRIGTYPE": ((C.MQTT_NONE, C.MQTT_FIRST, C.MQTT_EVERY, C.MQTT_DEPTH), C.MQTT_FIRST),
    "TRIGDPTH": (range(1, 1000000000), 1),
    "TRIGMPRI": (range(0, C.MAX_PRIORITY + 1), 0),
    "TRIGDATA": (str, ""),
    "PROCESS": (str, ""),
    "INITQ": (str, ""),
    "QSGDISP": ((C.MQQSGD_Q_MGR, C.MQQSGD_SHARED), C.MQQSGD_Q_MGR),
}
#: Attributes that can be inquired but not set.
QUEUE_STATUS_ATTRIBUTES = ("CURDEPTH", "IPPROCS", "OPPROCS")


#: Queue-manager attributes the language knows: (allowed values, default).
QMGR_ATTRIBUTES: dict[str, tuple[Any, Any]] = {
    "EXPRYINT": (None, 0),
    "TRIGINT": (None, C.DEFAULT_TRIGGER_INTERVAL),
    "DEADQ": (str, ""),
}


def _checked_qmgr_attrs(pairs: tuple) -> tuple:
    for name, val in pairs:
        if name not in QMGR_ATTRIBUTES:
            raise ValueError(f"unknown queue-manager attribute {name}")
        if QMGR_ATTRIBUTES[name][0] is str:
            if not isinstance(val, str):
                raise ValueError(f"invalid value {val!r} for queue-manager attribute {name}")
        elif not isinstance(val, int) or isinstance(val, bool) or val < 0:
            raise ValueError(f"invalid value {val!r} for queue-manager attribute {name}")
    return pairs


def _settable_attrs(value: Any) -> tuple[tuple[str, Any], ...]:
    pairs = _attr_pairs(value)
    for name, val in pairs:
        if name not in QUEUE_ATTRIBUTES:
            raise ValueError(f"unknown queue attribute {name}")
        allowed, _ = QUEUE_ATTRIBUTES[name]
        if allowed is str:
            ok = isinstance(val, str)
        elif allowed is None:
            ok = isinstance(val, int) and not isinstance(val, bool) and val >= 0
        else:
            ok = isinstance(val, int) and not isinstance(val, bool) and val in allowed
        if not ok:
            raise ValueError(f"invalid value {val!r} for queue attribute {name}")
    return pairs


def _inquirable(value: Any) -> tuple[str, ...]:
    names = _str_tuple(value)
    for name in names:
        if name not in QUEUE_ATTRIBUTES and name not in QUEUE_STATUS_ATTRIBUTES:
            raise ValueError(f"unknown queue attribute {name}")
    return names


_REGISTRY: dict[str, type] = {}


def _register(cls: type) -> type:
    _REGISTRY[cls.__name__] = cls
    return cls


_V = typing.TypeVar("_V", bound=type)


@typing.dataclass_transform(kw_only_default=True, frozen_default=True, field_specifiers=(attrs.field,))
def value_class(cls: _V) -> _V:
    """Declare a frozen, keyword-only value class of the language."""
    return typing.cast(_V, _register(attrs.frozen(kw_only=True, cache_hash=True)(cls)))


# --------------------------------------------------------------------------
# message descriptor


@value_class
class MessageContext:
    """The identity and origin context of a message (MQMD), as set with MQPMO_SET_ALL_CONTEXT
    or passed on with MQPMO_PASS_ALL_CONTEXT."""

    user_id: str = ""
    appl_identity_data: str = ""
    put_appl_type: int = C.MQAT_UNKNOWN
    put_appl_name: str = ""


@value_class
class DeadLetterHeader:
    """The MQDLH at the start of a dead-letter message's data (MQMD.Format is MQDEAD).

    ``format`` is the format of the data that follows the header (the original message's).
    """

    reason: int
    dest_q: str
    dest_qmgr: str = ""
    format: str = C.MQFMT_NONE
    put_appl_type: int = C.MQAT_UNKNOWN
    put_appl_name: str = ""


@value_class
class MessageDescriptor:
    """The MQMD input fields the kit uses on MQPUT / MQPUT1."""

    priority: int = C.MQPRI_PRIORITY_AS_Q_DEF
    persistence: int = C.MQPER_PERSISTENCE_AS_Q_DEF
    expiry: int = C.MQEI_UNLIMITED
    report: int = C.MQRO_NONE
    msg_type: int = C.MQMT_DATAGRAM
    feedback: int = C.MQFB_NONE
    format: str = C.MQFMT_NONE
    reply_to_q: str = ""
    msg_id: str = ""
    correl_id: str = ""
    backout_count: int = 0
    reply_to_qmgr: str = ""
    #: The message context to put with (MQPMO_SET_ALL_CONTEXT); ``None``: the queue manager's default context.
    context: MessageContext | None = None
    #: MsgFlags: MQMF_SEGMENTATION_ALLOWED lets the queue manager split a message too long for the queue.
    msg_flags: int = C.MQMF_NONE


@value_class
class IntRange:
    """An inclusive range of allowed integers in an expected observation."""

    lo: int
    hi: int

    def __contains__(self, value: object) -> bool:
        return isinstance(value, int) and self.lo <= value <= self.hi


@value_class
class XmitHeader:
    """The MQXQH that begins the data of an MQFMT_XMIT_Q_HEADER message: its embedded Expiry."""

    #: (``None`` in an observation: the system has no such value, declared lacking; never compared)
    expiry: int | IntRange | None = C.MQEI_UNLIMITED


@value_class
class TriggerMessage:
    """The MQTM a trigger message carries (format MQFMT_TRIGGER)."""

    q_name: str
    process_name: str = ""
    trigger_data: str = ""
    appl_type: int = C.MQAT_UNKNOWN
    appl_id: str = ""
    env_data: str = ""
    user_data: str = ""


@value_class
class ReturnedMessage:
    """A message as MQGET returns it: its body and output MQMD fields.

    In an *expected* message (from the model) ``None`` in ``msg_id`` means "any
    identifier the queue manager generated", ``None`` in another field means any
    value, and ``expiry`` may be an :class:`IntRange` of allowed remaining times.
    """

    body: str
    priority: int
    persistence: int
    expiry: int | IntRange = C.MQEI_UNLIMITED
    report: int = C.MQRO_NONE
    msg_type: int = C.MQMT_DATAGRAM
    feedback: int = C.MQFB_NONE
    format: str = C.MQFMT_NONE
    reply_to_q: str = ""
    msg_id: str | None = ""
    correl_id: str | None = ""
    #: A range where MQ leaves the count uncertain (after a z/OS restart without HARDENBO); ``None`` in an
    #: observation: the system keeps no count, declared lacking (never compared).
    backout_count: int | IntRange | None = 0
    xmit_header: XmitHeader | None = None
    #: The MQTM of a trigger message.
    trigger: TriggerMessage | None = None
    reply_to_qmgr: str = ""
    #: The message context; in an expected message ``None`` is the queue manager's default (any).
    context: MessageContext | None = None
    #: The MQDLH at the start of the data, if any.
    dlh: DeadLetterHeader | None = None
    #: MQGMO.SegmentStatus: whether the message got is a segment of a logical message, and the last one.
    segment_status: str = C.MQSS_NOT_A_SEGMENT
    #: MQMD.Offset: where a segment's data starts in its logical message (0 for a message not segmented).
    offset: int = 0


# --------------------------------------------------------------------------
# operations


class Op:
    """Marker base for operations (every op class below derives from it)."""

    #: Which connection the op runs on, or ``None`` for administrative ops.
    conn: str | None = None

    def describe(self) -> str:
        fields = ", ".join(
            f"{a.name}={getattr(self, a.name)!r}"
            for a in attrs.fields(typing.cast(Any, type(self)))
            if getattr(self, a.name) != a.default
        )
        return f"{type(self).__name__}({fields})"


@value_class
class DefineQueue(Op):
    """DEFINE QLOCAL: create a local queue with the given MQSC-named attributes.

    ``qmgr`` names the queue manager of a queue-sharing group whose private queue it is (blank: the
    queue manager under test); a queue with QSGDISP(SHARED) belongs to the whole group.
    """

    queue: str
    attrs: tuple = attrs.field(default=(), converter=_settable_attrs)
    qmgr: str = ""


@value_class
class DefineRemoteQueue(Op):
    """Define ``queue`` as a remote queue definition (QREMOTE): queue ``rname`` on queue manager
    ``rqmname``, reached through transmission queue ``xmitq`` (blank: the one named ``rqmname``).

    A put to it (MQPUT1) goes on the transmission queue as an MQXMIT message.
    """

    queue: str
    rname: str
    rqmname: str
    xmitq: str = ""


@value_class
class DefineProcess(Op):

    """DEFINE PROCESS: the application a trigger monitor starts for a queue."""

    process: str
    appl_type: int = C.MQAT_UNIX
    appl_id: str = ""
    env_data: str = ""
    user_data: str = ""


@value_class
class AlterQueue(Op):
    """ALTER QLOCAL, or MQSET on an open handle: the same change to attributes."""

    queue: str
    attrs: tuple = attrs.field(converter=_settable_attrs)


@value_class
class InquireQueue(Op):
    """MQINQ / DISPLAY QLOCAL of the named attributes (CURDEPTH, IPPROCS, ...), on queue manager
    ``qmgr`` of a queue-sharing group (blank: the queue manager under test)."""

    queue: str
    names: tuple = attrs.field(converter=_inquirable)
    qmgr: str = ""


@value_class
class Connect(Op):
    """MQCONN: open a connection named ``conn``."""

    conn: str
    #: The connection's environment (``"normal"``; other values are added by
    #: rule areas that depend on it).
    environment: str = "normal"
    #: The queue manager of a queue-sharing group to connect to (blank: the queue manager under test).
    qmgr: str = ""


@value_class
class DefineQueueSharingGroup(Op):
    """Put the queue manager under test in a queue-sharing group (z/OS) with the queue managers ``qmgrs``.

    Connections may then name one of them (``Connect.qmgr``); each has its own private queues
    (``DefineQueue.qmgr``), and queues defined with QSGDISP(SHARED) are the group's.
    """

    qmgrs: tuple = attrs.field(converter=lambda v: tuple(str(x).upper() for x in v))


@value_class
class Disconnect(Op):
    """MQDISC (``abnormal=False``) or the program ending without it (``abnormal=True``)."""

    conn: str
    abnormal: bool = False


@value_class
class Open(Op):
    """MQOPEN of ``queue`` with MQOO options; the handle is named ``handle``."""

    conn: str
    handle: str
    queue: str
    options: int


@value_class
class Close(Op):
    """MQCLOSE of an object handle."""

    conn: str
    handle: str


@value_class
class Put(Op):
    """MQPUT on an open handle, with MQPMO options."""

    conn: str
    handle: str
    body: str
    md: MessageDescriptor = MessageDescriptor()
    options: int = C.MQPMO_NO_SYNCPOINT
    #: For MQFMT_XMIT_Q_HEADER messages: the MQXQH at the start of the data.
    xmit_header: XmitHeader | None = None
    #: An MQDLH to begin the data with (``md.format`` should then be MQFMT_DEAD_LETTER_HEADER).
    dlh: DeadLetterHeader | None = None


@value_class
class Put1(Op):
    """MQPUT1: open, put and close in one call."""

    conn: str
    queue: str
    #: The queue manager that owns ``queue``; blank is the local one.
    qmgr: str = ""
    body: str
    md: MessageDescriptor = MessageDescriptor()
    options: int = C.MQPMO_NO_SYNCPOINT
    xmit_header: XmitHeader | None = None
    #: An MQDLH to begin the data with (``md.format`` should then be MQFMT_DEAD_LETTER_HEADER).
    dlh: DeadLetterHeader | None = None


@value_class
class Get(Op):
    """MQGET (destructive or browse) with MQGMO options and a wait interval in ms."""

    conn: str
    handle: str
    options: int = C.MQGMO_NO_SYNCPOINT
    wait_interval: int = 0


def _match_modelled(instance, attribute, value) -> None:
    if value & C.MQMO_DEFINED & ~C.MQMO_MODELLED:
        raise ValueError("match_options: the language carries MsgId and CorrelId only (MQMO_MATCH_MSG_ID, "
                         "MQMO_MATCH_CORREL_ID); GroupId, MsgSeqNumber, Offset and MsgToken have no field")


@value_class
class GetMatching(Get):
    """MQGET selecting the message by its MQMD: ``match_options`` (MQGMO MatchOptions, MQMO_*) say which of
    ``msg_id`` and ``correl_id`` (the MsgDesc's MsgId and CorrelId on input, "" for MQMI_NONE / MQCI_NONE)
    a message must have.  A system that cannot select leaves it out of its operations; every other field
    is Get's."""

    match_options: int = attrs.field(default=C.MQMO_MATCH_MSG_ID | C.MQMO_MATCH_CORREL_ID,
                                     validator=_match_modelled)
    msg_id: str = ""
    correl_id: str = ""


@value_class
class Commit(Op):
    """MQCMIT."""

    conn: str


@value_class
class Backout(Op):
    """MQBACK."""

    conn: str


@value_class
class Restart(Op):
    """Stop and restart the queue manager; every connection is ended.

    ``abrupt``: the queue manager is killed (a power cut, SIGKILL) instead of being
    ended; MQ's rules for what a restart keeps are the same either way.
    """

    abrupt: bool = False


@value_class
class CutConnection(Op):
    """The network cuts connection ``conn`` from outside the program (a nemesis step).

    Without ``in_flight`` the cut falls between calls: the queue manager ends the
    connection as it ends a program that ends abnormally, and the program's later
    calls on it fail.  With ``in_flight`` it falls while the program's next call on
    ``conn`` is in flight, after the request has left: that call fails with
    MQRC_CONNECTION_BROKEN, and whether the queue manager carried it out is unknown.
    """

    conn: str
    in_flight: bool = False


@value_class
class PauseQueueManager(Op):
    """The queue manager stops answering for ``tenths`` (a nemesis step: SIGSTOP, then SIGCONT).

    The program's next call on ``conn`` is made while it is paused and waits longer
    than the client's timeout: the client gives up and its connection ends, the call
    in flight (as ``CutConnection(in_flight=True)``); meanwhile time goes on.
    """

    conn: str
    tenths: int = attrs.field(validator=attrs.validators.ge(1))


@value_class
class AlterQueueManager(Op):
    """ALTER QMGR: queue-manager attributes (EXPRYINT, in seconds, 0 meaning OFF), of the queue manager
    under test or of ``qmgr``, another member of its queue-sharing group."""

    attrs: tuple = attrs.field(converter=lambda v: _checked_qmgr_attrs(_attr_pairs(v)))
    qmgr: str = ""


@value_class
class RefreshExpiry(Op):
    """REFRESH QMGR TYPE(EXPIRY) NAME(...): scan the queues matching a generic name (z/OS)."""

    queues: str = "*"


def _clusters(value: Any) -> tuple[str, ...]:
    return tuple(sorted({str(v) for v in value}))


@value_class
class SetClusterQueueManager(Op):
    """Define or alter what the local queue manager knows of a cluster queue manager.

    A remote queue manager is also known, with these defaults, through its
    cluster channel alone (``SetClusterChannel``), as MQ knows it through its
    cluster-receiver channel; this op is needed for it only to suspend it.
    """

    name: str
    clusters: tuple = attrs.field(converter=_clusters)
    local: bool = False
    suspended: bool = False
    clwluseq: str = "LOCAL"
    clwlmruc: int = 999999999


@value_class
class SetClusterInstance(Op):
    """Define or alter an instance of a cluster queue hosted by ``qmgr``."""

    qmgr: str
    queue: str
    clusters: tuple = attrs.field(converter=_clusters)
    put_enabled: bool = True
    clwlrank: int = 0
    clwlprty: int = 0
    clwluseq: str = "QMGR"


@value_class
class SetClusterAlias(Op):
    """Define or alter a queue-manager alias ``name`` hosted by ``qmgr`` and advertised in ``clusters``.

    A put naming queue manager ``name`` may be sent to ``qmgr`` through it.
    """

    name: str
    qmgr: str
    clusters: tuple = attrs.field(converter=_clusters)
    put_enabled: bool = True
    clwlrank: int = 0
    clwlprty: int = 0


@value_class
class RemoveClusterInstance(Op):
    qmgr: str
    queue: str


@value_class
class SetClusterChannel(Op):
    """Define or alter the cluster channel to ``qmgr`` (its state included)."""

    name: str
    qmgr: str
    clusters: tuple = attrs.field(converter=_clusters)
    state: int = 0
    clwlrank: int = 0
    clwlprty: int = 0
    clwlwght: int = 50
    netprty: int = 0
    local_sender: bool = False


@value_class
class ClusterPut(Op):
    """Put a message to cluster queue ``queue``; the observation's DESTINATION names where it went."""

    queue: str
    put_locally: bool = True
    pcf: bool = False
    already_sent: tuple = attrs.field(default=(), converter=_clusters)
    #: The queue manager the put names (ObjectQMgrName), or "" when only the queue is named.
    qmgr: str = ""


# --------------------------------------------------------------------------
# the dead-letter-queue handler (area dlq)


@value_class
class StartDlqHandler(Op):
    """Start a DLQ handler instance ``handler`` with the rules table ``table`` (its text).

    The text is also the handler's table file: :class:`ChangeDlqTable` edits it.
    """

    handler: str
    table: str


@value_class
class ChangeDlqTable(Op):
    """Edit a handler's rules-table file; a running handler keeps the table it started with."""

    handler: str
    table: str


@value_class
class RestartDlqHandler(Op):
    """End a handler instance and start it again from its table file (its memory is lost)."""

    handler: str


@value_class
class RunDlqHandler(Op):
    """Let a handler work until it is idle at the current time.

    The observation's ``attrs`` give each message that was on the dead-letter queue, by
    MsgId, its fate: ``"kept"`` (untouched), ``"backed-out"`` (an action was tried and
    failed, so its get was backed out), ``"discarded"`` or ``"put:QNAME"``; and ``HANDLER``:
    ``"RUNNING"`` or ``"ENDED"``.
    """

    handler: str


@value_class
class AdvanceClock(Op):
    """Let time pass, in tenths of a second."""

    tenths: int = attrs.field(validator=attrs.validators.ge(0))


OPERATIONS: tuple[type, ...] = tuple(
    cls for cls in list(_REGISTRY.values()) if isinstance(cls, type) and issubclass(cls, Op)
)


def types() -> dict[str, type]:
    """Every type of the language (operations, observations and the values they hold), by name: what a
    ``"type"`` field of the JSON form names."""
    return dict(_REGISTRY)


# --------------------------------------------------------------------------
# observations


@value_class
class Observation:
    """What a queue manager answered to one operation."""

    cc: int = C.MQCC_OK
    rc: int = C.MQRC_NONE
    message: ReturnedMessage | None = None
    attrs: tuple | None = attrs.field(
        default=None, converter=attrs.converters.optional(_attr_pairs)
    )

    @classmethod
    def of(cls, rc: int, **kw: Any) -> "Observation":
        return cls(cc=C.completion_for(rc), rc=rc, **kw)


OK = Observation()


# --------------------------------------------------------------------------
# JSON form


class LanguageError(ValueError):
    """A JSON value that is not a well-formed term of the operation language."""


#: Per class of the language, its fields' names in order (to_json and from_json run once an operation).
_NAMES: dict[type, tuple[str, ...]] = {}


def _names(cls: type) -> tuple[str, ...] | None:
    names = _NAMES.get(cls)
    if names is None:
        if not (attrs.has(cls) and cls.__name__ in _REGISTRY):
            return None
        names = _NAMES[cls] = tuple(a.name for a in attrs.fields(cls))
    return names


def to_json(value: Any) -> Any:
    """The JSON-compatible form of a language value (lossless)."""
    names = _names(type(value)) if not isinstance(value, (str, int, tuple)) and value is not None else None
    if names is not None:
        out: dict[str, Any] = {"type": type(value).__name__}
        for name in names:
            out[name] = to_json(getattr(value, name))
        return out
    if isinstance(value, tuple):
        return [to_json(v) for v in value]
    if value is None or isinstance(value, (bool, int, str)):
        return value
    raise LanguageError(f"not a language value: {value!r}")


def _decode(value: Any) -> Any:
    if isinstance(value, dict):
        return from_json(value)
    if isinstance(value, list):
        return tuple(_decode(v) for v in value)
    if value is None or isinstance(value, (bool, int, str)):
        return value
    raise LanguageError(f"unexpected JSON value {value!r}")


def from_json(data: Any) -> Any:
    """Rebuild a language value from :func:`to_json`'s form; raises LanguageError."""
    if not isinstance(data, dict) or not isinstance(data.get("type"), str):
        raise LanguageError(f"expected an object with a 'type', got {data!r:.80}")
    cls = _REGISTRY.get(data["type"])
    if cls is None:
        raise LanguageError(f"unknown type {data['type']!r}")
    unknown = set(data) - set(_names(cls) or ()) - {"type"}
    if unknown:
        raise LanguageError(f"{data['type']}: unknown field(s) {sorted(unknown)}")
    try:
        value = cls(**{k: _decode(v) for k, v in data.items() if k != "type"})
    except (TypeError, ValueError) as exc:
        raise LanguageError(f"{data['type']}: {exc}") from None
    for name, kinds in _field_kinds(cls):
        got = getattr(value, name)
        if kinds is not None and (not isinstance(got, kinds) or (isinstance(got, bool) and bool not in kinds)):
            raise LanguageError(f"{data['type']}: {name} is {got!r:.60}, not "
                                f"{' or '.join('null' if k is type(None) else k.__name__ for k in kinds)}")
    return value


#: Per class of the language, each field's name and the types its value may have (None: not checked).
_KINDS: dict[type, list[tuple[str, tuple | None]]] = {}


def _field_kinds(cls) -> list[tuple[str, tuple | None]]:
    """What each field of ``cls`` may hold, from its annotation: a JSON form whose value is of another kind
    (a message that is a list, a priority that is text) is not a term of the language."""
    kinds = _KINDS.get(cls)
    if kinds is None:
        import types
        import typing

        attrs.resolve_types(cls, globalns=globals())
        # an expected message, or trigger message, leaves a field MQ does not pin down open: None, any value
        open_fields = cls in (ReturnedMessage, TriggerMessage)
        kinds = []
        for field in attrs.fields(cls):
            arms = typing.get_args(field.type) if isinstance(field.type, types.UnionType) else (field.type,)
            plain = [typing.get_origin(arm) or arm for arm in arms]
            if any(not isinstance(arm, type) or arm is Any for arm in plain):
                kinds.append((field.name, None))   # a field of any type
                continue
            if open_fields and type(None) not in plain:
                plain.append(type(None))
            kinds.append((field.name, tuple(plain)))
        _KINDS[cls] = kinds
    return kinds


def dumps(value: Any) -> str:
    return json.dumps(to_json(value), sort_keys=True)


def loads(text: str) -> Any:
    try:
        return from_json(json.loads(text))
    except json.JSONDecodeError as exc:
        raise LanguageError(f"not JSON: {exc}") from None
