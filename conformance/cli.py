"""The ``mqconform`` command line.

Exit codes: 0 conformant (or a listing printed), 1 non-conformance found,
2 usage or infrastructure error, 3 ``brokers status`` found a broker not ready,
130 interrupted (SIGINT or SIGTERM; a run writes what it found so far).  Errors are one line on stderr, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import secrets
import shutil
import signal
import sys
import tempfile
import time
from pathlib import Path

from tabulate import tabulate

from adapters.base import AdapterError, AdapterOptionError, parse_options
from adapters.brokers.server import BrokerControlError
from adapters.registry import UnknownAdapter, adapter_class, adapter_names, create_adapter
from adapters.simulated.faults import FAULTS
from adapters.subprocess import keep_artifacts
from conformance import __version__
from conformance.cluster_whatif import ClusterConfigError
from conformance.engine import (BY_SYSTEM, SHRINK_CASES, SHRINK_CASES_REALTIME, SHRINK_SECONDS_REALTIME,
                               Interrupted, run_areas)
from conformance.history import ReplayFileError, load_failure
from conformance.regression import pytest_source, replay_on
from conformance.render import render_failure
from conformance.results import PASS, RunRecord
from conformance.session import STOP, HarnessError
from reference_model.classes import names_of
from reference_model.model import HistoryError
from reference_model.rules import RULES, parse_areas

EXIT_OK, EXIT_NONCONFORMANT, EXIT_ERROR = 0, 1, 2
EXIT_NOT_READY = 3  # mqconform brokers status: some broker is not ready
EXIT_INTERRUPTED = 130  # SIGINT or SIGTERM; what was found so far is written
DEFAULT_EXAMPLES = 200
DEFAULT_KEEP_GOING = 2
BENCH_FIGURES = ("detect", "throughput", "depth", "campaign", "brokers")   # conformance.bench.FIGURES


class UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, exit 2
        raise UsageError(message)


def _areas(text: str | None) -> list[str]:
    try:
        return parse_areas(text)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def _adapter_options(args) -> dict[str, str]:
    options = parse_options(args.adapter_opt or [])
    faults = getattr(args, "faults", None)
    if faults is not None:
        if not faults.strip(" ,"):
            raise UsageError("--faults names no fault")
        options["faults"] = faults  # the simulated adapter validates the names
    return options


def _whole(minimum: int):
    """An argparse type: a whole number of at least ``minimum``."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum}: {text!r}")
        return value
    return parse


_positive = _whole(1)
_count = _whole(0)


def _duration(unit: str):
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number of {unit}: {text!r}") from None
        if not 0 < value < float("inf"):
            raise argparse.ArgumentTypeError(f"must be more than 0: {text!r}")
        return value
    return parse


_minutes = _duration("minutes")
_seconds = _duration("seconds")


