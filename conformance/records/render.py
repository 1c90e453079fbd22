"""Readable text for operations, observations and failures."""

from __future__ import annotations

import functools

import attrs
from tabulate import tabulate

from reference_model import language as L
from reference_model import mqconst as C
from reference_model.rules import RULES

_GMO = [(v, n) for n, v in vars(C).items() if n.startswith("MQGMO_") and isinstance(v, int)
        and v and bin(v).count("1") == 1]
_PMO = [(v, n) for n, v in vars(C).items() if n.startswith("MQPMO_") and isinstance(v, int) and v]
_OO = [(v, n) for n, v in vars(C).items() if n.startswith("MQOO_") and isinstance(v, int)
       and v and bin(v).count("1") == 1]

#: MQSC's names for queue attribute values (DEFINE QLOCAL / DISPLAY QLOCAL).
MQSC_VALUES: dict[str, dict[int, str]] = {
    "MSGDLVSQ": {C.MQMDS_PRIORITY: "PRIORITY", C.MQMDS_FIFO: "FIFO"},
    "DEFPSIST": {C.MQPER_NOT_PERSISTENT: "NO", C.MQPER_PERSISTENT: "YES"},
    "DEFSOPT": {C.MQOO_INPUT_SHARED: "SHARED", C.MQOO_INPUT_EXCLUSIVE: "EXCL"},
    "GET": {C.MQQA_GET_ALLOWED: "ENABLED", C.MQQA_GET_INHIBITED: "DISABLED"},
    "PUT": {C.MQQA_PUT_ALLOWED: "ENABLED", C.MQQA_PUT_INHIBITED: "DISABLED"},
    "USAGE": {C.MQUS_NORMAL: "NORMAL", C.MQUS_TRANSMISSION: "XMITQ"},
    "TRIGTYPE": {C.MQTT_NONE: "NONE", C.MQTT_FIRST: "FIRST", C.MQTT_EVERY: "EVERY", C.MQTT_DEPTH: "DEPTH"},
}
_PERSISTENCE = {C.MQPER_NOT_PERSISTENT: "MQPER_NOT_PERSISTENT", C.MQPER_PERSISTENT: "MQPER_PERSISTENT",
                C.MQPER_PERSISTENCE_AS_Q_DEF: "MQPER_PERSISTENCE_AS_Q_DEF"}


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """``n`` and ``noun`` agreeing: "1 rule", "2 rules", "1 departure"."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"


def flags(value: int, table: list[tuple[int, str]]) -> str:
    """Option bits by their MQI names: ``MQGMO_SYNCPOINT+MQGMO_BROWSE_NEXT``."""
    names = [name for bit, name in table if value & bit]
    rest = value & ~sum(bit for bit, _ in table)
    if rest:
        names.append(str(rest))
    # No option set: MQGMO_NONE, MQPMO_NONE, MQOO_NONE after the table's own prefix.
    return "+".join(names) or table[0][1].split("_", 1)[0] + "_NONE"


def mqsc(name: str, value) -> str:
    """One queue attribute as MQSC writes it: ``MSGDLVSQ(PRIORITY)``, ``BOQNAME('BQ')``, ``NOTRIGGER``."""
    if name == "TRIGGER" and value in (C.MQTC_OFF, C.MQTC_ON):
        return "TRIGGER" if value == C.MQTC_ON else "NOTRIGGER"
    if isinstance(value, str):
        return f"{name}('{value}')"
    return f"{name}({MQSC_VALUES.get(name, {}).get(value, value)})"


def _md_text(md: L.MessageDescriptor) -> str:
    default = L.MessageDescriptor()
    parts = []
    for a in attrs.fields(L.MessageDescriptor):
        v = getattr(md, a.name)
        if v != getattr(default, a.name):
            if a.name == "context":
                parts.append("context=" + _value_text(v))
            elif a.name == "persistence":
                parts.append(f"persistence={_PERSISTENCE.get(v, v)}")
            else:
                parts.append(f"{a.name}={v!r}" if isinstance(v, str) else f"{a.name}={v}")
    return " ".join(parts)


def _value_text(value) -> str:
    """A language value's non-default fields, compactly: ``(user_id='alice' put_appl_type=6)``; ``(all blank)``
    where every field is its default (a context set, or passed on, with nothing in it)."""
    fields = []
    for a in attrs.fields(type(value)):
        v = getattr(value, a.name)
        if a.default is attrs.NOTHING or v != a.default:
            fields.append(f"{a.name}={v!r}" if isinstance(v, str) else f"{a.name}={v}")
    return "(" + (" ".join(fields) or "all blank") + ")"


def _table_text(text: str) -> str:
    """A rules table on one line: its entries separated by ' / ', comments and blank lines left out."""
    lines = [line.strip() for line in text.splitlines() if line.strip() and not line.strip().startswith("*")]
    return repr(" / ".join(lines))


def _on(queue: str, op: L.Op) -> str:
    """``queue`` as ``op`` names it: ``QUEUE@QMGR`` on another queue manager (of a queue-sharing group, or the
    remote one of an MQPUT1), the name alone on the queue manager under test."""
    qmgr = getattr(op, "qmgr", "")
    return f"{queue}@{qmgr}" if qmgr else queue


def op_text(op: L.Op) -> str:
    """One line per operation, with option bits named."""
    name = type(op).__name__
    if isinstance(op, L.Get):
        wait = f" wait={op.wait_interval}ms" if op.options & C.MQGMO_WAIT else ""
        match = ""
        if isinstance(op, L.GetMatching):
            names = [n for bit, n in ((C.MQMO_MATCH_MSG_ID, "MQMO_MATCH_MSG_ID"),
                                      (C.MQMO_MATCH_CORREL_ID, "MQMO_MATCH_CORREL_ID")) if op.match_options & bit]
            undefined = op.match_options & ~C.MQMO_DEFINED
            names += [str(undefined)] if undefined else []
            match = (f" match={'+'.join(names) or 'MQMO_NONE'} msg_id={op.msg_id or 'MQMI_NONE'!r}"
                     f" correl_id={op.correl_id or 'MQCI_NONE'!r}")
        return f"{name} {op.conn} {op.handle} {flags(op.options, _GMO)}{wait}{match}"
    if isinstance(op, (L.Put, L.Put1)):
        target = op.handle if isinstance(op, L.Put) else _on(op.queue, op)
        md = _md_text(op.md)
        dlh = f" dlh={_value_text(op.dlh)}" if op.dlh is not None else ""
        return f"{name} {op.conn} {target} {op.body!r} {flags(op.options, _PMO)}" + (f" {md}" if md else "") + dlh
    if isinstance(op, L.Open):
        return f"{name} {op.conn} {op.handle} {op.queue} {flags(op.options, _OO)}"
    if isinstance(op, (L.DefineQueue, L.AlterQueue)):
        return f"{name} {_on(op.queue, op)} " + " ".join(mqsc(k, v) for k, v in op.attrs)
    if isinstance(op, L.InquireQueue):
        return f"{name} {_on(op.queue, op)} {' '.join(op.names)}"
    if isinstance(op, L.Disconnect):
        return f"{name} {op.conn}" + (" ABNORMAL" if op.abnormal else "")
    if isinstance(op, L.Restart):
        return f"{name} ABRUPT (killed)" if op.abrupt else name
    if isinstance(op, L.AdvanceClock):
        return f"{name} +{op.tenths / 10:g}s"
    if isinstance(op, L.AlterQueueManager):
        return f"{name} " + (f"{op.qmgr} " if op.qmgr else "") + " ".join(f"{k}({v!r})" if isinstance(v, str) else f"{k}({v})" for k, v in op.attrs)
    if isinstance(op, (L.StartDlqHandler, L.ChangeDlqTable)):
        return f"{name} {op.handler} table={_table_text(op.table)}"
    if isinstance(op, _NAMED_FIELDS):
        return f"{name} {_named_fields(op)}".strip()
    fields = " ".join(str(getattr(op, a.name)) for a in attrs.fields(type(op)))
    return f"{name} {fields}".strip()


#: Operations of many fields, most at their defaults: the fields without a default by position, the others by name
#: where they differ from it (each of these defines the whole object, so a field left out is at its default).
_NAMED_FIELDS = (L.SetClusterQueueManager, L.SetClusterInstance, L.SetClusterAlias, L.SetClusterChannel,
                 L.ClusterPut)
#: Their fields that are MQSC attributes, written as MQSC writes them: ``CLWLPRTY(6)``.
_MQSC_FIELDS = frozenset({"clwlrank", "clwlprty", "clwluseq", "clwlwght", "netprty", "clwlmruc"})


def _named_fields(op: L.Op) -> str:
    """``op``'s fields: those without a default by value alone, the others ``name=value`` (``NAME(value)`` for an
    MQSC attribute) where not at their default; a tuple comma-separated."""
    parts = []
    for a in attrs.fields(type(op)):
        v = getattr(op, a.name)
        text = ",".join(map(str, v)) if isinstance(v, tuple) else str(v)
        if a.default is attrs.NOTHING:
            parts.append(text)
        elif v != (a.default.factory() if isinstance(a.default, attrs.Factory) else a.default):
            if isinstance(op, L.SetClusterChannel) and a.name == "state":
                parts.append(f"STATUS({_channel_states().get(v, v)})")
            else:
                parts.append(f"{a.name.upper()}({text})" if a.name in _MQSC_FIELDS else f"{a.name}={text or '()'}")
    return " ".join(parts)


@functools.cache
def _channel_states() -> dict[int, str]:
    """A channel state's name as DISPLAY CHSTATUS shows it (``RUNNING``), by its MQCHS_* value."""
    from reference_model import cluster

    return {v: k.removeprefix("MQCHS_") for k, v in vars(cluster).items() if k.startswith("MQCHS_")}


