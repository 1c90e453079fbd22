"""Known deviations: departures a system is known to show, explained once and reported as such.

A known-deviations file is TOML, one ``[[deviation]]`` table per rule and adapter::

    [[deviation]]
    rule = "CORE-36"
    adapter = "rabbitmq"
    seen = "A persistent message got with SYNCPOINT_IF_PERSISTENT is removed at once."
    reason = '''One paragraph on the system's behaviour behind the departure ...'''

An entry may name a recorded ``counterexample`` (a replay file, relative to the
deviations file): the evidence that the system departs.

In a report, a rule the file names for a system's adapter that *fails* there is
shown as *known deviation* (it no longer makes the report fail).  One that
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

import tomllib
from pathlib import Path

import attrs

from reports.inputs import ReportInputError

MATCHED, STALE, NOT_REACHED, NOT_SHOWN = "matched", "stale", "not reached", "not shown"

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
                    "counterexample": {"type": "string", "minLength": 1},
                },
            },
        },
    },
}


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
    #: A replay file showing the departure, as the entry names it (relative to the deviations file).
    counterexample: str = ""
    #: ... and where it is.
    counterexample_path: Path | None = attrs.field(default=None, eq=False)


@attrs.define
class DeviationStatus:
    """A known deviation as a report found it for one system (column)."""

    deviation: KnownDeviation
    system: str
    status: str
    #: The rule's verdict in that system's runs, before the deviation was applied.
    verdict: str


def load_deviations(path: str | Path) -> tuple[KnownDeviation, ...]:
    """Read and check a known-deviations file; every problem is one :class:`ReportInputError` line."""
    from jsonschema import Draft7Validator

    from reference_model.rules import RULES

    p = Path(path)
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
    seen: dict[tuple[str, str], int] = {}
    for n, entry in enumerate(data.get("deviation", []), start=1):
        origin = f"{p} deviation {n}"
        if entry["rule"] not in RULES:
            raise ReportInputError(f"{origin}: unknown rule {entry['rule']} (mqconform rules lists them)")
        key = (entry["rule"], entry["adapter"])
        if key in seen:
            raise ReportInputError(f"{origin}: {key[0]} on {key[1]} is already deviation {seen[key]}")
        seen[key] = n
        example = entry.get("counterexample", "")
        example_path = (p.parent / example) if example else None
        if example_path is not None and not example_path.is_file():
            raise ReportInputError(f"{origin}: counterexample {example}: no such file (relative to {p.parent})")
        out.append(KnownDeviation(rule=entry["rule"], adapter=entry["adapter"], seen=" ".join(entry["seen"].split()),
                                  reason=" ".join(entry["reason"].split()), origin=origin,
                                  counterexample=example, counterexample_path=example_path))
    return tuple(out)


def load_all(paths) -> tuple[KnownDeviation, ...]:
    """Every file's deviations; the same rule and adapter in two files is an error."""
    out: list[KnownDeviation] = []
    for path in paths or ():
        for d in load_deviations(path):
            clash = next((o for o in out if (o.rule, o.adapter) == (d.rule, d.adapter)), None)
            if clash is not None:
                raise ReportInputError(f"{d.origin}: {d.rule} on {d.adapter} is already {clash.origin}")
            out.append(d)
    return tuple(out)


__all__ = ["KnownDeviation", "DeviationStatus", "load_deviations", "load_all", "MATCHED", "STALE", "NOT_REACHED",
           "NOT_SHOWN"]
