"""A run shared among worker processes (``mqconform run --jobs N``).

A system on real time (a broker) spends most of a case waiting: for its answers, and for the time a case lets
pass.  Several cases at once on the same system overlap those waits.  Each area's cases are shared among ``N``
workers, each a ``mqconform run`` process of its own with its own adapter to the same system (its own
connections and, on a broker, its own queues: every case has a namespace of its own), its own seed
(:func:`job_seed`: the run's own for the first, a fixed other one for each of the rest) and its share of the
cases (:func:`job_examples`).  What the workers find is merged into one record (:meth:`RunRecord.absorb`); a
departure two workers both found (the same rules broken) is reported once.  Processes, not threads: each worker
has an interpreter, a Hypothesis engine and a broker client of its own, and on several cores a virtual-clock
system runs faster too.

A worker reaches the system the run's adapter reaches: a broker the run started for itself is handed to the
workers by its address (:meth:`sibling_env` of a broker adapter: the ``MQCONFORM_<ADAPTER>_URL`` variable, so
that no password is on a command line).  Restarts and the nemesis act on the whole system, disturbing every
case beside them: the nemesis and unbounded restarts are refused with jobs; the few restarts a run on a broker
the kit started makes by default are made after the workers, in a phase of their own (:func:`run_restarts`): the
core area's cases one at a time on the run's own adapter, which owns the broker.

Workers tell one another what they found as they go (:class:`Siblings`): each writes the departures it recorded
beside its part, and reads the others' before each round and while it shrinks.  A departure another worker
found already is set aside for the rest of the worker's cases, as one of its own would be, and one it meets
before it has heard is not shrunk and minimised a second time: its shrinking stops at the next case (counted
as the run's ``found_elsewhere``), and the other worker's counterexample is the run's.  Without this each worker
found, shrank and minimised the same shallow departures for itself, and on a broker the slowest worker's
shrinking was what the area took.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable

import attrs

from adapters.base import Adapter
from conformance.records.results import RunRecord
from conformance.runner.session import STOP

#: Seconds a worker is given to write what it found after it was asked to stop.
STOP_GRACE = 60


@attrs.frozen
class Found:
    """A departure another worker of the run recorded: where, and the rules it blamed and mentioned (what a round
    sets aside and what it takes as found broken, as for one of its own)."""

    platform: str
    blamed: tuple[str, ...]
    mentioned: tuple[str, ...] = ()
    #: The history breaks one of the rules blamed, not each (``Failure.one_of``): none of them is failed by it.
    one_of: bool = False
    #: Of the rules blamed, those of which it breaks one beside the others (``Failure.either``).
    either: tuple[str, ...] = ()

    @property
    def rules(self) -> tuple[str, ...]:
        return self.blamed + self.mentioned


class Siblings:
    """The departures the workers of a run found, exchanged through files beside each worker's part
    (``AREA-K.json``): this worker's in ``AREA-K.found.json``, the others' read from theirs (of every area: the
    workers of one run judge one system, as one process carries its departures from area to area)."""

    SUFFIX = ".found.json"

    def __init__(self, part: Path) -> None:
        self.own = part.with_name(part.stem + self.SUFFIX)
        self._read: dict[Path, tuple[tuple, tuple[Found, ...]]] = {}

    def publish(self, record: RunRecord) -> None:
        """Write what ``record`` found so far for the other workers (whole, then renamed: never read half)."""
        found = [{"platform": f.platform, "blamed": list(f.blamed), "mentioned": list(f.mentioned),
                  "one_of": f.one_of, "either": list(f.either)} for f in record.failures]
        tmp = self.own.with_name(self.own.name + ".tmp")
        tmp.write_text(json.dumps(found), encoding="utf-8")
        tmp.replace(self.own)

    def found(self) -> tuple[Found, ...]:
        """What the other workers found so far (each file read again only when it changed)."""
        out: list[Found] = []
        for path in sorted(self.own.parent.glob("*" + self.SUFFIX)):
            if path == self.own:
                continue
            try:
                stat = path.stat()
                stamp = (stat.st_mtime_ns, stat.st_ino, stat.st_size)
                if path not in self._read or self._read[path][0] != stamp:
                    data = json.loads(path.read_text(encoding="utf-8"))
                    self._read[path] = (stamp, tuple(
                        Found(str(d["platform"]), tuple(d["blamed"]), tuple(d.get("mentioned") or ()),
                              bool(d.get("one_of")), tuple(d.get("either") or ()))
                        for d in data))
            except (OSError, ValueError, KeyError, TypeError):
                continue   # being written, or gone: read at the next look
            out.extend(self._read[path][1])
        return tuple(out)


def job_seed(seed: int, job: int) -> int:
    """The seed of worker ``job`` of a run with ``seed``: the run's own for the first; a fixed other for each
    of the rest, so that a seed and a number of jobs fix every worker's cases."""
    return seed if job == 0 else (seed * 1_000_003 + job * 7_919) % 2**31


