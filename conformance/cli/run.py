"""``mqconform run`` and ``mqconform replay``: the machines against an adapter, and a saved history again."""

from __future__ import annotations

import argparse
import collections
import json
import random
import signal
from pathlib import Path

from tabulate import tabulate

from adapters.registry import create_adapter
from adapters.subprocess import keep_artifacts
from conformance import __version__
from conformance.cli.common import (_RESULTS, EXIT_INTERRUPTED, EXIT_NONCONFORMANT, EXIT_OK,
                                    UsageError, _adapter_args, _adapter_options, _areas, _count, _minutes,
                                    _on_signals, _positive, _replay_system, _results_dir, _seconds, _seed, _stop,
                                    _without_default_restarts)
from conformance.runner.concurrent import SHRINK_CASES as RACE_SHRINK_CASES
from conformance.runner.concurrent import SHRINK_SECONDS_REALTIME as RACE_SHRINK_SECONDS_REALTIME
from conformance.runner.engine import (BY_SYSTEM, DEFAULT_EXAMPLES, SHRINK_CASES, SHRINK_CASES_REALTIME,
                                       SHRINK_SECONDS_REALTIME, Interrupted, run_areas)
from conformance.records.history import load_failure, save_failure, with_alternatives
from conformance.runner.minimise import REPLAYS_PER_STEP_REALTIME, REPLAYS_REALTIME, REPLAYS_VIRTUAL, minimise
from conformance.runner.recorded import FOUND, SHOWN, load_recorded
from conformance.runner.regression import pytest_source, replay_on, same_departure
from conformance.records.render import counted, render_failure
from conformance.records.results import PARTLY, PASS, PHASES, RunRecord, replay_outcome
from conformance.runner.session import STOP, HarnessError

#: Cases searched per area when only --minutes bounds a run: as many as its time allows.
UNBOUNDED_EXAMPLES = 10 ** 6


