"""Long fuzzing campaigns on Spark: tasks by deterministic seed ranges, results kept per task.

A campaign is split into tasks, each one area on one platform with its own seed
and example budget.  Each task runs its machine in a Spark Python worker and
returns plain JSON: coverage counters, examples and steps run, time spent, and
its failures as replay files' JSON.  The driver writes every finished task to
``OUT/tasks/TASK.json`` at once, so a campaign killed at any moment loses only
the tasks in flight and ``--resume`` runs only what is missing.  Failures are
deduplicated across tasks by fingerprint (the area, the rules broken and the
fields that differed), keeping the smallest counterexample; a task that meets a
failure already known records it without shrinking it again.

Inside a task the machine runs in a child process with a time limit: a crash or
a hang makes the attempt fail, Spark runs it again, and the last attempt records
an error with the task's seed instead of failing the campaign.  The result
directory (``run.json``, ``rules.jsonl``, ``failures/``) is the one
``mqconform report`` reads.
"""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import os
import re
import sys
import threading
import time
import traceback
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from pathlib import Path
from typing import Callable

import attrs

from conformance.history import Failure, write_json_atomic
from conformance.session import HarnessError

CAMPAIGN_FORMAT, CAMPAIGN_VERSION = "mqconform-campaign", 1
#: Examples per task unless --task-examples says otherwise.
TASK_EXAMPLES = 50
#: Seconds a task attempt may take before it is stopped and retried.
TASK_TIMEOUT = 900
#: Attempts per task (the first and Spark's retries).
TASK_ATTEMPTS = 2


class CampaignError(HarnessError):
    """A campaign that cannot start or continue (one line)."""


#: The part of a time budget kept for stopping Spark and writing the results.
TEARDOWN_SHARE = 0.1


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

    def to_json(self) -> dict:
        return attrs.asdict(self)


def task_seed(seed: int, area: str, platform: str, index: int) -> int:
    digest = hashlib.sha256(f"{seed}/{area}/{platform}/{index}".encode()).digest()
    return int.from_bytes(digest[:4], "big")


