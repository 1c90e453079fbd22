"""The report as Markdown (tables by tabulate), for repositories and reviews."""

from __future__ import annotations

import re

from tabulate import tabulate

from reports.common import (CANNOT_EXPRESS_INTRO, DEPENDS_INTRO, KIT, RACES_INTRO, VERDICT_ORDER, claim_rows,
                            dependency_rows, deviation_rows, expected_vs_observed, failure_note, failure_rows,
                            passed_steps, races, replay_command, rule_dependencies, title, when)
from reports.deviations import STALE
from reports.matrix import CRASH_INTRO, NOT_RUN, Report, crash_claim, crash_rows
from conformance.records.render import counted, passed_note

#: The matrix's symbol per verdict (the legend above it names them).
SYMBOLS = {"pass": "✅ pass", "fail": "❌ FAIL", "one of": "❗ one of", "known deviation": "⚠️ known", "not applicable": "➖ n/a",
           "partly exercised": "◐ partly", "not exercised": "⭕ not exer.", "indeterminate": "❔ indet.", "error": "💥 error", NOT_RUN: "· not run"}


#: Characters Markdown could read as markup in running text: each shown as itself by a backslash before it.
_MARKUP = re.compile(r"([\\`*_\[\]~|#!])")


def _cell(text) -> str:
    """Running text shown exactly as it is: no raw HTML (a system's text may hold any), no markup (a body's
    ``*`` or backtick is that character, not emphasis or code), no cell or line breaks."""
    text = str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _MARKUP.sub(r"\\\1", text).replace("\r", " ").replace("\n", " ")


class _Raw(str):
    """Cell text already made safe (escaped, links checked)."""


def _prose(key: str) -> bool:
    """Whether a row of a failure's "at step" table is a sentence (shown as text), not a value."""
    return key in ("in one sentence", "differing fields", "also mentioned, not failed") or \
        key.startswith("or a departure at step")


