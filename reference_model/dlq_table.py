"""The DLQ handler's rules-table language: parsing and validation (pure).

A rules table is text: an optional control-data entry (INPUTQ, INPUTQM,
RETRYINT, WAIT) first, then one or more rules, each a pattern (keywords matched
against the message's MQDLH and MQMD) and an action.  The syntax follows MQ's
rules-table conventions (IBM's topic “Rules table conventions”): keywords in any
order, at most once, in any case, separated by blanks or commas; ``*`` comment
lines; ``+`` and ``-`` continuations; single-quoted values; ``?`` and ``*``
wildcards in string patterns.

:func:`parse` reports every error it finds as a :class:`TableError` with the
line and column where it starts, and returns a :class:`RulesTable` only when
there are none (MQ validates the table when the handler starts, rule DLQ-09).
"""

from __future__ import annotations

import functools
import re
import typing

import attrs

from reference_model import mqconst as C

#: String pattern keywords: the field each is compared with, and the field's length.
STRING_PATTERNS = {
    "APPLIDAT": 32, "APPLNAME": 28, "DESTQ": 48, "DESTQM": 48, "FORMAT": 8,
    "REPLYQ": 48, "REPLYQM": 48, "USERID": 12,
}
#: Numeric pattern keywords and the symbolic-name prefixes each accepts.
NUMERIC_PATTERNS = {
    "APPLTYPE": ("MQAT_",), "FEEDBACK": ("MQFB_", "MQRC_"), "MSGTYPE": ("MQMT_",),
    "PERSIST": ("MQPER_",), "REASON": ("MQRC_", "MQFB_"),
}
PATTERN_KEYWORDS = tuple(sorted(set(STRING_PATTERNS) | set(NUMERIC_PATTERNS)))
ACTION_KEYWORDS = ("ACTION", "FWDQ", "FWDQM", "HEADER", "PUTAUT", "RETRY")
CONTROL_KEYWORDS = ("INPUTQ", "INPUTQM", "RETRYINT", "WAIT")
ACTIONS = ("DISCARD", "IGNORE", "RETRY", "FWD")
MAX_RETRY = 999_999_999
#: Replacement variables MQ documents for FWDQ and FWDQM.
FWDQ_VARIABLES = ("&DESTQ", "&REPLYQ")
FWDQM_VARIABLES = ("&DESTQM", "&REPLYQM")

#: Symbolic names accepted in numeric keywords (MQRC_Q_FULL, MQFB_COA, MQMT_REQUEST, ...).
SYMBOLS: dict[str, int] = {
    name: value for name, value in vars(C).items()
    if name.startswith(("MQRC_", "MQFB_", "MQMT_", "MQPER_", "MQAT_"))
    and isinstance(value, int) and not isinstance(value, bool)
}


#: The kinds of error a table can have, as the input classes of DLQ-09 name them.
CHAR, UNCLOSED, UNKNOWN, TWICE, MISPLACED, NO_RULES = (
    "a character out of place", "a value not closed", "an unknown keyword", "a keyword given twice",
    "control data out of place", "no rules")
NO_ACTION, FWD_ONLY, NO_FWDQ = ("a rule without ACTION", "FWDQ, FWDQM or HEADER without ACTION(FWD)",
                                "ACTION(FWD) without FWDQ")
EMPTY, BAD_VALUE, WILDCARD, TOO_LONG = ("an empty value", "a value not allowed", "a wildcard where none is allowed",
                                        "a value longer than its field")
ERROR_KINDS = (CHAR, UNCLOSED, UNKNOWN, TWICE, MISPLACED, NO_RULES, NO_ACTION, FWD_ONLY, NO_FWDQ, EMPTY,
               BAD_VALUE, WILDCARD, TOO_LONG)


@attrs.frozen
class TableError:
    line: int
    column: int
    message: str
    #: One of :data:`ERROR_KINDS` (not part of an error's identity: the message says it).
    kind: str = attrs.field(default=BAD_VALUE, eq=False)

    def render(self, filename: str) -> str:
        return f"{filename}:{self.line}:{self.column}: {self.message}"


