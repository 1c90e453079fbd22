"""``mqconform crash``: crash schedules on a system that can restart, every message accounted for after a drain,
each rule judged by how many schedules broke it (docs/nemesis.md, "Crash campaigns")."""

from __future__ import annotations

import random
import shlex
import signal
import time
from pathlib import Path

from tabulate import tabulate

from adapters.registry import adapter_class, create_adapter
from conformance.checker.accounting import CLASSES, FAILURES, ONE_OF
from conformance.cli.common import (_RESULTS, EXIT_INTERRUPTED, EXIT_NONCONFORMANT, EXIT_OK, UsageError, _adapter_args,
                                    _adapter_options, _minutes, _on_signals, _positive, _results_dir, _seed, _stop,
                                    _whole)
from conformance.records.crash import SCHEDULE_FORMAT, result_json, schedule_file, schedule_json, wilson
from conformance.records.history import write_json_atomic
from conformance.records.render import counted, observation_text, op_text
from conformance.runner.crash import CrashResult, Schedule, campaign, replay
from conformance.runner.session import STOP
from reference_model import language as L
from reference_model.rules import RULES

#: Schedules a crash campaign runs when not told how many (each holds one or two restarts).
DEFAULT_SCHEDULES = 40
#: Schedules at most of a campaign bounded by its minutes alone: its time ends it first.
UNBOUNDED_SCHEDULES = 10 ** 6
#: Runs of a candidate schedule while a breaking one is cut down, when not told how many; and runs of a schedule
#: replayed (``--replay``) to give its frequency.
MINIMISE_TRIES, REPLAY_TRIES = 5, 20


def add_parsers(sub) -> None:
    crash = sub.add_parser("crash", help="crash schedules: messages put and got around restarts (kills where the "
                                         "system can be killed), every one accounted for after a drain; each rule "
                                         "judged by the share of schedules that broke it (exit 0 none broke one, "
                                         "1 some did)")
    _adapter_args(crash, required=True)
    crash.add_argument("--schedules", type=_positive,
                       help=f"schedules to run at most (default {DEFAULT_SCHEDULES}; with --minutes alone, as many "
                            "as its time allows)")
    crash.add_argument("--minutes", type=_minutes,
                       help="end within this long, the private broker's start counted: no schedule starts that would "
                            "end later, taking as long as the longest so far")
    crash.add_argument("--seed", type=_seed, help="seed of the schedules (default: random, printed)")
    crash.add_argument("--results", type=Path, help="a new directory for crash.json (default: under mqconform-results)")
    crash.add_argument("--tries", type=_whole(0), metavar="N",
                       help=f"runs of each candidate while the first schedule that broke a rule is cut down to the "
                            f"fewest calls that still break it (default {MINIMISE_TRIES}; 0: not cut down); with "
                            f"--replay, runs of the schedule (default {REPLAY_TRIES})")
    crash.add_argument("--master", metavar="URL",
                       help="run the schedules as Spark tasks at this master (local[N] on this machine), each on an "
                            "adapter of its own (a broker adapter's own private broker: a crash would stop every "
                            "task's broker otherwise); the tasks' results are merged")
    crash.add_argument("--tasks", type=_positive, metavar="N",
                       help="with --master: tasks sharing the schedules (default: 2)")
    crash.add_argument("--replay", type=Path, metavar="FILE",
                       help="run a breaking schedule's file (schedules/RULE.json of a crash campaign's results) "
                            "again --tries times: how often each rule breaks, with its interval")


def read_schedule(path: Path) -> tuple[dict, list[L.Op]]:
    """A breaking schedule's file: its fields and its calls (a file that is not one is a UsageError, one line)."""
    import json

    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(data, dict) or data.get("format") != SCHEDULE_FORMAT or data.get("version") != 1:
            raise ValueError(f"format is not {SCHEDULE_FORMAT} version 1")
        if not isinstance(data.get("ops"), list) or not data["ops"] or not isinstance(data.get("rule"), str):
            raise ValueError("it needs a rule and a list of calls")
        ops = [L.from_json(op) for op in data["ops"]]
        if not all(isinstance(op, L.Op) for op in ops):
            raise ValueError("an entry of ops is not an operation")
    except OSError as exc:
        raise UsageError(f"crash: cannot read {path}: {exc.strerror or exc}") from None
    except (ValueError, TypeError, KeyError, AttributeError) as exc:
        raise UsageError(f"crash: {path} is not a well-formed crash schedule ({' '.join(str(exc).split())[:200]})") \
            from None
    return data, ops


