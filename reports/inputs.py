"""Reading result directories (written by ``mqconform run``, the pytest plugin and campaigns).

Every problem is a :class:`ReportInputError` naming the file: a missing or empty
directory, a corrupt ``run.json`` or ``rules.jsonl``, a replay file that cannot
be read, or result formats this kit cannot read.
"""

from __future__ import annotations

import json
from pathlib import Path

import attrs

from conformance.records.history import Failure, ReplayFileError, load_failure
from conformance.records.results import RESULTS_FORMAT, RESULTS_VERSION, VERDICTS

ROW_FIELDS = {"rule", "area", "source", "summary", "verdict", "exercised", "checked", "failed"}


class ReportInputError(ValueError):
    """A result directory that cannot be reported on (one line, naming the file)."""


@attrs.frozen(kw_only=True)
class RunResult:
    """One result directory, read and checked."""

    path: Path
    meta: dict
    rows: tuple[dict, ...]
    failures: tuple[tuple[Path, Failure], ...]
    #: For a campaign: each finished task's (finished time, examples, fingerprints of its failures), in order.
    tasks: tuple[tuple[float, int, tuple[str, ...]], ...] = ()

    @property
    def adapter(self) -> str:
        return self.meta["adapter"]

    @property
    def faults(self) -> tuple[str, ...]:
        return tuple(self.meta.get("system", {}).get("faults", ()) or ())

    @property
    def mapping(self) -> str:
        """How a broker adapter mapped MQ onto the broker: ``faithful`` (the default) or ``defaults``."""
        return str(self.meta.get("system", {}).get("mapping") or "faithful")

    @property
    def label(self) -> str:
        """How the system under test is named in reports: the adapter, its mapping if not the faithful one, and
        its faults if any."""
        faults = self.faults
        return (self.adapter + (f" [mapping: {self.mapping}]" if self.mapping != "faithful" else "")
                + (f" [faults: {', '.join(faults)}]" if faults else ""))


def _json_file(path: Path) -> dict:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ReportInputError(f"{path}: missing (is this a result directory?)") from None
    except OSError as exc:
        raise ReportInputError(f"{path}: cannot read ({exc.strerror})") from None
    except UnicodeDecodeError:
        raise ReportInputError(f"{path}: not UTF-8 text") from None
    if not text.strip():
        raise ReportInputError(f"{path}: empty")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ReportInputError(f"{path}: corrupt JSON ({exc.msg} at line {exc.lineno})") from None
    if not isinstance(data, dict):
        raise ReportInputError(f"{path}: expected a JSON object")
    return data


def load_run(directory: str | Path) -> RunResult:
    d = Path(directory)
    if not d.exists():
        raise ReportInputError(f"{d}: no such result directory")
    if not d.is_dir():
        raise ReportInputError(f"{d}: not a directory")
    run_file = d / "run.json"
    meta = _json_file(run_file)
    if meta.get("format") != RESULTS_FORMAT:
        raise ReportInputError(f"{run_file}: not an mqconform result (format {meta.get('format')!r})")
    if meta.get("version") != RESULTS_VERSION:
        raise ReportInputError(f"{run_file}: results format version {meta.get('version')!r}; this kit reads "
                               f"version {RESULTS_VERSION}")
    for key in ("adapter", "areas", "capabilities"):
        if key not in meta:
            raise ReportInputError(f"{run_file}: no {key!r}")
    for key in ("examples_run", "steps_run"):
        value = meta.get(key, 0)
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise ReportInputError(f"{run_file}: {key} is {value!r}, not a count")
    rules_file = d / "rules.jsonl"
    try:
        lines = rules_file.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise ReportInputError(f"{rules_file}: missing") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ReportInputError(f"{rules_file}: cannot read ({getattr(exc, 'strerror', None) or exc})") from None
    rows = []
    for n, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ReportInputError(f"{rules_file}:{n}: corrupt JSON ({exc.msg})") from None
        if not isinstance(row, dict) or not ROW_FIELDS <= set(row):
            raise ReportInputError(f"{rules_file}:{n}: not a rule record (needs {', '.join(sorted(ROW_FIELDS))})")
        if row["verdict"] not in VERDICTS:
            raise ReportInputError(f"{rules_file}:{n}: unknown verdict {row['verdict']!r}")
        classes = row.get("classes", {})
        if not isinstance(classes, dict) or not all(
                isinstance(k, str) and isinstance(v, int) and not isinstance(v, bool) and v >= 0
                for k, v in classes.items()):
            raise ReportInputError(f"{rules_file}:{n}: classes must map each input class to a count of steps")
        left_out = row.get("classes_not_expressible", [])
        if not isinstance(left_out, list) or not all(isinstance(k, str) and k in classes for k in left_out):
            raise ReportInputError(f"{rules_file}:{n}: classes_not_expressible must list input classes of the rule")
        rows.append(row)
    if not rows and meta.get("areas"):
        raise ReportInputError(f"{rules_file}: no rule records")
    failures = []
    for rel in meta.get("failures", []):
        path = d / rel
        try:
            failures.append((path, load_failure(path)))
        except ReplayFileError as exc:
            raise ReportInputError(str(exc)) from None
    return RunResult(path=d, meta=meta, rows=tuple(rows), failures=tuple(failures), tasks=_tasks(d))


