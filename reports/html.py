"""The report as one self-contained HTML file: no network access needed, every value escaped."""

from __future__ import annotations

import html
import re
from collections import Counter

from reports.common import (CANNOT_EXPRESS_INTRO, DEPENDS_INTRO, KIT, RACES_INTRO, VERDICT_ORDER, claim_rows,
                            dependency_rows, expected_vs_observed, failure_note, failure_rows, passed_steps, races,
                            replay_command, rule_dependencies, title, when)
from reports.deviations import MATCHED, NOT_REACHED, NOT_SHOWN, STALE
from reports.matrix import CRASH_INTRO, NOT_RUN, Column, Report, crash_claim, crash_rows
from reference_model.version import install_hint
from reports.plots import available as plots_available
from reports.plots import campaign_png, coverage_png, overview_png, shares_png
from conformance.records.render import counted, passed_note

_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]")

STYLE = """
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:1.5em;color:#212121;max-width:110em}
h1{margin:.2em 0}
table{border-collapse:collapse;margin:.5em 0 1.5em}
th,td{border:1px solid #ccc;padding:.25em .5em;text-align:left;vertical-align:top;
      overflow-wrap:anywhere;max-width:60em}
th{background:#f0f0f0}
td.v{font-weight:600}
.pass{color:#2e7d32}.fail{color:#c62828}.not-applicable{color:#757575}.not-exercised{color:#a36a00}.partly-exercised{color:#558b2f}
.indeterminate{color:#6a1b9a}.error{color:#37474f}.known-deviation{color:#ef6c00}.stale{color:#c62828}
tr.broke{background:#ffebee}tr.passed{background:#fff8e1}
code,pre{font-family:ui-monospace,monospace;font-size:90%}
pre{background:#f7f7f7;padding:.5em;overflow-x:auto;white-space:pre-wrap;overflow-wrap:anywhere}
.change{font-size:85%;color:#555}
.legend{list-style:none;padding:0;margin:.5em 0;display:flex;flex-wrap:wrap;gap:.3em 1.2em;font-size:90%}
.c{border-radius:3px}
span.c{padding:0 .35em;white-space:nowrap}
.c.pass{background:#c8e6c9;color:#1b5e20}.c.fail{background:#ef9a9a;color:#7f0000;font-weight:700}
.c.known-deviation{background:#ffcc80;color:#6d3600}.c.one-of{background:#f8bbd0;color:#880e4f;font-weight:700}.c.not-applicable{background:#eee;color:#616161}
.c.not-exercised{background:#fff59d;color:#6d5800}.c.partly-exercised{background:#e6ee9c;color:#33691e}.c.indeterminate{background:#e1bee7;color:#4a148c}
.c.error{background:#b0bec5;color:#263238}.c.not-run{background:#fff;color:#9e9e9e;font-style:italic}
table.summary td,table.summary th{padding:.15em .5em}
table.m{table-layout:fixed;width:100%;margin:.3em 0 .8em}
table.m col.rid{width:6.5em}table.m col.sys{width:7em}
table.m td,table.m th{padding:.15em .35em;font-size:90%}
table.m td.c{text-align:center;border-radius:0}
table.m td.c a{color:inherit;text-decoration:none;display:block}
table.m td.c a:hover{text-decoration:underline}
table.m tr.src td{background:#fafafa;color:#555;font-size:85%;border-left:0;border-right:0}
details{margin:.2em 0}
summary{cursor:pointer;padding:.25em 0}
summary .tot{font-size:85%;margin:.1em 0 0 1.5em}
summary .who{color:#555}
#only-standing-out:checked ~ .matrix .ok{display:none}
"""


def esc(value) -> str:
    """Escape a value for HTML text or attributes; control characters are shown, not passed on."""
    text = _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", str(value))
    return html.escape(text, quote=True)


def _source(rule) -> str:
    """A rule's citations, each title linked to IBM's page where there is an address."""
    return "; ".join(f'<a href="{esc(url)}">{esc(text)}</a>' if url else esc(text) for text, url in rule.cites)