def add_parsers(sub) -> None:
    run = sub.add_parser("run", help="run the conformance machines against an adapter")
    _adapter_args(run, required=True)
    run.add_argument("--area", help="comma-separated areas (default: all)")
    run.add_argument("--examples", type=_positive,
                     help=f"cases searched per area and platform, shared by the rounds after each departure "
                          f"(default {DEFAULT_EXAMPLES}; with --minutes alone: as many as its time allows)")
    run.add_argument("--minutes", type=_minutes,
                     help="a time budget for searching, shared out among the areas and platforms (a departure "
                          "met in it is still shrunk and minimised)")
    run.add_argument("--seed", type=_seed, help="seed for reproducible generation (default: random)")
    run.add_argument("--results", type=Path, help="result directory (default: mqconform-results/run-TIME)")
    run.add_argument("--keep-going", type=_count, metavar="N",
                     help="after a departure, at most N more rounds per area looking for departures from other "
                          "rules (default: rounds until the area's cases or time are spent; 0 stops at the first)")
    run.add_argument("--jobs", type=_positive, default=None, metavar="N",
                     help="share each area's cases among N worker processes run at once, each with its own "
                          "adapter to the same system (its own connections and queues) and seed: a system on real "
                          f"time overlaps their waits (default: on a system on real time, a broker, up to "
                          f"{REAL_TIME_JOBS}, each with {CASES_PER_JOB} cases an area at least; 1 otherwise, and "
                          "with --minutes; not with restart=on or nemesis=on; the few restarts a run on a broker the "
                          "kit started makes are made after the workers, in core cases run one at a time)")
    run.add_argument("--concurrency", type=_clients, metavar="N",
                     help="concurrent cases: a set-up, then N clients (2 to 4) at once, each on its own connection "
                          "and thread, each history judged by whether some order of its calls is one MQ allows "
                          "(docs/concurrency.md); the core area; --examples cases (default 40); after a race it "
                          "goes on, the rules of the races found set aside, as --keep-going says")
    run.add_argument("--recorded", type=Path, nargs="+", default=(), metavar="FILE_OR_DIR",
                     help="recorded counterexamples (replay files, or directories of them): after each area's "
                          "search, each of the area whose departure it did not find is replayed, and is this run's "
                          "departure where it shows again (one holding an operation the system cannot express as "
                          "recorded is not replayed); with --jobs 1")
    run.add_argument("--part", type=Path, help=argparse.SUPPRESS)   # a worker of --jobs: its record for the run
    run.add_argument("--no-minimise", action="store_true",
                     help="keep each counterexample as Hypothesis shrank it, without minimising its history")
    run.add_argument("--shrink-cases", type=_count, default=BY_SYSTEM, metavar="N",
                     help=f"cases Hypothesis may run shrinking a departure (default {SHRINK_CASES}, "
                          f"{SHRINK_CASES_REALTIME} on a system that runs on real time); with --concurrency, cases "
                          f"shrinking a race may run, each candidate's tries counted (default {RACE_SHRINK_CASES})")
    run.add_argument("--shrink-seconds", type=_seconds, default=BY_SYSTEM, metavar="S",
                     help="a time limit on shrinking one departure, as a safety net: a shrink it cuts makes "
                          "the run's verdicts depend on the clock, and the run says so (default: none on a "
                          f"virtual clock, {SHRINK_SECONDS_REALTIME:g} s on a system that runs on real time); with "
                          "--concurrency, seconds after which shrinking a race begins no more candidates, its race "
                          f"file saying so (default: none on a virtual clock, {RACE_SHRINK_SECONDS_REALTIME:g} s on "
                          "real time)")

    replay = sub.add_parser("replay", help="replay a saved failing history (or several, one after another)")
    replay.add_argument("file", type=Path, nargs="+",
                        help="a replay or race file; several are replayed one after another in this one process "
                             "(each as it would be alone), then listed with what each showed; exit 1 if any "
                             "still departs")
    _adapter_args(replay, required=False)
    replay.add_argument("--as-pytest", type=Path, metavar="OUT.py",
                        help="write a standalone pytest test that replays the history, instead of running it")
    replay.add_argument("--minimise", action="store_true",
                        help="if the history still fails, minimise it on the adapter and save the smaller "
                             "counterexample beside FILE (never over it)")
    replay.add_argument("--tries", type=_positive, default=1, metavar="N",
                        help="replay up to N times, each on a fresh case, stopping at the first that shows the "
                             "recorded departure (a try that departs otherwise does not stop them): for a real "
                             "system whose timing decides whether it shows (default 1)")
    replay.add_argument("--replays", type=_positive, metavar="N",
                        help=f"with --minimise: replays the search may make (default: {REPLAYS_VIRTUAL} on a "
                             f"virtual clock, {REPLAYS_REALTIME} on a system that runs on real time, or "
                             f"{REPLAYS_PER_STEP_REALTIME} for each step of a longer history)")


def _clients(text: str) -> int:
    from conformance.cli.concurrency import clients

    try:
        return clients(text)
    except UsageError as exc:
        raise argparse.ArgumentTypeError(str(exc).removeprefix("--concurrency: ")) from None