def _seed(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="mqconform", description="Conformance kit for IBM MQ queue-manager semantics.")
    p.add_argument("--version", action="version", version=f"mqconform {__version__}")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)

    run = sub.add_parser("run", help="run the conformance machines against an adapter")
    _adapter_args(run, required=True)
    run.add_argument("--area", help="comma-separated areas (default: all)")
    run.add_argument("--examples", type=_positive, default=DEFAULT_EXAMPLES,
                     help=f"generated cases per area (default {DEFAULT_EXAMPLES})")
    run.add_argument("--seed", type=_seed, help="seed for reproducible generation (default: random)")
    run.add_argument("--results", type=Path, help="result directory (default: mqconform-results/run-TIME)")
    run.add_argument("--keep-going", type=_count, default=DEFAULT_KEEP_GOING, metavar="N",
                     help="after a departure, up to N more rounds per area looking for departures from other "
                          f"rules (default {DEFAULT_KEEP_GOING}; 0 stops at the first)")
    run.add_argument("--no-minimise", action="store_true",
                     help="keep each counterexample as Hypothesis shrank it, without minimising its history")
    run.add_argument("--shrink-cases", type=_count, default=BY_SYSTEM, metavar="N",
                     help=f"cases Hypothesis may run shrinking a departure (default {SHRINK_CASES}, "
                          f"{SHRINK_CASES_REALTIME} on a system that runs on real time)")
    run.add_argument("--shrink-seconds", type=_seconds, default=BY_SYSTEM, metavar="S",
                     help="a time limit on shrinking one departure, as a safety net: a shrink it cuts makes "
                          "the run's verdicts depend on the clock, and the run says so (default: none on a "
                          f"virtual clock, {SHRINK_SECONDS_REALTIME:g} s on a system that runs on real time)")

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
    camp.add_argument("--inject-crash", action="append", metavar="TASK[:N]", default=[],
                      help="make the first N attempts (default 1) of TASK crash (tests the retry path)")

    sub.add_parser("adapters", help="list the adapters")
    faults = sub.add_parser("faults", help="list the simulated queue manager's faults")
    faults.add_argument("--area")
    rules = sub.add_parser("rules", help="list the rules: ID, area, IBM document and item, summary")
    rules.add_argument("--area")
    rules.add_argument("--format", choices=("text", "json"), default="text")
    srcs = sub.add_parser("sources", help="list the IBM MQ documentation topics the rules come from")
    srcs.add_argument("--format", choices=("text", "json", "markdown"), default="text")

    cluster = sub.add_parser("cluster", help="cluster workload tools")
    cluster_sub = cluster.add_subparsers(dest="cluster_command", required=True, parser_class=_Parser)
    simulate = cluster_sub.add_parser("simulate", help="where would messages go in this cluster?")
    simulate.add_argument("config", type=Path, help="cluster description (TOML)")
    simulate.add_argument("--messages", type=_positive, default=1000)
    simulate.add_argument("--plot", type=Path, help="write a bar chart of the shares (PNG)")

    report = sub.add_parser("report", help="a compliance report from result directories")
    report.add_argument("dirs", nargs="+", type=Path, metavar="DIR", help="result directories (run, plugin, campaign)")
    report.add_argument("--format", choices=("md", "html", "json", "junit"), default=None,
                        help="default: from --out's extension (.md, .html, .json, .xml for JUnit), else md")
    report.add_argument("--out", type=Path, required=True, help="the report file to write")
    report.add_argument("--baseline", type=Path, action="append", metavar="DIR",
                        help="an earlier run's result directory (repeatable): mark new-fail / fixed / still-failing")
    report.add_argument("--known-deviations", type=Path, action="append", metavar="FILE",
                        help="a known-deviations file (TOML, repeatable): failures it explains are shown as "
                             "known deviations and do not fail the report; entries the runs pass are stale")
    report.add_argument("--report-only", action="store_true", help="exit 0 even when rules fail")

    dlq = sub.add_parser("dlq", help="DLQ handler rules-table tools")
    dlq_sub = dlq.add_subparsers(dest="dlq_command", required=True, parser_class=_Parser)
    check = dlq_sub.add_parser("check", help="validate a rules table (exit 0 valid, 1 with every error listed)")
    check.add_argument("table", type=Path)
    dsim = dlq_sub.add_parser("simulate", help="what the table does to each message of a file")
    dsim.add_argument("table", type=Path)
    dsim.add_argument("--messages", type=Path, required=True, help="messages file (TOML, see docs/dlq-tools.md)")

    brokers = sub.add_parser("brokers", help="start, show or stop the kit's private RabbitMQ and ActiveMQ")
    brokers.add_argument("action", choices=("up", "status", "down"))
    brokers.add_argument("names", nargs="*", metavar="BROKER", help="rabbitmq, activemq or all (default: all)")
    brokers.add_argument("--dir", type=Path, help="run directory for the brokers' state, data and logs "
                         "(default: $MQCONFORM_RUN_DIR or ~/.cache/mqconform/run)")

    bench = sub.add_parser("bench", help="performance figures, each a ratio measured side by side in one run")
    bench.add_argument("--only", help="comma-separated figures: " + ", ".join(BENCH_FIGURES) + " (default: all)")
    bench.add_argument("--faults", help="comma-separated catalogue faults for time to detect (default: all)")
    bench.add_argument("--area", help="comma-separated areas for throughput (default: all)")
    bench.add_argument("--seed", type=_seed, default=7, help="seed of the time-to-detect runs (default 7)")
    bench.add_argument("--examples", type=_positive, default=DEFAULT_EXAMPLES,
                       help=f"examples of each time-to-detect run (default {DEFAULT_EXAMPLES})")
    bench.add_argument("--task-seconds", type=_duration("seconds"), default=1.5,
                       help="seconds per task of the campaign figure (default 1.5)")

    replay = sub.add_parser("replay", help="replay a saved failing history")
    replay.add_argument("file", type=Path)
    _adapter_args(replay, required=False)
    replay.add_argument("--as-pytest", type=Path, metavar="OUT.py",
                        help="write a standalone pytest test that replays the history, instead of running it")
    return p


