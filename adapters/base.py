"""The adapter contract: how the kit drives a queue manager.

An adapter executes one operation of the language and returns the observation;
it declares what it can express (:class:`Capabilities`); and it isolates test
cases from each other (``start_case`` / ``end_case``).  Adapters know nothing of
Hypothesis, the model or the checker.

Adapters are found through the entry-point group ``mq_conformance.adapters``
(see :mod:`adapters.registry`), so another package can add one.
"""

from __future__ import annotations

from typing import ClassVar, Mapping, Protocol, runtime_checkable

import attrs

from reference_model import language as L
from reference_model import mqconst as C
from reference_model.rules import AREAS


class AdapterError(Exception):
    """The system under test or its harness failed (not a conformance verdict)."""


class AdapterUnavailable(AdapterError):
    """The system under test cannot be reached or started."""


class NotExpressible(Exception):
    """Raised by ``execute`` for an operation (or an option or value of it) the system cannot express, found
    out only when it is run: nothing was done on the system.  The session treats it as ``express`` returning
    None (the step is left out, on the model too), and the reason is reported."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = " ".join(str(reason).split())[:200] or "not expressible"


class Refused(Exception):
    """A call the adapter answers itself with an MQ reason code, before it reaches the system: a connection or
    an object handle the program does not have, say.  :func:`carry_out` gives it as the call's observation."""

    def __init__(self, rc: int) -> None:
        super().__init__(rc)
        self.rc = rc


#: Each class's method for each type of operation, found once (None: the class has none).
_HANDLERS: dict[tuple[type, type], object] = {}


def handler_for(cls: type, op_type: type):
    """The method of ``cls`` that carries out operations of ``op_type``: the one named ``_op_`` and the type's
    name (``_op_Put`` for :class:`~reference_model.language.Put`), as every adapter of the kit names them, so
    that a new operation is one method, named for it, in each adapter that can run it.  None: it has none.
    (A name, not a decorator: the simulated queue manager's methods are mutated one by one to measure the kit's
    power, and the mutation tool leaves decorated functions alone.)"""
    key = (cls, op_type)
    try:
        return _HANDLERS[key]
    except KeyError:
        method = _HANDLERS[key] = getattr(cls, "_op_" + op_type.__name__, None)
        return method


def carry_out(adapter, op: L.Op) -> L.Observation:
    """``op`` carried out by ``adapter``'s method for it (:func:`handler_for`); a call it refuses
    (:class:`Refused`) is that reason code's observation, a method that returns nothing ``MQRC_NONE``.  An
    operation the adapter has no method for is a defect of the adapter (its ``express`` let it through)."""
    method = handler_for(type(adapter), type(op))
    if method is None:
        raise NotImplementedError(f"{type(adapter).__name__} has no method for {type(op).__name__}")
    try:
        result = method(adapter, op)
    except Refused as refused:
        return L.Observation.of(refused.rc)
    return L.OK if result is None else result


class AdapterOptionError(ValueError):
    """An adapter option is unknown or has an invalid value."""


#: What, besides the system itself, a verdict on it may have depended on.
DEPENDENCY_KINDS = ("broker setting", "client setting", "adapter code")


def _known_rules(instance, attribute, value) -> None:
    from reference_model.rules import RULES

    unknown = sorted(r for r in value if r not in RULES)
    if unknown or not value:
        raise ValueError(f"{attribute.name}: {'unknown rule ' + unknown[0] if unknown else 'no rule named'}")


@attrs.frozen(kw_only=True)
class Dependency:
    """Something a verdict on a system depended on besides the system as it installs: a setting of the
    broker or of its client that the adapter (or the broker the kit starts) chose, or code in the adapter
    that an application moving from MQ would have to write itself.  ``rules``: the rules whose verdict it
    bears on (a pass there is the system's with this in place).  A broker adapter's ``mapping=defaults``
    drops every dependency but those ``needed`` to express the calls at all, so that a report shows the
    broker and client as they install beside the faithful mapping."""

    kind: str = attrs.field(validator=attrs.validators.in_(DEPENDENCY_KINDS))
    what: str
    why: str
    rules: frozenset[str] = attrs.field(converter=frozenset, validator=_known_rules)
    #: Kept by the adapter's ``mapping=defaults`` too: without it the MQ call cannot be expressed at all.
    needed: bool = False

    def to_json(self) -> dict:
        return {"kind": self.kind, "what": self.what, "why": self.why, "rules": sorted(self.rules),
                **({"needed": True} if self.needed else {})}