def cmd_run(args, out) -> int:
    if args.concurrency and args.recorded:
        raise UsageError("--recorded replays the counterexamples of sequential cases: not with --concurrency")
    if args.concurrency:
        from conformance.cli.concurrency import cmd_run_concurrent

        return cmd_run_concurrent(args, out)
    areas = _areas(args.area)
    options = _adapter_options(args)
    if args.part is None:   # (a worker of --jobs runs one area of a system whose faults may lie in others)
        _faults_in_areas(options.get("faults"), areas)
    elif not args.part.parent.is_dir():
        raise UsageError(f"--part {args.part}: no such directory")
    if (args.jobs or 1) > 1 and args.recorded:
        raise UsageError("--recorded: recorded counterexamples are replayed in one process: give --jobs 1")
    recorded = load_recorded(args.recorded)   # every file read before anything runs
    if (args.jobs or 1) > 1 and "on" in (options.get("restart"), options.get("nemesis")):
        raise UsageError("--jobs: restart=on and nemesis=on act on the whole system, disturbing every case run "
                         "beside them: run them with --jobs 1")
    seed = args.seed if args.seed is not None else random.randrange(2**31)
    results = _results_dir(args.results)
    adapter = create_adapter(args.adapter, options)
    try:  # before the run, so that a long run is never lost for want of a place to write it
        results.mkdir(parents=True, exist_ok=True)
        _RESULTS.append(results)
    except OSError as exc:
        adapter.close()
        raise UsageError(f"cannot use results directory {results}: {exc.strerror}") from None
    examples = args.examples or (UNBOUNDED_EXAMPLES if args.minutes else DEFAULT_EXAMPLES)
    jobs = args.jobs or _default_jobs(args, adapter, options, examples)
    budget = f"{examples} examples per area" if examples != UNBOUNDED_EXAMPLES else "cases until the time is spent"
    if args.minutes:
        budget += f", {args.minutes:g} minute(s) searching"
    if jobs > 1:
        budget += f", {jobs} workers at once"
    out.write(f"mqconform {__version__}: adapter {args.adapter}, areas {', '.join(areas)}, {budget}, seed {seed}\n")
    out.write(f"Results: {results}\n")
    out.flush()
    STOP.clear()
    previous = _on_signals({signal.SIGINT: _stop, signal.SIGTERM: _stop})
    progress = lambda line: (out.write(f"  {line}\n"), out.flush())   # noqa: E731
    record = None
    try:
        if jobs > 1:
            from conformance.runner.jobs import restarts_left, run_jobs, run_restarts

            restarting = restarts_left(adapter) and "core" in areas
            record = run_jobs(adapter, args.adapter, _worker_options(args.adapter, options), areas, examples, seed,
                              jobs, results, _passthrough(args, len(areas)), progress)
            if restarting and record.error is None:
                record.write(results)   # the workers' verdicts are kept whatever the restarts do
                run_restarts(adapter, record, examples, seed, jobs, options, progress, keep_going=args.keep_going,
                             minimise_histories=not args.no_minimise, shrink_seconds=args.shrink_seconds,
                             shrink_cases=args.shrink_cases)
        else:
            siblings = None
            if args.part is not None:   # a worker: what it finds is told to the others, and theirs to it
                from conformance.runner.jobs import Siblings

                siblings = Siblings(args.part)
            record = run_areas(adapter, areas, examples, seed, options, progress=progress,
                               keep_going=args.keep_going, on_update=lambda r: _written(r, results, siblings),
                               elsewhere=None if siblings is None else siblings.found,
                               minimise_histories=not args.no_minimise, shrink_seconds=args.shrink_seconds,
                               shrink_cases=args.shrink_cases,
                               seconds=None if args.minutes is None else args.minutes * 60,
                               recorded=tuple(recorded))
    except Interrupted as stop:
        record = stop.record
        stop.record.write(results)
        out.write(f"\nInterrupted during {stop.record.interrupted[0]}: "
                  f"{counted(len(stop.record.failures), 'departure')} found so far; results so far in {results}\n")
        return EXIT_INTERRUPTED
    finally:
        if args.part is not None and record is not None:
            # a worker of a run shared among jobs: its record, for the run to merge
            args.part.write_text(json.dumps(record.part_json()), encoding="utf-8")
        _on_signals(previous)
        STOP.clear()
        adapter.close()
        keep_artifacts(adapter, results)
    return finish(record, results, out, lambda failure, path: (
        f"\n{render_failure(failure, record.capabilities.get('expiry_tolerance', 0))}\n\nReplay file: {path}\n"
        f"Replay with: mqconform replay {path}\n"))


def _written(record: RunRecord, results: Path, siblings) -> None:
    """What a run found so far, written to its results (and, for a worker, told to the other workers)."""
    record.write(results)
    if siblings is not None:
        siblings.publish(record)


def _faults_in_areas(faults: str | None, areas: list[str]) -> None:
    """A fault injected into an area the run leaves out could not show: refused, not a silent conformant run."""
    if not faults:
        return
    from adapters.simulated.faults import FAULTS, RACES, parse_faults

    try:
        names = parse_faults(faults)
    except ValueError:
        return   # the simulated adapter names the unknown fault
    races = [n for n in names if n in RACES]
    if races:
        raise UsageError(f"--faults {', '.join(races)}: shows only when calls overlap, and a run's cases are "
                         "sequential: run it with --concurrency N (docs/concurrency.md)")
    outside = [f"{n} ({FAULTS[n].area})" for n in names if FAULTS[n].area not in areas]
    if outside:
        raise UsageError(f"--faults {', '.join(outside)}: not in the areas run ({', '.join(areas)}); "
                         "add the fault's area to --area, or leave --area out")