def _vclass(verdict: str) -> str:
    return verdict.replace(" ", "-")


def _table(rows, headers=None, row_class=None, cls: str = "") -> str:
    out = [f'<table class="{cls}">' if cls else "<table>"]
    if headers:
        out.append("<tr>" + "".join(f"<th>{esc(h)}</th>" for h in headers) + "</tr>")
    for i, row in enumerate(rows):
        cls = f' class="{row_class(i)}"' if row_class and row_class(i) else ""
        out.append(f"<tr{cls}>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>")
    out.append("</table>")
    return "\n".join(out)


def _plain_table(rows, headers=None, row_class=None) -> str:
    return _table([[esc(c) for c in r] for r in rows], headers, row_class)


def _verdict(col: Column, rid: str, link: bool = True) -> str:
    cell = col.cells.get(rid)
    if cell is None:
        return "-"
    text = f'<span class="{_vclass(cell.verdict)}">{esc(cell.verdict)}</span>'
    if cell.change:
        text += f' <span class="change">({esc(cell.change)})</span>'
    if link:
        text = f'<a href="#{esc(col.anchor)}-{esc(rid)}">{text}</a>'
    return text


def _column(report: Report, col: Column) -> list[str]:
    out = [f'<h2 id="{esc(col.anchor)}">{esc(col.label)}</h2>', "<p>What this report covers:</p>",
           _plain_table(claim_rows(col))]
    depends = dependency_rows(col)
    if depends:
        out += ["<h3>What the verdicts depended on</h3>", f"<p>{esc(DEPENDS_INTRO)}</p>",
                _table([[f'<span id="{esc(col.anchor)}-{esc(row[0])}">{esc(row[0])}</span>', *map(esc, row[1:])]
                        for row in depends], ["", "kind", "setting or code", "why", "rules it bears on"])]
    on = rule_dependencies(col)
    out += ["<h3>Areas</h3>", _table(
        [[esc(a)] + ([str(report.area_counts(col, a)[v]) for v in VERDICT_ORDER] if report.area_run(col, a)
                     else ['<span class="c not-run">not run</span>'] + [""] * (len(VERDICT_ORDER) - 1))
         for a in report.areas()],
        ["area"] + list(VERDICT_ORDER))]
    if plots_available():
        out.append(f'<img alt="Rule verdicts per area for {esc(col.label)}" '
                   f'src="data:image/png;base64,{coverage_png(report, col)}">')
        campaign = campaign_png(col)
        if campaign:
            out.append(f'<img alt="Campaign throughput and distinct failures for {esc(col.label)}" '
                       f'src="data:image/png;base64,{campaign}">')
        shares = shares_png(col)
        if shares:
            out.append(f'<img alt="Cluster destination shares for {esc(col.label)}" '
                       f'src="data:image/png;base64,{shares}">')
    failure_ids = {id(f): n for n, (_, f) in enumerate(col.failures, start=1)}
    rules = {r.id: r for r in report.rules}
    out.append("<h3>Rules</h3>")
    for area in report.areas():
        rows = []
        for r in report.rules_of(area):
            cell = col.cells.get(r.id)
            if cell is None:
                continue
            links = " ".join(f'<a href="#{esc(col.anchor)}-failure-{failure_ids[id(f)]}">failure '
                             f'{failure_ids[id(f)]}</a>' for _, f in cell.failures)
            why = cell.why or (cell.deviation.seen if cell.deviation else "")
            rows.append([f'<span id="{esc(col.anchor)}-{esc(r.id)}">{esc(r.id)}</span>', _source(r),
                         esc(r.summary), _verdict(col, r.id, link=False) + (" " + links if links else "")
                         + (f'<br><span class="reason">{esc(why)}</span>' if why else ""),
                         str(cell.exercised)] + ([" ".join(f'<a href="#{esc(col.anchor)}-{esc(label)}">{esc(label)}</a>'
                                                           for label in on.get(r.id, []))] if depends else []))
        if rows:
            out += [f"<h4>{esc(area)}</h4>", _table(rows, ["rule", "source", "summary", "verdict", "exercised"]
                                                    + (["depended on"] if depends else []))]
    partly = col.partly_exercised(report.rules)
    if partly:
        out += ["<h3>Input classes never reached</h3>",
                f"<p>{counted(len(partly), 'rule')} {'was' if len(partly) == 1 else 'were'} checked and not broken (or deviated as known) without every kind "
                "of input their text distinguishes: they are partly exercised, not passed.</p>",
                _table([[esc(r.id), esc(cell.verdict), esc("; ".join(cell.unreached))] for r, cell in partly],
                       ["rule", "verdict", "input classes never reached"])]
    cannot = [(r, col.cells[r.id]) for r in report.rules if r.id in col.cells and col.cells[r.id].inexpressible]
    if cannot:
        out += ["<h3>Input classes the system cannot express</h3>", f"<p>{esc(CANNOT_EXPRESS_INTRO)}</p>",
                _table([[esc(r.id), esc(cell.verdict), esc("; ".join(cell.inexpressible))] for r, cell in cannot],
                       ["rule", "verdict", "input classes not expressible"])]
    if col.failures:
        out.append("<h3>Failures</h3>")
        for n, (path, failure) in enumerate(col.failures, start=1):
            passed = passed_steps(col, failure)
            steps = failure_rows(failure, passed)
            note = failure_note(col, failure)
            out += [f'<h4 id="{esc(col.anchor)}-failure-{n}">Failure {n}: {esc(title(failure))}'
                    + (f' <span class="known-deviation">({esc(note)})</span>' if note else "") + "</h4>",
                    "<p>Rules broken, one of them (each alone, relaxed, makes this history pass; it does not "
                    "show which):</p>" if failure.one_of else "<p>Rules broken:</p>",
                    _table([[f'<a href="#{esc(col.anchor)}-{esc(rid)}">{esc(rid)}</a>',
                             esc(rules[rid].summary) if rid in rules else "",
                             _source(rules[rid]) if rid in rules else "",
                             *(["one of these" if rid in failure.either else "broken"] if failure.either else [])]
                            for rid in failure.blamed],
                           ["rule", "summary", "source", *(["which"] if failure.either else [])]),
                    _plain_table(steps, ["", "#", "operation", "observed"],
                                 row_class=lambda i, s=steps: {">>": "broke", "~": "passed"}.get(s[i][0], "")),
                    *([f"<p>{esc(passed_note(failure, passed))}</p>"] if passed else []),
                    f"<p>At step {failure.mismatch.index + 1}:</p>",
                    _plain_table(expected_vs_observed(failure)),
                    f"<p>Replay:</p><pre>{esc(replay_command(path))}</pre>"]
    recorded = races(col)
    if recorded:
        out += ["<h3>Races</h3>", f"<p>{esc(RACES_INTRO).replace('&gt;&gt;', '<code>&gt;&gt;</code>')}</p>"]
        for n, (text, replay) in enumerate(recorded, start=1):
            out += [f'<h4 id="{esc(col.anchor)}-race-{n}">Race {n}</h4>', f"<pre>{esc(text)}</pre>",
                    f"<p>Replay:</p><pre>{esc(replay)}</pre>"]
    return out