@attrs.frozen(kw_only=True)
class ControlData:
    inputq: str = ""        # blank: the queue manager's dead-letter queue
    inputqm: str = ""       # blank: the default (local) queue manager
    retryint: int = 60      # seconds
    wait: str | int = "YES"  # "YES", "NO" or seconds


@attrs.frozen(kw_only=True)
class DlqRule:
    """One rule: its pattern, as (keyword, value) pairs where ``None`` is ``*``, and its action."""

    line: int
    patterns: tuple[tuple[str, str | int | None], ...] = ()
    action: str
    fwdq: str = ""
    fwdqm: str = ""
    header: bool = True
    putaut: str = "DEF"
    retry: int = 1

    def pattern(self, keyword: str) -> str | int | None:
        return dict(self.patterns).get(keyword)

    def describe(self) -> str:
        parts = [f"{k}({v})" for k, v in self.patterns if v is not None] + [f"ACTION({self.action})"]
        if self.action == "FWD":
            parts.append(f"FWDQ({self.fwdq})")
            if self.fwdqm:
                parts.append(f"FWDQM({self.fwdqm})")
            parts.append(f"HEADER({'YES' if self.header else 'NO'})")
        if self.action not in ("IGNORE", "DISCARD") or self.retry != 1:
            parts.append(f"RETRY({self.retry})")
        return " ".join(parts)


@attrs.frozen(kw_only=True, cache_hash=True)
class RulesTable:
    control: ControlData = ControlData()
    rules: tuple[DlqRule, ...]
    #: IDs of the syntax rules this table's text relies on (continuations, comments, quoting, ...).
    syntax_rules: tuple[str, ...] = attrs.field(default=(), eq=False)
    #: The continuation characters its text uses ('+', '-'), sorted.
    continuations: tuple[str, ...] = attrs.field(default=(), eq=False)


class TableInvalid(ValueError):
    def __init__(self, errors: list[TableError]) -> None:
        super().__init__(f"{len(errors)} error(s) in the rules table")
        self.errors = errors


# --------------------------------------------------------------------------- lines


class _Line(typing.NamedTuple):
    """A logical line: its characters, and where in the source each physical line's part of it begins."""
    text: str
    #: (offset in ``text``, source line, source column), one for each physical line joined in
    parts: tuple[tuple[int, int, int], ...]

    def at(self, i: int) -> tuple[int, int]:
        """Source line and column of character ``i``."""
        for offset, line, column in reversed(self.parts):
            if offset <= i:
                return line, column + i - offset
        raise IndexError(i)


def _logical_lines(text: str, used: set[str] | None = None,
                   continuations: set[str] | None = None) -> list[_Line]:
    """Join continuation lines and drop comments and blank lines; characters keep their source position.

    The syntax rules the text relies on go to ``used``, the continuation characters it uses to
    ``continuations``."""
    used = set() if used is None else used
    continuations = set() if continuations is None else continuations
    out: list[_Line] = []
    current: list[str] | None = None
    parts: list[tuple[int, int, int]] = []
    length = 0
    keep_leading = False
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.rstrip("\r\n")
        if current is None:
            stripped = line.strip()
            if not stripped or stripped.startswith("*"):
                used.add("DLQ-34")
                continue
            start = 0
            current, parts, length = [], [], 0
        else:
            start = 0 if keep_leading else len(line) - len(line.lstrip())
        part = line[start:].rstrip()
        cont = part[-1] if part and part[-1] in "+-" else None
        if cont:
            part = part[:-1]
        parts.append((length, number, start + 1))
        current.append(part)
        length += len(part)
        if cont:
            used.add("DLQ-33")
            continuations.add(cont)
            keep_leading = cont == "-"
            continue
        joined = "".join(current)
        if joined.strip():
            out.append(_Line(joined, tuple(parts)))
        current = None
    if current:
        joined = "".join(current)
        if joined.strip():
            out.append(_Line(joined, tuple(parts)))
    return out