def cmd_crash(args, out) -> int:
    started = time.monotonic()
    until_time = args.schedules is None and bool(args.minutes)
    if args.schedules is None:
        args.schedules = UNBOUNDED_SCHEDULES if until_time else DEFAULT_SCHEDULES
    if args.tasks is not None and args.master is None:
        raise UsageError("crash: --tasks needs --master (the tasks run on Spark)")
    if args.master is not None and args.replay is not None:
        raise UsageError("crash: --replay runs one schedule here, not on Spark: leave out --master")
    if args.master is not None:
        from conformance.campaign.spark import master_problem

        problem = master_problem(args.master)
        if problem:
            raise UsageError(f"crash: {problem}")
    if args.replay is not None:
        data, ops = read_schedule(args.replay)
    options = _adapter_options(args)
    if "restart" in getattr(adapter_class(args.adapter), "option_names", ()) and "restart" not in options:
        options["restart"] = "on"   # a crash campaign is restarts: not the few a run makes by default
    results = _results_dir(args.results)
    seed = args.seed if args.seed is not None else random.randrange(2**31)
    adapter = create_adapter(args.adapter, options)
    try:
        caps = adapter.capabilities()
        why = caps.not_applicable.get("CORE-32")
        if not caps.can(L.Restart) or why:
            raise UsageError(f"crash: adapter {args.adapter!r} does not restart its system"
                             f"{': ' + why if why else ''}")
        results.mkdir(parents=True, exist_ok=True)
        _RESULTS.append(results)
    except BaseException:
        adapter.close()
        raise
    deadline = None if args.minutes is None else started + args.minutes * 60
    if args.replay is not None:
        return _replay(args, out, adapter, data, ops, results, deadline)
    budget = ("schedules until the time is spent" if until_time
              else f"at most {counted(args.schedules, 'schedule')}") + \
        (f", {args.minutes:g} minute(s)" if args.minutes else "")
    tries = MINIMISE_TRIES if args.tries is None else args.tries
    out.write(f"mqconform crash: adapter {args.adapter}, {budget}, seed {seed}\nResults: {results}\n")
    out.flush()

    def progress(index: int, done: Schedule) -> None:
        broke = done.accounting.rules
        state = "departed before the drain" if done.accounting.departed is not None else \
            f"broke {', '.join(broke)}" if broke else "every message accounted for"
        out.write(f"  schedule {index + 1}: {len(done.steps)} calls, drained {len(done.drained)}: {state}\n")
        out.flush()

    describe = adapter.describe()   # (before the campaign closes the adapter: a private broker is then gone)
    if args.master is not None:
        adapter.close()   # each task makes its own
        return _on_spark(args, out, options, results, seed, tries, started)
    STOP.clear()
    previous = _on_signals({signal.SIGINT: _stop, signal.SIGTERM: _stop})
    try:
        result = campaign(lambda: adapter, seed, args.schedules, deadline=deadline, progress=progress, tries=tries)
    finally:
        _on_signals(previous)
    write_json_atomic(results / "crash.json", result_json(result, args.adapter, describe, seed))
    for rule, done in result.minimal.items():
        (results / "schedules").mkdir(exist_ok=True)
        write_json_atomic(results / "schedules" / schedule_file(rule), schedule_json(done, rule, args.adapter, seed,
                                                                                 tries))
    out.write("\n" + summary(result, replay=_replay_command(args, results)) + "\n")
    if result.interrupted:
        out.write(f"Interrupted after {counted(result.schedules, 'schedule')}; results so far in {results}\n")
        return EXIT_INTERRUPTED
    return EXIT_NONCONFORMANT if result.broke or result.departed else EXIT_OK


def _on_spark(args, out, options: dict, results: Path, seed: int, tries: int, started: float) -> int:
    """The schedules as Spark tasks, each on an adapter (and a private broker) of its own; the results merged."""
    from conformance.campaign import crash as spark_crash
    from conformance.campaign.spark import CampaignError

    tasks = args.tasks or 2
    deadline = None if args.minutes is None else time.time() + args.minutes * 60 - (time.monotonic() - started)
    out.write(f"Spark: {tasks} tasks at {args.master}, each on an adapter of its own\n")
    out.flush()
    try:
        merged = spark_crash.run(args.master, results, args.adapter, options, seed, args.schedules, tasks, tries,
                                 deadline)
    except CampaignError as exc:
        raise UsageError(f"crash: {exc}") from None
    write_json_atomic(results / "crash.json", merged)
    out.write("\n" + merged_summary(merged, _replay_command(args, results)) + "\n")
    if merged["interrupted"]:
        out.write(f"Interrupted; results so far in {results}\n")
        return EXIT_INTERRUPTED
    return EXIT_NONCONFORMANT if merged["rules"] or merged["departed"] else EXIT_OK