def job_examples(examples: int, jobs: int) -> list[int]:
    """``examples`` shared among ``jobs`` workers, each at least one case."""
    return [max(1, examples // jobs + (1 if k < examples % jobs else 0)) for k in range(jobs)]


def run_jobs(adapter: Adapter, adapter_name: str, options: dict, areas: list[str], examples: int, seed: int,
             jobs: int, results: Path, passthrough: list[str], progress: Callable[[str], None]) -> RunRecord:
    """Each area of ``areas`` in turn, its cases shared among ``jobs`` worker processes; returns the merged
    record (raising :class:`conformance.runner.engine.Interrupted` with what was found when stopped)."""
    from conformance.runner.engine import Interrupted, area_platforms

    work = results / ".jobs"
    work.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, **(adapter.sibling_env() if hasattr(adapter, "sibling_env") else {})}
    given = {k: v for k, v in options.items() if k not in getattr(adapter, "sibling_given", ())}
    caps = adapter.capabilities()
    record = RunRecord(adapter=adapter.name, describe=adapter.describe(), capabilities=caps.to_json(),
                       areas=list(areas), seed=seed, examples=examples)
    shares = job_examples(examples, jobs)
    for index, area in enumerate(areas):
        if not area_platforms(area, caps):
            # (as a run in one process says it: no worker is started for an area the system cannot express)
            progress(f"{area}: not applicable to adapter {adapter.name!r}")
            continue
        started = time.monotonic()
        procs = []
        for k in range(jobs):
            part = work / f"{area}-{k}.json"
            argv = [sys.executable, "-m", "conformance.cli", "run", "--adapter", adapter_name, "--area", area,
                    "--examples", str(shares[k]), "--seed", str(job_seed(seed, k)),
                    "--results", str(work / f"{area}-{k}"), "--part", str(part), *passthrough]
            for key, value in given.items():
                if key == "faults":
                    argv += ["--faults", value]
                else:
                    argv += ["--adapter-opt", f"{key}={value}"]
            log = open(work / f"{area}-{k}.log", "w", encoding="utf-8")
            procs.append((subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                           env=env, start_new_session=True), part, log))
        try:
            while any(p.poll() is None for p, _, _ in procs):
                if STOP.is_set():
                    raise KeyboardInterrupt
                time.sleep(0.2)
        except KeyboardInterrupt:
            for p, _, _ in procs:
                if p.poll() is None:
                    p.send_signal(signal.SIGINT)   # each writes what it found and exits 130
            for p, _, _ in procs:
                try:
                    p.wait(STOP_GRACE)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
            _merge(record, [part for _, part, _ in procs], area)
            record.interrupted = list(areas[index:])
            record.ended = time.time()
            raise Interrupted(record) from None
        finally:
            for _, _, log in procs:
                log.close()
        failed = [(k, p.returncode) for k, (p, part, _) in enumerate(procs)
                  if p.returncode not in (0, 1) or not part.exists()]
        before = {k: v for k, v in record.seconds.items() if k.startswith(f"{area} on ")}
        _merge(record, [part for _, part, _ in procs], area)
        spent = time.monotonic() - started
        _wall_clock(record, area, before, spent)
        for failure in [f for f in record.failures if f.area == area]:
            progress(f"{area} on {failure.platform}: departure from {failure.blamed_text}, {len(failure.steps)} steps")
        if failed:
            k, code = failed[0]
            last = (work / f"{area}-{k}.log").read_text(encoding="utf-8", errors="replace").strip().splitlines()
            record.error = record.error or (f"worker {k + 1} of {jobs} in area {area} ended with exit {code}: "
                                             f"{last[-1] if last else 'no output'}")
            record.errored = list(areas[index:])
            progress(f"{area}: error in worker {k + 1} of {jobs} (its output: {work / f'{area}-{k}.log'})")
            break
        progress(f"{area}: {jobs} workers, {spent:.1f}s")
    record.ended = time.time()
    if record.coverage.examples == 0 and record.error is None and not record.interrupted:
        record.error = "no test case ran: none of the areas " + ", ".join(areas) + \
            f" is applicable to adapter {adapter.name!r}"
    if record.error is None:
        shutil.rmtree(work, ignore_errors=True)
    return record


