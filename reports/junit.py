"""The report as JUnit XML, one test case per rule and system, for CI dashboards."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from conformance.records.render import render_failure
from reports.matrix import DEPARTING, ERROR, PASS, Report

_XML_INVALID = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _text(value) -> str:
    """Text XML 1.0 can carry: characters it forbids are shown as escapes."""
    return _XML_INVALID.sub(lambda m: f"\\x{ord(m.group()):02x}", str(value))


def render_junit(report: Report) -> str:
    suites = ET.Element("testsuites", name="mqconform")
    totals = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    for col in report.columns:
        suite = ET.SubElement(suites, "testsuite", name=_text(col.label))
        counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
        for rule in report.rules:
            cell = col.cells.get(rule.id)
            if cell is None:
                continue
            counts["tests"] += 1
            case = ET.SubElement(suite, "testcase", classname=f"mqconform.{rule.area}",
                                 name=_text(f"{rule.id} {rule.summary}"))
            if cell.verdict in DEPARTING:
                counts["failures"] += 1
                broken = f"{rule.id} broken" + (f": {cell.why}" if cell.why else "")
                failure = ET.SubElement(case, "failure", message=_text(broken), type="non-conformance")
                failure.text = _text("\n\n".join(render_failure(f) + f"\n\nReplay: mqconform replay {p}"
                                                 for p, f in cell.failures) or "broken")
            elif cell.verdict == ERROR:
                counts["errors"] += 1
                ET.SubElement(case, "error", message=_text("; ".join(col.meta["errors"]) or "harness error"))
            elif cell.verdict != PASS:
                counts["skipped"] += 1
                why = cell.deviation.seen if cell.deviation else cell.reason or (
                    "input classes never reached: " + "; ".join(cell.unreached) if cell.unreached else "")
                ET.SubElement(case, "skipped", message=_text(f"{cell.verdict}: {why}" if why else cell.verdict))
        for key, value in counts.items():
            suite.set(key, str(value))
            totals[key] += value
    for crash in report.crashes:
        # a crash campaign: one case per rule its schedules broke, and per rule a schedule departed at
        suite = ET.SubElement(suites, "testsuite", name=_text(f"{crash.label}, crash campaign"))
        counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
        for row in crash.rows:
            counts["tests"] += 1
            case = ET.SubElement(suite, "testcase", classname="mqconform.crash", name=_text(f"{row.rule} after crashes"))
            if row.deviation is not None:
                counts["skipped"] += 1
                ET.SubElement(case, "skipped", message=_text(f"known deviation, {row.text}: {row.deviation.seen}"))
            else:
                counts["failures"] += 1
                failure = ET.SubElement(case, "failure", message=_text(f"{row.rule} broken in {row.text}"),
                                        type="non-conformance")
                failure.text = _text(f"Its breaking schedule, cut down: {row.replay} (mqconform crash --replay, with "
                                     f"the campaign's adapter and options)" if row.replay else row.text)
        for rule, n in sorted(crash.departures.items()):
            counts["tests"] += 1
            counts["failures"] += 1
            case = ET.SubElement(suite, "testcase", classname="mqconform.crash", name=_text(f"{rule} before the drain"))
            failure = ET.SubElement(case, "failure", type="non-conformance",
                                    message=_text(f"{rule}: {n} of {crash.schedules} schedules departed"))
            if rule in crash.departure_replays:
                failure.text = _text(f"Its first departing schedule, cut down: {crash.departure_replays[rule]} "
                                     f"(mqconform crash --replay, with the campaign's adapter and options)")
        for key, value in counts.items():
            suite.set(key, str(value))
            totals[key] += value
    for key, value in totals.items():
        suites.set(key, str(value))
    ET.indent(suites)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suites, encoding="unicode") + "\n"
