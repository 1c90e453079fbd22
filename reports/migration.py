"""A migration page: what moving an MQ application onto a broker with its defaults changes, and what fixes it.

It compares two columns of one adapter: a run of its faithful mapping (every broker and client setting, and
every piece of adapter code, that brings the broker closest to MQ) and a run of ``mapping=defaults`` (the broker
and client as they install, with only the code needed to express MQ's calls).  The faithful column's stated
dependencies (:class:`~adapters.base.Dependency`) that the defaults run did without are what a team sets, or
writes, to get the faithful verdicts; each rule whose verdict is worse with the defaults is listed with the
ones that bear on it.  Markdown, for docs/compliance.
"""

from __future__ import annotations

from conformance.records.results import FAIL, ONE_OF, PARTLY, PASS
from reports.common import KIT, VERDICT_ORDER, dependencies, when
from reports.markdown import _cell, _table
from reports.matrix import KNOWN_DEVIATION, Column, Report

#: Verdicts that say the rule departs on the system.
DEPARTS = (FAIL, ONE_OF, KNOWN_DEVIATION)
#: Verdicts that say no departure was found.
HOLDS = (PASS, PARTLY)


class MigrationInputError(ValueError):
    """The report's columns are not one adapter's faithful and defaults runs."""


def pair(report: Report) -> tuple[Column, Column]:
    """The faithful and the defaults column of ``report`` (exactly one adapter, both mappings)."""
    adapters = {c.adapter for c in report.columns}
    by_mapping = {c.runs[0].mapping: c for c in report.columns}
    if len(adapters) != 1 or len(report.columns) != 2 or set(by_mapping) != {"faithful", "defaults"} \
            or any(r.faults for c in report.columns for r in c.runs):
        raise MigrationInputError(
            "a migration page compares one adapter's runs with --adapter-opt mapping=faithful (the default) and "
            "mapping=defaults: give result directories of both, and of nothing else")
    return by_mapping["faithful"], by_mapping["defaults"]


def render_migration(report: Report, generated: float) -> str:
    faithful, plain = pair(report)
    system = faithful.meta["system"].get("system") or faithful.adapter
    deps = dependencies(faithful)
    kept = {d["what"] for d in dependencies(plain)}
    dropped = [d for d in deps if d["what"] not in kept]

    def verdict(col: Column, rule) -> str:
        cell = col.cells.get(rule.id)
        return cell.verdict if cell is not None else "-"

    def fixed_by(rule, none: str = "no stated setting or code bears on it (read both counterexamples)") -> str:
        found = [f"{d['label']} ({d['kind']}): {d['what']}" for d in dropped if rule.id in d["rules"]]
        return "; ".join(found) or none

    broken, both, better, unjudged = [], [], [], []
    for rule in report.rules:
        f, p = verdict(faithful, rule), verdict(plain, rule)
        if p in DEPARTS and f in HOLDS:
            broken.append([rule.id, rule.summary, p, f, fixed_by(rule)])
        elif p in DEPARTS and f in DEPARTS:
            both.append([rule.id, rule.summary, p, f, fixed_by(rule, "none stated")])
        elif f in DEPARTS and p in HOLDS:
            better.append([rule.id, rule.summary, p, f])
        elif p in DEPARTS:
            unjudged.append([rule.id, rule.summary, p, f, fixed_by(rule)])

    out = [f"# Moving an MQ application onto {_cell(system)}: what its defaults change", "",
           f"Generated {when(generated)} by {KIT} from the runs below: `{faithful.label}`, the faithful mapping "
           "(every broker and client setting, and every piece of adapter code, stated below in place), and "
           f"`{plain.label}`, the broker and client as they install with only the code needed to express MQ's "
           "calls. A rule listed as breaking with the defaults passed with the faithful mapping: the settings and "
           "code that bear on it are what an application moving from MQ sets, or writes itself, to keep MQ's "
           "behaviour.", ""]
    rows = []
    for col, name in ((faithful, "faithful mapping"), (plain, "defaults")):
        m = col.meta
        rows.append([name, ", ".join(map(str, m["seeds"])) or "-", f"{m['examples_run']} cases",
                     *[col.counts()[v] for v in VERDICT_ORDER]])
    out += ["## Summary", "", _table(rows, ["run", "seeds", "cases run", *VERDICT_ORDER]), ""]
    out += ["## What breaks with the defaults, and what fixes it", ""]
    out += [_table(broken, ["rule", "summary", "with the defaults", "faithful mapping", "what fixes it"])
            if broken else "No rule that holds with the faithful mapping departs with the defaults.", ""]
    if unjudged:
        out += ["Departing with the defaults where the faithful run gave no verdict (its cases never reached the "
                "rule's inputs, or it cannot express them):", "",
                _table(unjudged, ["rule", "summary", "with the defaults", "faithful mapping", "what bears on it"]), ""]
    out += ["## Departing with either mapping", "",
            "These rules depart with the faithful mapping too: the broker's own behaviour, each in its compliance "
            "report with its counterexample. A setting or piece of code listed beside one may change how it "
            "departs (the two runs' counterexamples say how), not whether.", ""]
    out += [_table(both, ["rule", "summary", "with the defaults", "faithful mapping", "what bears on it"])
            if both else "None.", ""]
    if better:
        nemesis = any(r.meta.get("system", {}).get("nemesis") == "on" for r in faithful.runs) and not any(
            r.meta.get("system", {}).get("nemesis") == "on" for r in plain.runs)
        out += ["## Departing with the faithful mapping only", "",
                "These rules departed in the faithful runs and not in the defaults run, whose cases differ"
                + (" and which has no run under the nemesis (connections cut, the broker restarted)" if nemesis
                   else "") + ": read their counterexamples in the compliance report before relying on the "
                "defaults.", "",
                _table(better, ["rule", "summary", "with the defaults", "faithful mapping"]), ""]
    out += ["## The settings and code, one by one", ""]
    rules = {r.id: r for r in report.rules}
    for d in dropped:
        bears = [[rid, verdict(plain, rules[rid]), verdict(faithful, rules[rid])] for rid in d["rules"] if rid in rules]
        how = {"broker setting": "Configure the broker, or declare its queues, so.",
               "client setting": "Set it in the client.",
               "adapter code": "The application, or its messaging library, does this itself."}.get(d["kind"], "")
        why = str(d.get("why") or "")
        why = why[:1].upper() + why[1:] + ("." if why and not why.endswith(".") else "")
        out += [f"### {d['label']}: {_cell(d['what'])}", "", f"*{_cell(d['kind'])}.* {_cell(why)} {how}", "",
                _table(bears, ["rule it bears on", "with the defaults", "faithful mapping"]), ""]
    needed = [d for d in deps if d["what"] in kept]
    if needed:
        out += ["## Kept under both mappings", "",
                "Without these the adapter could not express MQ's calls on the broker at all; they are code an "
                "application moving from MQ writes whatever its settings.", "",
                _table([[d["label"], d["kind"], d["what"], d["why"]] for d in needed],
                       ["", "kind", "setting or code", "why"]), ""]
    return "\n".join(out)