def plan_tasks(seed: int, pairs: list[tuple[str, str]], total: int | None, per_task: int,
               start: int = 0, count: int | None = None) -> list[TaskSpec]:
    """Tasks for each (area, platform): ``total`` examples in tasks of ``per_task``; or, without a
    total, ``count`` more tasks per pair from index ``start`` (time-boxed campaigns go in waves)."""
    out = []
    for area, platform in pairs:
        if total is not None:
            sizes = [per_task] * (total // per_task) + ([total % per_task] if total % per_task else [])
            indices = range(len(sizes))
        else:
            indices = range(start, start + (count or 1))
            sizes = [per_task] * len(indices)
        for i, n in zip(indices, sizes):
            out.append(TaskSpec(id=f"{area}-{platform}-{i:05d}", area=area, platform=platform, index=i,
                                seed=task_seed(seed, area, platform, i), examples=n))
    return out


# --------------------------------------------------------------------------- inside a worker


def fingerprint(failure: Failure) -> str:
    """What makes two failures one: the area, the rules broken and the fields of the observation that
    differed.  It is known before shrinking, so a failure met again is not shrunk again; of the
    counterexamples with one fingerprint the campaign keeps the smallest."""
    return f"{failure.area}|{'+'.join(failure.rules)}|{'+'.join(failure.mismatch.fields)}"


def _run_machine(spec: dict, adapter_name: str, options: dict, known: list[str], crash: bool) -> dict:
    """Run one task's machine in this process; returns the task's JSON result."""
    from hypothesis import Phase, settings
    from hypothesis.stateful import run_state_machine_as_test

    from adapters.base import AdapterError
    from adapters.registry import create_adapter
    from conformance.engine import bound_machine, machine_settings
    from conformance.minimise import minimise
    from conformance.results import Coverage
    from conformance.session import HarnessError, NonConformance

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
    try:
        machine = bound_machine(adapter, spec["area"], spec["platform"], spec["seed"], options, coverage,
                                deadline=spec.get("deadline"))
        try:
            # first without shrinking: a failure already known elsewhere is not shrunk again
            run_state_machine_as_test(machine, settings=settings(machine_settings(spec["examples"], database=db),
                                                                 phases=(Phase.explicit, Phase.generate)))
        except NonConformance as exc:
            unshrunk = exc.failure
            if fingerprint(unshrunk) in known:
                coverage.failed.update(unshrunk.rules)
                result["duplicates"].append(fingerprint(unshrunk))
            else:
                # the same seed finds it again, and this time it is shrunk
                # shrinking a departure already found is not cut short by the time budget
                machine = bound_machine(adapter, spec["area"], spec["platform"], spec["seed"], options, Coverage())
                failure = unshrunk
                try:
                    run_state_machine_as_test(machine, settings=machine_settings(spec["examples"], database=db))
                except NonConformance as shrunk:
                    failure = shrunk.failure
                failure = minimise(failure, adapter)
                coverage.failed.update(failure.rules)
                result["failures"].append(failure.to_json())
    except HarnessError as exc:
        result["error"] = str(exc)
    finally:
        try:
            adapter.close()
        except Exception:  # noqa: BLE001 - closing must not hide the task's result
            pass
    return _finish(result, coverage, started)


def _finish(result: dict, coverage, started: float) -> dict:
    result.update({
        "examples": coverage.examples, "steps": coverage.steps, "seconds": round(time.monotonic() - started, 3),
        "coverage": {name: dict(getattr(coverage, name)) for name in ("exercised", "checked", "failed",
                                                                        "indeterminate", "shares_observed",
                                                                        "shares_expected")},
    })
    return result


def _child(conn, *args) -> None:
    try:
        conn.send(("ok", _run_machine(*args)))
    except BaseException:  # noqa: BLE001 - reported to the parent as data
        conn.send(("error", traceback.format_exc(limit=5)))
    finally:
        conn.close()


def run_task(spec: dict, adapter_name: str, options: dict, known: list[str], timeout: float,
             attempt: int, last_attempt: bool, crash_tasks: dict) -> dict:
    """One attempt at a task, in a child process with a time limit.

    A crash or a hang raises (so Spark retries the task) unless this is the last
    attempt, which returns an error record naming the task's seed instead.
    """
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
    os.environ.setdefault("SPARK_CONF_DIR", str(conf_dir))
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        raise CampaignError("PySpark is not installed: run 'bash scripts/setup.sh --install'") from None
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
    spark.sparkContext.setLogLevel("ERROR")
    return spark


@attrs.define
class CampaignState:
    """What the driver knows: results per task and failures by fingerprint (smallest kept)."""

    out: Path
    results: dict = attrs.Factory(dict)
    failures: dict = attrs.Factory(dict)   # fingerprint -> the smallest failure's JSON
    known: set = attrs.Factory(set)        # fingerprints of every failure met

    def add(self, result: dict) -> None:
        self.results[result["task"]] = result
        for data in result["failures"]:
            fp = fingerprint(Failure.from_json(data))
            self.known.add(fp)
            kept = self.failures.get(fp)
            if kept is None or len(data["steps"]) < len(kept["steps"]):
                self.failures[fp] = data
        self.known.update(result.get("duplicates", ()))

    def distinct_failures(self) -> int:
        return len(self.failures)


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


def run_campaign(*, spark, specs_waves: Callable[[int], list[TaskSpec]], adapter_name: str, options: dict,
                 out: Path, state: CampaignState, deadline: float | None, parallelism: int,
                 timeout: float, attempts: int, crash_tasks: dict, progress: Callable[[str], None]) -> None:
    """Run waves of tasks (``specs_waves(n)`` gives wave n; an empty wave ends the campaign)."""
    sc = spark.sparkContext
    started = time.monotonic()
    lock = threading.Lock()

    def one(spec: TaskSpec) -> dict:
        with lock:
            known = sorted(state.known)
        args = (spec.to_json(), adapter_name, options, known, timeout, attempts, crash_tasks)
        sc.setLocalProperty("spark.job.description", spec.id)
        return sc.parallelize([args], 1).map(spark_task).collect()[0]

    wave = 0
    resumed = sum(r["examples"] for r in state.results.values())
    planned_tasks = planned_examples = None   # known up front when the budget is a number of examples
    with ThreadPoolExecutor(max_workers=parallelism) as pool:
        while True:
            specs = [s for s in specs_waves(wave) if s.id not in state.results]
            if wave == 0 and deadline is None:
                planned_tasks = len(state.results) + len(specs)
                planned_examples = resumed + sum(s.examples for s in specs)
            wave += 1
            if not specs:
                if deadline is None or wave > 10_000:
                    break
                continue
            pending = {pool.submit(one, s): s for s in specs}
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
            if deadline is not None and time.time() >= deadline:
                break
            if deadline is None:
                break