def _tasks(d: Path) -> tuple:
    """A campaign's task results, as (finished, examples, failure fingerprints), in finishing order."""
    from conformance.records.identity import fingerprint

    out = []
    for path in sorted((d / "tasks").glob("*.json")) if (d / "tasks").is_dir() else ():
        data = _json_file(path)
        try:
            prints = tuple(fingerprint(Failure.from_json(f)) for f in data.get("failures", ()))
            out.append((float(data.get("finished") or 0), int(data["examples"]),
                        prints + tuple(data.get("duplicates", ()))))
        except (KeyError, TypeError, ValueError) as exc:
            raise ReportInputError(f"{path}: not a campaign task result ({exc})") from None
    return tuple(sorted(out))


#: The format of a crash campaign's results (``mqconform crash``: crash.json).
CRASH_FORMAT = "mqconform-crash"


@attrs.frozen(kw_only=True)
class CrashRun:
    """A crash campaign's result directory (``crash.json``), read and checked."""

    path: Path
    data: dict

    @property
    def adapter(self) -> str:
        return self.data["adapter"]

    @property
    def label(self) -> str:
        """As :attr:`RunResult.label` names its system."""
        system = self.data.get("system") or {}
        faults = tuple(system.get("faults", ()) or ())
        mapping = str(system.get("mapping") or "faithful")
        return (self.adapter + (f" [mapping: {mapping}]" if mapping != "faithful" else "")
                + (f" [faults: {', '.join(faults)}]" if faults else ""))


def _count(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def load_crash(directory: str | Path) -> CrashRun:
    """A crash campaign's results: each rule broken with how many schedules broke it, checked as read."""
    d = Path(directory)
    path = d / "crash.json"
    data = _json_file(path)
    if data.get("format") != CRASH_FORMAT or data.get("version") != 1:
        raise ReportInputError(f"{path}: not a crash campaign's results (format {data.get('format')!r}, version "
                               f"{data.get('version')!r})")
    if not isinstance(data.get("adapter"), str) or not _count(data.get("schedules")) \
            or not isinstance(data.get("classes"), dict) or not all(_count(v) for v in data["classes"].values()):
        raise ReportInputError(f"{path}: needs an adapter, a count of schedules and a count per class of message")
    rules = data.get("rules")
    if not isinstance(rules, dict) or not all(
            isinstance(r, dict) and _count(r.get("schedules")) and r["schedules"] <= data["schedules"]
            for r in rules.values()):
        raise ReportInputError(f"{path}: rules must give each rule broken the schedules that broke it, at most "
                               f"those that ran")
    return CrashRun(path=d, data=data)


def is_crash(directory: str | Path) -> bool:
    """Whether ``directory`` holds a crash campaign's results rather than a run's."""
    d = Path(directory)
    return (d / "crash.json").is_file() and not (d / "run.json").exists()


def load_runs(directories: list[str | Path]) -> list[RunResult]:
    if not directories:
        raise ReportInputError("no result directories given")
    runs = [load_run(d) for d in directories if not is_crash(d)]
    kits = {r.meta.get("kit_version") for r in runs}
    if len(kits) > 1:
        listing = ", ".join(f"{r.path} ({r.meta.get('kit_version')})" for r in runs)
        raise ReportInputError(f"result directories from different kit versions cannot be compared: {listing}")
    return runs
