"""Crash campaigns as Spark tasks (``mqconform crash --master URL --tasks N``).

A crash kills the system under test, so tasks cannot share one: each task makes its own adapter, and a broker
adapter its own private broker, which the task stops when its schedules are done.  Each task runs its share of the
schedules from a seed of its own (:func:`conformance.runner.crash.campaign`), cuts down its first breaking
schedules, and hands back its results as ``crash.json`` holds them; the driver merges them (:func:`merge`): the
schedules, the messages per class and each rule's count add up, the frequency and its interval are those of the
sums, and the first breaking schedule of each rule is the first task's that has one.
"""

from __future__ import annotations

import hashlib
import time
from pathlib import Path

from conformance.records.crash import CRASH_FORMAT, result_json, schedule_file, schedule_json, wilson
from conformance.records.history import write_json_atomic


def task_seed(seed: int, index: int) -> int:
    """The seed of task ``index`` of a campaign of ``seed``: its schedules its own, the same on every run."""
    return int.from_bytes(hashlib.sha256(f"crash|{seed}|{index}".encode()).digest()[:4], "big")


def plan(seed: int, schedules: int, tasks: int) -> list[dict]:
    """``tasks`` tasks sharing ``schedules`` schedules (the first ones one more where they do not divide)."""
    tasks = max(1, min(tasks, schedules))
    share, extra = divmod(schedules, tasks)
    return [{"id": f"crash-{i:03d}", "index": i, "seed": task_seed(seed, i), "schedules": share + (i < extra)}
            for i in range(tasks)]


def crash_task(args: tuple) -> dict:
    """The function Spark runs for each task: its schedules on an adapter of its own (a broker adapter's own
    private broker), ended by ``deadline`` (``time.time()``; None: none).  Returns the task's ``crash.json``, with
    its cut-down schedules' files under ``schedule_files``."""
    from adapters.registry import create_adapter
    from conformance.runner.crash import campaign

    spec, adapter_name, options, tries, deadline = args
    adapter = create_adapter(adapter_name, options)
    describe = adapter.describe()
    mono = None if deadline is None else time.monotonic() + (deadline - time.time())
    result = campaign(lambda: adapter, spec["seed"], spec["schedules"], deadline=mono, tries=tries)
    data = result_json(result, adapter_name, describe, spec["seed"])
    data["task"] = spec["id"]
    data["schedule_files"] = {rule: schedule_json(done, rule, adapter_name, spec["seed"], tries)
                              for rule, done in result.minimal.items()}
    return data


def merge(parts: list[dict], seed: int) -> dict:
    """The tasks' results (in task order) as one campaign's ``crash.json``."""
    total = sum(p["schedules"] for p in parts)
    classes: dict[str, int] = {}
    for p in parts:
        for cls, n in p["classes"].items():
            classes[cls] = classes.get(cls, 0) + n
    rules: dict[str, dict] = {}
    departures: dict[str, dict] = {}
    for p in parts:
        for rule, entry in p["rules"].items():
            kept = rules.setdefault(rule, {"schedules": 0, "first": entry["first"], "task": p["task"]})
            kept["schedules"] += entry["schedules"]
            if "minimal" in entry and "minimal" not in kept:
                kept["minimal"], kept["replay"], kept["replay_task"] = entry["minimal"], entry["replay"], p["task"]
        for rule, entry in p["departures"].items():
            kept = departures.setdefault(rule, {"schedules": 0, "first": entry["first"]})
            kept["schedules"] += entry["schedules"]
            if "minimal" in entry and "minimal" not in kept:
                kept["minimal"], kept["replay"], kept["replay_task"] = entry["minimal"], entry["replay"], p["task"]
    for rule in set(rules) & set(departures):   # a rule a drain broke: its drain's schedule is the one cut down
        for key in ("minimal", "replay", "replay_task"):
            departures[rule].pop(key, None)
    for entry in rules.values():
        entry["frequency"] = entry["schedules"] / total if total else 0.0
        entry["interval"] = list(wilson(entry["schedules"], total))
    first = parts[0] if parts else {}
    return {"format": CRASH_FORMAT, "version": 1, "adapter": first.get("adapter", ""), "system": first.get("system", {}),
            "seed": seed, "tasks": [p["task"] for p in parts], "schedules": total,
            "departed": sum(p["departed"] for p in parts), "interrupted": any(p["interrupted"] for p in parts),
            "classes": classes, "departures": dict(sorted(departures.items())), "tries": first.get("tries", 0),
            "cut_short": sorted({r for p in parts for r in p.get("cut_short", ())}),
            "rules": dict(sorted(rules.items()))}


def run(master: str, out: Path, adapter_name: str, options: dict, seed: int, schedules: int, tasks: int, tries: int,
        deadline: float | None, progress=None) -> dict:
    """The campaign's tasks on Spark at ``master``, all at once as its parallelism allows; each task's results in
    ``out/tasks``, the merged ones returned (the caller writes them), the cut-down schedules in ``out/schedules``."""
    from conformance.campaign.spark import spark_session, stop_session

    specs = plan(seed, schedules, tasks)
    spark = spark_session(master, out, 1)
    try:
        sc = spark.sparkContext
        args = [(spec, adapter_name, options, tries, deadline) for spec in specs]
        parts = sc.parallelize(args, len(args)).map(crash_task).collect()
    finally:
        stop_session(spark)
    (out / "tasks").mkdir(parents=True, exist_ok=True)
    for part in parts:
        files = part.pop("schedule_files", {})
        write_json_atomic(out / "tasks" / f"{part['task']}.json", part)
        part["schedule_files"] = files
    merged = merge(parts, seed)
    for rule, entry in [*merged["rules"].items(), *merged["departures"].items()]:
        if "replay_task" in entry:
            part = next(p for p in parts if p["task"] == entry["replay_task"])
            (out / "schedules").mkdir(exist_ok=True)
            write_json_atomic(out / "schedules" / schedule_file(rule), part["schedule_files"][rule])
            del entry["replay_task"]
    return merged


__all__ = ["plan", "crash_task", "merge", "run", "task_seed"]
