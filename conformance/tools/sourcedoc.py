"""The source catalogue as text, JSON lines or Markdown (``mqconform sources``).

The Markdown form is ``docs/sources.md``; a test keeps that file equal to what
this module renders, so the page never drifts from the rules.
"""

from __future__ import annotations

import json
from collections import defaultdict

from reference_model.rules import AREAS, RULES, Rule
from reference_model.sources import CATALOGUE, Source
from conformance.records.render import counted


def citing_rules() -> dict[str, list[tuple[Rule, str]]]:
    """For each source key, the rules citing it and the item each cites, in rule order."""
    found: dict[str, list[tuple[Rule, str]]] = defaultdict(list)
    for rule in RULES.all():
        for cite in rule.cites:
            found[cite.source].append((rule, cite.item))
    return found


def _order(found) -> list[Source]:
    """Sources in the order of the first rule citing them (area by area), uncited ones last."""
    first: dict[str, int] = {}
    for key, uses in found.items():
        first[key] = min(RULES.all().index(rule) for rule, _ in uses)
    return sorted(CATALOGUE.values(), key=lambda s: (first.get(s.key, 10**6), s.title))


def render(fmt: str) -> str:
    found = citing_rules()
    sources = _order(found)
    if fmt == "json":
        return "".join(json.dumps({
            "key": s.key, "title": s.title, "within": s.within, "part": s.part, "versions": s.versions,
            "topic": s.topic, "url": s.url, "covers": s.covers, "conflicts": s.conflicts,
            "rules": [{"rule": r.id, "item": item} for r, item in found.get(s.key, [])],
        }, ensure_ascii=False) + "\n" for s in sources)
    if fmt == "markdown":
        return _markdown(sources, found)
    return "".join(f"{s.key}\t{s.label}\t{s.versions}\t{counted(len(found.get(s.key, [])), 'rule')}\n" for s in sources)


def _markdown(sources: list[Source], found) -> str:
    out = [
        "# Sources",
        "",
        "Every rule of the kit cites the IBM MQ documentation topic it comes from, by the",
        "title IBM publishes it under and the item inside it (condition 3 note a, step 4b,",
        "note 9 point 2). The summaries are the kit's own words; read IBM's topic for the",
        "text. This page is generated from `reference_model/sources.py` by",
        "`mqconform sources --format markdown`; `mqconform rules` lists each rule with",
        "its citation.",
        "",
        "Topic identifiers (such as `q026930_`) are IBM's and stay the same across",
        "editions of the documentation; search IBM's documentation for the identifier or",
        "the title where no address is given.",
        "",
        "## Where sources disagree",
        "",
    ]
    conflicts = [s for s in sources if s.conflicts]
    for s in conflicts:
        out.append(f"- {s.label}: {s.conflicts}")
    out += ["", "## The documents, by area", ""]
    by_area: dict[str, list[Source]] = defaultdict(list)
    for s in sources:
        areas = sorted({r.area for r, _ in found.get(s.key, [])}, key=AREAS.index)
        by_area[areas[0] if areas else "uncited"].append(s)
    for area in [*AREAS, "uncited"]:
        if not by_area.get(area):
            continue
        out += [f"### {area}", ""]
        for s in by_area[area]:
            title = f"[{s.label}]({s.url})" if s.url else s.label
            out.append(f"#### {title}")
            out.append("")
            out.append(f"- In IBM's documentation: {s.part}" + (f"; topic `{s.topic}`" if s.topic else ""))
            out.append(f"- Editions followed: {s.versions}")
            if s.covers:
                out.append(f"- What the kit takes from it: {s.covers}")
            uses = found.get(s.key, [])
            items: dict[str, list[str]] = defaultdict(list)
            for rule, item in uses:
                items[rule.id].append(item)
            cited = ", ".join(f"{rid} ({'; '.join(i for i in its if i)})" if any(its) else rid
                              for rid, its in items.items())
            out.append(f"- Rules: {cited or 'none'}")
            out.append("")
    return "\n".join(out).rstrip("\n") + "\n"
