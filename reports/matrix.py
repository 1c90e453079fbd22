"""The report's content, independent of its format: a column per system under test, a row per rule.

Result directories of the same system (the same adapter with the same faults)
are merged into one column: counts add up, and a rule's verdict is the most
telling of its verdicts (fail, then error, pass, partly exercised, indeterminate, not exercised,
not applicable).  Every output format renders this one structure, so they agree.
"""

from __future__ import annotations

from pathlib import Path

import attrs

from conformance.records.history import Failure
from conformance.records.results import (ERROR, FAIL, INDETERMINATE, NOT_APPLICABLE, NOT_EXERCISED, ONE_OF, PARTLY,
                                         PASS)
from reference_model.rules import AREAS, RULES
from reports.deviations import MATCHED, NOT_REACHED, NOT_SHOWN, STALE, UNMATCHED, DeviationStatus, KnownDeviation
from reports.inputs import CrashRun, RunResult

#: A failure the known-deviations file explains: reported apart from pass and from an unexplained failure.
KNOWN_DEVIATION = "known deviation"
#: Every verdict a report shows, in the order it shows them.
VERDICTS = (PASS, FAIL, ONE_OF, KNOWN_DEVIATION, PARTLY, NOT_APPLICABLE, NOT_EXERCISED, INDETERMINATE, ERROR)
#: Which verdict wins when several runs of one system disagree.
PRECEDENCE = (FAIL, ONE_OF, ERROR, PASS, PARTLY, INDETERMINATE, NOT_EXERCISED, NOT_APPLICABLE)
#: Verdicts that say the system departs from the rule (or, *one of*, from it or another named with it).
DEPARTING = (FAIL, ONE_OF)
NEW_FAIL, FIXED, STILL_FAILING = "new-fail", "fixed", "still-failing"
#: Shown where a system's runs left a rule's area out: no verdict, and not a rule of zero counts.
NOT_RUN = "not run"


@attrs.define
class Cell:
    verdict: str
    exercised: int = 0
    checked: int = 0
    failed: int = 0
    #: Failures (with their replay files) that name this rule.
    failures: list = attrs.Factory(list)
    #: Against the baseline: new-fail, fixed, still-failing, or "".
    change: str = ""
    #: Why the system cannot express the rule (verdict "not applicable"), as its adapter says.
    reason: str = ""
    #: The known deviation that explains this rule's failure (verdict "known deviation"), if any.
    deviation: KnownDeviation | None = None
    #: Checked steps per input class the rule declares (empty: it declares none).
    classes: dict = attrs.Factory(dict)
    #: Input classes only operations the system cannot express would have reached (not counted as unreached).
    not_expressible: set = attrs.Factory(set)
    #: Verdict *one of*: the other rules of each history that breaks this rule or one of them.
    one_of: list = attrs.Factory(list)
    #: What the verdict would be without the histories that break one of several rules.
    otherwise: str = ""

    @property
    def why(self) -> str:
        """What the verdict rests on, where it needs saying: why the rule is not applicable, or which rules a
        verdict of *one of* is shared with."""
        if self.verdict == ONE_OF and self.one_of:
            return ("this rule is broken, or " + "; or ".join(" or ".join(o) for o in self.one_of)
                    + " (each explains the history, alone or with the rules its failure shows broken)")
        return self.reason

    @property
    def unreached(self) -> list[str]:
        """The rule's input classes no checked step was in (the rule was not fully exercised), those the system
        cannot express apart."""
        return [name for name, n in self.classes.items() if not n and name not in self.not_expressible]

    @property
    def inexpressible(self) -> list[str]:
        """The rule's input classes no checked step was in because the system cannot express them."""
        return [name for name, n in self.classes.items() if not n and name in self.not_expressible]


