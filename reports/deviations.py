"""Known deviations: departures a system is known to show, explained once and reported as such.

A known-deviations file is TOML, one ``[[deviation]]`` table per rule and adapter::

    [[deviation]]
    rule = "CORE-36"
    adapter = "rabbitmq"
    seen = "A persistent message got with SYNCPOINT_IF_PERSISTENT is removed at once."
    reason = '''One paragraph on the system's behaviour behind the departure ...'''

An entry may cite the system's own tracker: ``upstream`` (a list of ``owner/repo#N``
references or URLs) and ``affects`` (the versions they say the behaviour affects);
reports show them beside the entry.

An entry may name a recorded ``counterexample`` (a replay file, relative to the
deviations file): the evidence that the system departs; or a list of them, where the
behaviour shows in several shapes (a missing report seen by a get on the reply-to
queue, or by its depth): the entry matches a failure of any of their shapes.

A deviation describes a behaviour, not a rule: it matches a failure only when the
failure is blamed on its rule *and* shows its signature: the operation at the
breaking step, the fields that differ, and optionally values of what the system
answered and of what MQ gives (``[deviation.match]``: ``op``, ``fields``,
``observed``, ``expected``, ``lower``, ``higher``, ``history``).  An operation in
``op`` or ``history`` may carry option flags that must be set or not:
``Put+MQPMO_SYNCPOINT`` (a put under syncpoint), ``Put-MQPMO_SYNCPOINT``.  An entry with a
counterexample takes the operation and the fields from it unless ``match`` says
otherwise; the counterexample must still depart, at its own step, from the rule
the entry names (the model is checked, not the system), or the entry is *stale*.

In a report, a rule the file names for a system's adapter that *fails* there only
in failures matching the entry is shown as *known deviation* (it no longer makes
the report fail); a failure of the rule that does not match stays a failure, and
the entry is *does not match* for that system.  One that
*passes* there is *not shown* when the entry has a recorded counterexample: a run
on a real system samples cases, and a pass says only that its cases did not show
the departure; whether the system now conforms is for the counterexample to say
when replayed (``mqconform replay FILE``; the kit's tests replay every published
one).  Without a counterexample a passing rule makes the entry *stale*: the
system now conforms and the entry should go.  A rule the runs did not reach is
*not reached* (nothing is claimed either way).  A known deviation never hides a
failure of any other rule or adapter.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import attrs

from reports.inputs import ReportInputError

MATCHED, STALE, NOT_REACHED, NOT_SHOWN = "matched", "stale", "not reached", "not shown"
#: The rule fails, but in a failure the entry's signature does not describe: an unexplained failure.
UNMATCHED = "does not match"

_PATH = {"type": "string", "pattern": r"^(rc|cc|message|message\.[a-z_]+|attrs\.[A-Z0-9_]+)$"}
_VALUES = {"type": "object", "propertyNames": _PATH,
           "additionalProperties": {"type": ["integer", "string", "boolean"]}}
_MATCH = {
    "type": "object", "additionalProperties": False,
    "properties": {
        "op": {"type": "array", "items": {"type": "string", "minLength": 1}, "minItems": 1},
        "fields": {"type": "array", "items": _PATH, "minItems": 1},
        "observed": _VALUES, "expected": _VALUES,
        "lower": {"type": "array", "items": _PATH}, "higher": {"type": "array", "items": _PATH},
        "history": {"type": "array", "items": {"type": "string", "minLength": 1}},
    },
}

#: An upstream reference: ``owner/repo#123`` (a GitHub issue or pull request) or an http(s) URL.
UPSTREAM_REF = r"^([A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+#[0-9]+|https?://\S+)$"

_SCHEMA = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "deviation": {
            "type": "array",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["rule", "adapter", "seen", "reason"],
                "properties": {
                    "rule": {"type": "string", "pattern": "^[A-Z]+-[0-9]{2,3}[a-z]?$"},
                    "adapter": {"type": "string", "minLength": 1},
                    "seen": {"type": "string", "minLength": 1},
                    "reason": {"type": "string", "minLength": 1},
                    "counterexample": {"oneOf": [
                        {"type": "string", "minLength": 1},
                        {"type": "array", "items": {"type": "string", "minLength": 1}, "minItems": 1,
                         "uniqueItems": True}]},
                    "match": _MATCH,
                    # the system's own tracker: issues or pull requests about the behaviour ("owner/repo#N" or a
                    # URL), and the versions they say it affects
                    "upstream": {"type": "array", "minItems": 1, "uniqueItems": True,
                                 "items": {"type": "string", "pattern": UPSTREAM_REF}},
                    "affects": {"type": "string", "minLength": 1},
                },
            },
        },
    },
}


def value_at(observation, path: str):
    """The value at a field path (``rc``, ``message.priority``, ``attrs.CURDEPTH``) of an observation;
    ``message`` alone: whether a message came back."""
    if observation is None:
        return None
    if path in ("rc", "cc"):
        return getattr(observation, path)
    if path == "message":
        return observation.message is not None
    if path.startswith("message."):
        return getattr(observation.message, path[len("message."):], None) if observation.message is not None else None
    if path.startswith("attrs."):
        return dict(observation.attrs or ()).get(path[len("attrs."):])
    return None


@attrs.frozen
class Signature:
    """What a departure looks like: the operation at the breaking step, the fields that differ, and values."""

    #: Operation types (``Put``, ``Get``, ...) at the breaking step; empty: any.
    ops: tuple[str, ...] = ()
    #: The differing fields, exactly; empty: any.
    fields: tuple[str, ...] = ()
    #: Values of what the system answered, and of an outcome MQ allows, by field path.
    observed: tuple[tuple[str, object], ...] = ()
    expected: tuple[tuple[str, object], ...] = ()
    #: Numeric fields the system answered lower (higher) than an outcome MQ allows.
    lower: tuple[str, ...] = ()
    higher: tuple[str, ...] = ()
    #: Operation types the history up to the breaking step must hold (a ``Restart``, say).
    history: tuple[str, ...] = ()

    def why_not(self, failure) -> str | None:
        """Why ``failure``'s departure is not this one (None: it is)."""
        mm = failure.mismatch
        if self.ops and not any(op_matches(spec, mm.op) for spec in self.ops):
            return f"the breaking step is {type(mm.op).__name__}, not {' or '.join(self.ops)}"
        if self.fields and set(mm.fields) != set(self.fields) and not (
                set(self.fields) < set(mm.fields)
                and _decided_by_found_broken(failure, set(mm.fields) - set(self.fields))):
            return f"the differing fields are {', '.join(mm.fields) or 'none'}, not {', '.join(self.fields)}"
        for path, want in self.observed:
            got = value_at(mm.observed, path)
            if got != want:
                return f"the system answered {path} {got!r}, not {want!r}"
        for path, want in self.expected:
            if not any(value_at(a, path) == want for a in mm.allowed):
                return f"MQ's outcome has no {path} {want!r}"
        for paths, below in ((self.lower, True), (self.higher, False)):
            for path in paths:
                got = value_at(mm.observed, path)
                allowed = [value_at(a, path) for a in mm.allowed]
                if not isinstance(got, int) or not any(isinstance(w, int) and (got < w if below else got > w)
                                                        for w in allowed):
                    return f"{path} is not {'lower' if below else 'higher'} than MQ's"
        earlier = [s.op for s in failure.steps[:mm.index + 1]]
        missing = [t for t in self.history if not any(op_matches(t, op) for op in earlier)]
        if missing:
            return f"the history holds no {', '.join(missing)}"
        return None

    def describe(self) -> str:
        parts = []
        if self.ops:
            parts.append(f"breaking at {' or '.join(self.ops)}")
        if self.fields:
            parts.append(f"differing in {', '.join(self.fields)}")
        parts += [f"observed {p} = {v!r}" for p, v in self.observed]
        parts += [f"MQ gives {p} = {v!r}" for p, v in self.expected]
        parts += [f"{p} lower than MQ's" for p in self.lower] + [f"{p} higher than MQ's" for p in self.higher]
        if self.history:
            parts.append(f"with {', '.join(self.history)} earlier in the history")
        return "; ".join(parts) or "any failure of the rule"