def observation_text(obs: L.Observation) -> str:
    parts = ["OK" if obs.rc == 0 else C.reason_name(obs.rc)]
    if obs.message is not None:
        m = obs.message
        default = L.ReturnedMessage(body="", priority=0, persistence=0)
        detail = [f"{m.body!r}"]
        for a in attrs.fields(L.ReturnedMessage):
            if a.name in ("body",):
                continue
            v = getattr(m, a.name)
            if a.name in ("priority", "persistence", "backout_count") or v != getattr(default, a.name):
                if a.name == "msg_id" and v is None:
                    v = "<generated>"
                elif a.name == "persistence":
                    v = _PERSISTENCE.get(v, v)
                elif isinstance(v, L.IntRange):
                    v = f"{v.lo}..{v.hi}"
                elif attrs.has(type(v)):
                    v = _value_text(v)
                detail.append(f"{a.name}={v}")
        parts.append(" ".join(detail))
    if obs.attrs is not None:
        parts.append(" ".join(mqsc(k, v) for k, v in obs.attrs))
    return " ".join(parts)


def passed_note(failure, passed: dict[int, tuple[str, ...]]) -> str:
    """What the steps marked ``~`` are (``passed``: :meth:`Failure.passed`), in one sentence; "" where none is."""
    if not passed:
        return ""
    where = "; ".join(f"step {i + 1}: {', '.join(rules)}" for i, rules in passed.items())
    return (f"~ marks a step that departs from rules the run had found broken or set aside before this failure "
            f"({where}): MQ answers otherwise there, and the run went on from what the system did, as those rules "
            f"broken allow; it is not this failure's departure.")


