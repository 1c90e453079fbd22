"""The kit's DLQ handler reads its rules table here, with code of its own.

The reference model has its own reader (:mod:`reference_model.dlq_table`); the
handler must not share it, or a mistake in one would agree with itself and the
model could never find it.  This one works differently: it joins each entry's
lines, then takes the entry apart with regular expressions, and only says
whether the table is valid (MQ's handler does not start with an invalid one)
and what it holds.  The conventions are IBM's “Rules table conventions”:
keywords in any order, at most once and in any case, separated by blanks or
commas; ``*`` comment lines; ``+`` (leading blanks of the next line dropped)
and ``-`` (kept) continuations; values in single quotes keep their case and
may hold blanks, ``''`` standing for a quote.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field

from reference_model import mqconst as C

LIMIT = 999_999_999
FIELD_LENGTH = {"APPLIDAT": 32, "APPLNAME": 28, "DESTQ": 48, "DESTQM": 48, "FORMAT": 8,
                "REPLYQ": 48, "REPLYQM": 48, "USERID": 12}
NUMBER_PREFIXES = {"APPLTYPE": ("MQAT_",), "FEEDBACK": ("MQFB_", "MQRC_"), "MSGTYPE": ("MQMT_",),
                   "PERSIST": ("MQPER_",), "REASON": ("MQRC_", "MQFB_")}
CONTROL = {"INPUTQ", "INPUTQM", "RETRYINT", "WAIT"}

_ITEM = re.compile(r"""[\s,]*([A-Za-z][A-Za-z0-9]*)\s*\(\s*(?:'((?:[^']|'')*)'\s*\)|(?!')([^)]*?)\s*\))""")
_GAP = re.compile(r"[\s,]*")


class Invalid(Exception):
    """The table breaks a convention: the handler does not start."""


@dataclass(frozen=True)
class Rule:
    line: int
    action: str
    patterns: tuple = ()      # (keyword, value) pairs; None stands for '*'
    fwdq: str = ""
    fwdqm: str = ""
    header: bool = True
    putaut: str = "DEF"
    retry: int = 1


@dataclass(frozen=True)
class Control:
    inputq: str = ""
    inputqm: str = ""
    retryint: int = 60
    wait: str | int = "YES"


@dataclass(frozen=True)
class Table:
    control: Control
    rules: tuple = field(default=())


@functools.lru_cache(maxsize=256)
def read(text: str) -> Table | None:
    """The table ``text`` holds, or None when it is not valid (a table is an immutable value: a text
    read once, at a handler's start or restart, is not read again)."""
    try:
        return _read(text)
    except Invalid:
        return None


def _entries(text: str):
    """(first line number, entry text) for each entry, continuations joined."""
    pending, first, keep = None, 0, False
    for number, line in enumerate(text.splitlines(), 1):
        line = line.rstrip()
        if pending is None:
            if not line.strip() or line.lstrip().startswith("*"):
                continue
            pending, first = "", number
        else:
            line = line if keep else line.lstrip()
        if line.endswith(("+", "-")):
            keep = line.endswith("-")
            pending += line[:-1]
            continue
        pending += line
        if pending.strip():
            yield first, pending
        pending = None
    if pending is not None and pending.strip():
        yield first, pending


def _items(entry: str) -> dict:
    found: dict = {}
    at = 0
    while _GAP.match(entry, at).end() < len(entry):
        m = _ITEM.match(entry, at)
        if m is None:
            raise Invalid(f"cannot read {entry[at:].strip()!r}")
        name = m.group(1).upper()
        if name in found:
            raise Invalid(f"{name} twice")
        quoted = m.group(2) is not None
        value = m.group(2).replace("''", "'") if quoted else m.group(3).strip()
        if value == "" or (not quoted and re.search(r"\s", value)):
            raise Invalid(f"{name}: bad value")
        found[name] = value if quoted else value.upper()
        at = m.end()
        if at < len(entry) and not (entry[at].isspace() or entry[at] == ","):
            raise Invalid(f"{name}: no blank or comma before {entry[at:].strip()!r}")
    return found


def _seconds(value: str) -> int:
    if not re.fullmatch(r"[0-9]+", value) or int(value) > LIMIT:
        raise Invalid(value)
    return int(value)


def _queue(value: str, variables: tuple[str, ...], blank: bool) -> str:
    if "*" in value or "?" in value:
        raise Invalid(value)
    if value[:1] == "&":
        if value.upper() not in variables:
            raise Invalid(value)
        return value.upper()
    name = value.rstrip()
    if not name.strip():
        if not blank:
            raise Invalid("blank queue name")
        return ""
    if len(name) > 48:
        raise Invalid(value)
    return name


def _control(items: dict) -> Control:
    kw: dict = {}
    for name, value in items.items():
        if name in ("INPUTQ", "INPUTQM"):
            if "*" in value or "?" in value or len(value.rstrip()) > 48:
                raise Invalid(value)
            kw[name.lower()] = value.strip()
        elif name == "RETRYINT":
            kw["retryint"] = _seconds(value)
        elif re.fullmatch(r"[0-9]+", value):
            kw["wait"] = _seconds(value)
        elif value.upper() in ("YES", "NO"):
            kw["wait"] = value.upper()
        else:
            raise Invalid(value)
    return Control(**kw)


def _number(name: str, value: str) -> int | None:
    value = value.strip()
    if value == "*":
        return None
    if re.fullmatch(r"[+-]?[0-9]+", value):
        return int(value)
    known = getattr(C, value, None) if value.startswith(NUMBER_PREFIXES[name]) else None
    if not isinstance(known, int) or isinstance(known, bool):
        raise Invalid(value)
    return known


def _rule(line: int, items: dict) -> Rule:
    patterns = []
    kw: dict = {}
    for name, value in items.items():
        if name in FIELD_LENGTH:
            if value == "*":
                patterns.append((name, None))
            elif len(value.rstrip(" ").replace("*", "")) > FIELD_LENGTH[name]:
                raise Invalid(value)
            else:
                patterns.append((name, value))
        elif name in NUMBER_PREFIXES:
            patterns.append((name, _number(name, value)))
        elif name == "ACTION" and value.upper() in ("DISCARD", "IGNORE", "RETRY", "FWD"):
            kw["action"] = value.upper()
        elif name == "FWDQ":
            kw["fwdq"] = _queue(value, ("&DESTQ", "&REPLYQ"), blank=False)
        elif name == "FWDQM":
            kw["fwdqm"] = _queue(value, ("&DESTQM", "&REPLYQM"), blank=True)
        elif name == "HEADER" and value.upper() in ("YES", "NO"):
            kw["header"] = value.upper() == "YES"
        elif name == "PUTAUT" and value.upper() in ("DEF", "CTX"):
            kw["putaut"] = value.upper()
        elif name == "RETRY" and "*" not in value and "?" not in value \
                and re.fullmatch(r"[0-9]+", value.strip()) and 1 <= int(value) <= LIMIT:
            kw["retry"] = int(value)
        else:
            raise Invalid(f"{name}({value})")
    action = kw.get("action")
    if action is None:
        raise Invalid("no ACTION")
    if action == "FWD" and "fwdq" not in kw:
        raise Invalid("FWD without FWDQ")
    if action != "FWD" and {"FWDQ", "FWDQM", "HEADER"} & set(items):
        raise Invalid("FWDQ, FWDQM or HEADER without FWD")
    return Rule(line=line, patterns=tuple(patterns), **kw)


def _read(text: str) -> Table:
    control, rules = Control(), []
    for index, (line, entry) in enumerate(_entries(text)):
        read_ = _entry(line, entry, index == 0)
        if isinstance(read_, Control):
            control = read_
        elif read_ is not None:
            rules.append(read_)
    if not rules:
        raise Invalid("no rules")
    return Table(control=control, rules=tuple(rules))


@functools.lru_cache(maxsize=4096)
def _entry(line: int, entry: str, first: bool) -> Control | Rule | None:
    """What one entry (starting on ``line``) gives: control data, a rule, or nothing; Invalid if it is
    not valid.  Kept: tables that differ in an entry or two read the others once."""
    items = _items(entry)
    if not items:
        return None
    if set(items) <= CONTROL:
        if not first:
            raise Invalid("control data after the first entry")
        return _control(items)
    return _rule(line, items)