@attrs.define
class Column:
    label: str
    runs: list[RunResult]
    cells: dict[str, Cell] = attrs.Factory(dict)
    failures: list[tuple[str, Failure]] = attrs.Factory(list)
    #: The races its runs of concurrent cases recorded (race file, its rules, the race as the sequential departure
    #: of its longest order: conformance.records.races.race_failure, None where that cannot be said), matched
    #: against known deviations as failures are.
    race_failures: list[tuple[str, tuple[str, ...], Failure | None]] = attrs.Factory(list)

    @property
    def adapter(self) -> str:
        return self.runs[0].adapter

    @property
    def anchor(self) -> str:
        return "col-" + "".join(ch if ch.isalnum() else "-" for ch in self.label.lower()).strip("-")

    def partly_exercised(self, rules: list["RuleInfo"]) -> list[tuple["RuleInfo", Cell]]:
        """Rules with a verdict from checked steps (partly exercised, known deviation) but input classes never
        reached."""
        return [(r, self.cells[r.id]) for r in rules if r.id in self.cells and self.cells[r.id].unreached
                and self.cells[r.id].verdict in (PARTLY, KNOWN_DEVIATION)]

    def counts(self) -> dict[str, int]:
        out = {v: 0 for v in VERDICTS}
        for cell in self.cells.values():
            out[cell.verdict] += 1
        return out

    @property
    def meta(self) -> dict:
        """What the claim covers, merged over the column's runs."""
        first = self.runs[0].meta
        return {
            "adapter": first["adapter"],
            "system": _merged([r.meta.get("system", {}) for r in self.runs]),
            "capabilities": first.get("capabilities", {}),
            "kit_version": first.get("kit_version"),
            "hypothesis_version": first.get("hypothesis_version"),
            "seeds": sorted({r.meta.get("seed") for r in self.runs if r.meta.get("seed") is not None}),
            "examples": sorted({r.meta.get("examples") for r in self.runs if r.meta.get("examples")}),
            "examples_run": sum(r.meta.get("examples_run", 0) for r in self.runs),
            "steps_run": sum(r.meta.get("steps_run", 0) for r in self.runs),
            "areas": sorted({a for r in self.runs for a in r.meta.get("areas", [])}, key=_area_key),
            "started": min((r.meta.get("started") or 0 for r in self.runs), default=0),
            "ended": max((r.meta.get("ended") or 0 for r in self.runs), default=0),
            "errors": [r.meta["error"] for r in self.runs if r.meta.get("error")],
            # areas a run was stopped in (Ctrl-C, a signal): their rules have "error", no verdict
            "interrupted": sorted({a for r in self.runs for a in r.meta.get("interrupted") or []}, key=_area_key),
            "directories": [str(r.path) for r in self.runs],
            "not_expressible": _summed([r.meta.get("not_expressible") or {} for r in self.runs]),
            "declined": _summed([r.meta.get("declined") or {} for r in self.runs]),
            # runs of concurrent cases (run --concurrency): their clients per case, and the race files
            "concurrency": sorted({r.meta["concurrency"] for r in self.runs if r.meta.get("concurrency")}),
            "races": [f"{r.path}/{race}" for r in self.runs for race in r.meta.get("races") or ()],
            # recorded counterexamples given to the runs (run --recorded), each with what its replay showed
            "recorded": [e for r in self.runs for e in r.meta.get("recorded") or ()],
        }


def _summed(counts: list[dict]) -> dict:
    """Counters of several runs added up (entries that are not counts are left out)."""
    out: dict = {}
    for c in counts:
        if isinstance(c, dict):
            for key, n in c.items():
                if isinstance(n, int) and not isinstance(n, bool):
                    out[str(key)] = out.get(str(key), 0) + n
    return out


def _merged(described: list[dict]) -> dict:
    """The systems' descriptions as one: a value the runs differ in lists each (a nemesis run beside a
    plain one shows "nemesis: off, on")."""
    out: dict = {}
    for d in described:
        for key, value in d.items():
            out.setdefault(key, [])
            if value not in out[key]:
                out[key].append(value)
    return {k: v[0] if len(v) == 1 else ", ".join(map(str, v)) for k, v in out.items()}