def _code(text, in_table: bool = True) -> _Raw:
    """``text`` (one line) as a code span that holds it exactly, whatever backticks it has: fenced by one
    backtick more than its longest run, padded where it starts or ends with one; in a table its pipes
    escaped (a table's cells split there first, code span or not)."""
    text = str(text).replace("\r", " ").replace("\n", " ")
    fence = "`" * (max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    pad = " " if text[:1] == "`" or text[-1:] == "`" or (text[:1] == " " and text[-1:] == " " and text.strip()) else ""
    if in_table:
        text = text.replace("|", "\\|")
    return _Raw(f"{fence}{pad}{text or ' '}{pad}{fence}")


_SAFE_URL = re.compile(r"^https?://[A-Za-z0-9._~:/?#@!$&'*+,;=%-]+$")


def _source(rule) -> _Raw:
    """A rule's citations, each linked to IBM's page where there is a safe address."""
    parts = []
    for text, url in rule.cites:
        label = _cell(text)
        parts.append(f"[{label}]({url})" if url and _SAFE_URL.match(url) else _cell(text))
    return _Raw("; ".join(parts))


def _table(rows, headers) -> str:
    return tabulate([[v if isinstance(v, _Raw) else _cell(v) for v in r] for r in rows], headers=headers,
                    tablefmt="github")


def render_markdown(report: Report, generated: float) -> str:
    out = ["# mqconform compliance report", "",
           f"Generated {when(generated)} by {KIT} from "
           f"{sum(len(c.runs) for c in report.columns) + len(report.crashes)} result director"
           f"{'y' if sum(len(c.runs) for c in report.columns) + len(report.crashes) == 1 else 'ies'}."
           + (" Changes are marked against a baseline." if report.baseline else ""), ""]
    out += ["## Summary", "", _table([[c.label] + [c.counts()[v] for v in VERDICT_ORDER] for c in report.columns],
                                      ["system"] + list(VERDICT_ORDER)), ""]
    if report.deviations:
        out += ["Known deviations: see [below](#known-deviations).", ""]
    out += ["## Rules by system", "",
            "Legend: " + ", ".join(f"{SYMBOLS[v]} = {v}" for v in (*VERDICT_ORDER, NOT_RUN)) + ".", ""]
    for area in report.areas():
        totals = "; ".join(f"{_cell(c.label)}: " + (", ".join(
            f"{n} {v}" for v, n in report.area_counts(c, area).items() if n) if report.area_run(c, area)
            else "not run") for c in report.columns)
        rows = []
        for r in report.rules_of(area):
            cells = []
            for col in report.columns:
                shown = report.shown(col, r)
                cell = col.cells.get(r.id)
                cells.append(_Raw(SYMBOLS[shown] if shown else "-")
                             if not (cell and cell.change) else _Raw(f"{SYMBOLS[shown]} ({_cell(cell.change)})"))
            rows.append([r.id, r.summary] + cells)
        out += [f"### {area}", "", f"*{totals}*", "",
                _table(rows, ["rule", "summary"] + [c.label for c in report.columns]), ""]
    out += _deviations(report)
    out += _crashes(report)
    for col in report.columns:
        out += [f"## {_cell(col.label)}", "", "What this report covers:", "",
                _table(claim_rows(col), ["", ""]), ""]
        depends = dependency_rows(col)
        if depends:
            out += ["### What the verdicts depended on", "", DEPENDS_INTRO, "",
                    _table(depends, ["", "kind", "setting or code", "why", "rules it bears on"]), ""]
        on = rule_dependencies(col)
        out += ["### Areas", "", _table([[a] + [report.area_counts(col, a)[v] for v in VERDICT_ORDER]
                                         for a in report.areas()], ["area"] + list(VERDICT_ORDER)), ""]
        out += ["### Rules", ""]
        for area in report.areas():
            rows = []
            for r in report.rules_of(area):
                cell = col.cells.get(r.id)
                if cell is None:
                    continue
                verdict = f"{cell.verdict}: {cell.why}" if cell.why else cell.verdict
                row = [r.id, _source(r), r.summary, verdict, cell.exercised]
                if depends:
                    row.append(", ".join(on.get(r.id, [])))
                if report.baseline:
                    row.append(cell.change)
                rows.append(row)
            if rows:
                headers = ["rule", "source", "summary", "verdict", "exercised"] + (
                    ["depended on"] if depends else []) + (["vs baseline"] if report.baseline else [])
                out += [f"#### {area}", "", _table(rows, headers), ""]
        partly = col.partly_exercised(report.rules)
        if partly:
            out += ["### Input classes never reached", "",
                    f"{counted(len(partly), 'rule')} {'was' if len(partly) == 1 else 'were'} checked and not broken (or deviated as known) without every kind of "
                    "input their text distinguishes: they are partly exercised, not passed.", "",
                    _table([[r.id, cell.verdict, "; ".join(cell.unreached)] for r, cell in partly],
                           ["rule", "verdict", "input classes never reached"]), ""]
        cannot = [(r, col.cells[r.id]) for r in report.rules if r.id in col.cells and col.cells[r.id].inexpressible]
        if cannot:
            out += ["### Input classes the system cannot express", "", CANNOT_EXPRESS_INTRO, "",
                    _table([[r.id, cell.verdict, "; ".join(cell.inexpressible)] for r, cell in cannot],
                           ["rule", "verdict", "input classes not expressible"]), ""]
        if col.failures:
            out += ["### Failures", ""]
            for n, (path, failure) in enumerate(col.failures, start=1):
                note = failure_note(col, failure)
                out += [f"#### Failure {n}: {_cell(title(failure))}" + (f" ({note})" if note else ""), ""]
                passed = passed_steps(col, failure)
                out += [_table([(mark, n, _code(op), _code(obs)) for mark, n, op, obs in failure_rows(failure, passed)],
                               ["", "#", "operation", "observed"]), ""]
                out += [passed_note(failure, passed), ""] if passed else []
                # the outcomes and the values that differ exactly as they are; the sentences as text
                out += [f"At step {failure.mismatch.index + 1}:", "",
                        _table([(key, value if _prose(key) else _code(value))
                                for key, value in expected_vs_observed(failure)], ["", ""]), ""]
                out += ["Replay:", "", "```bash", replay_command(path), "```", ""]
        recorded = races(col)
        if recorded:
            out += ["### Races", "", RACES_INTRO.replace(">>", "`>>`"), ""]
            for n, (text, replay) in enumerate(recorded, start=1):
                out += [f"#### Race {n}", "", "```text", text, "```", "", "Replay:", "", "```bash", replay, "```", ""]
    return "\n".join(out)


def _crashes(report: Report) -> list[str]:
    """The crash campaigns shown: each rule broken by frequency, a known deviation beside it."""
    if not report.crashes:
        return []
    out = ["## Crash campaigns", "", CRASH_INTRO, ""]
    for crash in report.crashes:
        out += [f"### {_cell(crash.label)}", "", _cell(crash_claim(crash)), ""]
        if crash.rows:
            out += [_table(crash_rows(crash), ["rule", "summary", "broken in", "known deviation", "replay file"]), ""]
        else:
            out += ["No drain found a message out of place.", ""]
    return out


def _deviations(report: Report) -> list[str]:
    """The known deviations of the systems shown: a table, then each one's explanation and its failures."""
    if not report.deviations:
        return []
    out = ["## Known deviations", "",
           "Departures explained in a known-deviations file: *matched* (the system still departs; its verdict is "
           "*known deviation*), *not shown* (these runs passed the rule; the entry's recorded counterexample is "
           "the evidence, and replaying it says whether the system still departs), *stale* (the rule passed and "
           "the entry has no counterexample, or its counterexample no longer shows the departure: the entry should "
           "go or be recorded again), *does not match* (the rule fails in a departure the entry does not describe: "
           "the failure stands), *not reached* (these runs did not reach the rule).", "",
           _table(deviation_rows(report), ["rule", "system", "status", "behaviour seen"]), ""]
    columns = {c.label: c for c in report.columns}
    for d in report.deviations:
        col = columns[d.system]
        numbers = [str(n) for n, (_, f) in enumerate(col.failures, start=1) if d.deviation.rule in f.blamed]
        where = (f" Counterexample: failure {', '.join(numbers)} of {_cell(col.label)}." if numbers else "")
        heading = f"### {d.deviation.rule} on {_cell(col.label)}: {d.status}"
        stale = (f" This entry is stale: {d.note or 'the rule' + chr(39) + 's verdict is now ' + d.verdict}."
                 if d.status == STALE else f" It does not explain the failure: {d.note}." if d.note else "")
        signature = f" It describes a departure {d.deviation.describe()}."
        examples = d.deviation.counterexamples
        example = (f" Recorded counterexample{'s' if len(examples) > 1 else ''}: "
                   f"{', '.join(_code(e, in_table=False) for e in examples)} (`mqconform replay` {'each' if len(examples) > 1 else 'it'})."
                   if examples else "")
        upstream = f" {_cell(d.deviation.upstream_text())}" if d.deviation.upstream else ""
        out += [heading, "", f"*Seen:* {_cell(d.deviation.seen)}", "",
                _cell(d.deviation.reason) + _cell(signature) + where + example + upstream + _cell(stale), ""]
    return out