@attrs.frozen
class KnownDeviation:
    """One rule a system (named by its adapter) is known to break, with what it does and why."""

    rule: str
    adapter: str
    #: The behaviour seen, in one sentence.
    seen: str
    #: One paragraph: the system's behaviour behind the departure.
    reason: str
    #: Where it was read (file and entry number), for messages.
    origin: str = attrs.field(default="", eq=False)
    #: The replay files showing the departure, as the entry names them (relative to the deviations file).
    counterexamples: tuple[str, ...] = ()
    #: ... and where they are.
    counterexample_paths: tuple[Path, ...] = attrs.field(default=(), eq=False)
    #: The shapes of the departure it describes (from ``match`` and each counterexample): it is any of them.
    signatures: tuple[Signature, ...] = attrs.field(default=(Signature(),), eq=False)
    #: Why the entry is stale whatever the runs show (its counterexample no longer departs as it says), or "".
    stale_because: str = attrs.field(default="", eq=False)
    #: The system's own tracker on the behaviour (``owner/repo#N`` or URLs), and the versions it affects.
    upstream: tuple[str, ...] = ()
    affects: str = ""

    def upstream_text(self) -> str:
        """"Upstream: X, Y (affects ...)." or "" where the entry cites none."""
        if not self.upstream:
            return ""
        return f"Upstream: {', '.join(self.upstream)}" + (f" (affects {self.affects})" if self.affects else "") + "."

    @property
    def counterexample(self) -> str:
        """The first recorded counterexample ("" where there is none)."""
        return self.counterexamples[0] if self.counterexamples else ""

    def describe(self) -> str:
        """The departure it describes, as a phrase ("breaking at Get; differing in rc"), or its shapes, numbered."""
        shapes = list(dict.fromkeys(s.describe() for s in self.signatures))
        if len(shapes) == 1:
            return shapes[0]
        return "in one of these shapes: " + "; ".join(f"({n}) {shape}" for n, shape in enumerate(shapes, start=1))

    def why_not(self, failure) -> str | None:
        """Why ``failure`` is not this deviation (None: it is): another rule, or another shape of departure."""
        if self.rule not in failure.blamed:
            return f"it is not blamed on {self.rule}"
        reasons = [s.why_not(failure) for s in self.signatures]
        return None if None in reasons else "; or ".join(dict.fromkeys(r for r in reasons if r))