def _deviations(report: Report) -> list[str]:
    """The known deviations of the systems shown, each with its status, what was seen and why."""
    if not report.deviations:
        return []
    columns = {c.label: c for c in report.columns}
    rows = []
    for d in report.deviations:
        col = columns[d.system]
        rule = d.deviation.rule
        status = f'<span class="{"stale" if d.status == STALE else "known-deviation"}">{esc(d.status)}</span>'
        if d.status == STALE:
            status += f" (now {esc(d.verdict)})"
        if d.note:
            status += f"<br>{esc(d.note)}"
        upstream = f"<br>{esc(d.deviation.upstream_text())}" if d.deviation.upstream else ""
        rows.append([f'<a href="#{esc(col.anchor)}-{esc(rule)}">{esc(rule)}</a>', esc(d.system), status,
                     esc(d.deviation.seen), esc(d.deviation.reason) + upstream])
    return ['<h2 id="deviations">Known deviations</h2>',
            "<p>Departures explained in a known-deviations file: <em>matched</em> (the system still departs), "
            "<em>not shown</em> (these runs passed the rule; the entry's recorded counterexample is the evidence, "
            "and replaying it says whether the system still departs), "
            "<em>stale</em> (the rule passed and the entry has no counterexample, or its counterexample no longer "
            "shows the departure), <em>does not match</em> (the rule fails in a departure the entry does not "
            "describe: the failure stands), <em>not reached</em> (these runs did not reach the rule).</p>",
            _table(rows, ["rule", "system", "status", "behaviour seen", "why"])]