def _worker_options(adapter: str, options: dict[str, str]) -> dict[str, str]:
    """The adapter options of the workers of a run shared among jobs: the run's, but that they make no restart (a
    bound of restarts asked for, like the default one, is the restart phase's, on the run's own adapter)."""
    return _without_default_restarts(adapter, {k: v for k, v in options.items() if k != "restart"})


#: Worker processes a run on a system on real time (a broker) shares its cases among by default, and the cases
#: each must have at least (a worker's start costs seconds: a small budget is run in one process).
REAL_TIME_JOBS = 3
CASES_PER_JOB = 50


def _default_jobs(args, adapter, options: dict, examples: int) -> int:
    """The workers of a run not given ``--jobs``: on a system on real time (its cases mostly wait, on its answers
    and on the time they let pass) that the adapter hands to other processes (a broker's address) up to :data:`REAL_TIME_JOBS`, each with :data:`CASES_PER_JOB` cases an area at
    least, unless the run acts on the whole system (the nemesis, restarts without bound), is bounded by time, or
    is itself a worker; 1 otherwise."""
    if args.part is not None or args.minutes is not None or args.recorded or not adapter.capabilities().realtime \
            or not hasattr(adapter, "sibling_env") or "on" in (options.get("restart"), options.get("nemesis")):
        # (nor a system the adapter cannot hand to other processes: each worker would reach one of its own)
        return 1
    return max(1, min(REAL_TIME_JOBS, examples // CASES_PER_JOB))


def _passthrough(args, areas: int) -> list[str]:
    """The options of ``run`` each worker of ``--jobs`` is given as they are (a time budget: its area's share)."""
    out = []
    if args.keep_going is not None:
        out += ["--keep-going", str(args.keep_going)]
    if args.no_minimise:
        out.append("--no-minimise")
    if args.shrink_cases is not BY_SYSTEM:
        out += ["--shrink-cases", str(args.shrink_cases)]
    if args.shrink_seconds is not BY_SYSTEM:
        out += ["--shrink-seconds", str(args.shrink_seconds)]
    if args.minutes is not None:
        out += ["--minutes", repr(args.minutes / areas)]
    return out


def finish(record: RunRecord, results: Path, out, shown) -> int:
    """Write a run's results, print its summary and each failure as ``shown(failure, replay file)``
    gives it; the exit code of the verdict (an error is raised as one)."""
    replay_paths = record.write(results)
    _summary(record, out)
    printed: dict = {}
    for failure, path in zip(record.failures, replay_paths):
        # the same history departing the same way on another platform: one line, not the whole of it again
        same = (failure.area, failure.steps, failure.mismatch.index, failure.blamed)
        if same in printed:
            out.write(f"\nThe same counterexample on platform {failure.platform} (as on {printed[same]}): "
                      f"replay file {path}\n")
            continue
        printed[same] = failure.platform
        out.write(shown(failure, path))
    out.write(f"\nResults: {results}\n")
    if record.error:
        raise HarnessError(record.error)
    return EXIT_NONCONFORMANT if record.failures or record.races else EXIT_OK


def _summary(record: RunRecord, out) -> None:
    rows = record.rule_rows()
    by_area: dict[str, dict[str, int]] = {}
    for row in rows:
        counts = by_area.setdefault(row["area"], {})
        counts[row["verdict"]] = counts.get(row["verdict"], 0) + 1
    verdicts = ["pass", "fail", "one of", "partly exercised", "not applicable", "not exercised", "indeterminate", "error"]
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
    flagged = [r for r in rows if r["verdict"] not in (PASS, PARTLY) and r["area"] not in whole]
    if flagged:
        out.write("\n" + tabulate(
            [[r["rule"], r["verdict"], r["exercised"],
              ("why: " + r["not_applicable"] if "not_applicable" in r
               else "broken, or " + "; or ".join(" or ".join(o) for o in r["one_of"]) if "one_of" in r
               else r["summary"])[:90]] for r in flagged],
            headers=["rule", "verdict", "exercised", "summary (or why not applicable)"]) + "\n")
    partly = [(r["rule"], record.coverage.unreached(r["rule"])) for r in rows if r["verdict"] == PARTLY]
    if partly:
        out.write(f"\n{counted(len(partly), 'rule')} partly exercised (checked, never broken, but not every input class "
                  "reached: not a pass):\n")
        out.write(tabulate([[rule, "; ".join(names)] for rule, names in partly],
                           headers=["rule", "input classes never reached"]) + "\n")
    if record.seconds:
        # where the time went: each area and platform's share
        total = sum(record.seconds.values())
        out.write(f"\nTime by area and platform ({total:.1f} s in all): " + ", ".join(
            f"{where} {spent:.1f} s ({100 * spent / total:.0f}%)" if total else f"{where} 0 s"
            for where, spent in sorted(record.seconds.items(), key=lambda kv: -kv[1])) + "\n")
    if any(record.phases.values()):
        total = sum(record.phases.values())
        out.write("Time by phase: " + ", ".join(
            f"{phase} {record.phases.get(phase, 0.0):.1f} s ({100 * record.phases.get(phase, 0.0) / total:.0f}%)"
            for phase in PHASES) + "\n")
    if record.cut_short:
        out.write(f"{counted(record.cut_short, 'case')} cut short by a departure already found (the model could "
                  "not follow the system past it; the rest of the case ran nothing)\n")
    if record.recorded:
        shown = collections.Counter(map(replay_outcome, record.recorded))
        out.write(f"{counted(len(record.recorded), 'recorded counterexample')} given: "
                  + ", ".join(f"{n} {what}" for what, n in sorted(shown.items())) + "\n")
        for r in record.recorded:
            if r["shown"] not in (SHOWN, FOUND):
                out.write(f"  {r['file']} ({r['area']} on {r['platform']}): {r['shown']}\n")
    if record.found_elsewhere:
        out.write(f"{counted(record.found_elsewhere, 'departure')} met by one worker after another had found it: "
                  "not shrunk or minimised again\n")
    if record.timed_shrinks:
        out.write(f"\nShrinking stopped at its time limit ({', '.join(record.timed_shrinks)}): which cases ran "
                  "depended on the clock, so rules reached only while shrinking may get another verdict from "
                  "the same seed (--shrink-cases N bounds shrinking by cases alone).\n")


#: What a replay showed, as the list after several files says it.
STILL_FAILING, DEPARTS_OTHERWISE, CONFORMANT = "still failing", "departs otherwise than recorded", "conformant"


def cmd_replay(args, out) -> int:
    if args.adapter_opt and not args.adapter:   # (before any file is read: a usage error whatever they hold)
        raise UsageError("--adapter-opt needs --adapter (without it the replay uses the recorded adapter and options)")
    files = list(args.file)
    if len(files) == 1:
        return _replay_file(argparse.Namespace(**{**vars(args), "file": files[0]}), out)[0]
    return _replay_files(args, files, out)


def _replay_files(args, files: list[Path], out) -> int:
    """Several files, one after another in this process (one import, one client library, one connection set-up
    each): every file is read before any runs, so a bad one is a usage error with nothing replayed."""
    from conformance.records.races import is_race_file, load_race

    for flag, given in (("--minimise", args.minimise), ("--as-pytest", args.as_pytest is not None),
                        ("--replays", args.replays is not None)):
        if given:
            raise UsageError(f"{flag} takes one file, not {len(files)}")
    for path in files:
        load_race(path) if is_race_file(path) else load_failure(path)
    shown = []
    for i, path in enumerate(files, 1):
        out.write(f"== {path} ({i} of {len(files)})\n")
        _, outcome = _replay_file(argparse.Namespace(**{**vars(args), "file": path}), out)
        shown.append((path, outcome))
        out.write("\n")
    counts = {o: sum(1 for _, got in shown if got == o) for o in (STILL_FAILING, DEPARTS_OTHERWISE, CONFORMANT)}
    out.write(f"Replayed {len(files)} files: " + ", ".join(f"{n} {o}" for o, n in counts.items()) + "\n")
    for path, outcome in shown:
        out.write(f"{outcome}: {path}\n")
    return EXIT_OK if counts[CONFORMANT] == len(files) else EXIT_NONCONFORMANT


def _replay_file(args, out) -> tuple[int, str | None]:
    """Replay one file (``args.file``): the exit code, and what it showed (None: a regression test written)."""
    from conformance.records.races import is_race_file

    if is_race_file(args.file):
        from conformance.cli.concurrency import cmd_replay_race

        code, same = cmd_replay_race(args, out)
        return code, (CONFORMANT if code == EXIT_OK else STILL_FAILING if same else DEPARTS_OTHERWISE)
    if args.replays is not None and not args.minimise:
        raise UsageError("--replays bounds --minimise: give both")
    if args.minimise and args.as_pytest is not None:
        raise UsageError("--minimise and --as-pytest: one at a time")
    if args.tries > 1 and args.as_pytest is not None:
        raise UsageError("--tries and --as-pytest: one at a time (a regression test replays once)")
    failure = load_failure(args.file)
    name, options = _replay_system(args, failure.adapter, failure.adapter_options)
    if args.as_pytest is not None:
        return _replay_as_pytest(args, out, failure, name, options), None
    adapter = create_adapter(name, options)
    tries = 0
    try:
        found = diagnosed = None
        same = False
        shown_on = 0
        tolerance = adapter.capabilities().expiry_tolerance
        # each try on a fresh case until one shows the recorded departure; one that departs otherwise (a real
        # system's timing met on the way: a commit seen late) does not stop the tries, and is what is reported
        # only when none shows its own
        while not same and tries < args.tries:
            tries += 1
            got = replay_on(adapter, failure, options)
            if got is None:
                continue
            # blamed as its run had it: the rules the file records as found broken before it never on trial;
            # compared before minimising, which may name fewer rules at an earlier step
            told = with_alternatives(got, tolerance, known_by=failure.known_before())
            same = same_departure(told, failure)
            if same or found is None:
                found, diagnosed, shown_on = got, told, tries
        smaller = None
        if found is not None:
            if args.minimise:
                # with the rules its run had set aside: its replays step past departures from them as the run
                # did (a broker's depth that counts otherwise, met before the departure and needed by it)
                smaller = found = minimise(found, adapter, replays=args.replays,
                                           set_aside=frozenset(failure.set_aside))
                found = with_alternatives(found, tolerance, known_by=failure.known_before())
            else:
                found = diagnosed
    finally:
        adapter.close()
    if found is not None:
        out.write(render_failure(found, tolerance) + "\n")
        shown = f" (shown on try {shown_on} of at most {args.tries})" if args.tries > 1 else ""
        if same:
            out.write(f"\nStill failing: {args.file}{shown}\n")
        else:
            if args.tries > 1:
                shown = f" (on try {shown_on}; none of {tries} tries showed the recorded departure)"
            mm = failure.mismatch
            out.write(f"\nDeparts, but not as recorded{shown}: at step {found.mismatch.index + 1} "
                      f"({'+'.join(found.blamed)}; fields {', '.join(found.mismatch.fields)}), where {args.file} "
                      f"records step {mm.index + 1} ({'+'.join(failure.blamed)}; fields {', '.join(mm.fields)}).\n")
        if smaller is not None:
            if smaller.size < failure.size:
                try:
                    path = save_failure(found, args.file.parent)
                except OSError as exc:
                    raise UsageError(f"--minimise: cannot write beside {args.file} ({exc.strerror})") from None
                out.write(f"Minimised: {failure.size} calls to {smaller.size}: {path}\n")
            else:
                out.write(f"Minimised: no smaller history shows it ({failure.size} calls)\n")
        return EXIT_NONCONFORMANT, (STILL_FAILING if same else DEPARTS_OTHERWISE)
    if args.tries > 1:
        out.write(f"Replayed {len(failure.steps)} steps on adapter {name} {tries} times: conformant every time "
                  "(fixed, or a departure this system's timing did not show in these tries).\n")
    else:
        out.write(f"Replayed {len(failure.steps)} steps on adapter {name}: conformant (fixed).\n")
    return EXIT_OK, CONFORMANT


def _replay_as_pytest(args, out, failure, name: str, options: dict) -> int:
    """Write the replay as a standalone pytest module instead of running it."""
    from conformance.runner.session import _secret

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




COMMANDS = {"run": cmd_run, "replay": cmd_replay}
