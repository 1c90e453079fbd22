"""Performance figures, each a ratio against a baseline measured side by side in the same run.

A noisy machine slows a measurement and its baseline alike, so every figure is a
ratio: the kit against a bare Hypothesis state machine, a deep queue against a
shallow one, Spark against a plain process.  ``mqconform bench`` prints them;
nothing here passes or fails on time.

The parts, each usable alone:

- :func:`calibration_unit`: the seconds a bare ``RuleBasedStateMachine`` over a
  dict takes for 100 cases; the unit time to detect is counted in.
- :func:`throughput`: the kit's cases per second per area against the bare
  machine's, same examples and step budget.
- :func:`depth_cost`: time per operation with 100 and 1,000 messages on the
  queue against 10 (the workload :mod:`tests.test_depth_cost` counts in calls), in the
  simulated queue manager and in the model with its checker.
- :func:`time_to_detect`: per catalogue fault, the time a run takes to find and
  minimise it (until its first counterexample is recorded), in calibration units.
- :func:`conformance.bench.campaign.measure`: campaign work per second on
  local[N], local[1] and in one plain process, and the cores kept busy.
"""

from __future__ import annotations

import atexit
import statistics
import time
from typing import Callable

import attrs
from hypothesis import HealthCheck, Phase, Verbosity, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule, run_state_machine_as_test

from conformance.runner.stable import stable_generation
from reference_model import language as L
from reference_model import mqconst as C

#: Cases in one calibration unit.
CALIBRATION_CASES = 100

#: The operations' handle options in the deep-queue workload.
DEEP_OPTIONS = C.MQOO_OUTPUT | C.MQOO_INPUT_SHARED | C.MQOO_BROWSE


class DictMachine(RuleBasedStateMachine):
    """The baseline: a bare Hypothesis state machine over a dict, with rules shaped like the kit's.

    Each rule draws a few values, as the kit's rules do, and does a trivial amount of work.
    """

    #: Steps run, counted by each subclass :func:`bare_run` makes.
    steps = 0

    def __init__(self) -> None:
        super().__init__()
        self.queues: dict[str, list[int]] = {}

    def _step(self) -> None:
        type(self).steps += 1

    @rule(queue=st.sampled_from("ABC"), value=st.integers(0, 9), priority=st.integers(0, 9))
    def put(self, queue, value, priority):
        self._step()
        self.queues.setdefault(queue, []).append(priority * 10 + value)

    @rule(queue=st.sampled_from("ABC"), syncpoint=st.booleans())
    def get(self, queue, syncpoint):
        self._step()
        items = self.queues.get(queue)
        if items:
            items.remove(max(items))

    @rule(queue=st.sampled_from("ABC"), position=st.integers(0, 5))
    def browse(self, queue, position):
        self._step()
        items = self.queues.get(queue, [])
        _ = items[position] if position < len(items) else None

    @rule(queue=st.sampled_from("ABC"))
    def clear(self, queue):
        self._step()
        self.queues.pop(queue, None)

    @rule(tenths=st.integers(1, 50))
    def wait(self, tenths):
        self._step()
        _ = tenths

    @invariant()
    def bounded(self):
        assert sum(len(v) for v in self.queues.values()) < 10_000


def _bare_settings(examples: int, steps: int) -> settings:
    return settings(max_examples=examples, stateful_step_count=steps, deadline=None, database=None,
                    suppress_health_check=list(HealthCheck), verbosity=Verbosity.quiet,
                    phases=(Phase.generate,))


def bare_run(examples: int, steps: int | None = None, seed: int = 1) -> float:
    """Seconds the bare machine takes for ``examples`` cases of up to ``steps`` steps."""
    return bare_counted(examples, steps, seed)[0]


def bare_counted(examples: int, steps: int | None = None, seed: int = 1) -> tuple[float, int]:
    """(seconds, steps run) of the bare machine's ``examples`` cases of up to ``steps`` steps.

    It runs in a process of its own (:class:`_Worker`), as a plain Hypothesis user's machine
    would: the cyclic collector there walks only what that process holds, whatever this process
    has measured and kept before (the model's caches, Hypothesis's), so a figure does not depend on
    what was measured before it."""
    return _worker().call("bare", examples, steps, seed)