def _adapter_args(p: argparse.ArgumentParser, required: bool) -> None:
    p.add_argument("--adapter", required=required, help="adapter name (see 'mqconform adapters')")
    p.add_argument("--adapter-opt", action="append", metavar="KEY=VALUE", help="adapter option (repeatable)")
    p.add_argument("--faults", help="comma-separated faults for the simulated adapter")


# ---------------------------------------------------------------- commands


def cmd_adapters(args, out) -> int:
    for name in adapter_names():
        doc = (adapter_class(name).__doc__ or "").strip().splitlines()
        out.write(f"{name}\t{doc[0] if doc else ''}\n")
    return EXIT_OK


def cmd_faults(args, out) -> int:
    areas = _areas(args.area)
    for f in FAULTS.values():
        if f.area in areas:
            out.write(f"{f.name}\t{f.area}\t{f.description}\n")
    return EXIT_OK


def cmd_rules(args, out) -> int:
    areas = _areas(args.area)
    for area in areas:
        for r in RULES.all(area):
            if args.format == "json":
                out.write(json.dumps({"rule": r.id, "area": r.area, "source": r.source, "cites": r.citations(),
                                      "summary": r.summary, "platforms": list(r.platforms), "note": r.note,
                                      "input_classes": list(names_of(r.id))},
                                     ensure_ascii=False) + "\n")
            else:
                out.write(f"{r.id}\t{r.area}\t{r.source}\t{r.summary}\n")
    return EXIT_OK


def cmd_sources(args, out) -> int:
    from conformance import sourcedoc
    out.write(sourcedoc.render(args.format))
    return EXIT_OK


def _results_dir(given: Path | None) -> Path:
    """Where a run writes: a new directory, never one holding anything already."""
    if given is None:
        stamp = time.strftime("run-%Y%m%d-%H%M%S")
        return Path("mqconform-results") / f"{stamp}-{os.getpid()}-{secrets.token_hex(2)}"
    if given.exists() and (not given.is_dir() or any(given.iterdir())):
        raise UsageError(f"results directory {given} already holds something; give a new or empty one")
    return given


def _stop(signum, frame):
    STOP.set()
    raise KeyboardInterrupt


def _on_signals(handlers: dict) -> dict:
    """Install ``{signal: handler}`` (only the main thread can); returns the previous handlers."""
    previous = {}
    for sig, handler in handlers.items():
        try:
            previous[sig] = signal.signal(sig, handler)
        except (ValueError, TypeError):
            pass
    return previous


def cmd_run(args, out) -> int:
    areas = _areas(args.area)
    options = _adapter_options(args)
    seed = args.seed if args.seed is not None else random.randrange(2**31)
    results = _results_dir(args.results)
    adapter = create_adapter(args.adapter, options)
    try:  # before the run, so that a long run is never lost for want of a place to write it
        results.mkdir(parents=True, exist_ok=True)
        _RESULTS.append(results)
    except OSError as exc:
        adapter.close()
        raise UsageError(f"cannot use results directory {results}: {exc.strerror}") from None
    out.write(f"mqconform {__version__}: adapter {args.adapter}, areas {', '.join(areas)}, "
              f"{args.examples} examples per area, seed {seed}\n")
    out.write(f"Results: {results}\n")
    out.flush()
    STOP.clear()
    previous = _on_signals({signal.SIGINT: _stop, signal.SIGTERM: _stop})
    try:
        record = run_areas(adapter, areas, args.examples, seed, options,
                           progress=lambda line: (out.write(f"  {line}\n"), out.flush()),
                           keep_going=args.keep_going, on_update=lambda r: r.write(results),
                           minimise_histories=not args.no_minimise, shrink_seconds=args.shrink_seconds,
                           shrink_cases=args.shrink_cases)
    except Interrupted as stop:
        stop.record.write(results)
        out.write(f"\nInterrupted during {stop.record.interrupted[0]}: "
                  f"{len(stop.record.failures)} departures found so far; results so far in {results}\n")
        return EXIT_INTERRUPTED
    finally:
        _on_signals(previous)
        STOP.clear()
        adapter.close()
        keep_artifacts(adapter, results)
    replay_paths = record.write(results)
    _summary(record, out)
    for failure, path in zip(record.failures, replay_paths):
        out.write("\n" + render_failure(failure) + "\n")
        out.write(f"\nReplay file: {path}\n")
        out.write(f"Replay with: mqconform replay {path}\n")
    out.write(f"\nResults: {results}\n")
    if record.error:
        raise HarnessError(record.error)
    return EXIT_NONCONFORMANT if record.failures else EXIT_OK