# --------------------------------------------------------------------------- tokens


@attrs.frozen
class _Keyword:
    name: str
    value: str
    quoted: bool
    line: int
    column: int
    value_line: int
    value_column: int


def _tokens(line: _Line, errors: list[TableError]) -> list[_Keyword]:
    """``KEYWORD(value)`` items of one logical line; syntax errors go to ``errors``."""
    out: list[_Keyword] = []
    s = line.text
    i, n = 0, len(s)
    while i < n:
        c = s[i]
        if c.isspace() or c == ",":
            i += 1
            continue
        if not c.isalpha():
            errors.append(TableError(*line.at(i), f"unexpected character {c!r}", CHAR))
            return out
        j = i
        while j < n and s[j].isalnum():
            j += 1
        name = s[i:j].upper()
        k = j
        while k < n and s[k].isspace():
            k += 1
        if k >= n or s[k] != "(":
            errors.append(TableError(*line.at(i), f"keyword {name} must be followed by a value in parentheses",
                                     CHAR))
            return out
        k += 1
        while k < n and s[k].isspace():
            k += 1
        vstart = line.at(k if k < n else n - 1)
        quoted = k < n and s[k] == "'"
        if quoted:
            k += 1
            buf = []
            while True:
                if k >= n:
                    errors.append(TableError(*vstart, f"{name}: quoted value is not closed", UNCLOSED))
                    return out
                if s[k] == "'":
                    if k + 1 < n and s[k + 1] == "'":
                        buf.append("'")
                        k += 2
                        continue
                    k += 1
                    break
                end = s.find("'", k)
                end = n if end < 0 else end
                buf.append(s[k:end])
                k = end
            value = "".join(buf)
            while k < n and s[k].isspace():
                k += 1
            if k >= n or s[k] != ")":
                errors.append(TableError(*vstart, f"{name}: expected ')' after the quoted value", UNCLOSED))
                return out
        else:
            m = s.find(")", k)
            if m < 0:
                errors.append(TableError(*line.at(i), f"{name}: missing ')'", UNCLOSED))
                return out
            value = s[k:m].strip()
            k = m
        out.append(_Keyword(name, value, quoted, *line.at(i), *vstart))
        i = k + 1
        if i < n and not (s[i].isspace() or s[i] == ","):
            # "separate keywords by at least one blank or comma" (also where a '+' continuation joined them)
            errors.append(TableError(*line.at(i), f"no blank or comma between {name}(...) and {s[i]!r}", CHAR))
            return out
    return out


# --------------------------------------------------------------------------- values


def _err(errors: list[TableError], kw: _Keyword, message: str, at_value: bool = True, kind: str = BAD_VALUE) -> None:
    if at_value:
        errors.append(TableError(kw.value_line, kw.value_column, message, kind))
    else:
        errors.append(TableError(kw.line, kw.column, message, kind))


def _plain(kw: _Keyword, errors: list[TableError]) -> str | None:
    """The value as MQ reads it (unquoted values folded to upper case), or None after an error."""
    if kw.value == "":
        _err(errors, kw, f"{kw.name}: the value needs at least one significant character", kind=EMPTY)
        return None
    if kw.quoted:
        return kw.value
    if any(ch.isspace() for ch in kw.value):
        _err(errors, kw, f"{kw.name}: a value containing blanks must be quoted")
        return None
    return kw.value.upper()


def _string_pattern(kw: _Keyword, errors: list[TableError]) -> str | None | bool:
    value = _plain(kw, errors)
    if value is None:
        return False
    if value == "*":
        return None
    significant = len(value.rstrip(" ").replace("*", ""))
    if significant > STRING_PATTERNS[kw.name]:
        _err(errors, kw, f"{kw.name}: value is longer than the {STRING_PATTERNS[kw.name]}-character field",
             kind=TOO_LONG)
        return False
    return value