#: Cases of the core area run after a run shared among jobs, one at a time on the run's own adapter, with the
#: restarts a run on a broker the kit started makes (a restart acts on every case beside it): a share of the
#: run's cases, at least :data:`RESTART_CASES_MIN`.
RESTART_SHARE = 10
RESTART_CASES_MIN = 12
#: A departure the restart phase meets is shrunk in at most this many cases, and its history minimised in at
#: most this many seconds, unless the run was given its own bounds: a case holding a restart takes half a
#: minute on RabbitMQ, and a departure met there had held the phase for ten minutes (Hypothesis's 20 cases
#: on it, then the minimiser's four minutes).  Fewer cases leave more to the minimiser, which takes a history
#: apart a step at a time rather than drawing whole cases again.
RESTART_SHRINK_CASES = 6
RESTART_MINIMISE_SECONDS = 120.0


def restart_cases(examples: int) -> int:
    """The cases of the restart phase of a run shared among jobs with ``examples`` cases an area."""
    return max(RESTART_CASES_MIN, examples // RESTART_SHARE)


def restarts_left(adapter: Adapter) -> bool:
    """Whether ``adapter`` makes the few restarts a run on a broker the kit started makes by default (a bound of
    them, not yet spent): a run shared among jobs makes them in a phase of their own, after the workers."""
    budget = getattr(adapter, "budget", None)
    return bool(getattr(adapter, "restarts", False)) and budget is not None and budget.limit is not None \
        and budget.spent < budget.limit


def run_restarts(adapter: Adapter, record: RunRecord, examples: int, seed: int, jobs: int, options: dict,
                 progress: Callable[[str], None], **engine) -> None:
    """The restart phase of a run shared among jobs: the core area's :func:`restart_cases` cases on the run's own
    adapter, one at a time, with its restarts, merged into ``record`` as a worker's are (seed: the one after the
    workers')."""
    from conformance.runner.engine import BY_SYSTEM, Interrupted, run_areas

    started = time.monotonic()
    if engine.get("shrink_cases", BY_SYSTEM) is BY_SYSTEM:
        engine["shrink_cases"] = RESTART_SHRINK_CASES
    engine.setdefault("minimise_seconds", RESTART_MINIMISE_SECONDS)
    try:
        part = run_areas(adapter, ["core"], restart_cases(examples), job_seed(seed, jobs), options,
                         progress=progress, found_before=tuple(record.failures), **engine)
    except Interrupted as stop:   # what the workers found is kept, with what the phase found before the stop
        _merge_parts(record, [stop.record.part_json()], "core")
        record.interrupted = ["core"]
        record.ended = time.time()
        raise Interrupted(record) from None
    _merge_parts(record, [part.part_json()], "core")
    record.ended = time.time()
    if part.error is not None and record.error is None:
        record.error, record.errored = part.error, ["core"]
    progress(f"core: restart phase ({restart_cases(examples)} cases, one at a time), "
             f"{time.monotonic() - started:.1f}s")


def _wall_clock(record: RunRecord, area: str, before: dict[str, float], spent: float) -> None:
    """The time ``area`` took by the wall clock in ``record.seconds`` (its workers' own seconds, which the merge
    added up, shared out among its platforms as they had them): what a reader of "time by area" wants to know
    is how long the run took there, not its workers' sum."""
    added = {k: v - before.get(k, 0.0) for k, v in record.seconds.items() if k.startswith(f"{area} on ")}
    total = sum(added.values())
    for key, share in added.items():
        record.seconds[key] = round(before.get(key, 0.0) + (spent * share / total if total else 0.0), 3)


def _merge(record: RunRecord, parts: list[Path], area: str) -> None:
    """Add the workers' records of ``area`` to ``record``: a departure of rules an earlier worker's already
    shows (on the same platform) is left out, as one run reports one departure per set of rules broken."""
    loaded = []
    for path in parts:
        try:
            loaded.append(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError):
            continue   # a worker that wrote nothing: its error is reported by the caller
    _merge_parts(record, loaded, area)


def _merge_parts(record: RunRecord, parts: list[dict], area: str) -> None:
    seen = {(f.platform, frozenset(f.blamed)) for f in record.failures if f.area == area}
    for part in parts:
        kept = []
        for data in part.get("failures") or []:
            key = (data.get("platform"), frozenset(data.get("rules") or ()))
            if key not in seen:
                seen.add(key)
                kept.append(data)
        part["failures"] = kept
        for error_area in part.get("errored") or []:
            if error_area not in record.errored:
                record.errored.append(error_area)
        record.absorb(part)


__all__ = ["Found", "Siblings", "job_examples", "job_seed", "run_jobs", "restart_cases", "restarts_left", "run_restarts"]