@attrs.define
class RuleInfo:
    id: str
    area: str
    source: str
    summary: str
    #: (text, address) per citation; address "" where IBM publishes none.
    cites: tuple[tuple[str, str], ...] = ()

    @classmethod
    def from_row(cls, row: dict) -> "RuleInfo":
        cites = []
        for c in row.get("cites") or ():
            if isinstance(c, dict) and isinstance(c.get("text"), str):
                url = c.get("url") if isinstance(c.get("url"), str) else ""
                cites.append((c["text"], url if url.startswith(("https://", "http://")) else ""))
        return cls(row["rule"], row["area"], row["source"], row["summary"],
                   tuple(cites) or ((str(row["source"]), ""),))


@attrs.define
class Report:
    columns: list[Column]
    rules: list[RuleInfo]
    baseline: bool = False
    #: Each known deviation for an adapter the report shows, per system: matched, stale or not reached.
    deviations: list[DeviationStatus] = attrs.Factory(list)
    #: The crash campaigns shown (``mqconform crash`` result directories), each rule judged by frequency.
    crashes: list["CrashCampaign"] = attrs.Factory(list)

    @property
    def stale(self) -> list[DeviationStatus]:
        return [d for d in self.deviations if d.status == STALE]

    @property
    def unmatched(self) -> list[DeviationStatus]:
        """Entries whose rule fails in a departure they do not describe (the failure stays a failure)."""
        return [d for d in self.deviations if d.status == UNMATCHED]

    @property
    def any_failure(self) -> bool:
        return any(c.verdict in DEPARTING for col in self.columns for c in col.cells.values()) or any(
            row.deviation is None for crash in self.crashes for row in crash.rows) or any(
            crash.departures for crash in self.crashes)

    def areas(self) -> list[str]:
        return sorted({r.area for r in self.rules}, key=_area_key)

    def rules_of(self, area: str) -> list[RuleInfo]:
        return [r for r in self.rules if r.area == area]

    def shown(self, column: Column, rule: RuleInfo) -> str:
        """What the matrix shows for ``rule`` in ``column``: its verdict, *not run* where the column's
        runs left the rule's area out, or "" where a run of the area gave no verdict at all."""
        cell = column.cells.get(rule.id)
        if cell is not None:
            return cell.verdict
        return NOT_RUN if rule.area not in column.meta["areas"] else ""

    def standing_out(self, rule: RuleInfo) -> bool:
        """Whether some system fails ``rule`` (or breaks on it), or the systems that ran it and can express
        it disagree on it (a rule one system did not run or cannot express is no disagreement)."""
        shown = [self.shown(c, rule) for c in self.columns]
        judged = {v for v in shown if v not in (NOT_RUN, NOT_APPLICABLE, "")}
        return any(v in (FAIL, ONE_OF, ERROR, KNOWN_DEVIATION) for v in shown) or len(judged) > 1

    def area_run(self, column: Column, area: str) -> bool:
        return area in column.meta["areas"] or any(r.id in column.cells for r in self.rules_of(area))

    def area_counts(self, column: Column, area: str) -> dict[str, int]:
        out = {v: 0 for v in VERDICTS}
        for r in self.rules_of(area):
            cell = column.cells.get(r.id)
            if cell:
                out[cell.verdict] += 1
        return out


def _area_key(area: str) -> tuple[int, str]:
    return (AREAS.index(area) if area in AREAS else len(AREAS), area)


def _merge_verdict(a: str, b: str) -> str:
    return min(a, b, key=PRECEDENCE.index)


@attrs.frozen
class CrashRow:
    """A rule a crash campaign's schedules broke: how many of how many, with Wilson's 95% interval of its rate."""

    rule: str
    broke: int
    schedules: int
    frequency: float
    interval: tuple[float, float]
    #: The file of its breaking schedule cut down (``mqconform crash --replay`` runs it), or "" where not cut down.
    replay: str = ""
    #: The known deviation of the adapter that names the rule (shown beside the frequency, with the system's own
    #: tracker where it cites one), or None.
    deviation: KnownDeviation | None = None

    @property
    def text(self) -> str:
        """"3 of 24 schedules (13%, 95% interval 4%-31%)"."""
        low, high = self.interval
        return (f"{self.broke} of {self.schedules} schedules ({self.frequency:.0%}, 95% interval "
                f"{low:.0%}-{high:.0%})")