def _bare_counted_here(examples: int, steps: int | None, seed: int) -> tuple[float, int]:
    from conformance.runner.engine import STEPS_PER_CASE

    machine = type("DictMachine", (DictMachine,), {"_hypothesis_internal_use_seed": seed, "steps": 0})
    started = time.perf_counter()
    with stable_generation():   # as the kit's own runs draw
        run_state_machine_as_test(machine, settings=_bare_settings(examples, steps or STEPS_PER_CASE))
    return time.perf_counter() - started, machine.steps


def _serve(conn) -> None:
    """A worker's loop: (what, arguments) in, (True, result) or (False, the exception) out, None to end."""
    while True:
        request = conn.recv()
        if request is None:
            return
        what, arguments = request
        try:
            answer = (True, _SERVED[what](*arguments))
        except Exception as exc:   # the caller raises it: one failed measurement does not end the worker
            answer = (False, exc)
        conn.send(answer)


class _Worker:
    """A fresh interpreter (spawned, not forked) that runs measured work on request.

    Each side of a figure runs in one, so that what the bench process has measured and kept
    before (the model's caches, Hypothesis's, the heap the cyclic collector walks) weighs on
    neither side."""

    def __init__(self, name: str) -> None:
        import multiprocessing

        context = multiprocessing.get_context("spawn")
        self.conn, child = context.Pipe()
        self.process = context.Process(target=_serve, args=(child,), daemon=True, name=f"mqconform-bench-{name}")
        self.process.start()
        child.close()

    def call(self, what: str, *arguments):
        self.conn.send((what, arguments))
        ok, answer = self.conn.recv()
        if not ok:
            raise answer
        return answer

    def close(self) -> None:
        try:
            self.conn.send(None)
        except OSError:
            pass
        self.process.join(timeout=10)
        if self.process.is_alive():
            self.process.kill()
            self.process.join(timeout=5)
        self.conn.close()

    def __enter__(self) -> "_Worker":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


_WORKER: _Worker | None = None


def _worker() -> _Worker:
    global _WORKER
    if _WORKER is None or not _WORKER.process.is_alive():
        close_bare_worker()
        _WORKER = _Worker("bare")
    return _WORKER


@atexit.register
def close_bare_worker() -> None:
    """Stop the bare machine's process, if one was started."""
    global _WORKER
    if _WORKER is not None:
        _WORKER.close()
        _WORKER = None


def calibration_unit(seed: int = 1) -> float:
    """Seconds for one calibration unit: the bare machine's 100 cases."""
    return bare_run(CALIBRATION_CASES, seed=seed)


# -- throughput --------------------------------------------------------------------------------

@attrs.frozen
class Throughput:
    area: str
    platform: str
    cases: int
    kit_seconds: float
    bare_seconds: float
    #: Operations the kit ran on the system under test and checked against the model.
    kit_operations: int = 0
    #: Steps the bare machine ran (each one trivial operation on a dict).
    bare_steps: int = 0

    @property
    def ratio(self) -> float:
        """The kit's cases per second over the bare machine's (1.0: no cost over Hypothesis itself)."""
        return self.bare_seconds / self.kit_seconds if self.kit_seconds else float("inf")


def _kit_run(area: str, platform: str, examples: int, seed: int) -> tuple[int, float, int]:
    """(cases run, seconds, operations checked) for ``area``'s machine against a conforming simulated
    queue manager."""
    from adapters.registry import create_adapter
    from conformance.checker.sequential import MEMO
    from conformance.runner.engine import run_area
    from conformance.records.results import RunRecord

    adapter = create_adapter("simulated", {})
    record = RunRecord(adapter="simulated", describe={}, capabilities=adapter.capabilities().to_json(),
                       areas=[area], seed=seed, examples=examples)
    # A repeat of the same cases would find every step in the memo: each run starts without it.
    MEMO.clear()
    started = time.perf_counter()
    outcome, _ = run_area(adapter, area, platform, examples, seed, {}, record)
    took = time.perf_counter() - started
    adapter.close()
    if record.failures or record.error:
        raise RuntimeError(f"{area}: the conforming simulated queue manager gave {outcome}")
    return record.coverage.examples, took, record.coverage.steps


def _import(*modules: str) -> None:
    import importlib

    for name in modules:
        importlib.import_module(name)


def _plain_campaign(specs: list[dict]) -> int:
    from conformance.bench import campaign as bench_campaign

    return bench_campaign.plain_here(specs)


#: What a :class:`_Worker` runs on request.
_SERVED: dict[str, Callable] = {"bare": _bare_counted_here, "kit": _kit_run, "import": _import,
                                "plain": _plain_campaign}