def render_failure(failure, expiry_tolerance: int = 0) -> str:
    """The shrunk counterexample as a table, the step that broke, and the rules broken."""
    mm = failure.mismatch
    lines = [
        f"Non-conformance in area '{failure.area}' on adapter '{failure.adapter}' "
        f"(platform {failure.platform}): step {mm.index + 1} of {len(failure.steps)}",
        "",
        explain(failure),
        "",
    ]
    if not failure.reproduced:
        lines += ["The system did not show this departure again when the same operations ran a second time: "
                  "the history is what it did once, and a replay may find it conformant.", ""]
    lines += [
        "Rules broken, one of them (each alone, relaxed, makes this history pass; it does not show which):"
        if failure.one_of else "Rules broken:",
    ]
    lines += [_rule_line(rid, "  ") for rid in (failure.broken if failure.either else failure.blamed)]
    if failure.either:
        lines += ["And one of these (no rule alone makes this history pass; those above with each of these do, "
                  "and it does not show which):"]
        lines += [_rule_line(rid, "  ") for rid in failure.either]
    if not mm.confirmed:
        lines.append("  (no single rule's relaxation, nor any pair's, makes this history pass: the rule shown is "
                     "the checker's first, unconfirmed)")
    if failure.mentioned:
        lines += ["Also mentioned (the history passes with none of these relaxed alone, so none is failed):"]
        lines += [_rule_line(rid, "  ") for rid in failure.mentioned]
    lines += alternatives_text(failure)
    rows = []
    passed = failure.passed(expiry_tolerance)
    for i, step in enumerate(failure.steps):
        mark = ">>" if i == mm.index else "~" if i in passed else ""
        rows.append([mark, i + 1, op_text(step.op), observation_text(step.observed)])
    lines += ["", tabulate(rows, headers=["", "#", "operation", "observed"], tablefmt="simple"), ""]
    if passed:
        lines += [passed_note(failure, passed), ""]
    lines.append(f"At step {mm.index + 1}: {op_text(mm.op)}")
    lines.append(f"  observed: {observation_text(mm.observed)}")
    for allowed in mm.allowed:
        lines.append(f"  allowed:  {observation_text(allowed)}")
    closest = mm.allowed[0] if mm.allowed else None
    # the fields judged, then those that differ only as they follow from them (another message: its priority)
    along = [p for p in differences(closest, mm.observed) if p not in mm.fields and p != "cc"]
    lines.append(f"  differing fields: {', '.join(mm.fields)}"
                 + (f" (and, following from it, {', '.join(along)})" if along else ""))
    for path in dict.fromkeys([*mm.fields, *differences(closest, mm.observed)]):
        lines.append(f"    {path}: expected {field_text(closest, path)}, observed {field_text(mm.observed, path)}")
    return "\n".join(lines)