def _integer(kw: _Keyword, value: str, errors: list[TableError], prefixes: tuple[str, ...]) -> int | None:
    if re.fullmatch(r"[+-]?\d+", value):
        return int(value)
    if value.startswith(prefixes) and value in SYMBOLS:
        return SYMBOLS[value]
    if "?" in value or "*" in value:
        _err(errors, kw, f"{kw.name}: wildcards in a numeric keyword are allowed only as '*' on its own",
             kind=WILDCARD)
    elif value.startswith("MQ"):
        _err(errors, kw, f"{kw.name}: unknown symbolic value {value}")
    else:
        _err(errors, kw, f"{kw.name}: {value!r} is not a number")
    return None


def _numeric_pattern(kw: _Keyword, errors: list[TableError]) -> int | None | bool:
    value = _plain(kw, errors)
    if value is None:
        return False
    if value.strip() == "*":
        return None
    result = _integer(kw, value.strip(), errors, NUMERIC_PATTERNS[kw.name])
    return False if result is None else result


def _word(kw: _Keyword, errors: list[TableError], allowed: tuple[str, ...], message: str) -> str | None:
    """One of ``allowed`` (any case), or None after an error ``KEYWORD: 'value' <message>``."""
    value = _plain(kw, errors)
    if value is None:
        return None
    if value.upper() in allowed:
        return value.upper()
    _err(errors, kw, f"{kw.name}: {value!r} {message}")
    return None


def _no_wildcards(kw: _Keyword, value: str, errors: list[TableError]) -> bool:
    if "*" in value or "?" in value:
        _err(errors, kw, f"{kw.name}: wildcards are not allowed", kind=WILDCARD)
        return False
    return True


def _queue_name(kw: _Keyword, errors: list[TableError], variables: tuple[str, ...],
                blank_ok: bool) -> str | None:
    value = _plain(kw, errors)
    if value is None or not _no_wildcards(kw, value, errors):
        return None
    if value.startswith("&"):
        if value.upper() not in variables:
            _err(errors, kw, f"{kw.name}: unknown replacement variable {value} (use {' or '.join(variables)})")
            return None
        return value.upper()
    if not value.strip():
        if not blank_ok:
            _err(errors, kw, f"{kw.name}: a blank queue name is not allowed")
            return None
        return ""
    if len(value.rstrip()) > 48:
        _err(errors, kw, f"{kw.name}: name is longer than 48 characters", kind=TOO_LONG)
        return None
    return value.rstrip()


# --------------------------------------------------------------------------- entries


def _control(kws: list[_Keyword], errors: list[TableError]) -> ControlData:
    fields: dict = {}
    for kw in kws:
        if kw.name in ("INPUTQ", "INPUTQM"):
            value = _plain(kw, errors)
            if value is not None and _no_wildcards(kw, value, errors):
                if len(value.rstrip()) > 48:
                    _err(errors, kw, f"{kw.name}: name is longer than 48 characters", kind=TOO_LONG)
                else:
                    fields[kw.name.lower()] = value.strip()
        elif kw.name == "RETRYINT":
            value = _plain(kw, errors)
            if value is not None:
                if re.fullmatch(r"\d+", value) and int(value) <= MAX_RETRY:
                    fields["retryint"] = int(value)
                else:
                    _err(errors, kw, f"RETRYINT: {value!r} is not a number of seconds (0-{MAX_RETRY})")
        elif kw.name == "WAIT":
            value = _plain(kw, errors)
            if value is not None and re.fullmatch(r"\d+", value) and int(value) <= MAX_RETRY:
                fields["wait"] = int(value)
            elif value is not None:
                value = _word(kw, errors, ("YES", "NO"), "must be YES, NO or a number of seconds")
                if value is not None:
                    fields["wait"] = value
    return ControlData(**fields)


