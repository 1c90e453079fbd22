"""``mqconform report``: compliance reports from result directories."""

from __future__ import annotations

from pathlib import Path

from conformance.cli.common import EXIT_NONCONFORMANT, EXIT_OK, UsageError
from conformance.runner.session import HarnessError


def add_parsers(sub) -> None:
    report = sub.add_parser("report", help="a compliance report from result directories")
    report.add_argument("dirs", nargs="+", type=Path, metavar="DIR", help="result directories (run, plugin, campaign)")
    report.add_argument("--format", choices=("md", "html", "json", "junit", "migration"), default=None,
                        help="default: from --out's extension (.md, .html, .json, .xml for JUnit), else md; "
                             "migration: what a broker's defaults change, from one adapter's runs with "
                             "mapping=faithful and mapping=defaults")
    report.add_argument("--out", type=Path, required=True, help="the report file to write")
    report.add_argument("--baseline", type=Path, action="append", metavar="DIR",
                        help="an earlier run's result directory (repeatable): mark new-fail / fixed / still-failing")
    report.add_argument("--known-deviations", type=Path, action="append", metavar="FILE",
                        help="a known-deviations file (TOML, repeatable): failures it explains are shown as "
                             "known deviations and do not fail the report; entries the runs pass are stale")
    report.add_argument("--report-only", action="store_true", help="exit 0 even when rules fail")



def cmd_report(args, out) -> int:
    import reports

    try:
        report = reports.make_report(args.dirs, args.baseline, args.known_deviations)
    except reports.ReportInputError as exc:
        raise UsageError(str(exc)) from None
    if args.format is None:
        args.format = {".html": "html", ".htm": "html", ".json": "json", ".xml": "junit",
                       ".junit": "junit"}.get(args.out.suffix.lower(), "md")
    from reports.migration import MigrationInputError

    try:
        text = reports.render(report, args.format)
    except MigrationInputError as exc:
        raise UsageError(str(exc)) from None
    try:
        reports.write_atomically(args.out, text)
    except OSError as exc:
        raise UsageError(f"cannot write {args.out}: {exc.strerror}") from None
    counts = [f"{c.label}: " + ", ".join(f"{n} {v}" for v, n in c.counts().items() if n) for c in report.columns]
    counts += [f"{c.label}, crash campaign: " + (", ".join(
        f"{r.rule} {r.broke} of {r.schedules} schedules" + (" (known deviation)" if r.deviation else "")
        for r in c.rows) or "no message out of place") + "".join(
        f"; {rule} {n} of {c.schedules} schedules before the drain" for rule, n in sorted(c.departures.items()))
        for c in report.crashes]
    out.write(f"Report ({args.format}): {args.out}\n" + "".join(f"  {line}\n" for line in counts))
    for d in report.stale:
        why = f": {d.note}" if d.note else ""
        out.write(f"  stale known deviation: {d.deviation.rule} on {d.system} now {d.verdict}{why} "
                  f"({d.deviation.origin})\n")
    for d in report.unmatched:
        out.write(f"  known deviation {d.deviation.rule} on {d.system} does not explain its failure ({d.note}; "
                  f"{d.deviation.origin}): the failure stands\n")
    problems = _not_evidence(report)
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise HarnessError(f"{problems[0]}{more}: the report shows it, but its verdicts there are no evidence")
    return EXIT_NONCONFORMANT if report.any_failure and not args.report_only else EXIT_OK


def _not_evidence(report) -> list[str]:
    """Each result directory of ``report`` that recorded an error, or asked for an area no case reached
    (the rule every command that gives verdicts follows: such verdicts exit 2)."""
    from conformance.records.results import vacuity

    out = []
    for column in report.columns:
        for run in column.runs:
            meta = run.meta
            stopped = meta.get("interrupted") or []
            why = meta.get("error") or (
                f"interrupted (no verdict in area {', '.join(stopped)})" if stopped else None) or vacuity(
                run.rows, meta.get("areas", []), meta.get("examples_run", 0))
            if why:
                out.append(f"{run.path}: {why}")
    return out




COMMANDS = {"report": cmd_report}