#: Seeds of the throughput figure: one seed's cases may happen to be light or heavy (a dlq run's
#: cases per second differ by half from one seed to the next), so the figure sums several.
THROUGHPUT_SEEDS = (1, 2, 3)


def throughput(area: str, examples: int = 100, seeds: tuple[int, ...] = THROUGHPUT_SEEDS,
               repeats: int = 2) -> Throughput:
    """The kit's cases per second in ``area`` against the bare machine's, measured alternately.

    For each seed each side is run ``repeats`` times, interleaved, and its fastest run counts;
    the figure sums the seeds' cases, seconds, operations and steps.  Each side runs in a spawned
    process of its own, the kit's fresh for each area, so the figure is the same whatever the bench
    measured before it.
    """
    from adapters.registry import create_adapter
    from conformance.runner.engine import area_platforms

    platform = area_platforms(area, create_adapter("simulated", {}).capabilities())[0]
    cases = operations = steps = 0
    kit_seconds = bare_seconds = 0.0
    with _Worker("kit") as kit_worker:
        for seed in seeds:
            kit, bare = [], []
            for _ in range(repeats):
                n, took, ops = kit_worker.call("kit", area, platform, examples, seed)
                kit.append(took)
                took, bare_steps = bare_counted(n, seed=seed)
                bare.append(took)
            cases, operations, steps = cases + n, operations + ops, steps + bare_steps
            kit_seconds, bare_seconds = kit_seconds + min(kit), bare_seconds + min(bare)
    return Throughput(area, platform, cases, kit_seconds, bare_seconds, operations, steps)


# -- cost per operation at depth ---------------------------------------------------------------

def deep_queue_workload(rounds: int = 12) -> list[L.Op]:
    """A mix of every kind of queue operation on queue Q, through handles h1 and h2 of connection c1.

    Puts and gets with and without syncpoint, priorities, browses with locks, gets
    under the cursor, PUT1, depth inquiries, commits and backouts.
    """
    ops: list[L.Op] = []
    for i in range(rounds):
        ops += [
            L.Put(conn="c1", handle="h1", body=f"x{i}", md=L.MessageDescriptor(priority=i % 10)),
            L.Get(conn="c1", handle="h1", options=C.MQGMO_SYNCPOINT),
            L.Get(conn="c1", handle="h2", options=C.MQGMO_BROWSE_FIRST if i % 3 == 0 else
                  C.MQGMO_BROWSE_NEXT | C.MQGMO_LOCK),
            L.Get(conn="c1", handle="h2", options=C.MQGMO_MSG_UNDER_CURSOR | C.MQGMO_SYNCPOINT)
            if i % 4 == 1 else L.Get(conn="c1", handle="h2", options=C.MQGMO_UNLOCK),
            L.Put(conn="c1", handle="h1", body=f"y{i}", options=C.MQPMO_SYNCPOINT),
            L.Put1(conn="c1", queue="Q", body=f"z{i}", md=L.MessageDescriptor(priority=9 - i % 10)),
            L.InquireQueue(queue="Q", names=("CURDEPTH", "IPPROCS")),
            L.Backout(conn="c1") if i % 2 else L.Commit(conn="c1"),
        ]
    return ops


def deep_queue_setup(depth: int) -> list[L.Op]:
    """Queue Q holding ``depth`` messages of mixed priorities, handles h1 and h2 open on it."""
    setup: list[L.Op] = [
        L.DefineQueue(queue="Q", attrs=(("MAXDEPTH", max(5000, 2 * depth)),)), L.Connect(conn="c1"),
        L.Open(conn="c1", handle="h1", queue="Q", options=DEEP_OPTIONS),
        L.Open(conn="c1", handle="h2", queue="Q", options=DEEP_OPTIONS)]
    setup += [L.Put(conn="c1", handle="h1", body=f"m{i}", md=L.MessageDescriptor(priority=i % 10))
              for i in range(depth)]
    return setup


def prepared(depth: int):
    """(simulated queue manager, model tracker, workload) with the queue ``depth`` deep on both sides."""
    from adapters.registry import create_adapter
    from conformance.checker.sequential import ModelTracker

    sim = create_adapter("simulated", {})
    tracker = ModelTracker("distributed")
    for op in deep_queue_setup(depth):
        check = tracker.advance(op, sim.execute(op))
        assert check.mismatch is None, check.mismatch
    return sim, tracker, deep_queue_workload()


