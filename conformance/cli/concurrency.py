"""``mqconform run --concurrency N`` and ``mqconform replay`` of a race: concurrent cases judged by the concurrent
checker (docs/concurrency.md)."""

from __future__ import annotations

import json
import random
import signal
import time
from collections import Counter

from adapters.registry import create_adapter
from conformance import __version__
from conformance.cli.common import (_RESULTS, EXIT_INTERRUPTED, EXIT_NONCONFORMANT, EXIT_OK, UsageError,
                                    _adapter_options, _areas, _on_signals, _replay_system, _results_dir,
                                    _stop)
from conformance.checker.linearizable import INDETERMINATE
from conformance.records.races import load_race, race_record, race_replay_command, render_race
from conformance.records.render import counted
from conformance.records.results import RunRecord
from conformance.runner.concurrent import EXPLAINED, race_file, rerun, search_races, shrink
from conformance.runner.session import STOP
from reference_model import mqconst as C

#: Concurrent cases a run makes unless --examples says otherwise.
DEFAULT_CASES = 40
#: Clients a concurrent case may have.
CLIENTS = range(2, 5)


def clients(text: str) -> int:
    """``--concurrency``'s value: 2 to 4 clients."""
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n not in CLIENTS:
        raise UsageError(f"--concurrency: {text!r} is not a number of clients from {CLIENTS[0]} to {CLIENTS[-1]}")
    return n


def _core_faults(faults: str | None) -> None:
    """A fault of another area than the core could not show in a concurrent case: refused, not a silent pass."""
    from adapters.simulated.faults import FAULTS, parse_faults

    try:
        names = parse_faults(faults) if faults else ()
    except ValueError:
        return   # the simulated adapter names the unknown fault
    outside = [f"{n} ({FAULTS[n].area})" for n in names if n in FAULTS and FAULTS[n].area != "core"]
    if outside:
        raise UsageError(f"--faults {', '.join(outside)}: concurrent cases are of the core area; this fault "
                         "could not show in them")


def _concurrent_adapter(name: str, options: dict):
    adapter = create_adapter(name, options)
    if not getattr(adapter, "concurrent_calls", False):
        adapter.close()
        raise UsageError(f"--concurrency: adapter {name!r} does not take calls from several clients at once yet "
                         "(the simulated queue manager does; docs/concurrency.md)")
    return adapter


def _platform(adapter) -> str:
    platforms = adapter.capabilities().platforms
    return C.PLATFORM_DISTRIBUTED if C.PLATFORM_DISTRIBUTED in platforms else platforms[0]