#: Fields of an answer a system may have no value for at all (declared with :attr:`Capabilities.lacks`), each with
#: the rules whose every check is on that field: those are not applicable where it is lacking; elsewhere the field
#: is not compared (a BackoutCount a system does not keep says nothing of whether a backout reinstated a message).
LACKABLE: dict[str, tuple[str, ...]] = {
    "message.backout_count": ("CORE-12", "CORE-17", "CORE-45", "SYNC-19"),
    "message.expiry": ("EXP-02", "EXP-03"),
    "attrs.CURDEPTH": ("CORE-28",),
    "attrs.IPPROCS": ("CORE-24",),
    "attrs.OPPROCS": ("CORE-24",),
}


def undeclared_nulls(observation: L.Observation, lacks: frozenset[str]) -> list[str]:
    """The fields of :data:`LACKABLE` that ``observation`` holds as null (no value) though the system did not declare
    them in ``lacks``.  A null there is never compared, so a system answering one must say it has no such value: from
    any other, it would be a value left unchecked (a message's expiry, a queue's depth)."""
    message, values = observation.message, observation.attrs
    if message is None and not values:
        return []
    out = []
    values = dict(values) if values else None
    for field, kind, name in _LACKABLE_PARTS:
        if field in lacks:
            continue
        if kind == "message" and message is not None and getattr(message, name) is None:
            out.append(field)
        elif kind == "attrs" and values is not None and values.get(name, 0) is None:
            out.append(field)
    return out


#: :data:`LACKABLE`'s fields in order, each with its two parts (a call of every step asks of them).
_LACKABLE_PARTS = tuple((field, *field.split(".", 1)) for field in sorted(LACKABLE))


@attrs.frozen(kw_only=True)
class Capabilities:
    """What an adapter can express.  Rules outside it are "not applicable"."""

    areas: frozenset[str] = attrs.field(converter=frozenset)
    #: Platforms whose behaviour the system can show, its default first.  A simulated
    #: queue manager can emulate several; a real one is exactly one.
    platforms: tuple[str, ...] = attrs.field(default=(C.PLATFORM_DISTRIBUTED,), converter=tuple)
    #: Names of operation classes the adapter can execute; ``None`` means all.
    operations: frozenset[str] | None = attrs.field(
        default=None, converter=attrs.converters.optional(frozenset)
    )
    #: True when clock advances are real waits (real brokers).
    realtime: bool = False
    #: How far, in tenths of a second, the system's remaining expiry may be from the exact value.
    expiry_tolerance: int = 0
    #: Rules the system cannot express at all, each with the reason (their verdict is "not applicable").
    not_applicable: Mapping[str, str] = attrs.field(factory=dict, converter=dict)
    #: What the verdicts depended on besides the system itself (settings and adapter code), stated in
    #: every report so that a reader judges the system, not the adapter.
    depends_on: tuple[Dependency, ...] = attrs.field(default=(), converter=tuple)
    #: Fields of its answers the system has no value for (keys of :data:`LACKABLE`): never compared, and the rules
    #: about them alone not applicable (:meth:`with_lacks`).
    lacks: frozenset[str] = attrs.field(default=frozenset(), converter=frozenset)
    #: True when the system itself made the :attr:`not_applicable` declarations (a protocol server's hello):
    #: they are honoured, those rules never searched for and never failed (:attr:`never_searched`).  The kit's own
    #: adapters' declarations are searched all the same: a departure from such a rule refutes the declaration.
    declared_by_system: bool = False

    @property
    def never_searched(self) -> frozenset[str]:
        """The rules whose departures a run steps past unreported: those the system declared not applicable."""
        return frozenset(self.not_applicable) if self.declared_by_system else frozenset()

    @lacks.validator
    def _known_fields(self, attribute, value) -> None:
        unknown = sorted(set(value) - set(LACKABLE))
        if unknown:
            raise ValueError(f"a system may lack only {', '.join(sorted(LACKABLE))}, not {', '.join(unknown)}")

    def with_lacks(self) -> "Capabilities":
        """These capabilities with the rules about lacking fields alone declared not applicable, with the reason."""
        extra = {rule: f"the system has no {field} (declared lacking): every check of the rule is on it"
                 for field in sorted(self.lacks) for rule in LACKABLE[field] if rule not in self.not_applicable}
        return attrs.evolve(self, not_applicable={**self.not_applicable, **extra}) if extra else self

    @platforms.validator
    def _known_platforms(self, attribute, value) -> None:
        if not value or set(value) - set(C.PLATFORMS):
            raise ValueError(f"platforms must be among {C.PLATFORMS}, not {value!r}")

    @property
    def platform(self) -> str:
        """The default platform."""
        return self.platforms[0]

    @areas.validator
    def _known_areas(self, attribute, value) -> None:
        unknown = set(value) - set(AREAS)
        if unknown:
            raise ValueError(f"unknown areas {sorted(unknown)}")

    def can(self, op_type: type) -> bool:
        return self.operations is None or op_type.__name__ in self.operations

    def to_json(self) -> dict:
        return {
            "areas": sorted(self.areas),
            "platform": self.platform,
            "platforms": list(self.platforms),
            "operations": None if self.operations is None else sorted(self.operations),
            "realtime": self.realtime,
            "expiry_tolerance": self.expiry_tolerance,
            "not_applicable": dict(sorted(self.not_applicable.items())),
            **({"depends_on": [d.to_json() for d in self.depends_on]} if self.depends_on else {}),
            **({"lacks": sorted(self.lacks)} if self.lacks else {}),
            **({"declared_by_system": True} if self.declared_by_system else {}),
        }