def _rule_line(rid: str, indent: str) -> str:
    rule = RULES[rid] if rid in RULES else None
    return f"{indent}{rid}  {rule.summary if rule else ''}" + (f"  [{rule.source}]" if rule else "")


def alternative_differences(failure, alt) -> str:
    """What the system answered at an :class:`~conformance.checker.sequential.Alternative`'s step against the outcome
    it ruled out: ``attrs.CURDEPTH 0 where MQ gives 1``."""
    observed = failure.steps[alt.index].observed
    return "; ".join(f"{path} {field_text(observed, path)} where MQ gives {field_text(alt.expected, path)}"
                     for path in alt.fields)


def alternatives_text(failure) -> list[str]:
    """Lines naming the earlier steps where a departure explains the history as well (none: no lines)."""
    alts = failure.mismatch.alternatives
    if not alts:
        return []
    lines = ["", "A departure at an earlier step explains the same history as well: there MQ allows several "
                 "outcomes and the answer fits only some; from one it rules out, every later step, this one "
                 "included, is what MQ gives:"]
    for alt in alts:
        lines.append(f"  step {alt.index + 1} ({op_text(failure.steps[alt.index].op)}): "
                     f"{alternative_differences(failure, alt)}")
        lines += [_rule_line(rid, "    ") for rid in alt.rules]
    return lines


def differences(expected: L.Observation | None, observed: L.Observation) -> list[str]:
    """Every field path where ``observed`` is outside what ``expected`` allows (None there: any value)."""
    if expected is None:
        return []
    out = [p for p in ("cc", "rc") if getattr(expected, p) != getattr(observed, p)]
    if (expected.message is None) != (observed.message is None):
        out.append("message")
    elif expected.message is not None:
        for a in attrs.fields(L.ReturnedMessage):
            want, got = getattr(expected.message, a.name), getattr(observed.message, a.name)
            if want is None or want == got:
                continue
            if isinstance(want, L.IntRange) and isinstance(got, int) and want.lo <= got <= want.hi:
                continue
            out.append(f"message.{a.name}")
    if expected.attrs is not None:
        got_attrs = dict(observed.attrs or ())
        out += [f"attrs.{k}" for k, v in expected.attrs if got_attrs.get(k) != v]
    return out


def explain(failure) -> str:
    """One sentence: what MQ requires (the first rule broken, with its source) and what the system did instead."""
    mm = failure.mismatch
    closest = mm.allowed[0] if mm.allowed else None
    paths = list(dict.fromkeys([*mm.fields, *differences(closest, mm.observed)]))
    did = "; ".join(f"{_field_name(p)} was {field_text(mm.observed, p)} where MQ gives {field_text(closest, p)}"
                    for p in paths[:3]) or "the outcome was not one MQ allows"
    head = failure.blamed[0] if failure.blamed else None
    rule = RULES[head] if head in RULES else None
    requires = f"MQ requires ({head}, {rule.source}): {rule.summary.rstrip('.')}." if rule else "MQ requires otherwise."
    return f"{requires} Instead, at step {mm.index + 1} ({type(mm.op).__name__}), {did}."


def _field_name(path: str) -> str:
    names = {"rc": "the reason code", "cc": "the completion code", "message": "the message",
             "message.body": "the message returned", "message.backout_count": "BackoutCount"}
    if path in names:
        return names[path]
    if path.startswith("message."):
        return f"the message's {path[len('message.'):]}"
    if path.startswith("attrs."):
        return path[len("attrs."):]
    return path


def field_value(obs: L.Observation | None, path: str):
    """The value at ``path`` (``rc``, ``message.priority``, ``attrs.CURDEPTH``) of an observation, or None."""
    value = obs
    for part in path.split("."):
        if value is None:
            return None
        if isinstance(value, tuple):   # attribute pairs
            value = dict(value).get(part)
        else:
            value = getattr(value, part, None)
    return value


def field_text(obs: L.Observation | None, path: str) -> str:
    value = field_value(obs, path)
    last = path.rsplit(".", 1)[-1]
    if value is None:
        if obs is not None and path == "message.context":
            return "the queue manager's default"   # (the language's None there)
        return "nothing" if obs is None or path.startswith("message") else "none"
    if path in ("rc", "reason"):
        return C.reason_name(value)
    if last == "persistence":
        return _PERSISTENCE.get(value, str(value))
    if path.startswith("attrs.") and last in MQSC_VALUES:
        return MQSC_VALUES[last].get(value, str(value))
    if isinstance(value, L.IntRange):
        return f"{value.lo}..{value.hi}"
    if attrs.has(type(value)):
        return _value_text(value)
    return repr(value)