@attrs.define
class DeviationStatus:
    """A known deviation as a report found it for one system (column)."""

    deviation: KnownDeviation
    system: str
    status: str
    #: The rule's verdict in that system's runs, before the deviation was applied.
    verdict: str
    #: Why it is stale or does not match (the counterexample's problem, or a failure it does not describe).
    note: str = ""


#: Files read in this process: by the file's resolved path, the stamps (:func:`_stamps`) of it and of every
#: counterexample it names when it was read, and what was read.  Reading one replays each counterexample on the
#: model (about a second for the published file); a report, its migration page and the tests that compare them,
#: made in one process, read it once.  A file or counterexample changed since is read again.
_READ: dict[Path, tuple[tuple, tuple[KnownDeviation, ...]]] = {}


def _stamps(paths) -> tuple:
    """Each file's size and modification time (None: it cannot be read)."""
    out = []
    for path in paths:
        try:
            st = Path(path).stat()
            out.append((st.st_size, st.st_mtime_ns))
        except OSError:
            out.append(None)
    return tuple(out)


def load_deviations(path: str | Path) -> tuple[KnownDeviation, ...]:
    """Read and check a known-deviations file; every problem is one :class:`ReportInputError` line."""
    p = Path(path)
    key = p.resolve()
    kept = _READ.get(key)
    if kept is not None:
        stamps, read = kept
        if stamps == _stamps((p,)) + _stamps(_counterexamples(read)):
            return read
    stamp = _stamps((p,))   # before it is read: a file changed while being read is read again next time
    read = _read_deviations(p)
    _READ[key] = (stamp + _stamps(_counterexamples(read)), read)
    return read


def _counterexamples(deviations: tuple[KnownDeviation, ...]) -> list[Path]:
    return [path for d in deviations for path in d.counterexample_paths]


