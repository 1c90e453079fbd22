"""``mqconform campaign``: many tasks on Spark, resumable, with a private broker where none was named."""

from __future__ import annotations

import json
import math
import random
import shutil
import signal
import tempfile
import time
from pathlib import Path

import attrs

from adapters.brokers.server import BrokerControlError
from adapters.registry import create_adapter
from conformance import __version__
from conformance.cli.common import (UsageError, _adapter_args, _adapter_options, _areas,
                                    _minutes, _on_signals, _positive, _seed, _stop, _without_default_restarts)
from conformance.cli.run import _clients, finish
from conformance.records.results import RunRecord, unreached_areas, vacuity
from conformance.runner.session import HarnessError


def add_parsers(sub) -> None:
    camp = sub.add_parser("campaign", help="a long fuzzing campaign on Spark (local by default)")
    _adapter_args(camp, required=True)
    camp.add_argument("--area", help="comma-separated areas (default: all)")
    budget = camp.add_mutually_exclusive_group(required=True)
    budget.add_argument("--examples", type=_positive, help="generated cases per area and platform")
    budget.add_argument("--minutes", type=_minutes, help="run tasks until this much time has passed")
    camp.add_argument("--master", default="local[*]", help="Spark master URL (default local[*])")
    camp.add_argument("--partitions", type=_positive, help="tasks run at once (default: Spark's parallelism)")
    camp.add_argument("--out", type=Path, required=True, help="campaign directory (results per task, then the run's)")
    camp.add_argument("--resume", action="store_true", help="run only the tasks missing from --out")
    camp.add_argument("--seed", type=_seed, help="campaign seed (default: random; --resume reuses the recorded one)")
    camp.add_argument("--task-examples", type=_positive, default=None, help="examples per task (default 50)")
    camp.add_argument("--task-timeout", type=_positive, default=None, help="seconds per task attempt (default 900)")
    camp.add_argument("--task-attempts", type=_positive, default=None, help="attempts per task (default 2)")
    camp.add_argument("--concurrency", type=_clients, metavar="N",
                      help="concurrent cases of N clients (2 to 4) at once instead of the areas' machines, the core "
                           "area only, each task going on after a race with its rules set aside (docs/concurrency.md)")
    camp.add_argument("--inject-crash", action="append", metavar="TASK[:N]", default=None,
                      help="make the first N attempts (default 1) of TASK crash (tests the retry path)")



def cmd_campaign(args, out) -> int:
    """A campaign; against a real broker that nobody named, one private broker for all its tasks."""
    from adapters.brokers.managed import ManagedBroker, broker_for

    started = time.time()   # a time budget counts from here: Spark's start-up is part of it
    name = broker_for(args.adapter, _adapter_options(args))
    if name is None:
        return _campaign(args, out, started, None)
    _not_too_short_for_a_broker(args)
    left = args.out / LEFT_BROKER
    if args.resume and left.is_file():   # the broker of an earlier attempt killed before it could stop it
        earlier = Path(left.read_text().strip())
        ManagedBroker(name, earlier).down()
        shutil.rmtree(earlier, ignore_errors=True)
    base = Path(tempfile.mkdtemp(prefix="mqconform-campaign-"))
    managed = ManagedBroker(name, base)
    say(out, f"campaign: starting a private {name} broker for the campaign")
    previous = _on_signals({signal.SIGTERM: _stop})   # so that the broker is stopped on SIGTERM too
    try:
        try:
            status = managed.up()
        except BrokerControlError as exc:
            raise HarnessError(str(exc)) from None
        out.write(f"campaign broker: {status.line()}\n")
        return _campaign(args, out, started, managed)
    finally:
        managed.down()
        _on_signals(previous)
        shutil.rmtree(base, ignore_errors=True)
        if left.is_file() and left.read_text().strip() == str(base):
            left.unlink()