def classes_table(classes: dict) -> str:
    """The accounting table: messages per class, and whether the class is a failure."""
    return tabulate([(cls, classes.get(cls, 0), "yes" if cls in FAILURES else "no") for cls in CLASSES],
                    headers=("messages", "count", "a failure"), tablefmt="simple")


def departure_summary(verdict: str) -> str:
    """The summary of the rule a departure broke, or of each of the rules it broke one of."""
    rules = verdict.split(ONE_OF)
    summaries = [RULES[rule].summary if rule in RULES else "" for rule in rules]
    return summaries[0] if len(rules) == 1 else " / ".join(f"{r}: {s}" for r, s in zip(rules, summaries))


def rules_table(broke: dict, schedules: int) -> str:
    """Each rule broken, most often first: in how many schedules, the share, Wilson's 95% interval, its summary."""
    rows = []
    for rule, n in sorted(broke.items(), key=lambda kv: (-kv[1], kv[0])):
        low, high = wilson(n, schedules)
        rows.append((rule, f"{n} of {schedules}", f"{n / schedules if schedules else 0.0:.0%}", f"{low:.0%}-{high:.0%}",
                     RULES[rule].summary if rule in RULES else ""))
    return tabulate(rows, headers=("rule", "schedules", "frequency", "95% interval", "summary"), tablefmt="simple")


def merged_summary(merged: dict, replay) -> str:
    """A merged campaign's accounting table and each rule's frequency with its interval (and replay command)."""
    lines = [f"{counted(merged['schedules'], 'schedule')} ran in {counted(len(merged['tasks']), 'task')}"
             + (f", {merged['departed']} departed before their drain ("
                + ", ".join(f"{r}: {e['schedules']}" for r, e in merged["departures"].items()) + ")"
                if merged["departed"] else "") + "."]
    lines.append(classes_table(merged["classes"]))
    if not merged["rules"]:
        lines.append("No drain found a message out of place.")
    else:
        lines += ["", rules_table({rule: e["schedules"] for rule, e in merged["rules"].items()}, merged["schedules"])]
    for rule, e in sorted(merged["rules"].items()):
        if e.get("replay"):
            lines.append(f"Replay {rule}: {replay(rule)}")
    for rule, e in merged["departures"].items():
        if e.get("replay"):
            lines.append(f"Replay the schedule departing for {rule}: {replay(rule)}")
    return "\n".join(lines)


def _replay_command(args, results: Path):
    """The command that replays a rule's breaking schedule, given the rule."""
    opts = "".join(f" --adapter-opt {o}" for o in args.adapter_opt or ()) + \
        (f" --faults {args.faults}" if args.faults else "")
    return lambda rule: (f"mqconform crash --adapter {args.adapter}{opts} --replay "
                         f"{shlex.quote(str(results / 'schedules' / schedule_file(rule)))} --tries {REPLAY_TRIES}")


def _replay(args, out, adapter, data: dict, ops: list[L.Op], results: Path, deadline: float | None) -> int:
    """``--replay``: the schedule run --tries times; how often each rule broke, with its interval."""
    tries = REPLAY_TRIES if args.tries is None else args.tries
    rule = data["rule"]
    out.write(f"mqconform crash: adapter {args.adapter}, the schedule of {args.replay} ({len(ops)} calls, breaking "
              f"{rule} when found) run {counted(tries, 'time')}\nResults: {results}\n")
    out.flush()
    STOP.clear()
    previous = _on_signals({signal.SIGINT: _stop, signal.SIGTERM: _stop})
    interrupted = False
    try:
        ran, broke = replay(adapter, "replay", ops, tries,
                            stop=lambda: deadline is not None and time.monotonic() >= deadline)
    except KeyboardInterrupt:
        interrupted, ran, broke = True, 0, {}
    finally:
        _on_signals(previous)
        adapter.close()
    shown = CrashResult(schedules=ran, broke=dict(broke), classes={}, first={})
    rows = []
    for name in sorted(set(broke) | {rule}):
        low, high = shown.interval(name)
        rows.append((name, f"{broke.get(name, 0)} of {ran}", f"{shown.frequency(name):.0%}", f"{low:.0%}-{high:.0%}"))
    write_json_atomic(results / "replay.json", {
        "format": "mqconform-crash-replay", "version": 1, "schedule": str(args.replay), "rule": rule, "runs": ran,
        "interrupted": interrupted,
        "rules": {name: {"runs": broke.get(name, 0), "frequency": shown.frequency(name),
                         "interval": list(shown.interval(name))} for name in sorted(set(broke) | {rule})}})
    out.write("\n" + tabulate(rows, headers=("rule", "runs", "frequency", "95% interval"), tablefmt="simple") + "\n")
    if interrupted:
        out.write(f"Interrupted; results in {results}\n")
        return EXIT_INTERRUPTED
    return EXIT_NONCONFORMANT if broke else EXIT_OK


