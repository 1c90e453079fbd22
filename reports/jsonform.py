"""The report as JSON, for tools."""

from __future__ import annotations

import json

from conformance import __version__
from reports.common import dependencies, rule_dependencies
from reports.matrix import ONE_OF, Report

REPORT_FORMAT, REPORT_VERSION = "mqconform-report", 1


def report_data(report: Report, generated: float) -> dict:
    return {
        "format": REPORT_FORMAT,
        "version": REPORT_VERSION,
        "kit_version": __version__,
        "generated": generated,
        "baseline": report.baseline,
        "rules": [{"rule": r.id, "area": r.area, "source": r.source, "summary": r.summary,
                   "cites": [{"text": text, "url": url} for text, url in r.cites]} for r in report.rules],
        "columns": [{
            "label": col.label,
            "claim": col.meta,
            "counts": col.counts(),
            "cells": {rid: {"verdict": c.verdict, "exercised": c.exercised, "checked": c.checked,
                            "failed": c.failed, "change": c.change,
                            **({"one_of": [list(o) for o in c.one_of]} if c.verdict == ONE_OF else {}),
                            "failures": [path for path, _ in c.failures],
                            **({"deviation": {"seen": c.deviation.seen, "reason": c.deviation.reason}}
                               if c.deviation else {}),
                            **({"classes": c.classes} if c.classes else {}),
                            **({"classes_not_expressible": c.inexpressible} if c.inexpressible else {}),
                            **({"depends_on": on[rid]} if rid in on else {})}
                      for rid, c in col.cells.items()},
            "depends_on": dependencies(col),
            "failures": [{"file": path, **failure.to_json()} for path, failure in col.failures],
        } for col, on in ((col, rule_dependencies(col)) for col in report.columns)],
        # What the matrix shows: per rule, each system's verdict ("not run" where its runs left the
        # area out), and whether the rule stands out (some system fails it, or the systems disagree).
        "matrix": [{"rule": r.id, "area": r.area, "standing_out": report.standing_out(r),
                    "shown": {col.label: report.shown(col, r) for col in report.columns}} for r in report.rules],
        "area_totals": {area: {col.label: (report.area_counts(col, area) if report.area_run(col, area) else "not run")
                               for col in report.columns} for area in report.areas()},
        "deviations": [{"rule": d.deviation.rule, "adapter": d.deviation.adapter, "system": d.system,
                        "status": d.status, "verdict": d.verdict, "seen": d.deviation.seen,
                        "reason": d.deviation.reason,
                        **({"upstream": list(d.deviation.upstream)} if d.deviation.upstream else {}),
                        **({"affects": d.deviation.affects} if d.deviation.affects else {})}
                       for d in report.deviations],
        "crash_campaigns": [{
            "system": c.label, "directory": c.path, "seed": c.seed, "schedules": c.schedules, "departed": c.departed,
            "departures": c.departures, "departure_replays": c.departure_replays, "interrupted": c.interrupted,
            "classes": c.classes,
            "rules": [{"rule": r.rule, "schedules": r.broke, "frequency": r.frequency, "interval": list(r.interval),
                       **({"replay": r.replay} if r.replay else {}),
                       **({"deviation": {"seen": r.deviation.seen,
                                         **({"upstream": list(r.deviation.upstream)} if r.deviation.upstream else {}),
                                         **({"affects": r.deviation.affects} if r.deviation.affects else {})}}
                          if r.deviation else {})}
                      for r in c.rows]} for c in report.crashes],
    }


def render_json(report: Report, generated: float) -> str:
    return json.dumps(report_data(report, generated), indent=1, sort_keys=True) + "\n"