def _summary(record: RunRecord, out) -> None:
    rows = record.rule_rows()
    by_area: dict[str, dict[str, int]] = {}
    for row in rows:
        counts = by_area.setdefault(row["area"], {})
        counts[row["verdict"]] = counts.get(row["verdict"], 0) + 1
    verdicts = ["pass", "fail", "not applicable", "not exercised", "indeterminate", "error"]
    table = [[area] + [counts.get(v, 0) for v in verdicts] for area, counts in by_area.items()]
    out.write(f"\n{record.coverage.examples} cases, {record.coverage.steps} steps\n")
    out.write(tabulate(table, headers=["area"] + verdicts) + "\n")
    # An area the system cannot express at all is one line with its reason, not a line per rule.
    whole = {}
    for area in by_area:
        reasons = {r.get("not_applicable", "") for r in rows if r["area"] == area}
        if set(by_area[area]) == {"not applicable"} and len(reasons) == 1 and "" not in reasons:
            whole[area] = reasons.pop()
    for area, reason in whole.items():
        out.write(f"{area}: not applicable: {reason}\n")
    flagged = [r for r in rows if r["verdict"] not in (PASS,) and r["area"] not in whole]
    if flagged:
        out.write("\n" + tabulate(
            [[r["rule"], r["verdict"], r["exercised"],
              ("why: " + r["not_applicable"] if "not_applicable" in r else r["summary"])[:90]] for r in flagged],
            headers=["rule", "verdict", "exercised", "summary (or why not applicable)"]) + "\n")
    partly = [(r["rule"], record.coverage.unreached(r["rule"])) for r in rows if r["verdict"] == PASS]
    partly = [(rule, names) for rule, names in partly if names]
    if partly:
        out.write(f"\n{len(partly)} rules passed without every input class reached (not fully exercised):\n")
        out.write(tabulate([[rule, "; ".join(names)] for rule, names in partly],
                           headers=["rule", "input classes never reached"]) + "\n")
    if record.timed_shrinks:
        out.write(f"\nShrinking stopped at its time limit ({', '.join(record.timed_shrinks)}): which cases ran "
                  "depended on the clock, so rules reached only while shrinking may get another verdict from "
                  "the same seed (--shrink-cases N bounds shrinking by cases alone).\n")


def cmd_replay(args, out) -> int:
    if args.adapter_opt and not args.adapter:
        raise UsageError("--adapter-opt needs --adapter (without it the replay uses the recorded adapter and options)")
    failure = load_failure(args.file)
    name = args.adapter or failure.adapter
    options = _adapter_options(args) if args.adapter else dict(failure.adapter_options)
    if not args.adapter and args.faults:
        options["faults"] = args.faults
    if args.as_pytest is not None:
        return _replay_as_pytest(args, out, failure, name, options)
    adapter = create_adapter(name, options)
    try:
        found = replay_on(adapter, failure, options)
    finally:
        adapter.close()
    if found is not None:
        out.write(render_failure(found) + "\n")
        out.write(f"\nStill failing: {args.file}\n")
        return EXIT_NONCONFORMANT
    out.write(f"Replayed {len(failure.steps)} steps on adapter {name}: conformant (fixed).\n")
    return EXIT_OK