def cmd_run_concurrent(args, out) -> int:
    unsupported = [flag for flag, given in (("--jobs", (args.jobs or 1) > 1), ("--minutes", args.minutes is not None),
                                            ("--part", args.part is not None))
                   if given]
    if unsupported:
        raise UsageError(f"--concurrency: {', '.join(unsupported)} not with concurrent cases (the clients of a "
                         "case already run at once)")
    if args.area and _areas(args.area) != ["core"]:
        raise UsageError("--concurrency: concurrent cases are of the core area (queues and units of work): "
                         "leave --area out or give core")
    options = _adapter_options(args)
    _core_faults(options.get("faults"))
    seed = args.seed if args.seed is not None else random.randrange(2**31)
    cases = args.examples or DEFAULT_CASES
    results = _results_dir(args.results)
    adapter = _concurrent_adapter(args.adapter, options)
    try:
        results.mkdir(parents=True, exist_ok=True)
        _RESULTS.append(results)
    except OSError as exc:
        adapter.close()
        raise UsageError(f"cannot use results directory {results}: {exc.strerror}") from None
    platform = _platform(adapter)
    out.write(f"mqconform {__version__}: adapter {args.adapter}, concurrent cases of {args.concurrency} clients "
              f"(core, platform {platform}), {cases} cases, seed {seed}\n")
    out.write(f"Results: {results}\n")
    out.flush()

    def progress(n: int) -> None:
        if n % 10 == 0 or n == cases:
            out.write(f"  {n} of {cases} cases judged\n")
            out.flush()

    record = RunRecord(adapter=adapter.name, describe=adapter.describe(), capabilities=adapter.capabilities().to_json(),
                       areas=["core"], seed=seed, examples=cases, concurrency=args.concurrency)
    verdicts: Counter = Counter()
    STOP.clear()
    previous = _on_signals({signal.SIGINT: _stop, signal.SIGTERM: _stop})
    try:
        def found(race) -> tuple[str, ...]:
            """Shrink a race as soon as it is found and record it; the rules its shrunk form breaks are set aside
            with those it was found with."""
            shrunk = None
            if not args.no_minimise and not STOP.is_set():
                out.write(f"  a race in case {race.index + 1} ({len(race.case.events)} calls): shrinking it\n")
                out.flush()
                shrunk = shrink(adapter, race, platform, stop=STOP.is_set, max_cases=args.shrink_cases,
                                seconds=args.shrink_seconds)
            shown = race_file(race, shrunk, adapter=args.adapter, adapter_options=options, platform=platform)
            record.add_race(shown)
            return shown.rules

        races, ran = search_races(adapter, seed, cases, clients=args.concurrency, platform=platform,
                                  progress=progress, stop=STOP.is_set, coverage=record.coverage, verdicts=verdicts,
                                  keep_going=args.keep_going, on_race=found)
        if STOP.is_set() and not races and ran < cases:
            record.interrupted = ["core"]
    finally:
        _on_signals(previous)
        STOP.clear()
        adapter.close()
    record.ended = time.time()
    record.write(results)
    undecided = verdicts[INDETERMINATE]
    bounded = (f"; {counted(undecided, 'case')} the checker's bound left indeterminate (no evidence either way)"
               if undecided else "")
    if record.races:
        paths = json.loads((results / "run.json").read_text(encoding="utf-8"))["races"]
        for shown, path in zip(record.races, paths):
            out.write("\n" + render_race(shown) + "\n\n")
            out.write(f"Replay file: {results / path}\nReplay with: {race_replay_command(results / path)}\n")
        explained = verdicts[EXPLAINED]
        more = (f"{counted(len(record.races), 'race')} in {counted(ran, 'case')}, each judged with the rules of those "
                "before it set aside" + (f"; {counted(explained, 'more case')} broke only rules races before them "
                                         "broke" if explained else "") + ". " if len(record.races) > 1 or explained
                else "")
        out.write(f"\n{more}Rules: {results / 'rules.jsonl'}{bounded}\n")
        return EXIT_NONCONFORMANT
    if record.interrupted:
        out.write(f"\nInterrupted after {counted(ran, 'case')}: no race so far; results in {results}\n")
        return EXIT_INTERRUPTED
    out.write(f"\nNo race in {counted(ran, 'concurrent case')} of {args.concurrency} clients: each history is one "
              f"some order of its calls, as MQ allows them, explains{bounded}. Rules each case exercised in that "
              f"order: {results / 'rules.jsonl'}\n")
    return EXIT_OK


def cmd_replay_race(args, out) -> tuple[int, bool]:
    """A race's clients run again ``--tries`` times: how often no order explains what they saw.  The exit code,
    and whether the tries that failed named the race's own rules."""
    for flag, given in (("--minimise", args.minimise), ("--as-pytest", args.as_pytest is not None),
                        ("--replays", args.replays is not None)):
        if given:
            raise UsageError(f"{flag}: not for a race file (a race is replayed with --tries)")
    race = load_race(args.file)
    name, options = _replay_system(args, race.adapter, race.adapter_options)
    adapter = _concurrent_adapter(name, options)
    try:
        failed, result, case = rerun(adapter, [op for op, _ in race.setup], race.scripts(),
                                     [op for op, _ in race.after], race.platform, args.tries,
                                     set_aside=frozenset(race.set_aside), in_order=True)
    finally:
        adapter.close()
    calls = len(race.events)
    if failed:
        shown = race_record(adapter=name, adapter_options=options, platform=race.platform, seed=race.seed,
                            index=race.index, setup=case.setup, events=case.events, after=case.after, result=result,
                            set_aside=race.set_aside, started=case.started)
        out.write(render_race(shown) + "\n\n")
        same = set(result.rules) == set(race.rules)
        out.write(f"{'Still failing' if same else 'Fails, naming other rules (' + ', '.join(result.rules) + ')'}: "
                  f"{args.file}: no order explains {failed} of {args.tries} tries of its {calls} calls on adapter "
                  f"{name}\n")
        return EXIT_NONCONFORMANT, same
    out.write(f"Replayed the {calls} calls of {len(race.clients)} clients on adapter {name} {args.tries} times: some "
              "order explains every try (fixed, or a race these tries did not meet).\n")
    return EXIT_OK, False