def _crashes(report: Report) -> list[str]:
    """The crash campaigns shown: each rule broken by frequency, a known deviation beside it."""
    if not report.crashes:
        return []
    out = ['<h2 id="crash-campaigns">Crash campaigns</h2>', f"<p>{esc(CRASH_INTRO)}</p>"]
    for crash in report.crashes:
        out += [f"<h3>{esc(crash.label)}</h3>", f"<p>{esc(crash_claim(crash))}</p>"]
        if crash.rows:
            out.append(_table([[esc(cell) for cell in row] for row in crash_rows(crash)],
                              ["rule", "summary", "broken in", "known deviation", "replay file"]))
        else:
            out.append("<p>No drain found a message out of place.</p>")
    return out


#: The matrix's cell text per verdict (the legend gives the full names).
SHORT = {"pass": "pass", "fail": "FAIL", "one of": "one of", "known deviation": "known dev.", "not applicable": "n/a",
         "partly exercised": "partly", "not exercised": "not exer.", "indeterminate": "indet.", "error": "error", NOT_RUN: "not run"}


def _legend() -> str:
    items = "".join(f'<li><span class="c {_vclass(v)}">{esc(SHORT[v])}</span> {esc(v)}</li>'
                    for v in (*VERDICT_ORDER, NOT_RUN))
    return f'<ul class="legend" id="legend">{items}</ul>'


def _target(report: Report, col: Column, rid: str) -> str:
    """Where a matrix cell leads: the first failure naming the rule, else the rule in the system's section."""
    cell = col.cells.get(rid)
    if cell is not None and cell.failures:
        first = cell.failures[0][1]
        for n, (_, f) in enumerate(col.failures, start=1):
            if f is first:
                return f"#{col.anchor}-failure-{n}"
    return f"#{col.anchor}-{rid}"


def _matrix_cell(report: Report, col: Column, rule) -> str:
    shown = report.shown(col, rule)
    if not shown:
        return '<td class="c none" title="no verdict">-</td>'
    if shown == NOT_RUN:
        return f'<td class="c not-run" title="{esc(col.label)}: area {esc(rule.area)} not run">not run</td>'
    cell = col.cells[rule.id]
    change = f'<br><span class="change">{esc(cell.change)}</span>' if cell.change else ""
    return (f'<td class="c {_vclass(shown)}" title="{esc(rule.id)} on {esc(col.label)}: {esc(shown)}">'
            f'<a href="{esc(_target(report, col, rule.id))}">{esc(SHORT[shown])}</a>{change}</td>')


def _area_totals(report: Report, col: Column, area: str) -> str:
    if not report.area_run(col, area):
        return "not run"
    counts = report.area_counts(col, area)
    return " ".join(f'<span class="c {_vclass(v)}">{counts[v]} {esc(SHORT[v])}</span>'
                    for v in VERDICT_ORDER if counts[v])


