"""The rule registry: every documented rule has a stable ID, a source and a summary.

Rules are declared in one module per area (``reference_model/rules/core.py``,
...).  A check that can fail names the IDs of the rules it enforces; coverage,
verdicts and reports are kept per rule ID.
"""

from __future__ import annotations

import importlib
import re

import attrs

from reference_model import mqconst as C
from reference_model.sources import Cite, render

AREAS = ("core", "syncpoint", "expiry", "trigger", "cluster", "dlq")
_ID = re.compile(r"^[A-Z]+-\d{2,3}[a-z]?$")


def _as_cites(value) -> tuple[Cite, ...]:
    if isinstance(value, Cite):
        return (value,)
    return tuple(value)


@attrs.frozen(kw_only=True)
class Rule:
    """One documented rule."""

    id: str = attrs.field(validator=attrs.validators.matches_re(_ID))
    area: str = attrs.field(validator=attrs.validators.in_(AREAS))
    #: Where the rule is stated: items of IBM MQ documentation topics in the source catalogue.
    cites: tuple[Cite, ...] = attrs.field(converter=_as_cites, validator=attrs.validators.min_len(1))
    #: One line, in our words.
    summary: str
    #: Platforms on which MQ documents the rule; others report it not applicable.
    platforms: tuple[str, ...] = C.PLATFORMS
    #: Where sources disagree, or leave latitude, what the model does about it.
    note: str = ""

    def applies_on(self, platform: str) -> bool:
        return platform in self.platforms

    @property
    def source(self) -> str:
        """The documents and items the rule comes from, on one line: title, item; title, item."""
        return render(self.cites)

    @property
    def links(self) -> tuple[str, ...]:
        """Addresses of the cited topics that have one, in citation order."""
        return tuple(dict.fromkeys(c.doc.url for c in self.cites if c.doc.url))

    def citations(self) -> list[dict[str, str]]:
        """The citations as plain data: the text shown, title, item, IBM topic and address."""
        return [{"text": c.text(), "title": c.doc.title, "within": c.doc.within, "item": c.item,
                 "topic": c.doc.topic, "url": c.doc.url} for c in self.cites]


class RuleRegistry:
    def __init__(self) -> None:
        self._rules: dict[str, Rule] = {}

    def add(self, *rules: Rule) -> None:
        for rule in rules:
            if rule.id in self._rules:
                raise ValueError(f"duplicate rule ID {rule.id}")
            self._rules[rule.id] = rule

    def __getitem__(self, rule_id: str) -> Rule:
        return self._rules[rule_id]

    def __contains__(self, rule_id: str) -> bool:
        return rule_id in self._rules

    def all(self, area: str | None = None) -> list[Rule]:
        rules = [r for r in self._rules.values() if area is None or r.area == area]
        return sorted(rules, key=lambda r: (AREAS.index(r.area), _sort_key(r.id)))

    def areas(self) -> list[str]:
        """The areas that have at least one rule."""
        present = {r.area for r in self._rules.values()}
        return [a for a in AREAS if a in present]


def _sort_key(rule_id: str) -> tuple[str, int, str]:
    prefix, _, rest = rule_id.partition("-")
    digits = "".join(ch for ch in rest if ch.isdigit())
    return prefix, int(digits), rest[len(digits):]


RULES = RuleRegistry()

#: Modules that declare rules, one per documented area.
_AREA_MODULES = (
    "reference_model.rules.core",
    "reference_model.rules.syncpoint",
    "reference_model.rules.expiry",
    "reference_model.rules.trigger",
    "reference_model.rules.cluster",
    "reference_model.rules.dlq",
)
for _name in _AREA_MODULES:
    importlib.import_module(_name)


def parse_areas(text: str | None) -> list[str]:
    """``"core,expiry"`` to a list of areas that have rules (all of them for ``None``).

    Raises ValueError naming an unknown area.
    """
    known = RULES.areas()
    if text is None:
        return known
    areas = [a.strip() for a in text.split(",")]
    if not any(areas):
        raise ValueError(f"no area named (known: {', '.join(known)})")
    if not all(areas):
        raise ValueError(f"an empty area name in {text!r} (areas are separated by single commas; known: "
                         f"{', '.join(known)})")
    for a in areas:
        if a not in known:
            raise ValueError(f"unknown area {a!r} (known: {', '.join(known)})")
    return areas