def summary(result: CrashResult, replay=None) -> str:
    """The accounting table, each rule's frequency with its interval, and each first breaking schedule (cut down
    to its fewest calls where it was, with the command that replays it: ``replay(rule)``)."""
    lines = [f"{counted(result.schedules, 'schedule')} ran"
             + (f", {result.departed} departed before their drain (judged step by step, not accounted: below)"
                if result.departed else "") + "."]
    lines.append(classes_table(result.classes))
    if result.departures:
        lines.append("")
        lines.append("Departed before the drain, at a call MQ answers otherwise (the rules the history up to it breaks, "
                     "as a run judges them; \"A or B\": one of them, the history does not show which):")
        lines.append(tabulate([(rule, f"{n} of {result.schedules}", departure_summary(rule))
                               for rule, n in sorted(result.departures.items(), key=lambda kv: (-kv[1], kv[0]))],
                              headers=("rule", "schedules", "summary"), tablefmt="simple"))
        for rule in sorted(result.first_departed):
            done = result.first_departed[rule]
            lines.append("")
            if rule in result.minimal and rule not in result.first:
                lines += _cut_down_text(result, rule, done, "departing for", replay)
                continue
            lines.append(f"First schedule departing for {rule} (as it ran, not minimised; it departs at call "
                         f"{done.accounting.departed.index + 1}):")
            lines.append(schedule_text(done))
    if not result.broke:
        lines.append("No drain found a message out of place: every message was where MQ keeps it, or gone where MQ "
                     "allows." if result.schedules > result.departed else "No schedule reached its drain.")
        return "\n".join(lines)
    lines.append("")
    lines.append(rules_table(result.broke, result.schedules))
    for rule in sorted(result.first):
        lines.append("")
        if rule in result.minimal:
            lines += _cut_down_text(result, rule, result.first[rule], "breaking", replay)
        else:
            lines.append(f"First schedule breaking {rule} (as it ran, not minimised):")
            lines.append(schedule_text(result.first[rule]))
    return "\n".join(lines)


def _cut_down_text(result: CrashResult, rule: str, first: Schedule, what: str, replay) -> list[str]:
    """The lines of a rule's first breaking (or departing) schedule as cut down, and the command replaying it."""
    done = result.minimal[rule]
    how = ("cut down as far as the time allowed (not every call was tried)" if rule in result.cut_short
           else "cut down to the fewest calls that still break it")
    again = "broke" if what == "breaking" else "departed for"
    at = f"; it departs at call {done.accounting.departed.index + 1}" if done.accounting.departed is not None else ""
    lines = [f"First schedule {what} {rule}, {how} ({len(done.steps)} of {len(first.steps)}; each call left out "
             f"where a run without it {again} {rule} again within {counted(result.tries, 'try', 'tries')}{at}):",
             schedule_text(done)]
    if replay is not None:
        lines.append(f"Replay: {replay(rule)}")
    return lines


def schedule_text(done: Schedule) -> str:
    rows = [(n, op_text(op), observation_text(observed)) for n, (op, observed) in enumerate(done.steps, 1)]
    table = tabulate(rows, headers=("#", "operation", "observed"), tablefmt="simple")
    fates = "; ".join(f"{a.body}: {a.cls}" + (f" ({', '.join(a.rules)})" if a.rules else "")
                      for a in done.accounting.accounts) or "not accounted (the schedule departed before its drain)"
    return f"{table}\ndrained: {', '.join(done.drained) or 'nothing'}\nmessages: {fates}"


COMMANDS = {"crash": cmd_crash}