def _matrix(report: Report) -> list[str]:
    """Rules (by area, then by the IBM document they come from) against systems, one coloured cell each."""
    n = len(report.columns)
    out = ['<h2 id="matrix">Rules by system</h2>',
           '<input type="checkbox" id="only-standing-out"> <label for="only-standing-out">Show only the rules '
           'some system fails, or on which the systems differ</label>',
           '<div class="matrix">']
    head = ('<colgroup><col class="rid"><col class="sum">' + '<col class="sys">' * n + "</colgroup>"
            '<thead><tr><th>rule</th><th>summary</th>'
            + "".join(f'<th title="{esc(c.label)}"><a href="#{esc(c.anchor)}">{esc(c.label)}</a></th>'
                      for c in report.columns) + "</tr></thead>")
    for area in report.areas():
        rules = report.rules_of(area)
        groups: dict[str, list] = {}
        for r in rules:
            groups.setdefault(r.cites[0][0] if r.cites else r.source, []).append(r)
        totals = "".join(f'<div class="tot"><span class="who">{esc(c.label)}:</span> '
                         f"{_area_totals(report, c, area)}</div>" for c in report.columns)
        standing = any(report.standing_out(r) for r in rules)
        out.append(f'<details open id="area-{esc(area)}" class="{"out" if standing else "ok"}">'
                   f'<summary><b>{esc(area)}</b> ({len(rules)} rules){totals}</summary>'
                   f'<table class="m">{head}')
        for source, members in groups.items():
            group_out = any(report.standing_out(r) for r in members)
            url = next((u for t, u in members[0].cites if t == source and u), "")
            label = f'<a href="{esc(url)}">{esc(source)}</a>' if url else esc(source)
            out.append(f'<tbody class="{"out" if group_out else "ok"}"><tr class="src"><td colspan="{n + 2}">'
                       f"{label}</td></tr>")
            for r in members:
                out.append(f'<tr class="{"out" if report.standing_out(r) else "ok"}"><td class="rid">{esc(r.id)}</td>'
                           f'<td class="sum">{esc(r.summary)}</td>'
                           + "".join(_matrix_cell(report, c, r) for c in report.columns) + "</tr>")
            out.append("</tbody>")
        out.append("</table></details>")
    out.append("</div>")
    return out


def render_html(report: Report, generated: float) -> str:
    runs = sum(len(c.runs) for c in report.columns) + len(report.crashes)
    out = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
           '<meta name="viewport" content="width=device-width, initial-scale=1">',
           "<title>mqconform compliance report</title>",
           f"<style>{STYLE}</style></head><body>",
           "<h1>mqconform compliance report</h1>",
           f"<p>Generated {esc(when(generated))} by {esc(KIT)} from {runs} result "
           f"director{'y' if runs == 1 else 'ies'}." + (" Changes are marked against a baseline." if report.baseline
                                                         else "") + " Every coloured cell leads to its evidence: "
           "a failing cell to the failure, with its minimal history and replay command.</p>",
           _legend(),
           '<h2 id="summary">Summary</h2>',
           _table([[f'<a href="#{esc(c.anchor)}">{esc(c.label)}</a>'] + [str(c.counts()[v]) for v in VERDICT_ORDER]
                   for c in report.columns], ["system"] + list(VERDICT_ORDER), cls="summary")]
    if report.deviations:
        tally = Counter(d.status for d in report.deviations)
        out.append('<p class="notice">Known deviations: ' + ", ".join(f"{tally[s]} {esc(s)}" for s in (MATCHED, NOT_SHOWN, STALE, NOT_REACHED) if tally[s])
                   + ' (<a href="#deviations">what each is and why</a>).</p>')
    if report.columns:   # (a report of crash campaigns alone has no matrix)
        out += _matrix(report)
        out.append('<h2 id="overview">Verdicts per area</h2>')
        out.append(f'<img alt="Rule verdicts per area and system" src="data:image/png;base64,{overview_png(report)}">'
                   if plots_available() else
                   f'<p class="notice">The pictures of this report are left out: they need matplotlib, '
                   f'{esc(install_hint("plots"))}.</p>')
    out += _deviations(report)
    out += _crashes(report)
    for col in report.columns:
        out += _column(report, col)
    out += ["</body></html>"]
    return "\n".join(out) + "\n"