def _not_too_short_for_a_broker(args) -> None:
    """A time budget too short for even one area on one platform after the broker and Spark start is refused
    before the broker is started (the exact check, with the areas the broker can run, follows its start)."""
    from conformance.campaign import spark as CP

    if not args.minutes or CP.master_problem(args.master):
        return
    workers = CP.workers_of(args.master, args.partitions) or 1
    least = CP.minimum_minutes(1, workers, CP.SPARK_START_ESTIMATE + CP.BROKER_START_ESTIMATE,
                               CP.least_task_seconds(True))
    if args.minutes < least:
        raise UsageError(f"--minutes {args.minutes:g} is too short for a campaign against a broker (its start, "
                         f"Spark's, and one area on one platform): give --minutes {_ceil(least)} or more")


#: In a campaign directory: where the campaign's own broker runs, until the campaign stops it.
LEFT_BROKER = ".campaign-broker"


def _campaign(args, out, started: float, managed) -> int:
    from conformance.campaign import spark as CP
    from conformance.runner.engine import area_platforms
    from conformance.records.history import Failure, write_json_atomic
    from conformance.records.results import Coverage

    areas = _areas(args.area)
    if args.concurrency and areas != ["core"]:
        raise UsageError("--concurrency: concurrent cases are of the core area (queues and units of work): "
                         "give --area core")
    options = _without_default_restarts(args.adapter, _adapter_options(args))
    crash_tasks = {}
    for item in args.inject_crash or ():
        task, _, times = item.partition(":")
        if not task or (times and not times.isdigit()):
            raise UsageError(f"--inject-crash: expected TASK or TASK:N, not {item!r}")
        crash_tasks[task] = int(times or 1)
    problem = CP.master_problem(args.master)
    if problem:
        raise UsageError(problem)
    adapter = create_adapter(args.adapter, options)   # a bad adapter or option fails before anything is written
    try:
        caps = adapter.capabilities()
        describe = adapter.describe()
        concurrent_calls = bool(getattr(adapter, "concurrent_calls", False))
    finally:
        adapter.close()
    if args.concurrency and not concurrent_calls:
        raise UsageError(f"--concurrency: adapter {args.adapter!r} does not take calls from several clients at once "
                         "(docs/concurrency.md)")
    pairs = [(a, p) for a in areas for p in area_platforms(a, caps)]
    if not pairs:
        raise HarnessError(f"none of the areas {', '.join(areas)} is applicable to adapter {args.adapter!r}")
    known = CP.workers_of(args.master, args.partitions)
    # a master whose parallelism its URL does not say (a cluster): at least the budget of one round
    workers = known or len(pairs)
    least = CP.least_task_seconds(caps.realtime)
    # what is spent already (a broker's start-up) counts: the budget runs from the command's start
    before_spark = CP.SPARK_START_ESTIMATE + (time.time() - started)
    if args.minutes and args.minutes < CP.minimum_minutes(len(pairs), workers, before_spark, least):
        on = f"on {workers} worker(s)" if known else "however many workers the master has"
        raise UsageError(f"--minutes {args.minutes:g} is too short to run each of the {len(pairs)} area/platform "
                         f"pairs once {on} after starting Spark: give --minutes "
                         f"{_ceil(CP.minimum_minutes(len(pairs), workers, before_spark, least))} or more, "
                         "or fewer areas")
    outdir = args.out
    plan_file = outdir / "campaign.json"
    wanted = {"adapter": args.adapter, "options": options, "areas": areas,
              "task_examples": args.task_examples or CP.TASK_EXAMPLES, "examples": args.examples,
              "concurrency": args.concurrency}
    if args.resume:
        try:
            plan = json.loads(plan_file.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise UsageError(f"--resume: cannot read {plan_file} ({getattr(exc, 'strerror', None) or exc})") from None
        if plan.get("format") != CP.CAMPAIGN_FORMAT:
            raise UsageError(f"--resume: {plan_file} is not an mqconform campaign")
        for key, value in wanted.items():
            if key == "task_examples" and args.task_examples is None:
                continue
            if plan.get(key) != value:
                raise UsageError(f"--resume: {key} differs from the campaign in {outdir} "
                                 f"({plan.get(key)!r} there, {value!r} now)")
        if args.seed is not None and args.seed != plan["seed"]:
            raise UsageError(f"--resume: seed differs from the campaign in {outdir} ({plan['seed']})")
        seed, per_task = plan["seed"], plan["task_examples"]
    else:
        if plan_file.exists():
            raise UsageError(f"{outdir} already holds a campaign: add --resume, or choose another --out")
        if outdir.exists() and (not outdir.is_dir() or any(outdir.iterdir())):
            raise UsageError(f"{outdir} is not empty and holds no campaign: choose another --out "
                             "(nothing in it was touched)")
        seed = args.seed if args.seed is not None else random.randrange(2**31)
        per_task = wanted["task_examples"]
        try:
            (outdir / "tasks").mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise UsageError(f"cannot use campaign directory {outdir}: {exc.strerror}") from None
        write_json_atomic(plan_file, {"format": CP.CAMPAIGN_FORMAT, "version": CP.CAMPAIGN_VERSION,
                                      "kit_version": __version__, "seed": seed, **wanted,
                                      "minutes": args.minutes, "master": args.master})
    if managed is not None:
        (outdir / LEFT_BROKER).write_text(str(managed.server.base) + "\n")
    state = CP.CampaignState(out=outdir)
    CP.load_finished(outdir, state)
    out.write(f"mqconform {__version__} campaign: adapter {args.adapter}, areas {', '.join(areas)}, seed {seed}, "
              f"master {args.master}" + (f", resuming with {len(state.results)} task(s) done" if state.results else "")
              + "\n")
    say(out, f"  starting Spark (master {args.master}; its log: {outdir / 'spark.log'})")
    spark_began = time.time()
    spark = CP.spark_session(args.master, outdir, args.task_attempts or CP.TASK_ATTEMPTS)
    spark_seconds = time.time() - spark_began
    parallelism = args.partitions or max(1, spark.sparkContext.defaultParallelism)
    if args.examples:
        specs = CP.plan_tasks(seed, pairs, args.examples, per_task)
        if args.concurrency:
            specs = [attrs.evolve(s, concurrency=args.concurrency) for s in specs]
        deadline = None
        todo = [s for s in specs if s.id not in state.results]
        say(out, f"  Spark started in {CP._duration(spark_seconds)}: {len(todo)} task(s) of {len(specs)} to run "
                 f"({sum(s.examples for s in todo)} cases), {parallelism} at a time")
    else:
        # tasks stop a little before the budget ends, leaving its last part to stopping Spark and writing
        deadline = started + args.minutes * 60 * (1 - CP.TEARDOWN_SHARE)
        # a departure found near the deadline is shrunk into half of that last part, no further
        finish_by = started + args.minutes * 60 * (1 - CP.TEARDOWN_SHARE / 2)
        seconds = CP.task_seconds(deadline - time.time(), len(pairs), parallelism)
        if seconds < least:
            CP.stop_session(spark)
            raise CampaignTooShort(
                f"starting Spark took {CP._duration(spark_seconds)} of the {args.minutes:g} minute budget: what is "
                f"left cannot run each of the {len(pairs)} area/platform pairs once on {parallelism} worker(s) "
                f"(give --minutes {_ceil(CP.minimum_minutes(len(pairs), parallelism, time.time() - started, least))}"
                " or more)")
        specs = CP.endless_tasks(seed, pairs, deadline, seconds=seconds,
                                 examples=args.task_examples or CP.TASK_EXAMPLES_TIMED, finish_by=finish_by)
        if args.concurrency:
            specs = (attrs.evolve(s, concurrency=args.concurrency) for s in specs)
        say(out, f"  Spark started in {CP._duration(spark_seconds)}: tasks of {seconds:.0f} s each, "
                 f"{parallelism} at a time, each of the {len(pairs)} area/platform pairs first; the budget ends at "
                 f"{time.strftime('%H:%M:%S', time.localtime(started + args.minutes * 60))}")

    try:
        CP.run_campaign(spark=spark, specs=specs, adapter_name=args.adapter, options=options, out=outdir,
                        state=state, deadline=deadline, parallelism=parallelism,
                        timeout=args.task_timeout or CP.TASK_TIMEOUT, attempts=args.task_attempts or CP.TASK_ATTEMPTS,
                        crash_tasks=crash_tasks, progress=lambda line: say(out, f"  {line}"),
                        after_task=None if managed is None else lambda result: _revive(managed, result))
    finally:
        tasks_ended = time.time()
        CP.stop_session(spark)
    record = RunRecord(adapter=args.adapter, describe=describe, capabilities=caps.to_json(), areas=areas,
                       seed=seed, examples=args.examples or 0, started=started)
    coverage = Coverage()
    for result in state.results.values():
        for name, counts in result["coverage"].items():
            getattr(coverage, name).update(counts)
        coverage.examples += result["examples"]
        coverage.steps += result["steps"]
    record.coverage = coverage
    for result in state.results.values():
        where = f"{result['area']} on {result['platform']}"
        record.seconds[where] = round(record.seconds.get(where, 0.0) + result["seconds"], 3)
    record.failures = [Failure.from_json(d) for d in state.failures.values()]
    if args.concurrency:
        from conformance.records.races import RaceRecord

        record.concurrency = args.concurrency
        record.races = [RaceRecord.from_json(d) for d in state.races.values()]
    errors = [f"{r['task']}: {r['error']}" for r in state.results.values() if r["error"]]
    if errors:
        record.error = f"{len(errors)} task(s) ended in error; first: {errors[0]}"
    else:
        # verdicts are evidence only where cases ran: a pair the budget never reached, or an area none of
        # whose rules a case reached, makes the campaign an error (exit 2), never a pass
        ran = {(r["area"], r["platform"]) for r in state.results.values() if r["examples"]}
        missed = [f"{a} on {p}" for a, p in pairs if (a, p) not in ran]
        rows = record.rule_rows()
        why = vacuity(rows, areas, coverage.examples)
        if missed:
            record.error = f"no case ran in {', '.join(missed)}: the budget ended first" + (f"; {why}" if why else "")
            record.errored = [a for a in areas if not any(area == a for area, _ in ran) and
                              any(area == a for area, _ in pairs)]
        elif why:
            record.error = why
            record.errored = unreached_areas(rows, areas)
    record.ended = time.time()
    _spent(out, record, started, spark_seconds, tasks_ended, args.minutes)
    code = finish(record, outdir, out, lambda failure, path: (
        f"\nDistinct failure: {'+'.join(failure.blamed)} ({len(failure.steps)} steps)\n"
        f"Replay with: mqconform replay {path}\n"))
    if record.races:
        from conformance.records.races import race_replay_command

        paths = json.loads((outdir / "run.json").read_text(encoding="utf-8")).get("races") or []
        for race, path in zip(record.races, paths):
            out.write(f"\nDistinct race: {race.rules_text} ({len(race.events)} calls of "
                      f"{len(race.clients)} clients)\nReplay with: {race_replay_command(outdir / path)}\n")
    return code


class CampaignTooShort(UsageError):
    """A time budget that starting Spark left too little of (one line, exit 2)."""


def _ceil(minutes: float) -> str:
    """Minutes rounded up to a tenth, as --minutes takes them."""
    return f"{math.ceil(minutes * 10) / 10:g}"


def say(out, line: str) -> None:
    """One line of progress, shown at once (a pipe would otherwise hold it until the campaign ends)."""
    out.write(line + "\n")
    flush = getattr(out, "flush", None)
    if flush is not None:
        flush()


def _spent(out, record, started: float, spark_seconds: float, tasks_ended: float, minutes: float | None) -> None:
    """Where the time went: starting Spark, the tasks, stopping and writing (the tasks' worker time by area and
    platform follows in the summary)."""
    from conformance.campaign.spark import _duration

    budget = f" of the {_duration(minutes * 60)} budget" if minutes else ""
    say(out, f"\nTime: {_duration(record.ended - started)}{budget}: starting Spark {_duration(spark_seconds)}, tasks "
             f"{_duration(max(0.0, tasks_ended - started - spark_seconds))}, "
             f"stopping Spark and writing {_duration(max(0.0, record.ended - tasks_ended))}")


def _revive(managed, result: dict) -> str | None:
    """After a task that ended in error: the campaign's broker started again if it is gone."""
    if not result.get("error"):
        return None
    try:
        if managed.ensure():
            return f"{managed.name} broker was gone after task {result['task']}: started again"
    except BrokerControlError as exc:
        return f"{managed.name} broker could not be started again: {exc}"
    return None




COMMANDS = {"campaign": cmd_campaign}