def _read_deviations(p: Path) -> tuple[KnownDeviation, ...]:
    from jsonschema import Draft7Validator

    from reference_model.rules import RULES

    try:
        data = tomllib.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ReportInputError(f"{p}: no such known-deviations file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ReportInputError(f"{p}: cannot read ({getattr(exc, 'strerror', None) or exc})") from None
    except tomllib.TOMLDecodeError as exc:
        raise ReportInputError(f"{p}: not TOML ({exc})") from None
    errors = sorted(Draft7Validator(_SCHEMA).iter_errors(data), key=lambda e: list(e.absolute_path))
    if errors:
        err = errors[0]
        where = "/".join(str(x) for x in err.absolute_path)
        raise ReportInputError(f"{p}: {where + ': ' if where else ''}{' '.join(err.message.split())[:200]}")
    out: list[KnownDeviation] = []
    seen: dict[tuple, int] = {}
    for n, entry in enumerate(data.get("deviation", []), start=1):
        origin = f"{p} deviation {n}"
        if entry["rule"] not in RULES:
            raise ReportInputError(f"{origin}: unknown rule {entry['rule']} (mqconform rules lists them)")
        given = entry.get("counterexample", ())
        examples = (given,) if isinstance(given, str) else tuple(given)
        paths = tuple(p.parent / example for example in examples)
        for example, path in zip(examples, paths):
            if not path.is_file():
                raise ReportInputError(f"{origin}: counterexample {example}: no such file (relative to {p.parent})")
        shapes = [_signature(entry, path, origin) for path in paths] or [_signature(entry, None, origin)]
        signatures = tuple(dict.fromkeys(sig for sig, _ in shapes))
        stale = "; ".join(f"{example}: {why}" if len(examples) > 1 else why
                          for example, (_, why) in zip(examples, shapes) if why)
        # one rule may show several behaviours on one system: an entry each, told apart by their signatures
        key = (entry["rule"], entry["adapter"], signatures)
        if key in seen:
            raise ReportInputError(f"{origin}: {key[0]} on {key[1]} is already deviation {seen[key]}, "
                                   "with the same signature")
        seen[key] = n
        out.append(KnownDeviation(rule=entry["rule"], adapter=entry["adapter"], seen=" ".join(entry["seen"].split()),
                                  reason=" ".join(entry["reason"].split()), origin=origin,
                                  counterexamples=examples, counterexample_paths=paths,
                                  signatures=signatures, stale_because=stale,
                                  upstream=tuple(entry.get("upstream", ())), affects=entry.get("affects", "")))
    return tuple(out)


_OP_SPEC = re.compile(r"^([A-Za-z0-9]+)((?:[+-]MQ[A-Z0-9_]+)*)$")


def _flags(spec: str) -> tuple[str, list[tuple[str, int]]]:
    """An operation spec ``Type``, ``Type+MQXXX_FLAG`` (the flag set), ``Type-MQXXX_FLAG`` (not set), parsed."""
    from reference_model import mqconst as C

    found = _OP_SPEC.match(spec)
    if found is None:
        raise ValueError(f"{spec!r} is not an operation (Put, Get+MQGMO_SYNCPOINT, Put-MQPMO_SYNCPOINT)")
    flags = []
    for sign, name in re.findall(r"([+-])(MQ[A-Z0-9_]+)", found.group(2)):
        value = getattr(C, name, None)
        if not isinstance(value, int):
            raise ValueError(f"{spec!r}: {name} is no MQ option the kit knows")
        flags.append((sign, value))
    return found.group(1), flags


def op_matches(spec: str, op) -> bool:
    """Whether ``op`` is the operation ``spec`` describes: its type, and each option flag set (``+``) or not (``-``)."""
    name, flags = _flags(spec)
    if type(op).__name__ != name:
        return False
    options = getattr(op, "options", 0) or 0
    return all(bool(options & value) == (sign == "+") for sign, value in flags)


def _signature(entry: dict, example: Path | None, origin: str) -> tuple[Signature, str]:
    """The entry's signature (its ``match``, the rest from its counterexample), and why the counterexample no
    longer shows the departure ("" where it does, or there is none)."""
    from conformance.records.history import ReplayFileError, load_failure

    match = entry.get("match") or {}
    ops, fields, stale = tuple(match.get("op", ())), tuple(match.get("fields", ())), ""
    for spec in ops + tuple(match.get("history", ())):
        try:
            _flags(spec)
        except ValueError as exc:
            raise ReportInputError(f"{origin}: match: {exc}") from None
    if example is not None:
        try:
            failure = load_failure(example)
        except ReplayFileError as exc:
            raise ReportInputError(f"{origin}: counterexample: {exc}") from None
        stale = _no_longer_shows(failure, entry["rule"])
        mm = failure.mismatch
        ops = ops or (type(mm.op).__name__,)
        fields = fields or tuple(mm.fields)
    return Signature(ops=ops, fields=fields, observed=tuple(sorted((match.get("observed") or {}).items())),
                     expected=tuple(sorted((match.get("expected") or {}).items())),
                     lower=tuple(match.get("lower", ())), higher=tuple(match.get("higher", ())),
                     history=tuple(match.get("history", ()))), stale


def _before_its_step(failure):
    """A model tracker that followed ``failure``'s history up to its failing step, going on past departures from
    the rules its run had set aside as that run did; and the check of an earlier step it could not go on past
    (None: it stands before the failing step)."""
    from conformance.checker.sequential import ModelTracker, follow

    tracker = ModelTracker(failure.platform, set_aside=frozenset(failure.set_aside))
    for step in failure.steps[:failure.mismatch.index]:
        check, mismatch = follow(tracker, step.op, step.observed)
        if mismatch is not None:
            return tracker, check
    return tracker, None


def _decided_by_found_broken(failure, fields: set[str]) -> bool:
    """Whether each of ``fields``, at ``failure``'s failing step, differs by rules its run had found broken before
    it alone: another departure, already known, showing in the same answer (a MsgId left blank beside a
    BackoutCount lost), so that the departure the signature describes is the rest of what differs."""
    from conformance.checker import sequential as K

    known = failure.known_before()
    if not known:
        return False
    tracker, stopped = _before_its_step(failure)
    if stopped is not None:
        return False
    mm = failure.mismatch
    closest = [b for b in tracker.expect(mm.op) if set(K.differing_fields(b.observation, mm.observed)) == set(mm.fields)]
    return bool(closest) and all(
        all(set(K._implicated(b, [field], mm.observed)) <= known for field in fields) for b in closest)


def _no_longer_shows(failure, rule: str) -> str:
    """Why a deviation's counterexample no longer shows a departure from ``rule`` at its own step ("": it does).
    The model is what is checked: the history, the system's answers included, against today's rules."""
    from conformance.records.history import with_alternatives

    own = failure.mismatch.index + 1
    tracker, stopped = _before_its_step(failure)
    if stopped is not None:
        return (f"its counterexample departs at step {stopped.index + 1} ({', '.join(stopped.mismatch.rules)}), "
                f"before its own step {own}")
    last = failure.steps[failure.mismatch.index]
    if tracker.advance(last.op, last.observed).mismatch is None:
        return f"its counterexample no longer departs at step {own}"
    # diagnosed as its run had it: the rules it records as found broken before it never on trial
    blamed = with_alternatives(failure, known_by=failure.known_before()).blamed
    if rule not in blamed:
        return f"its counterexample's departure is blamed on {', '.join(blamed)}, not {rule}"
    return ""


def load_all(paths) -> tuple[KnownDeviation, ...]:
    """Every file's deviations; the same rule, adapter and signature in two files is an error."""
    out: list[KnownDeviation] = []
    for path in paths or ():
        for d in load_deviations(path):
            clash = next((o for o in out if (o.rule, o.adapter, o.signatures) == (d.rule, d.adapter, d.signatures)),
                         None)
            if clash is not None:
                raise ReportInputError(f"{d.origin}: {d.rule} on {d.adapter} is already {clash.origin}")
            out.append(d)
    return tuple(out)


__all__ = ["KnownDeviation", "DeviationStatus", "Signature", "load_deviations", "load_all", "MATCHED", "STALE",
           "NOT_REACHED", "NOT_SHOWN", "UNMATCHED"]
