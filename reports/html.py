"""The report as one self-contained HTML file: no network access needed, every value escaped."""

from __future__ import annotations

import html
import re

from reports.common import (KIT, VERDICT_ORDER, claim_rows, expected_vs_observed, failure_note,
                            failure_rows, replay_command, title, when)
from reports.deviations import STALE
from reports.matrix import Column, Report
from reports.plots import COLOURS, campaign_png, coverage_png, shares_png

_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]")

STYLE = """
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:2em;color:#212121;max-width:110em}
table{border-collapse:collapse;margin:.5em 0 1.5em}
th,td{border:1px solid #ccc;padding:.25em .5em;text-align:left;vertical-align:top;
      overflow-wrap:anywhere;max-width:60em}
th{background:#f0f0f0}
td.v{font-weight:600;white-space:nowrap}
td:first-child{white-space:nowrap}
.pass{color:#2e7d32}.fail{color:#c62828}.not-applicable{color:#757575}.not-exercised{color:#a36a00}
.indeterminate{color:#6a1b9a}.error{color:#37474f}.known-deviation{color:#ef6c00}.stale{color:#c62828}
tr.broke{background:#ffebee}
code,pre{font-family:ui-monospace,monospace;font-size:90%}
pre{background:#f7f7f7;padding:.5em;overflow-x:auto;white-space:pre-wrap;overflow-wrap:anywhere}
.change{font-size:85%;color:#555}
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


def _table(rows, headers=None, row_class=None) -> str:
    out = ["<table>"]
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
    out += ["<h3>Areas</h3>", _table(
        [[esc(a)] + [str(report.area_counts(col, a)[v]) for v in VERDICT_ORDER] for a in report.areas()],
        ["area"] + list(VERDICT_ORDER))]
    out.append(f'<img alt="Rule verdicts per area for {esc(col.label)}" '
               f'src="data:image/png;base64,{coverage_png(report, col)}">')
    campaign = campaign_png(col)
    if campaign:
        out.append(f'<img alt="Campaign throughput and distinct failures for {esc(col.label)}" '
                   f'src="data:image/png;base64,{campaign}">')
    shares = shares_png(col)
    if shares:
        out.append(f'<img alt="Cluster destination shares for {esc(col.label)}" src="data:image/png;base64,{shares}">')
    failure_ids = {id(f): n for n, (_, f) in enumerate(col.failures, start=1)}
    out.append("<h3>Rules</h3>")
    for area in report.areas():
        rows = []
        for r in report.rules_of(area):
            cell = col.cells.get(r.id)
            if cell is None:
                continue
            links = " ".join(f'<a href="#{esc(col.anchor)}-failure-{failure_ids[id(f)]}">failure '
                             f'{failure_ids[id(f)]}</a>' for _, f in cell.failures)
            why = cell.reason or (cell.deviation.seen if cell.deviation else "")
            rows.append([f'<span id="{esc(col.anchor)}-{esc(r.id)}">{esc(r.id)}</span>', _source(r),
                         esc(r.summary), _verdict(col, r.id, link=False) + (" " + links if links else "")
                         + (f'<br><span class="reason">{esc(why)}</span>' if why else ""),
                         str(cell.exercised)])
        if rows:
            out += [f"<h4>{esc(area)}</h4>", _table(rows, ["rule", "source", "summary", "verdict", "exercised"])]
    if col.failures:
        out.append("<h3>Failures</h3>")
        for n, (path, failure) in enumerate(col.failures, start=1):
            steps = failure_rows(failure)
            note = failure_note(col, failure)
            out += [f'<h4 id="{esc(col.anchor)}-failure-{n}">Failure {n}: {esc(title(failure))}'
                    + (f' <span class="known-deviation">({esc(note)})</span>' if note else "") + "</h4>",
                    _plain_table(steps, ["", "#", "operation", "observed"],
                                 row_class=lambda i, s=steps: "broke" if s[i][0] else ""),
                    f"<p>At step {failure.mismatch.index + 1}:</p>",
                    _plain_table(expected_vs_observed(failure)),
                    f"<p>Replay:</p><pre>{esc(replay_command(path))}</pre>"]
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
        rows.append([f'<a href="#{esc(col.anchor)}-{esc(rule)}">{esc(rule)}</a>', esc(d.system), status,
                     esc(d.deviation.seen), esc(d.deviation.reason)])
    return ['<h2 id="deviations">Known deviations</h2>',
            "<p>Departures explained in a known-deviations file: <em>matched</em> (the system still departs), "
            "<em>stale</em> (the system now conforms: the entry should go), <em>not reached</em> (these runs did "
            "not reach the rule).</p>",
            _table(rows, ["rule", "system", "status", "behaviour seen", "why"])]


def render_html(report: Report, generated: float) -> str:
    runs = sum(len(c.runs) for c in report.columns)
    out = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
           "<title>mqconform compliance report</title>",
           f"<style>{STYLE}</style></head><body>",
           "<h1>mqconform compliance report</h1>",
           f"<p>Generated {esc(when(generated))} by {esc(KIT)} from {runs} result "
           f"director{'y' if runs == 1 else 'ies'}." + (" Changes are marked against a baseline." if report.baseline
                                                         else "") + "</p>",
           "<h2>Summary</h2>",
           _table([[f'<a href="#{esc(c.anchor)}">{esc(c.label)}</a>'] + [str(c.counts()[v]) for v in VERDICT_ORDER]
                   for c in report.columns], ["system"] + list(VERDICT_ORDER))]
    out += _deviations(report)
    out.append('<h2 id="matrix">Rules by system</h2>')
    for area in report.areas():
        rows = [[esc(r.id), esc(r.summary)] + [_verdict(col, r.id) for col in report.columns]
                for r in report.rules_of(area)]
        out += [f"<h3>{esc(area)}</h3>",
                _table(rows, ["rule", "summary"] + [c.label for c in report.columns])]
    for col in report.columns:
        out += _column(report, col)
    legend = " ".join(f'<span style="color:{c}">&#9632;</span> {esc(v)}' for v, c in COLOURS.items())
    out += [f"<p>{legend}</p>", "</body></html>"]
    return "\n".join(out) + "\n"