@attrs.frozen
class CrashCampaign:
    """A crash campaign's results as a report shows them."""

    label: str
    path: str
    seed: int | None
    schedules: int
    departed: int
    interrupted: bool
    classes: dict
    rows: tuple[CrashRow, ...]
    #: Rules named where a schedule departed before its drain, with how many schedules.
    departures: dict
    #: Per departure verdict whose first schedule was cut down, that schedule's file (``mqconform crash --replay``).
    departure_replays: dict = attrs.Factory(dict)


#: What a report says of a crash campaign before its figures.
CRASH_INTRO = ("Schedules of puts and gets around restarts (kills where the system can be killed, a commit sometimes "
               "made while it is paused), each followed by a drain of the queue in which every message is accounted "
               "for against what MQ keeps (`mqconform crash`, docs/nemesis.md). A rule is judged by how many "
               "schedules broke it, with Wilson's 95% interval of its true rate: bugs of this kind show only at some "
               "crashes. A known deviation naming the rule for this adapter is shown beside it, with the system's "
               "own tracker where the entry cites it; a breaking schedule cut down to its fewest calls is run again "
               "with `mqconform crash --replay FILE --tries N`.")


def crash_rows(crash: "CrashCampaign") -> list[list[str]]:
    """A crash campaign's rules as table rows: rule, summary, schedules, known deviation, replay file."""
    out = []
    for row in crash.rows:
        known = ""
        if row.deviation is not None:
            known = "known deviation: " + row.deviation.seen + (
                " " + row.deviation.upstream_text() if row.deviation.upstream else "")
        out.append([row.rule, RULES[row.rule].summary if row.rule in RULES else "", row.text, known, row.replay])
    return out


def crash_claim(crash: "CrashCampaign") -> str:
    """One sentence: what ran, and what departed before its drain."""
    classes = ", ".join(f"{n} {cls}" for cls, n in crash.classes.items() if n) or "none"
    departed = (f"; {crash.departed} departed before their drain (" + ", ".join(
        f"{rule}: {n}" + (f", cut down in {crash.departure_replays[rule]}" if rule in crash.departure_replays else "")
        for rule, n in sorted(crash.departures.items())) + ")") if crash.departed else ""
    return (f"{crash.schedules} schedules" + (f", seed {crash.seed}" if crash.seed is not None else "")
            + (", interrupted" if crash.interrupted else "") + f", from {crash.path}; messages: {classes}{departed}.")


def crash_campaign(run: CrashRun, deviations: tuple[KnownDeviation, ...] = ()) -> CrashCampaign:
    data = run.data
    rows = []
    for rule, entry in sorted(data["rules"].items(), key=lambda kv: (-kv[1]["schedules"], kv[0])):
        interval = entry.get("interval") or (0.0, 1.0)
        replay = str(Path(run.path) / entry["replay"]) if entry.get("replay") else ""
        known = next((d for d in deviations if d.rule == rule and d.adapter == run.adapter), None)
        rows.append(CrashRow(rule=rule, broke=entry["schedules"], schedules=data["schedules"],
                             frequency=float(entry.get("frequency") or 0.0),
                             interval=(float(interval[0]), float(interval[1])), replay=replay, deviation=known))
    return CrashCampaign(label=run.label, path=str(run.path), seed=data.get("seed"), schedules=data["schedules"],
                         departed=int(data.get("departed") or 0), interrupted=bool(data.get("interrupted")),
                         classes=dict(data["classes"]), rows=tuple(rows),
                         departures={r: e.get("schedules", 0) for r, e in (data.get("departures") or {}).items()},
                         departure_replays={r: str(Path(run.path) / e["replay"])
                                            for r, e in (data.get("departures") or {}).items() if e.get("replay")})