def _rule(kws: list[_Keyword], line: int, errors: list[TableError]) -> DlqRule | None:
    before = len(errors)
    patterns: list[tuple[str, str | int | None]] = []
    fields: dict = {}
    given = {kw.name: kw for kw in kws}
    for kw in kws:
        if kw.name in STRING_PATTERNS:
            value = _string_pattern(kw, errors)
            if value is not False:
                patterns.append((kw.name, value))
        elif kw.name in NUMERIC_PATTERNS:
            value = _numeric_pattern(kw, errors)
            if value is not False:
                patterns.append((kw.name, value))
        elif kw.name == "ACTION":
            value = _word(kw, errors, ACTIONS, f"must be one of {', '.join(ACTIONS)}")
            if value is not None:
                fields["action"] = value
        elif kw.name == "FWDQ":
            value = _queue_name(kw, errors, FWDQ_VARIABLES, blank_ok=False)
            if value is not None:
                fields["fwdq"] = value
        elif kw.name == "FWDQM":
            value = _queue_name(kw, errors, FWDQM_VARIABLES, blank_ok=True)
            if value is not None:
                fields["fwdqm"] = value
        elif kw.name == "HEADER":
            value = _word(kw, errors, ("YES", "NO"), "must be YES or NO")
            if value is not None:
                fields["header"] = value == "YES"
        elif kw.name == "PUTAUT":
            value = _word(kw, errors, ("DEF", "CTX"), "must be DEF or CTX")
            if value is not None:
                fields["putaut"] = value
        elif kw.name == "RETRY":
            value = _plain(kw, errors)
            if value is not None and _no_wildcards(kw, value, errors):
                if re.fullmatch(r"\d+", value.strip()) and 1 <= int(value) <= MAX_RETRY:
                    fields["retry"] = int(value)
                else:
                    _err(errors, kw, f"RETRY: {value!r} is out of range (1-{MAX_RETRY})")
        elif kw.name in CONTROL_KEYWORDS:
            _err(errors, kw, f"{kw.name} is control data: it belongs in the first entry of the table", False,
                 MISPLACED)
        else:
            _err(errors, kw, f"unknown keyword {kw.name}", False, UNKNOWN)
    first = kws[0]
    if "ACTION" not in given:
        errors.append(TableError(first.line, first.column, "the rule has no ACTION", NO_ACTION))
    elif fields.get("action") == "FWD":
        if "FWDQ" not in given:
            _err(errors, given["ACTION"], "ACTION(FWD) needs FWDQ", False, NO_FWDQ)
    elif "action" in fields:
        for name in ("FWDQ", "FWDQM", "HEADER"):
            if name in given:
                _err(errors, given[name], f"{name} is allowed only with ACTION(FWD)", False, FWD_ONLY)
    if len(errors) > before or "action" not in fields:
        return None
    return DlqRule(line=line, patterns=tuple(patterns), **fields)


def parse(text: str) -> tuple[RulesTable | None, list[TableError]]:
    """Parse and validate a rules table: (table, []) or (None, every error found).

    Tables are immutable values, so a text parsed once is not parsed again.
    """
    table, errors = _parse(text)
    return table, list(errors)


@functools.lru_cache(maxsize=256)
def _parse(text: str) -> tuple[RulesTable | None, tuple[TableError, ...]]:
    errors: list[TableError] = []
    control = ControlData()
    rules: list[DlqRule] = []
    used = {"DLQ-31", "DLQ-32", "DLQ-35", "DLQ-40"}
    continuations: set[str] = set()
    for index, line in enumerate(_logical_lines(text, used, continuations)):
        features, line_errors, entry = _entry(line, index == 0)
        used.update(features)
        if isinstance(entry, ControlData):
            control = entry
        elif entry is not None:
            rules.append(entry)
        errors += line_errors
    if not rules and not errors:
        errors.append(TableError(1, 1, "the table has no rules", NO_RULES))
    if errors:
        return None, tuple(sorted(errors, key=lambda e: (e.line, e.column)))
    return RulesTable(control=control, rules=tuple(rules), syntax_rules=tuple(sorted(used)),
                      continuations=tuple(sorted(continuations))), ()