@attrs.define
class RestartBudget:
    """The restarts a run of an adapter may make (each takes seconds on a real system).

    Cases that search spend the run's ``limit`` (None: no bound).  Cases that replay a history (a
    departure shrinking, a counterexample minimised or replayed) spend none of it, and may run the
    restarts the case that found the departure still had when it started: a restart is available at
    each step of a replay exactly where it was at that step of the case replayed, whatever the search
    spent meanwhile (a machine's choice of rule depends on which rules can run).  The runner says which
    cases are which (an adapter's optional ``phase``)."""

    limit: int | None = None
    spent: int = 0
    replaying: bool = False
    #: Restarts spent when the latest searching case started, and when the case being replayed started.
    case_start: int = 0
    base: int = 0
    in_case: int = 0

    def phase(self, name: str) -> None:
        """``"search"`` or ``"replay"`` (the latest searching case, which found a departure) from the next case on."""
        if name == "replay" and not self.replaying:
            self.base = self.case_start
        self.replaying = name == "replay"

    def start_case(self) -> None:
        self.in_case = 0
        if not self.replaying:
            self.case_start = self.spent

    def allows(self) -> bool:
        """Whether the case may run one more restart."""
        if self.limit is None:
            return True
        return (self.base + self.in_case if self.replaying else self.spent) < self.limit

    def ran(self) -> None:
        self.in_case += 1
        self.spent += not self.replaying

    def describe(self) -> str:
        return "on" if self.limit is None else f"at most {self.limit}"


@runtime_checkable
class Adapter(Protocol):
    """The protocol every adapter implements."""

    name: ClassVar[str]

    def capabilities(self) -> Capabilities: ...

    def describe(self) -> dict:
        """Identity of the system under test: at least ``version`` and ``platform``."""

    def start_case(self, case_id: str, platform: str | None = None) -> None:
        """Begin an isolated test case: nothing from earlier cases is visible.

        ``platform`` is one of ``capabilities().platforms`` (default: the first).
        """

    def execute(self, op: L.Op) -> L.Observation: ...

    # Optional:
    #   express(op) -> Op | None: the op as the system can express it (an attribute or
    #       option it has no equivalent for removed), or None when it cannot at all; the
    #       session then runs neither it nor the model's step.
    #   elapsed_tenths() -> int: for realtime adapters, tenths of a second since start_case.
    #   concurrent_calls = True: it takes calls from several threads at once (mqconform run --concurrency);
    #       its start_case then also takes ``concurrent=True``, said of a case whose calls will come at once
    #       (in any other case each call is made only once the one before has returned).
    #   phase(name): the cases from the next on search ("search") or replay a history the latest
    #       searching case found ("replay"): see :class:`RestartBudget`.

    def end_case(self) -> None: ...

    def close(self) -> None: ...


def parse_options(pairs: list[str] | tuple[str, ...]) -> dict[str, str]:
    """``["k=v", ...]`` to a dict; raises AdapterOptionError on a malformed pair."""
    out: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise AdapterOptionError(f"malformed adapter option {pair!r}: expected key=value")
        out[key.strip()] = value.strip()
    return out


def check_options(adapter: str, options: Mapping[str, str], known: set[str]) -> None:
    unknown = sorted(set(options) - known)
    if unknown:
        raise AdapterOptionError(
            f"adapter {adapter!r} has no option {unknown[0]!r} (known: {', '.join(sorted(known)) or 'none'})"
        )


def platform_option(adapter: str, options: Mapping[str, str]) -> tuple[str, ...]:
    """The ``platform`` option of an emulating adapter: one platform, or ``any`` (the default)."""
    platform = options.get("platform", "any")
    if platform == "any":
        return C.PLATFORMS
    if platform not in C.PLATFORMS:
        raise AdapterOptionError(
            f"adapter {adapter!r}: platform must be one of {', '.join(C.PLATFORMS)} or any, not {platform!r}"
        )
    return (platform,)