def build(runs: list[RunResult], baseline: list[RunResult] | None = None,
          deviations: tuple[KnownDeviation, ...] = (), crashes: list[CrashRun] | None = None) -> Report:
    columns: dict[str, Column] = {}
    infos: dict[str, RuleInfo] = {}
    for run in runs:
        col = columns.setdefault(run.label, Column(label=run.label, runs=[]))
        col.runs.append(run)
        for row in run.rows:
            infos.setdefault(row["rule"], RuleInfo.from_row(row))
            cell = col.cells.get(row["rule"])
            otherwise = str(row.get("otherwise") or "") if row["verdict"] == ONE_OF else row["verdict"]
            one_of = [tuple(o) for o in row.get("one_of") or () if isinstance(o, list)]
            if cell is None:
                col.cells[row["rule"]] = Cell(verdict=row["verdict"], exercised=row["exercised"],
                                              checked=row["checked"], failed=row["failed"],
                                              reason=str(row.get("not_applicable") or ""),
                                              classes=dict(row.get("classes") or {}),
                                              not_expressible=set(row.get("classes_not_expressible") or ()),
                                              one_of=one_of, otherwise=otherwise)
            else:
                cell.verdict = _merge_verdict(cell.verdict, row["verdict"])
                cell.one_of += [o for o in one_of if o not in cell.one_of]
                cell.otherwise = _merge_verdict(cell.otherwise, otherwise) if cell.otherwise and otherwise \
                    else cell.otherwise or otherwise
                cell.exercised += row["exercised"]
                cell.checked += row["checked"]
                cell.failed += row["failed"]
                for name, n in (row.get("classes") or {}).items():
                    cell.classes[name] = cell.classes.get(name, 0) + n
                cell.not_expressible |= set(row.get("classes_not_expressible") or ())
        for cell in col.cells.values():
            # runs of one system add up their input classes: a pass needs every class reached in one of them
            if cell.verdict in (PASS, PARTLY):
                cell.verdict = PARTLY if cell.unreached else PASS
        for path, failure in run.failures:
            col.failures.append((str(path), failure))
            for rid in failure.blamed:
                if rid in col.cells:
                    col.cells[rid].failures.append((str(path), failure))
        col.race_failures += _race_failures(run)
    for col in columns.values():
        _decide(col)
    order = {r.id: i for i, r in enumerate(RULES.all())}
    rules = sorted(infos.values(), key=lambda r: (_area_key(r.area), order.get(r.id, len(order)), r.id))
    report = Report(columns=list(columns.values()), rules=rules,
                    crashes=[crash_campaign(c, tuple(deviations)) for c in crashes or ()])
    if baseline is not None:
        _diff(report, build(baseline))
    _apply(report, deviations)
    return report


def _race_failures(run: RunResult) -> list[tuple[str, tuple[str, ...], Failure | None]]:
    """The races ``run`` recorded: (race file, its rules, the race as the sequential departure of its longest
    order, or None where that cannot be said, when no deviation can explain it).  A race file that cannot be read
    is left out here (the report says so where it shows the race)."""
    from conformance.records.history import ReplayFileError
    from conformance.records.races import load_race, race_failure

    out: list[tuple[str, tuple[str, ...], Failure | None]] = []
    for name in run.meta.get("races") or ():
        path = Path(run.path) / name
        try:
            race = load_race(path)
        except ReplayFileError:
            continue
        out.append((str(path), tuple(race.rules), race_failure(race)))
    return out


def _decide(col: Column, broken: tuple[str, ...] = (FAIL,), only: set[str] | None = None) -> None:
    """Runs of one system merged: a rule that one run leaves *one of* several, and another shows broken, explains
    the first run's history itself; the others named with it keep the verdict their own evidence gives.
    ``broken``: the verdicts that show a rule broken; ``only``: the rules to decide (default: all)."""
    failed = {rid for rid, cell in col.cells.items() if cell.verdict in broken}
    for rid, cell in col.cells.items():
        if cell.verdict != ONE_OF or only is not None and rid not in only:
            continue
        cell.one_of = [o for o in cell.one_of if not failed & set(o)]
        if cell.one_of:
            continue
        # every history that named it is explained by a rule shown broken: not failed by them
        cell.verdict = cell.otherwise or NOT_EXERCISED
        if cell.verdict in (PASS, PARTLY):
            cell.verdict = PARTLY if cell.unreached else PASS
        cell.failures = [(p, f) for p, f in cell.failures
                         if not (f.one_of and failed & set(f.blamed) or rid in f.either and failed & set(f.either))]