def _replay_as_pytest(args, out, failure, name: str, options: dict) -> int:
    """Write the replay as a standalone pytest module instead of running it."""
    from conformance.session import _secret

    target = args.as_pytest
    if target.suffix != ".py":
        raise UsageError(f"--as-pytest {target}: a pytest module's name ends in .py")
    if not target.parent.is_dir():
        raise UsageError(f"--as-pytest {target}: no such directory {target.parent}")
    if target.exists():
        raise UsageError(f"--as-pytest {target}: already exists; choose another name")
    create_adapter(name, options).close()   # a bad adapter or option fails here, not in the user's suite
    kept = {k: v for k, v in options.items() if not _secret(k)}
    source = pytest_source(failure, failure.to_json(), name, kept, args.file.name)
    try:
        target.write_text(source, encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"--as-pytest {target}: cannot write ({exc.strerror})") from None
    out.write(f"Regression test: {target} (run it with: pytest {target})\n")
    return EXIT_OK


def cmd_cluster(args, out) -> int:
    from conformance import cluster_whatif as WI

    scenario = WI.load_scenario(args.config)
    why = WI.plot_problem(args.plot) if args.plot else None
    if why:
        raise UsageError(f"--plot {why}")
    outcome = WI.simulate(scenario, args.messages)
    out.write(f"{args.messages} messages to {scenario.message.queue} from {scenario.cluster.local}\n")
    out.write(tabulate(WI.rows(outcome), headers=["destination", "expected share", "simulated share",
                                                    "messages", "eliminated at"]) + "\n")
    if args.plot:
        try:
            WI.plot(outcome, args.plot)
        except OSError as exc:
            raise UsageError(f"--plot {args.plot}: cannot write ({exc.strerror})") from None
        out.write(f"Plot: {args.plot}\n")
    return EXIT_OK


def cmd_campaign(args, out) -> int:
    """A campaign; against a real broker that nobody named, one private broker for all its tasks."""
    from adapters.brokers.managed import ManagedBroker, broker_for

    started = time.time()   # a time budget counts from here: Spark's start-up is part of it
    name = broker_for(args.adapter, _adapter_options(args))
    if name is None:
        return _campaign(args, out, started, None)
    left = args.out / LEFT_BROKER
    if args.resume and left.is_file():   # the broker of an earlier attempt killed before it could stop it
        earlier = Path(left.read_text().strip())
        ManagedBroker(name, earlier).down()
        shutil.rmtree(earlier, ignore_errors=True)
    base = Path(tempfile.mkdtemp(prefix="mqconform-campaign-"))
    managed = ManagedBroker(name, base)
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


#: In a campaign directory: where the campaign's own broker runs, until the campaign stops it.
LEFT_BROKER = ".campaign-broker"