@functools.lru_cache(maxsize=4096)
def _entry(line: _Line, first: bool) -> tuple[frozenset[str], tuple[TableError, ...], ControlData | DlqRule | None]:
    """One logical line of a table read: the syntax rules it relies on, its errors, and the control
    data (``first``: it is the table's first entry) or rule it gives (None where it gives neither or
    has errors).  What a line gives depends on the line alone, where it stands included: tables that
    differ in a line or two (a table edited, or broken in one place) read the others once."""
    line_errors: list[TableError] = []
    kws = _tokens(line, line_errors)
    features = frozenset(_features(kws))
    seen: set[str] = set()
    unique: list[_Keyword] = []
    for kw in kws:
        if kw.name in seen:
            line_errors.append(TableError(kw.line, kw.column, f"keyword {kw.name} appears more than once", TWICE))
        else:
            seen.add(kw.name)
            unique.append(kw)
    entry: ControlData | DlqRule | None = None
    if unique:
        is_control = all(kw.name in CONTROL_KEYWORDS for kw in unique)
        if is_control and first:
            entry = _control(unique, line_errors)
        elif is_control:
            line_errors.append(TableError(unique[0].line, unique[0].column,
                                          "control data must be the first entry of the table", MISPLACED))
        else:
            rule = _rule(unique, line.at(0)[0], line_errors)
            if rule is not None and not line_errors:
                entry = rule
    return features, tuple(line_errors), entry


def _features(kws: list[_Keyword]) -> set[str]:
    used = set()
    for kw in kws:
        if kw.quoted or kw.value != kw.value.upper():
            used.add("DLQ-36")
        if kw.name in STRING_PATTERNS:
            used.add("DLQ-37")
            if "*" in kw.value or "?" in kw.value:
                used.add("DLQ-38")
        elif kw.name in NUMERIC_PATTERNS:
            used.add("DLQ-39")
        elif kw.name == "RETRY":
            used.add("DLQ-25")
        elif kw.name == "PUTAUT":
            used.add("DLQ-26")
        elif kw.value.startswith("&"):
            used.add("DLQ-23")
    return used


#: One entry of a table as written: its keywords, each (NAME, value, quoted), in the order written.
Entry = tuple[tuple[str, str, bool], ...]


def entries(text: str) -> list[Entry] | None:
    """A valid table's entries (control data first, if any, then the rules); None for a table with errors.

    With :func:`spell` a table can be written again plainly, or with entries or keywords left out.
    """
    if _parse(text)[1]:
        return None
    return [tuple((kw.name, kw.value, kw.quoted) for kw in _tokens(line, [])) for line in _logical_lines(text)]


def spell(table: list[Entry]) -> str:
    """Entries written plainly: one a line, keywords as NAME(value) in the order given, quoted values
    quoted again (an inner quote doubled)."""
    def value(text: str, quoted: bool) -> str:
        return "'" + text.replace("'", "''") + "'" if quoted else text

    return "".join(" ".join(f"{name}({value(v, quoted)})" for name, v, quoted in entry) + "\n"
                   for entry in table if entry)


def parse_or_raise(text: str) -> RulesTable:
    table, errors = parse(text)
    if errors:
        raise TableInvalid(errors)
    assert table is not None
    return table


# --------------------------------------------------------------------------- matching


def string_matches(pattern: str, field: str) -> bool:
    """MQ's string pattern match: ``?`` is one character that is not a trailing blank, ``*`` any run;
    trailing blanks of the pattern and of the blank-padded field do not matter."""
    return _pattern(pattern).fullmatch(field.rstrip(" ")) is not None


@functools.lru_cache(maxsize=1024)
def _pattern(pattern: str) -> re.Pattern:
    regex = "".join(".*" if ch == "*" else "." if ch == "?" else re.escape(ch) for ch in pattern.rstrip(" "))
    return re.compile(regex, flags=re.DOTALL)