def _apply(report: Report, deviations: tuple[KnownDeviation, ...]) -> None:
    """Mark each failure a known deviation explains; say of every deviation for a shown adapter how it stands."""
    for col in report.columns:
        mine = [d for d in deviations if d.adapter == col.adapter]
        for rule in dict.fromkeys(d.rule for d in mine):
            _apply_rule(report, col, rule, [d for d in mine if d.rule == rule])
        # a rule named with one a known deviation explains (the entry's reading of the same histories) is not
        # failed by them; one with entries of its own was judged by them
        _decide(col, broken=(FAIL, KNOWN_DEVIATION), only=set(col.cells) - {d.rule for d in mine})


def _apply_rule(report: Report, col: Column, rule: str, devs: list[KnownDeviation]) -> None:
    """The deviations of one rule for one system: its failures are known only if each is one of them."""
    cell = col.cells.get(rule)
    verdict = cell.verdict if cell else NOT_EXERCISED
    failures: list[tuple[str, Failure | None]] = [
        (f"failure {n}", failure) for n, (_, failure) in enumerate(col.failures, start=1) if rule in failure.blamed]
    # a race of concurrent cases breaking the rule is a failure too: as the departure of its longest order
    failures += [(f"race {Path(path).name}", failure) for path, rules, failure in col.race_failures
                 if rule in rules]
    # each failure blamed on the rule must be a behaviour one of the entries describes
    matched = {n: next((d for d in devs if not d.stale_because and f is not None and d.why_not(f) is None), None)
               for n, f in failures}
    unexplained = [(n, f) for n, f in failures if matched[n] is None]
    for dev in devs:
        note = ""
        if verdict in DEPARTING:
            mine = [n for n, d in matched.items() if d is dev]
            status = MATCHED if mine and not unexplained else UNMATCHED
            if unexplained:
                note = "; ".join(f"{n}: {dev.why_not(f) if f is not None else 'its departure cannot be said'}"
                                 for n, f in unexplained)
            elif not mine:
                note = ("no recorded failure shows it" if not failures
                        else "the rule's failures are other entries' behaviours")
                status = NOT_SHOWN if failures and dev.counterexample else status
        elif verdict in (PASS, PARTLY):
            status = NOT_SHOWN if dev.counterexample else STALE
        else:
            status = NOT_REACHED
        if dev.stale_because:   # it explains nothing (a failure of its rule stands), and should go
            status, note = STALE, dev.stale_because
        report.deviations.append(DeviationStatus(deviation=dev, system=col.label, status=status,
                                                 verdict=verdict, note=note))
    if verdict in DEPARTING and failures and not unexplained:
        cell.verdict, cell.deviation = KNOWN_DEVIATION, matched[failures[0][0]]


def _diff(report: Report, base: Report) -> None:
    """Mark each failing or formerly failing rule against the baseline's column for the same system."""
    report.baseline = True
    by_label = {c.label: c for c in base.columns}
    for col in report.columns:
        old = by_label.get(col.label)
        if old is None and len(base.columns) == 1 and len(report.columns) == 1:
            old = base.columns[0]
        for rid, cell in col.cells.items():
            was = old.cells.get(rid).verdict if old and rid in old.cells else None
            if cell.verdict == FAIL:
                cell.change = STILL_FAILING if was == FAIL else NEW_FAIL
            elif was == FAIL:
                cell.change = FIXED


__all__ = ["Report", "Column", "Cell", "build", "PASS", "PARTLY", "FAIL", "ONE_OF", "DEPARTING", "ERROR", "INDETERMINATE", "NOT_APPLICABLE",
           "NOT_EXERCISED", "KNOWN_DEVIATION", "VERDICTS", "NEW_FAIL", "FIXED", "STILL_FAILING", "NOT_RUN"]