def _campaign(args, out, started: float, managed) -> int:
    from conformance import campaign as CP
    from conformance.engine import area_platforms
    from conformance.history import Failure, write_json_atomic
    from conformance.results import Coverage

    areas = _areas(args.area)
    options = _adapter_options(args)
    crash_tasks = {}
    for item in args.inject_crash:
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
    finally:
        adapter.close()
    outdir = args.out
    plan_file = outdir / "campaign.json"
    wanted = {"adapter": args.adapter, "options": options, "areas": areas,
              "task_examples": args.task_examples or CP.TASK_EXAMPLES, "examples": args.examples}
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
    pairs = [(a, p) for a in areas for p in area_platforms(a, caps)]
    if not pairs:
        raise HarnessError(f"none of the areas {', '.join(areas)} is applicable to adapter {args.adapter!r}")
    state = CP.CampaignState(out=outdir)
    CP.load_finished(outdir, state)
    out.write(f"mqconform {__version__} campaign: adapter {args.adapter}, areas {', '.join(areas)}, seed {seed}, "
              f"master {args.master}" + (f", resuming with {len(state.results)} task(s) done" if state.results else "")
              + "\n")
    spark = CP.spark_session(args.master, outdir, args.task_attempts or CP.TASK_ATTEMPTS)
    parallelism = args.partitions or max(1, spark.sparkContext.defaultParallelism)
    if args.examples:
        specs = CP.plan_tasks(seed, pairs, args.examples, per_task)
        deadline = None
    else:
        # tasks stop a little before the budget ends, leaving its last part to stopping Spark and writing
        deadline = started + args.minutes * 60 * (1 - CP.TEARDOWN_SHARE)
        # a departure found near the deadline is shrunk into half of that last part, no further
        finish_by = started + args.minutes * 60 * (1 - CP.TEARDOWN_SHARE / 2)
        specs = CP.endless_tasks(seed, pairs, deadline, seconds=min(CP.TASK_SECONDS, args.minutes * 60 / 4),
                                 examples=args.task_examples or CP.TASK_EXAMPLES_TIMED, finish_by=finish_by)

    try:
        CP.run_campaign(spark=spark, specs=specs, adapter_name=args.adapter, options=options, out=outdir,
                        state=state, deadline=deadline, parallelism=parallelism,
                        timeout=args.task_timeout or CP.TASK_TIMEOUT, attempts=args.task_attempts or CP.TASK_ATTEMPTS,
                        crash_tasks=crash_tasks, progress=lambda line: out.write(f"  {line}\n"),
                        after_task=None if managed is None else lambda result: _revive(managed, result))
    finally:
        spark.stop()
    record = RunRecord(adapter=args.adapter, describe=describe, capabilities=caps.to_json(), areas=areas,
                       seed=seed, examples=args.examples or 0)
    coverage = Coverage()
    for result in state.results.values():
        for name, counts in result["coverage"].items():
            getattr(coverage, name).update(counts)
        coverage.examples += result["examples"]
        coverage.steps += result["steps"]
    record.coverage = coverage
    record.failures = [Failure.from_json(d) for d in state.failures.values()]
    errors = [f"{r['task']}: {r['error']}" for r in state.results.values() if r["error"]]
    if errors:
        record.error = f"{len(errors)} task(s) ended in error; first: {errors[0]}"
    record.ended = time.time()
    replay_paths = record.write(outdir)
    _summary(record, out)
    for failure, path in zip(record.failures, replay_paths):
        out.write(f"\nDistinct failure: {'+'.join(failure.rules)} ({len(failure.steps)} steps)\n")
        out.write(f"Replay with: mqconform replay {path}\n")
    out.write(f"\nResults: {outdir}\n")
    if record.error:
        raise HarnessError(record.error)
    return EXIT_NONCONFORMANT if record.failures else EXIT_OK


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


def cmd_bench(args, out) -> int:
    from adapters.simulated.faults import FAULTS
    from conformance import bench

    figures = [f.strip() for f in (args.only or ",".join(BENCH_FIGURES)).split(",") if f.strip()]
    unknown = [f for f in figures if f not in BENCH_FIGURES]
    if unknown or not figures:
        raise UsageError(f"--only: unknown figure {', '.join(unknown) or '(none)'}; "
                         f"choose from {', '.join(BENCH_FIGURES)}")
    faults = [f.strip() for f in (args.faults or ",".join(sorted(FAULTS))).split(",") if f.strip()]
    missing = [f for f in faults if f not in FAULTS]
    if missing:
        raise UsageError(f"--faults: no such fault {', '.join(missing)} (mqconform faults lists them)")
    bench.run(out, figures, faults, _areas(args.area), args.examples, args.seed, args.task_seconds)
    return EXIT_OK


def cmd_report(args, out) -> int:
    import reports

    try:
        report = reports.make_report(args.dirs, args.baseline, args.known_deviations)
    except reports.ReportInputError as exc:
        raise UsageError(str(exc)) from None
    if args.format is None:
        args.format = {".html": "html", ".htm": "html", ".json": "json", ".xml": "junit",
                       ".junit": "junit"}.get(args.out.suffix.lower(), "md")
    text = reports.render(report, args.format)
    try:
        reports.write_atomically(args.out, text)
    except OSError as exc:
        raise UsageError(f"cannot write {args.out}: {exc.strerror}") from None
    counts = [f"{c.label}: " + ", ".join(f"{n} {v}" for v, n in c.counts().items() if n) for c in report.columns]
    out.write(f"Report ({args.format}): {args.out}\n" + "".join(f"  {line}\n" for line in counts))
    for d in report.stale:
        out.write(f"  stale known deviation: {d.deviation.rule} on {d.system} now {d.verdict} ({d.deviation.origin})\n")
    return EXIT_NONCONFORMANT if report.any_failure and not args.report_only else EXIT_OK


