"""Tools for administrators: check a DLQ rules table, and see what it would do to given messages.

``mqconform dlq check TABLE`` lists every error of a table (exit 1) or says it is
valid (exit 0).  ``mqconform dlq simulate TABLE --messages FILE`` follows each
message of a TOML file through the table with the reference model's rules: the
rule chosen at each try, the tries that fail, and the message's final fate.
The file format is in ``docs/dlq-tools.md``.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import attrs

from reference_model import dlq as D
from reference_model import dlq_table as T
from reference_model import language as L
from reference_model import mqconst as C
from reference_model.state import ModelMessage

#: Queue outcomes a messages file can give: a put to the queue succeeds, or fails with this reason.
OUTCOMES = {"ok": C.MQRC_NONE, "full": C.MQRC_Q_FULL, "put-inhibited": C.MQRC_PUT_INHIBITED,
            "missing": C.MQRC_UNKNOWN_OBJECT_NAME}
MESSAGE_KEYS = {"id", "body", "dlh", "reason", "dest_q", "dest_qmgr", "format", "msg_type", "persistence",
                "feedback", "reply_to_q", "reply_to_qmgr", "user_id", "appl_name", "appl_type",
                "appl_identity_data"}
#: Tries followed one by one before a failing rule's remaining tries are summed up.
MAX_LISTED_TRIES = 20


class MessagesFileError(ValueError):
    """A messages file that cannot be used (one line, naming the file)."""


def read_table(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        raise MessagesFileError(f"cannot read rules table {path}: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise MessagesFileError(f"rules table {path} is not UTF-8 text") from None


def check(path: Path) -> tuple[T.RulesTable | None, list[str]]:
    """(table, []) when valid; otherwise (None, every error as ``file:line:column: message``)."""
    table, errors = T.parse(read_table(path))
    return table, [e.render(str(path)) for e in errors]


# --------------------------------------------------------------------------- messages file


@attrs.frozen
class QueueBehaviour:
    """What puts to a queue do: one outcome per try, the last repeating."""

    outcomes: tuple[int, ...]

    def at(self, n: int) -> int:
        return self.outcomes[min(n, len(self.outcomes) - 1)]

    @property
    def settled(self) -> int:
        return self.outcomes[-1]


@attrs.frozen
class Scenario:
    messages: tuple[ModelMessage, ...]
    queues: dict


def _symbol(path: Path, where: str, value, prefixes: tuple[str, ...]) -> int:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and value.startswith(prefixes) and value in T.SYMBOLS:
        return T.SYMBOLS[value]
    raise MessagesFileError(f"{path}: {where}: {value!r} is not a number or one of the {'/'.join(prefixes)} names")


def _text(path: Path, where: str, value) -> str:
    if not isinstance(value, str):
        raise MessagesFileError(f"{path}: {where}: expected a string, not {value!r}")
    return value


def load_messages(path: Path) -> Scenario:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise MessagesFileError(f"cannot read messages file {path}: {exc.strerror}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise MessagesFileError(f"{path}: not valid TOML: {exc}") from None
    unknown = set(data) - {"message", "queues"}
    if unknown:
        raise MessagesFileError(f"{path}: unknown section(s) {sorted(unknown)} (expected [queues] and [[message]])")
    queues = {}
    for name, spec in (data.get("queues") or {}).items():
        specs = spec if isinstance(spec, list) else [spec]
        if not specs or any(s not in OUTCOMES for s in specs):
            raise MessagesFileError(f"{path}: queues.{name}: use {', '.join(OUTCOMES)} or a list of them")
        queues[name] = QueueBehaviour(tuple(OUTCOMES[s] for s in specs))
    raw = data.get("message") or []
    if not isinstance(raw, list) or not raw:
        raise MessagesFileError(f"{path}: no [[message]] entries")
    messages = []
    for n, entry in enumerate(raw, start=1):
        where = f"message {n}"
        unknown = set(entry) - MESSAGE_KEYS
        if unknown:
            raise MessagesFileError(f"{path}: {where}: unknown key(s) {sorted(unknown)}")
        mid = _text(path, where + ".id", entry.get("id", f"M{n}"))
        has_dlh = entry.get("dlh", True)
        if not isinstance(has_dlh, bool):
            raise MessagesFileError(f"{path}: {where}.dlh: expected true or false")
        dlh = None
        if has_dlh:
            if "dest_q" not in entry or "reason" not in entry:
                raise MessagesFileError(f"{path}: {where}: a dead-letter message needs reason and dest_q")
            dlh = L.DeadLetterHeader(
                reason=_symbol(path, where + ".reason", entry["reason"], ("MQRC_", "MQFB_")),
                dest_q=_text(path, where + ".dest_q", entry["dest_q"]),
                dest_qmgr=_text(path, where + ".dest_qmgr", entry.get("dest_qmgr", "")),
                format=_text(path, where + ".format", entry.get("format", C.MQFMT_STRING)))
        context = L.MessageContext(
            user_id=_text(path, where + ".user_id", entry.get("user_id", "")),
            appl_identity_data=_text(path, where + ".appl_identity_data", entry.get("appl_identity_data", "")),
            put_appl_type=_symbol(path, where + ".appl_type", entry.get("appl_type", C.MQAT_UNKNOWN), ("MQAT_",)),
            put_appl_name=_text(path, where + ".appl_name", entry.get("appl_name", "")))
        md = L.MessageDescriptor(
            msg_id=mid, priority=0,
            persistence=_symbol(path, where + ".persistence", entry.get("persistence", 0), ("MQPER_",)),
            msg_type=_symbol(path, where + ".msg_type", entry.get("msg_type", C.MQMT_DATAGRAM), ("MQMT_",)),
            feedback=_symbol(path, where + ".feedback", entry.get("feedback", C.MQFB_NONE), ("MQFB_", "MQRC_")),
            format=C.MQFMT_DEAD_LETTER_HEADER if dlh else _text(path, where + ".format",
                                                                   entry.get("format", C.MQFMT_STRING)),
            reply_to_q=_text(path, where + ".reply_to_q", entry.get("reply_to_q", "")),
            reply_to_qmgr=_text(path, where + ".reply_to_qmgr", entry.get("reply_to_qmgr", "")),
            context=context)
        body = _text(path, where + ".body", entry.get("body", ""))
        messages.append(ModelMessage(seq=n, body=body, md=md, order_priority=0, put_time=0, dlh=dlh))
    return Scenario(messages=tuple(messages), queues=queues)


# --------------------------------------------------------------------------- simulation


@attrs.frozen
class Step:
    tries: str          # "1", or "3-999999999" for tries summed up
    rule_line: int | None
    action: str
    target: str
    outcome: str


@attrs.frozen
class Fate:
    message: str
    steps: tuple[Step, ...]
    final: str


def _put_outcome(scenario: Scenario, queue: str, qmgr: str, attempt: int) -> int:
    if qmgr:
        return C.MQRC_UNKNOWN_REMOTE_Q_MGR
    if not queue:
        return C.MQRC_UNKNOWN_OBJECT_NAME
    behaviour = scenario.queues.get(queue)
    return behaviour.at(attempt) if behaviour else C.MQRC_NONE


def simulate(table: T.RulesTable, scenario: Scenario) -> list[Fate]:
    """Each message's way through the table, try by try, until it leaves the queue or is left on it."""
    fates = []
    for m in scenario.messages:
        mid = m.md.msg_id
        if m.dlh is None:
            fates.append(Fate(mid, (), "left on the DLQ: no MQDLH (reported as in error)"))
            continue
        fields = D.message_fields(m)
        steps: list[Step] = []
        tries = 0
        puts: dict[str, int] = {}   # put attempts per queue so far
        final = ""
        while not final:
            index, _ = D.select(table, fields, tries)
            if index is None:
                final = ("left on the DLQ: IGNORE assumed (" +
                         ("every matching rule used its tries)" if steps else "no rule matches)"))
                break
            rule = table.rules[index]
            if rule.action == "IGNORE":
                steps.append(Step(str(tries + 1), rule.line, "IGNORE", "", "left"))
                final = f"left on the DLQ by the rule at line {rule.line}"
                break
            if rule.action == "DISCARD":
                steps.append(Step(str(tries + 1), rule.line, "DISCARD", "", "discarded"))
                final = "discarded"
                break
            queue, qmgr = D.target(rule, m)
            where = queue + (f"@{qmgr}" if qmgr else "")
            header = " (with MQDLH)" if rule.action == "FWD" and rule.header else " (MQDLH removed)"
            used_on_rule = tries - sum(r.retry for r in table.rules[:index]
                                       if r.action != "IGNORE" and D.matches(r, fields))
            left_on_rule = rule.retry - used_on_rule
            behaviour = scenario.queues.get(queue)
            n = puts.get(where, 0)
            if (len(steps) >= MAX_LISTED_TRIES or (behaviour and n >= len(behaviour.outcomes) - 1)) \
                    and _put_outcome(scenario, queue, qmgr, n) != C.MQRC_NONE and left_on_rule > 1:
                rc = _put_outcome(scenario, queue, qmgr, n)
                steps.append(Step(f"{tries + 1}-{tries + left_on_rule}", rule.line, rule.action, where + header,
                                  f"failed: {C.reason_name(rc)}"))
                tries += left_on_rule
                puts[where] = n + left_on_rule
                continue
            rc = _put_outcome(scenario, queue, qmgr, n)
            puts[where] = n + 1
            tries += 1
            if rc == C.MQRC_NONE:
                steps.append(Step(str(tries), rule.line, rule.action, where + header, "put"))
                final = f"put to {where}{header}"
            else:
                steps.append(Step(str(tries), rule.line, rule.action, where + header,
                                  f"failed: {C.reason_name(rc)}"))
        fates.append(Fate(mid, tuple(steps), final))
    return fates