@attrs.frozen
class DepthCost:
    depth: int
    simulated: float   # seconds per operation in the simulated queue manager
    model: float       # seconds per operation in the model and its checker


def depth_cost(depths: tuple[int, ...] = (10, 100, 1000), repeats: int = 3) -> list[DepthCost]:
    """Seconds per operation of the workload at each depth (the fastest of ``repeats``, depths interleaved)."""
    best: dict[int, list[float]] = {d: [float("inf"), float("inf")] for d in depths}
    for _ in range(repeats):
        for depth in depths:
            sim, tracker, ops = prepared(depth)
            started = time.perf_counter()
            seen = [sim.execute(op) for op in ops]
            middle = time.perf_counter()
            for op, observed in zip(ops, seen):
                check = tracker.advance(op, observed)
                assert check.mismatch is None, check.mismatch
            ended = time.perf_counter()
            sim.close()
            b = best[depth]
            b[0] = min(b[0], (middle - started) / len(ops))
            b[1] = min(b[1], (ended - middle) / len(ops))
    return [DepthCost(d, *best[d]) for d in depths]


# -- time to detect ----------------------------------------------------------------------------

@attrs.frozen
class Detection:
    fault: str
    area: str
    found: bool
    seconds: float       # until the first minimised counterexample was recorded (the whole run if none)
    unit: float          # the calibration unit measured right after
    cases: int           # cases the run executed
    steps: int           # the minimal history's length (0 when not found)
    whole: float = 0.0   # the whole run: the other platform's and rules' verdicts as well

    @property
    def units(self) -> float:
        return self.seconds / self.unit

    @property
    def whole_units(self) -> float:
        return self.whole / self.unit


def detect(fault: str, examples: int = 200, seed: int = 7) -> Detection:
    """Find and minimise ``fault`` as ``mqconform run --area AREA --keep-going 0`` would; then calibrate.

    The time to detect runs until the first departure is recorded, minimised: the moment the run
    writes its replay file and says so.  The whole run (the verdicts on the other platform and on
    the other rules) is timed as well."""
    from adapters.registry import create_adapter
    from adapters.simulated.faults import FAULTS
    from conformance.checker.sequential import MEMO
    from conformance.runner.engine import run_areas

    spec = FAULTS[fault]
    adapter = create_adapter("simulated", {"faults": fault})
    first: list[float] = []
    MEMO.clear()   # the same seed's earlier runs would otherwise have followed this run's beginning

    def updated(record) -> None:
        if record.failures and not first:
            first.append(time.perf_counter() - started)

    started = time.perf_counter()
    record = run_areas(adapter, [spec.area], examples, seed, {"faults": fault}, on_update=updated)
    took = time.perf_counter() - started
    adapter.close()
    unit = calibration_unit()
    steps = min((len(f.steps) for f in record.failures), default=0)
    return Detection(fault, spec.area, bool(record.failures), first[0] if first else took, unit,
                     record.coverage.examples, steps, took)


def time_to_detect(faults: list[str], examples: int = 200, seed: int = 7,
                   progress: Callable[[Detection], None] | None = None) -> list[Detection]:
    found = []
    for fault in faults:
        d = detect(fault, examples, seed)
        found.append(d)
        if progress is not None:
            progress(d)
    return found


# -- the report ---------------------------------------------------------------------------------

#: The figures ``mqconform bench`` can print, in order.
FIGURES = ("detect", "throughput", "depth", "campaign", "brokers", "broker-jobs", "concurrency")

#: Goals (docs/performance.md): time to detect in calibration units, kit / bare Hypothesis, depth ratios.
GOAL_DETECT_MEDIAN, GOAL_DETECT_MAX = 2.0, 10.0
GOAL_THROUGHPUT = 0.5
GOAL_DEPTH = 3.0


def _table(rows, headers) -> str:
    from tabulate import tabulate

    return tabulate(rows, headers=headers, tablefmt="simple", floatfmt=".2f")


def _mark(ok: bool) -> str:
    return "met" if ok else "NOT met"