def cmd_dlq(args, out) -> int:
    from conformance import dlq_tools as DT

    try:
        table, errors = DT.check(args.table)
        if errors:
            out.write("\n".join(errors) + "\n")
            out.write(f"{args.table}: {len(errors)} error(s); a DLQ handler would not start with this table\n")
            return EXIT_NONCONFORMANT
        if args.dlq_command == "check":
            out.write(f"{args.table}: valid: {'control data and ' if table.control != DT.T.ControlData() else ''}"
                      f"{len(table.rules)} rule(s)\n")
            return EXIT_OK
        scenario = DT.load_messages(args.messages)
    except DT.MessagesFileError as exc:
        raise UsageError(str(exc)) from None
    for fate in DT.simulate(table, scenario):
        out.write(f"\n{fate.message}: {fate.final}\n")
        if fate.steps:
            out.write(tabulate([[s.tries, s.rule_line, s.action, s.target, s.outcome] for s in fate.steps],
                               headers=["try", "rule (line)", "action", "to", "outcome"]) + "\n")
    return EXIT_OK


def cmd_brokers(args, out) -> int:
    from adapters.brokers import SERVERS, server

    names = args.names or ["all"]
    names = sorted(SERVERS) if "all" in names else list(dict.fromkeys(names))
    servers = [server(n, args.dir) for n in names]  # an unknown name fails before anything starts
    failed = []
    for srv in servers:
        try:
            status = {"up": srv.up, "down": srv.down, "status": srv.status}[args.action]()
        except BrokerControlError as exc:
            failed.append(str(exc))
            continue
        out.write(status.line() + "\n")
        out.flush()
    if failed:
        raise BrokerControlError("; ".join(failed))
    if args.action == "status" and not all(srv.status().ready for srv in servers):
        return EXIT_NOT_READY
    return EXIT_OK


COMMANDS = {"brokers": cmd_brokers, "run": cmd_run, "campaign": cmd_campaign, "dlq": cmd_dlq, "report": cmd_report, "adapters": cmd_adapters, "faults": cmd_faults, "rules": cmd_rules, "sources": cmd_sources,
            "replay": cmd_replay, "cluster": cmd_cluster, "bench": cmd_bench}


def main(argv: list[str] | None = None, out=None) -> int:
    out = out or sys.stdout
    err = sys.stderr
    _RESULTS.clear()
    try:
        args = build_parser().parse_args(argv)
        return COMMANDS[args.command](args, out)
    except UsageError as exc:
        err.write(f"mqconform: error: {exc}\n")
    except UnknownAdapter as exc:
        err.write(f"mqconform: error: {exc}\n")
    except AdapterOptionError as exc:
        err.write(f"mqconform: error: {exc}\n")
    except ReplayFileError as exc:
        err.write(f"mqconform: error: {exc}\n")
    except (HarnessError, AdapterError, BrokerControlError) as exc:
        err.write(f"mqconform: error: {exc}\n")
    except ClusterConfigError as exc:
        err.write(f"mqconform: error: {exc}\n")
    except HistoryError as exc:
        err.write(f"mqconform: error: history not executable: {exc}\n")
    except KeyboardInterrupt:
        err.write("mqconform: interrupted\n")
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # output piped into a reader that stopped early
        sys.stderr.close()
        return EXIT_ERROR
    except Exception as exc:  # noqa: BLE001 - a crash is never a verdict: one line, the traceback kept
        err.write(f"mqconform: error: internal error ({type(exc).__name__}: {' '.join(str(exc).split())[:200]}); "
                  f"traceback in {_save_traceback()}\n")
    return EXIT_ERROR


#: The results directory of the command running, once it exists: a crash's traceback goes there.
_RESULTS: list[Path] = []


def _save_traceback() -> str:
    import tempfile
    import traceback

    if _RESULTS and _RESULTS[-1].is_dir():
        path = str(_RESULTS[-1] / f"crash-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}.txt")
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    else:
        fd, path = tempfile.mkstemp(prefix="mqconform-crash-", suffix=".txt")
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(f"mqconform {__version__}: {' '.join(sys.argv)}\n\n")
        fh.write(traceback.format_exc())
    return path


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
