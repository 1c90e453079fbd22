"""``mqconform crash``: crash schedules on a system that can restart, every message accounted for after a drain,
each rule judged by how many schedules broke it (docs/nemesis.md, "Crash campaigns")."""

from __future__ import annotations

import random
import signal
import time
from pathlib import Path

from tabulate import tabulate

from adapters.registry import adapter_class, create_adapter
from conformance.checker.accounting import CLASSES, FAILURES
from conformance.cli.common import (_RESULTS, EXIT_INTERRUPTED, EXIT_NONCONFORMANT, EXIT_OK, UsageError, _adapter_args,
                                    _adapter_options, _minutes, _on_signals, _positive, _results_dir, _seed, _stop)
from conformance.records.history import write_json_atomic
from conformance.records.render import counted, observation_text, op_text
from conformance.runner.crash import CrashResult, Schedule, campaign
from conformance.runner.session import STOP
from reference_model import language as L
from reference_model.rules import RULES

#: Schedules a crash campaign runs when not told how many (each holds one or two restarts).
DEFAULT_SCHEDULES = 40


def add_parsers(sub) -> None:
    crash = sub.add_parser("crash", help="crash schedules: messages put and got around restarts (kills where the "
                                         "system can be killed), every one accounted for after a drain; each rule "
                                         "judged by the share of schedules that broke it (exit 0 none broke one, "
                                         "1 some did)")
    _adapter_args(crash, required=True)
    crash.add_argument("--schedules", type=_positive, default=DEFAULT_SCHEDULES,
                       help=f"schedules to run at most (default {DEFAULT_SCHEDULES})")
    crash.add_argument("--minutes", type=_minutes,
                       help="end within this long, the private broker's start counted: no schedule starts that would "
                            "end later, taking as long as those so far on average")
    crash.add_argument("--seed", type=_seed, help="seed of the schedules (default: random, printed)")
    crash.add_argument("--results", type=Path, help="a new directory for crash.json (default: under mqconform-results)")


def cmd_crash(args, out) -> int:
    started = time.monotonic()
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
    budget = counted(args.schedules, "schedule") + (f", {args.minutes:g} minute(s)" if args.minutes else "")
    out.write(f"mqconform crash: adapter {args.adapter}, at most {budget}, seed {seed}\nResults: {results}\n")
    out.flush()
    deadline = None if args.minutes is None else started + args.minutes * 60

    def progress(index: int, done: Schedule) -> None:
        broke = done.accounting.rules
        state = "departed before the drain" if done.accounting.departed is not None else \
            f"broke {', '.join(broke)}" if broke else "every message accounted for"
        out.write(f"  schedule {index + 1}: {len(done.steps)} calls, drained {len(done.drained)}: {state}\n")
        out.flush()

    describe = adapter.describe()   # (before the campaign closes the adapter: a private broker is then gone)
    STOP.clear()
    previous = _on_signals({signal.SIGINT: _stop, signal.SIGTERM: _stop})
    try:
        result = campaign(lambda: adapter, seed, args.schedules, deadline=deadline, progress=progress)
    finally:
        _on_signals(previous)
    write_json_atomic(results / "crash.json", result_json(result, args.adapter, describe, seed))
    out.write("\n" + summary(result) + "\n")
    if result.interrupted:
        out.write(f"Interrupted after {counted(result.schedules, 'schedule')}; results so far in {results}\n")
        return EXIT_INTERRUPTED
    return EXIT_NONCONFORMANT if result.broke or result.departed else EXIT_OK


def summary(result: CrashResult) -> str:
    """The accounting table, each rule's frequency with its interval, and each first breaking schedule."""
    lines = [f"{counted(result.schedules, 'schedule')} ran"
             + (f", {result.departed} departed before their drain (judged step by step, not accounted: below)"
                if result.departed else "") + "."]
    lines.append(tabulate([(cls, result.classes.get(cls, 0), "yes" if cls in FAILURES else "no") for cls in CLASSES],
                          headers=("messages", "count", "a failure"), tablefmt="simple"))
    if result.departures:
        lines.append("")
        lines.append("Departed before the drain, at a call MQ answers otherwise (the rules the checker names there):")
        lines.append(tabulate([(rule, f"{n} of {result.schedules}", RULES[rule].summary if rule in RULES else "")
                               for rule, n in sorted(result.departures.items(), key=lambda kv: (-kv[1], kv[0]))],
                              headers=("rule", "schedules", "summary"), tablefmt="simple"))
        for rule in sorted(result.first_departed):
            done = result.first_departed[rule]
            lines.append("")
            lines.append(f"First schedule departing for {rule} (as it ran, not minimised; it departs at call "
                         f"{done.accounting.departed.index + 1}):")
            lines.append(schedule_text(done))
    if not result.broke:
        lines.append("No drain found a message out of place: every message was where MQ keeps it, or gone where MQ "
                     "allows." if result.schedules > result.departed else "No schedule reached its drain.")
        return "\n".join(lines)
    rows = []
    for rule, n in sorted(result.broke.items(), key=lambda kv: (-kv[1], kv[0])):
        low, high = result.interval(rule)
        rows.append((rule, f"{n} of {result.schedules}", f"{result.frequency(rule):.0%}", f"{low:.0%}-{high:.0%}",
                     RULES[rule].summary if rule in RULES else ""))
    lines.append("")
    lines.append(tabulate(rows, headers=("rule", "schedules", "frequency", "95% interval", "summary"),
                          tablefmt="simple"))
    for rule in sorted(result.first):
        lines.append("")
        lines.append(f"First schedule breaking {rule} (as it ran, not minimised):")
        lines.append(schedule_text(result.first[rule]))
    return "\n".join(lines)


def schedule_text(done: Schedule) -> str:
    rows = [(n, op_text(op), observation_text(observed)) for n, (op, observed) in enumerate(done.steps, 1)]
    table = tabulate(rows, headers=("#", "operation", "observed"), tablefmt="simple")
    fates = "; ".join(f"{a.body}: {a.cls}" + (f" ({', '.join(a.rules)})" if a.rules else "")
                      for a in done.accounting.accounts) or "not accounted (the schedule departed before its drain)"
    return f"{table}\ndrained: {', '.join(done.drained) or 'nothing'}\nmessages: {fates}"


def result_json(result: CrashResult, adapter: str, describe: dict, seed: int) -> dict:
    def schedule(done: Schedule) -> dict:
        return {"case": done.case_id, "drained": list(done.drained),
                "steps": [{"op": L.to_json(op), "observed": L.to_json(obs)} for op, obs in done.steps],
                "messages": [{"body": a.body, "class": a.cls, "found": list(a.found), "rules": list(a.rules)}
                             for a in done.accounting.accounts]}

    return {"format": "mqconform-crash", "version": 1, "adapter": adapter, "system": describe, "seed": seed,
            "schedules": result.schedules, "departed": result.departed, "interrupted": result.interrupted,
            "classes": dict(result.classes),
            "departures": {rule: {"schedules": n, "first": schedule(result.first_departed[rule])}
                           for rule, n in sorted(result.departures.items())},
            "rules": {rule: {"schedules": n, "frequency": result.frequency(rule),
                             "interval": list(result.interval(rule)), "first": schedule(result.first[rule])}
                      for rule, n in sorted(result.broke.items())}}


COMMANDS = {"crash": cmd_crash}