def report_detect(out, faults: list[str], examples: int, seed: int) -> list[Detection]:
    out.write(f"Time to detect: each catalogue fault found and minimised as 'mqconform run --area AREA "
              f"--keep-going 0 --seed {seed} --examples {examples}' would, in calibration units "
              f"(a bare Hypothesis machine's {CALIBRATION_CASES} cases, run right after): until the "
              f"first minimised counterexample is recorded, and the whole run (every platform's verdict)\n")
    found = time_to_detect(faults, examples, seed)
    rows = [(d.fault, d.area, f"{d.units:.2f}" if d.found else "not found", f"{d.whole_units:.2f}", d.cases,
             d.steps or "-") for d in found]
    out.write(_table(rows, ("fault", "area", "units", "whole run", "cases", "minimal")) + "\n")
    units = [d.units for d in found if d.found]
    missed = [d.fault for d in found if not d.found]
    if units:
        med, top = statistics.median(units), max(units)
        out.write(f"found {len(units)} of {len(found)}" + (f" (missed: {', '.join(missed)})" if missed else "")
                  + f"; units median {med:.2f} (goal < {GOAL_DETECT_MEDIAN:g}: {_mark(med < GOAL_DETECT_MEDIAN)}), "
                  f"max {top:.2f} (goal < {GOAL_DETECT_MAX:g}: {_mark(top < GOAL_DETECT_MAX)}); "
                  f"a unit was {statistics.median(d.unit for d in found):.2f}s\n\n")
    return found


def report_throughput(out, areas: list[str], examples: int) -> list[Throughput]:
    out.write(f"Throughput: the kit's cases per second against a conforming simulated queue manager, over a "
              f"bare Hypothesis machine's with the same cases and step budget (seeds "
              f"{', '.join(map(str, THROUGHPUT_SEEDS))} summed, each the fastest of 2, interleaved)\n")
    rows, got = [], []
    for area in areas:
        t = throughput(area, examples)
        got.append(t)
        rows.append((area, t.platform, t.cases, t.cases / t.kit_seconds, t.cases / t.bare_seconds,
                     f"{t.ratio:.2f}", _mark(t.ratio >= GOAL_THROUGHPUT), f"{t.kit_operations / t.cases:.0f}",
                     f"{t.bare_steps / t.cases:.0f}"))
    out.write(_table(rows, ("area", "platform", "cases", "kit cases/s", "bare cases/s", "ratio",
                            f"goal >= {GOAL_THROUGHPUT}", "kit ops/case", "bare steps/case")) + "\n")
    out.write("(kit ops/case: operations run on the system and checked against the model; the bare machine's "
              "steps each do one trivial operation on a dict)\n\n")
    return got


def report_depth(out) -> list[DepthCost]:
    out.write("Cost per operation with the queue 10, 100 and 1,000 messages deep (a mix of puts, gets, "
              "browses with locks, syncpoint, PUT1 and inquiries), against 10 deep\n")
    costs = depth_cost()
    base = costs[0]
    rows = [(c.depth, c.simulated * 1e6, c.simulated / base.simulated, c.model * 1e6, c.model / base.model)
            for c in costs]
    out.write(_table(rows, ("depth", "simulated us/op", "ratio", "model+checker us/op", "ratio")) + "\n")
    last = costs[-1]
    worst = max(last.simulated / base.simulated, last.model / base.model)
    out.write(f"at {last.depth} against {base.depth}: at most {worst:.2f}x (goal <= {GOAL_DEPTH:g}: "
              f"{_mark(worst <= GOAL_DEPTH)})\n\n")
    return costs


def run(out, figures: list[str], faults: list[str], areas: list[str], examples: int, seed: int,
        task_seconds: float) -> None:
    import os

    out.write(f"mqconform bench on {os.cpu_count()} cores; every figure a ratio measured side by side\n\n")
    try:
        _report(out, figures, faults, areas, examples, seed, task_seconds)
    finally:
        close_bare_worker()


def _report(out, figures: list[str], faults: list[str], areas: list[str], examples: int, seed: int,
            task_seconds: float) -> None:
    if "detect" in figures:
        report_detect(out, faults, examples, seed)
    if "throughput" in figures:
        report_throughput(out, areas, 100)
    if "depth" in figures:
        report_depth(out)
    if "campaign" in figures:
        from conformance.bench import campaign as bench_campaign

        bench_campaign.report(out, task_seconds)
    if "brokers" in figures:
        from conformance.bench import brokers as bench_brokers

        bench_brokers.report(out)
    if "broker-jobs" in figures:
        from conformance.bench import brokers as bench_brokers

        bench_brokers.report_jobs(out)
    if "concurrency" in figures:
        from conformance.bench import concurrency as bench_concurrency

        bench_concurrency.report(out)
