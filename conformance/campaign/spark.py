"""Long fuzzing campaigns on Spark: tasks by deterministic seed ranges, results kept per task.

A campaign is split into tasks, each one area on one platform with its own seed
and example budget.  Each task runs its machine in a Spark Python worker and
returns plain JSON: coverage counters, examples and steps run, time spent, and
its failures as replay files' JSON.  The driver writes every finished task to
``OUT/tasks/TASK.json`` at once, so a campaign killed at any moment loses only
the tasks in flight and ``--resume`` runs only what is missing.  Failures are
deduplicated across tasks by fingerprint (the area, the rules broken and the
kinds of field that differed; two sharing the rule that decides either are one),
keeping the smallest counterexample; a task that meets a failure already known
records it without shrinking it again.

Inside a task the machine runs in a child process with a time limit: a crash or
a hang makes the attempt fail, Spark runs it again, and the last attempt records
an error with the task's seed instead of failing the campaign.  The result
directory (``run.json``, ``rules.jsonl``, ``failures/``) is the one
``mqconform report`` reads.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import multiprocessing
import os
import re
import signal
import sys
import threading
import time
import traceback
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from pathlib import Path
from typing import Callable, Iterable, Iterator

import attrs

from conformance.records.history import Failure, blamed_as, with_alternatives, write_json_atomic
from conformance.records.identity import fingerprint, known_as
from conformance.runner.session import HarnessError

CAMPAIGN_FORMAT, CAMPAIGN_VERSION = "mqconform-campaign", 1
#: Examples per task unless --task-examples says otherwise.
TASK_EXAMPLES = 50
#: Seconds a task attempt may take before it is stopped and retried.
TASK_TIMEOUT = 900
#: Attempts per task (the first and Spark's retries).
TASK_ATTEMPTS = 2
#: In a time-boxed campaign, the seconds a task runs new cases for (areas differ several-fold
#: in time per example, so tasks are sized by time, not examples) ...
TASK_SECONDS = 60.0
#: ... and the examples it may run at most in that time, in Hypothesis runs of CHUNK_EXAMPLES.
TASK_EXAMPLES_TIMED = 100_000
CHUNK_EXAMPLES = 25
#: ... the first of them smaller, as nothing is known yet of how long a case takes.
CHUNK_FIRST = 5
#: No task is started with less than this left of a time budget (seconds).
LAST_START = 2.0
CHUNK_EXAMPLES_REALTIME = 3   # a real broker's case takes seconds


class CampaignError(HarnessError):
    """A campaign that cannot start or continue (one line)."""


#: The part of a time budget kept for stopping Spark and writing the results.
TEARDOWN_SHARE = 0.1
#: Seconds a task costs beyond the time it runs cases for (its worker process started, the kit imported).
TASK_OVERHEAD = 2.0
#: The least time a time-boxed task runs new cases for: a budget that leaves less is refused.  On a system that
#: runs on the wall clock a case takes seconds, and a task's run of cases ends only with its last case.
MIN_TASK_SECONDS = 3.0
MIN_TASK_SECONDS_REALTIME = 30.0
#: A task of a campaign's first round (each area and platform once) may shrink a departure for this share of
#: its time again, no longer: the first round must reach every area before the budget ends.
FIRST_ROUND_SHRINK = 0.5
#: What starting Spark is reckoned to cost before it has started (local mode: about 5 s on an idle machine).
SPARK_START_ESTIMATE = 10.0
#: Seconds a campaign's private broker takes to start, at the least (RabbitMQ 5-8 s here, ActiveMQ 3-5 s).
BROKER_START_ESTIMATE = 3.0


@attrs.frozen(kw_only=True)
class TaskSpec:
    id: str
    area: str
    platform: str
    index: int
    seed: int
    examples: int
    #: The campaign's time budget ends then (``time.time()``); the task runs no new case after it.
    deadline: float | None = None
    #: A time-boxed campaign's tasks are sized by time: no new case after this many seconds.
    seconds: float | None = None
    #: A time-boxed campaign's hard end (``time.time()``): a departure found near the deadline is
    #: shrunk and minimised until then, no later (a real broker's case takes seconds).
    finish_by: float | None = None
    #: Concurrent cases of this many clients instead of the area's machine (``campaign --concurrency``).
    concurrency: int | None = None

    def to_json(self) -> dict:
        return attrs.asdict(self)


def task_seed(seed: int, area: str, platform: str, index: int) -> int:
    digest = hashlib.sha256(f"{seed}/{area}/{platform}/{index}".encode()).digest()
    return int.from_bytes(digest[:4], "big")


def _spec(seed: int, area: str, platform: str, index: int, examples: int, **kw) -> TaskSpec:
    return TaskSpec(id=f"{area}-{platform}-{index:05d}", area=area, platform=platform, index=index,
                    seed=task_seed(seed, area, platform, index), examples=examples, **kw)


def plan_tasks(seed: int, pairs: list[tuple[str, str]], total: int, per_task: int) -> list[TaskSpec]:
    """Tasks for each (area, platform): ``total`` examples in tasks of ``per_task``."""
    sizes = [per_task] * (total // per_task) + ([total % per_task] if total % per_task else [])
    return [_spec(seed, area, platform, i, n) for area, platform in pairs for i, n in enumerate(sizes)]


def endless_tasks(seed: int, pairs: list[tuple[str, str]], deadline: float,
                  seconds: float = TASK_SECONDS, examples: int = TASK_EXAMPLES_TIMED,
                  finish_by: float | None = None) -> Iterator[TaskSpec]:
    """A time-boxed campaign's tasks: each (area, platform) in turn, task index 0, 1, ..., without end.

    Each is made when it is about to start: a task of the first round shrinks a departure it finds for
    :data:`FIRST_ROUND_SHRINK` of its time at most, so that the round reaches every pair in time."""
    for index in itertools.count():
        for area, platform in pairs:
            end = finish_by
            if index == 0:
                own = time.time() + seconds * (1 + FIRST_ROUND_SHRINK)
                end = own if end is None else min(end, own)
            yield _spec(seed, area, platform, index, examples, deadline=deadline, seconds=seconds,
                        finish_by=end)


def rounds(pairs: int, parallelism: int) -> int:
    """Tasks each worker runs for every (area, platform) to have had one."""
    return -(-pairs // max(1, parallelism))


def least_task_seconds(realtime: bool) -> float:
    return MIN_TASK_SECONDS_REALTIME if realtime else MIN_TASK_SECONDS


def task_seconds(left: float, pairs: int, parallelism: int) -> float:
    """The seconds each task of a time-boxed campaign runs new cases for, with ``left`` seconds to its
    deadline: short enough that the first round reaches every pair (its tasks' shrinking included),
    :data:`TASK_SECONDS` at most."""
    slot = left / rounds(pairs, parallelism) - TASK_OVERHEAD
    return min(TASK_SECONDS, slot / (1 + FIRST_ROUND_SHRINK))


def minimum_minutes(pairs: int, parallelism: int, spark_start: float = SPARK_START_ESTIMATE,
                    least: float = MIN_TASK_SECONDS) -> float:
    """The shortest time budget in which every pair runs ``least`` seconds at least, after ``spark_start``
    seconds (the time already spent, a broker's start-up, included)."""
    need = least * (1 + FIRST_ROUND_SHRINK) + TASK_OVERHEAD
    return (spark_start + rounds(pairs, parallelism) * need) / (1 - TEARDOWN_SHARE) / 60


def workers_of(master: str, partitions: int | None) -> int | None:
    """How many tasks a master runs at once, as far as its URL says (None: only Spark knows)."""
    if partitions:
        return partitions
    if master == "local":
        return 1
    inner = re.fullmatch(r"local\[(\d+|\*)(?:,\d+)?\]", master)
    if inner:
        return (os.cpu_count() or 1) if inner.group(1) == "*" else int(inner.group(1))
    return None


# --------------------------------------------------------------------------- inside a worker


def _run_machine(spec: dict, adapter_name: str, options: dict, known: list[str], crash: bool) -> dict:
    """Run one task's machine in this process; returns the task's JSON result."""
    from adapters.base import AdapterError
    from adapters.registry import create_adapter
    from conformance.runner.engine import Unsteady, bound_machine, machine_settings, search
    from conformance.runner.minimise import minimise, minimise_budget
    from conformance.records.results import Coverage

    from hypothesis.database import InMemoryExampleDatabase

    if crash:
        os._exit(70)  # an injected crash, to exercise the retry path
    started = time.monotonic()
    db = InMemoryExampleDatabase()   # the task's own example database
    coverage = Coverage()
    result = {"task": spec["id"], "area": spec["area"], "platform": spec["platform"], "seed": spec["seed"],
              "examples_planned": spec["examples"], "failures": [], "duplicates": [], "error": None,
              "worker_pid": os.getpid()}
    try:
        adapter = create_adapter(adapter_name, options)
    except (AdapterError, ValueError) as exc:
        result["error"] = f"adapter {adapter_name!r}: {exc}"
        return _finish(result, coverage, started)
    deadline = spec.get("deadline")
    if spec.get("seconds"):
        deadline = min(deadline or float("inf"), time.time() + spec["seconds"])
    if spec.get("concurrency"):
        _guarded(adapter, result, lambda: _run_concurrent(spec, adapter, adapter_name, options, result, coverage,
                                                          deadline))
        return _finish(result, coverage, started)

    def search_task(seed: int, examples: int, deadline: float | None = None) -> bool:
        """One Hypothesis run of ``examples`` cases; True when it met a departure (the task then ends)."""
        machine = bound_machine(adapter, spec["area"], spec["platform"], seed, options, coverage,
                                deadline=deadline)
        # first without shrinking: a failure already known elsewhere is not shrunk again (the step memo kept
        # for the same cases run again to shrink one that is not)
        unshrunk = search(machine, machine_settings(examples, database=db), shrink=False, keep_memo=True).departure
        if unshrunk is None:
            return False
        if known_as(fingerprint(unshrunk), known) is not None:
            coverage.count_failure(*blamed_as(unshrunk, adapter.capabilities().expiry_tolerance))
            result["duplicates"].append(fingerprint(unshrunk))
            return True
        # the same seed finds it again, and this time it is shrunk (within the shrinking budget;
        # a departure already found is shrunk after the deadline, up to the campaign's hard end)
        finish_by = spec.get("finish_by")
        machine = bound_machine(adapter, spec["area"], spec["platform"], seed, options, Coverage(),
                                shrink_until=finish_by)
        try:
            failure = search(machine, machine_settings(examples, database=db)).departure or unshrunk
        except Unsteady:   # answered differently a second time, with no departure: the unshrunk one stands
            failure = unshrunk
        if machine.session.smallest is not None and machine.session.smallest.size < failure.size:
            failure = machine.session.smallest
        budget = None if finish_by is None else min(minimise_budget(adapter), finish_by - time.time())
        if budget is None or budget > 1.0:
            failure = minimise(failure, adapter, budget=budget)
        failure = with_alternatives(failure, adapter.capabilities().expiry_tolerance)

        coverage.count_failure(failure.blamed, failure.one_of, failure.either)
        result["failures"].append(failure.to_json())
        # Departures from other rules the shrinking met (Hypothesis keeps only the smallest one).
        def tidy(other):
            if known_as(fingerprint(other), known) is not None:
                coverage.count_failure(*blamed_as(other, adapter.capabilities().expiry_tolerance))
                result["duplicates"].append(fingerprint(other))
                return None
            budget = None if finish_by is None else min(minimise_budget(adapter), finish_by - time.time())
            return minimise(other, adapter, budget=budget) if budget is None or budget > 1.0 else other

        for other in machine.session.other_departures(failure.rules, tidy):
            other = with_alternatives(other, adapter.capabilities().expiry_tolerance)
            coverage.count_failure(other.blamed, other.one_of, other.either)
            result["failures"].append(other.to_json())
        return True

    def cases() -> None:
        if spec.get("seconds"):
            # Sized by time: short Hypothesis runs, each with its own seed, until the time is up.  The
            # time is looked at between runs only: within one, a case that ran nothing (time up) where
            # the same choices ran operations before would make Hypothesis's generation inconsistent.
            # The first run is short: until one has run, how long a case takes is not known.
            size = CHUNK_EXAMPLES_REALTIME if adapter.capabilities().realtime else CHUNK_FIRST
            done = 0
            while time.time() < deadline and done < spec["examples"]:
                seed = spec["seed"] if not done else task_seed(spec["seed"], spec["area"], "chunk", done)
                began, before = time.time(), coverage.examples
                if search_task(seed, min(size, spec["examples"] - done)):
                    break
                done += size
                # the next run sized to end about when the time does
                per_case = (time.time() - began) / max(1, coverage.examples - before)
                size = max(1, min(CHUNK_EXAMPLES, int((deadline - time.time()) / max(per_case, 1e-6))))
        else:
            search_task(spec["seed"], spec["examples"], deadline)

    _guarded(adapter, result, cases)
    return _finish(result, coverage, started)


def _guarded(adapter, result: dict, run: Callable[[], None]) -> None:
    """Run a task's cases: a harness error is the task's error, and the adapter is closed whatever happens."""
    try:
        run()
    except HarnessError as exc:
        result["error"] = str(exc)
    finally:
        try:
            adapter.close()
        except Exception:  # noqa: BLE001 - closing must not hide the task's result
            pass


def _run_concurrent(spec: dict, adapter, adapter_name: str, options: dict, result: dict, coverage,
                    deadline: float | None) -> None:
    """A task of concurrent cases (conformance/runner/concurrent.py): ``spec["examples"]`` cases of
    ``spec["concurrency"]`` clients from the task's seed, going on after each race with its rules set aside, each
    race shrunk (until the campaign's hard end, where it has one) and handed back as a race file's JSON."""
    from conformance.runner.concurrent import race_file, search_races, shrink

    if not getattr(adapter, "concurrent_calls", False):
        raise HarnessError(f"adapter {adapter_name!r} does not take calls from several clients at once")
    finish_by = spec.get("finish_by")
    result["races"] = []

    def found(race) -> tuple[str, ...]:
        small = shrink(adapter, race, spec["platform"],
                       stop=None if finish_by is None else (lambda: time.time() >= finish_by))
        record = race_file(race, small, adapter=adapter_name, adapter_options=options, platform=spec["platform"])
        coverage.count_failure(tuple(record.rules), record.one_of)
        result["races"].append(record.to_json())
        return record.rules

    search_races(adapter, spec["seed"], spec["examples"], clients=spec["concurrency"], platform=spec["platform"],
                 stop=None if deadline is None else (lambda: time.time() >= deadline), coverage=coverage,
                 keep_going=None, on_race=found)


#: The coverage counters a task hands back: every one a verdict is made from (the input classes reached
#: too: without them no rule that declares classes could pass).
COVERAGE_COUNTERS = ("exercised", "checked", "failed", "one_of", "indeterminate", "classes", "shares_observed",
                     "shares_expected", "not_expressible")


def _finish(result: dict, coverage, started: float) -> dict:
    result.update({
        "examples": coverage.examples, "steps": coverage.steps, "seconds": round(time.monotonic() - started, 3),
        "coverage": {name: dict(getattr(coverage, name)) for name in COVERAGE_COUNTERS},
    })
    return result


def _child(conn, *args) -> None:
    try:
        conn.send(("ok", _run_machine(*args)))
    except BaseException:  # noqa: BLE001 - reported to the parent as data
        conn.send(("error", traceback.format_exc(limit=5)))
    finally:
        conn.close()


#: The areas whose machine has run once in this worker process.
_WARM: set[str] = set()


def _engine(area: str) -> None:
    """Import the engine and run ``area``'s machine for one case on the model, once per worker process.

    Every task's forked child inherits the result: the imports, and what Hypothesis
    and the model work out on their first run (strategies, caches).
    """
    if area in _WARM:
        return
    _WARM.add(area)
    from hypothesis.stateful import run_state_machine_as_test

    from adapters.reference import ReferenceAdapter
    from conformance.runner.engine import area_platforms, bound_machine, machine_settings
    from conformance.records.results import Coverage

    adapter = ReferenceAdapter()
    platforms = area_platforms(area, adapter.capabilities())
    if not platforms:
        return
    machine = bound_machine(adapter, area, platforms[0], 1, {}, Coverage())
    try:
        run_state_machine_as_test(machine, settings=machine_settings(1))
    except Exception:  # noqa: BLE001 - warming up only; the task itself runs and reports
        pass


def run_task(spec: dict, adapter_name: str, options: dict, known: list[str], timeout: float,
             attempt: int, last_attempt: bool, crash_tasks: dict) -> dict:
    """One attempt at a task, in a child process with a time limit.

    A crash or a hang raises (so Spark retries the task) unless this is the last
    attempt, which returns an error record naming the task's seed instead.
    """
    _engine(spec["area"])   # in the worker, once per area: every task's forked child inherits it
    ctx = multiprocessing.get_context("fork")
    parent, child = ctx.Pipe(duplex=False)
    crash = attempt < crash_tasks.get(spec["id"], 0)
    proc = ctx.Process(target=_child, args=(child, spec, adapter_name, options, known, crash), daemon=True)
    proc.start()
    child.close()
    problem = None
    if parent.poll(timeout):
        try:
            kind, payload = parent.recv()
        except EOFError:
            kind, payload = "crash", None
        if kind == "ok":
            proc.join(5)
            return payload
        problem = f"task raised: {payload.strip().splitlines()[-1]}" if kind == "error" else None
    else:
        proc.kill()
        problem = f"task did not finish within {timeout:g}s"
    proc.join(5)
    if problem is None:
        problem = f"task's worker process died (exit status {proc.exitcode})"
    if not last_attempt:
        raise RuntimeError(f"{spec['id']} (seed {spec['seed']}): {problem}")
    return {"task": spec["id"], "area": spec["area"], "platform": spec["platform"], "seed": spec["seed"],
            "examples_planned": spec["examples"], "examples": 0, "steps": 0, "seconds": 0.0,
            "coverage": {}, "failures": [], "duplicates": [],
            "error": f"{problem}, on attempt {attempt + 1} of {attempt + 1}; seed {spec['seed']}"}


def spark_task(args: tuple):
    """The function Spark runs for each task (one partition holds one task)."""
    from pyspark import TaskContext

    spec, adapter_name, options, known, timeout, attempts, crash_tasks = args
    ctx = TaskContext.get()
    attempt = ctx.attemptNumber() if ctx is not None else 0
    return run_task(spec, adapter_name, options, known, timeout, attempt, attempt + 1 >= attempts, crash_tasks)


# --------------------------------------------------------------------------- the driver


#: The master URLs Spark accepts (spark-submit refuses anything else with a Java stack trace).
MASTER = re.compile(r"local(\[(\*|[1-9]\d*)(,[1-9]\d*)?\])?|local-cluster\[\d+,\d+,\d+\]|yarn"
                    r"|(spark|k8s|mesos)://\S+")


def master_problem(master: str) -> str | None:
    """Why ``master`` is not a Spark master URL, or None."""
    if MASTER.fullmatch(master):
        return None
    return (f"--master {master!r} is not a Spark master URL "
            "(local, local[N], local[*], spark://HOST:PORT, k8s://URL, yarn)")


#: The JVM options of a campaign's driver and executors (where SPARK_CONF_DIR does not name a configuration of the
#: user's own).  The driver hands tasks out and takes their results back, an executor hands its tasks to Python
#: workers; the work is in the Python workers.  Compiled by the JIT's first tier alone, the driver starts and runs a
#: campaign's first task on about half the CPU (measured: 10.3-11.5 s of CPU to 5.6-6.4 s for a local session's
#: start and first job, 6.4-6.9 s of wall clock to 4.8-5.4 s), and a campaign on a two-worker standalone cluster
#: on about a fifth less (35-42 s of the machine's CPU to 29-32 s, docs/testing.md).
JVM_OPTIONS = "-XX:TieredStopAtLevel=1"


def spark_session(master: str, out: Path, attempts: int):
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    storage = out / ".hypothesis"
    os.environ.setdefault("HYPOTHESIS_STORAGE_DIRECTORY", str(storage))
    conf_dir = out / ".spark-conf"
    conf_dir.mkdir(parents=True, exist_ok=True)
    (conf_dir / "log4j2.properties").write_text(
        "rootLogger.level = error\nrootLogger.appenderRef.stdout.ref = console\n"
        "appender.console.type = Console\nappender.console.name = console\nappender.console.target = SYSTEM_ERR\n"
        "appender.console.layout.type = PatternLayout\nappender.console.layout.pattern = %p %c{1}: %m%n\n")
    (conf_dir / "spark-defaults.conf").write_text(f"spark.driver.extraJavaOptions {JVM_OPTIONS}\n"
                                                  f"spark.executor.extraJavaOptions {JVM_OPTIONS}\n")
    os.environ.setdefault("SPARK_CONF_DIR", str(conf_dir))
    from adapters.brokers.server import REFUSE, refused

    if "spark" in refused():
        raise CampaignError(f"Spark not started: {REFUSE}=spark (the kit's quick tests start no Spark: mark a test "
                            "that needs it with pytest.mark.spark)")
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        from reference_model.version import install_hint

        raise CampaignError(f"a campaign runs on Spark, and PySpark is not installed: {install_hint('spark')}") \
            from None
    if master.startswith("local") and "," not in master:
        # local mode does not retry failed tasks unless the master says how often
        inner = master[len("local["):-1] if master.startswith("local[") else "1"
        master = f"local[{inner},{attempts}]"
    builder = (SparkSession.builder.master(master).appName("mqconform-campaign")
               .config("spark.ui.showConsoleProgress", "false")
               .config("spark.task.maxFailures", str(attempts))
               .config("spark.local.dir", str(out / ".spark-local"))
               .config("spark.executorEnv.HYPOTHESIS_STORAGE_DIRECTORY", str(storage))
               .config("spark.executorEnv.PYSPARK_PYTHON", sys.executable))
    if master.startswith("local"):
        builder = (builder.config("spark.driver.host", "127.0.0.1").config("spark.driver.bindAddress", "127.0.0.1")
                   .config("spark.ui.enabled", "false"))
    # The JVM (and the Python workers it starts) write to a log file, not over the terminal:
    # standard error is pointed at the file while the JVM starts, so the JVM keeps that.
    log = out / "spark.log"
    sys.stderr.flush()
    saved = os.dup(2)
    # PySpark's context puts in its own handler of Ctrl-C (cancel the jobs, then interrupt), and leaves it in once
    # stopped, when it fails on the stopped context's missing JVM link: stop_session puts back the one before.
    main = threading.current_thread() is threading.main_thread()
    before = signal.getsignal(signal.SIGINT) if main else None
    try:
        with open(log, "ab") as sink:
            os.dup2(sink.fileno(), 2)
        spark = builder.getOrCreate()
    except Exception as exc:  # noqa: BLE001 - JVM and connection errors come as many types
        raise CampaignError(f"cannot start Spark with master {master!r}: {str(exc).splitlines()[0]} "
                            f"(see {log})") from None
    finally:
        os.dup2(saved, 2)
        os.close(saved)
    if main and signal.getsignal(signal.SIGINT) is not before:
        _SIGINT_BEFORE[id(spark)] = before
    spark.sparkContext.setLogLevel("ERROR")
    return spark


#: The Ctrl-C handler in place before a session the kit started put PySpark's in, by the session's id.
_SIGINT_BEFORE: dict[int, object] = {}


def stop_session(spark) -> None:
    """Stop a session :func:`spark_session` started and put back the Ctrl-C handler that was in place before it:
    PySpark's own, left in, would fail on the stopped context (and interrupt whatever runs then, as a garbage
    collection's callback did at a test worker's end)."""
    before = _SIGINT_BEFORE.pop(id(spark), None)
    try:
        spark.stop()
    finally:
        if before is not None and threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGINT, before)


@attrs.define
class CampaignState:
    """What the driver knows: results per task and failures by fingerprint (smallest kept)."""

    out: Path
    results: dict = attrs.Factory(dict)
    failures: dict = attrs.Factory(dict)   # fingerprint -> the smallest failure's JSON
    known: set = attrs.Factory(set)        # fingerprints of every failure met
    #: Races of concurrent cases by the rules they break: of those alike, the one with the fewest calls.
    races: dict = attrs.Factory(dict)

    def add(self, result: dict) -> None:
        self.results[result["task"]] = result
        for data in result.get("races", ()):
            key = tuple(sorted(data["rules"]))
            kept = self.races.get(key)
            if kept is None or len(data["events"]) < len(kept["events"]):
                self.races[key] = data
        for data in result["failures"]:
            fp = fingerprint(Failure.from_json(data))
            self.known.add(fp)
            fp = known_as(fp, self.failures) or fp
            kept = self.failures.get(fp)
            if kept is None or len(data["steps"]) < len(kept["steps"]):
                self.failures[fp] = data
        self.known.update(result.get("duplicates", ()))

    def distinct_failures(self) -> int:
        return len(self.failures) + len(self.races)


def task_path(out: Path, task_id: str) -> Path:
    return out / "tasks" / f"{task_id}.json"


def load_finished(out: Path, state: CampaignState) -> None:
    for path in sorted((out / "tasks").glob("*.json")):
        try:
            state.add(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError, KeyError) as exc:
            raise CampaignError(f"{path}: unreadable task result ({exc}); remove it to run the task again") from None


def _duration(seconds: float) -> str:
    seconds = int(round(seconds))
    return f"{seconds // 60} min {seconds % 60:02d} s" if seconds >= 60 else f"{seconds} s"


def run_campaign(*, spark, specs: Iterable[TaskSpec], adapter_name: str, options: dict,
                 out: Path, state: CampaignState, deadline: float | None, parallelism: int,
                 timeout: float, attempts: int, crash_tasks: dict, progress: Callable[[str], None],
                 after_task: Callable[[dict], str | None] | None = None) -> None:
    """Run the tasks ``specs`` gives, ``parallelism`` at a time, each started as soon as another ends.

    There are no waves: a long task never holds the others back.  ``specs`` may be
    endless (a time budget); with a ``deadline`` no task starts after it.  Tasks
    already in ``state`` are skipped.  ``after_task`` sees each finished task's result
    before the next task starts (a campaign's broker is brought back there) and may
    return a line to print.
    """
    sc = spark.sparkContext
    started = time.monotonic()
    lock = threading.Lock()

    def one(spec: TaskSpec) -> dict:
        with lock:
            known = sorted(state.known)
        args = (spec.to_json(), adapter_name, options, known, timeout, attempts, crash_tasks)
        sc.setLocalProperty("spark.job.description", spec.id)
        return sc.parallelize([args], 1).map(spark_task).collect()[0]

    resumed = sum(r["examples"] for r in state.results.values())
    planned_tasks = planned_examples = None   # known up front when the budget is a number of examples
    if isinstance(specs, (list, tuple)):
        planned_tasks = len(state.results) + sum(1 for s in specs if s.id not in state.results)
        planned_examples = resumed + sum(s.examples for s in specs if s.id not in state.results)
    feed = (s for s in specs if s.id not in state.results)
    with ThreadPoolExecutor(max_workers=parallelism) as pool:
        pending: dict = {}

        def fill() -> None:
            while len(pending) < parallelism and (deadline is None or time.time() < deadline - LAST_START):
                spec = next(feed, None)
                if spec is None:
                    return
                pending[pool.submit(one, spec)] = spec

        fill()
        while pending:
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for fut in done:
                spec = pending.pop(fut)
                try:
                    result = fut.result()
                except Exception as exc:  # noqa: BLE001 - Spark gave up on the task: keep it as an error
                    result = {"task": spec.id, "area": spec.area, "platform": spec.platform,
                              "seed": spec.seed, "examples_planned": spec.examples, "examples": 0, "steps": 0,
                              "seconds": 0.0, "coverage": {}, "failures": [], "duplicates": [],
                              "error": f"Spark could not run the task: {str(exc).splitlines()[0][:300]}"}
                result["finished"] = time.time()
                write_json_atomic(task_path(out, spec.id), result)
                with lock:
                    state.add(result)
                note = after_task(result) if after_task is not None else None
                if note:
                    progress(note)
                fill()
                elapsed = time.monotonic() - started
                examples = sum(r["examples"] for r in state.results.values())
                errors = sum(1 for r in state.results.values() if r["error"])
                rate = (examples - resumed) / max(elapsed, 1e-9)
                if planned_tasks:
                    left = max(0, planned_examples - examples)
                    head = (f"tasks {len(state.results)}/{planned_tasks} done "
                            f"({100 * examples // max(planned_examples, 1)}% of the examples)")
                    tail = f", about {_duration(left / rate) if rate > 0 else '?'} left" if left else ""
                else:
                    head = f"tasks {len(state.results)} done"
                    tail = f", {_duration(max(0.0, deadline - time.time()))} of the time budget left" \
                        if deadline is not None else ""
                progress(f"{head}, {rate:.1f} examples/s, {state.distinct_failures()} distinct failure(s)"
                         + (f", {errors} error(s)" if errors else "") + tail)
