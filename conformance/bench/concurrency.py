"""``mqconform bench --only concurrency``: what judging a concurrent case costs, against running it.

Each case: of a kind drawn as a concurrent run draws it (:data:`conformance.runner.concurrent.KINDS`), three clients
each with a script of :mod:`conformance.runner.concurrent` (on a queue case a producer, a consumer, a browser or
a mix of puts and gets in and out of syncpoint, commits, backouts and depth inquiries; six calls, a consumer's
twelve), then the check after them, run on a conforming simulated queue manager as a concurrent run runs a case
(:func:`conformance.runner.concurrent.run_case`: the set-up, the clients on threads released together, each call's
interval on the monotonic clock, the check).  The history it records is judged by
:mod:`conformance.checker.linearizable`.  The figures: the checker's time per case against the time the case took to
run (the goal), and the share of cases the search ended indeterminate (a conforming queue manager must never give a
history that is not linearizable: one would be a false alarm, counted apart).

Two more lines say what the goal's figure leaves out.  The same histories with every interval widened to overlap
up to three calls of the other clients at once (so many orders to try that the search itself, not the model's
steps, is what is measured): their checker's time against the same run.  And the checker against the bare calls:
the same operations run one after another on one thread, without a case's threads and clock (how much slower the
model's step is than the simulated queue manager's call).
"""

from __future__ import annotations

import random
import statistics
import time

import attrs

from reference_model import mqconst as C

CLIENTS = ("a", "b", "c")
OPS_PER_CLIENT = 6
CASES = 60
#: Goals (issue: concurrent clients): the checker at most as long as the run, under 1% indeterminate.
GOAL_RATIO = 1.0
GOAL_INDETERMINATE = 0.01


@attrs.frozen
class ConcurrencyCost:
    cases: int
    run_seconds: tuple[float, ...]
    check_seconds: tuple[float, ...]
    indeterminate: int
    not_linearizable: int
    #: The same histories, every interval widened (:func:`widened`): the checker's seconds and its verdicts.
    wide_check_seconds: tuple[float, ...] = ()
    wide_indeterminate: int = 0
    wide_not_linearizable: int = 0
    #: The case's calls run one after another on one thread, without threads or clock.
    bare_seconds: tuple[float, ...] = ()

    @property
    def ratio(self) -> float:
        """The checker's median time per case over the run's median time per case."""
        return statistics.median(self.check_seconds) / max(statistics.median(self.run_seconds), 1e-9)

    @property
    def wide_ratio(self) -> float:
        return statistics.median(self.wide_check_seconds) / max(statistics.median(self.run_seconds), 1e-9)

    @property
    def bare_ratio(self) -> float:
        return statistics.median(self.check_seconds) / max(statistics.median(self.bare_seconds), 1e-9)


def draw(rng: random.Random):
    """A case drawn as a concurrent run draws one: (kind, set-up operations, each client's script, the check's
    operations after them)."""
    from conformance.runner.concurrent import KIND_WEIGHTS, KINDS, after_ops, client_script, setup_ops

    kind = rng.choices(KINDS, KIND_WEIGHTS)[0]
    setup = setup_ops(CLIENTS, 0, kind)
    scripts = {client: client_script(rng, client, OPS_PER_CLIENT, kind) for client in CLIENTS}
    return kind, setup, scripts, after_ops(kind, setup, scripts)


def one_case(rng: random.Random, adapter=None):
    """Run one case, drawn as concurrent runs draw it, on a conforming simulated queue manager as a concurrent run
    runs it: (the case recorded, seconds it took)."""
    from adapters.simulated import SimulatedAdapter
    from conformance.runner.concurrent import run_case

    adapter = adapter or SimulatedAdapter()
    _, setup, scripts, after = draw(rng)
    started = time.perf_counter()
    case = run_case(adapter, "bench-concurrency", C.PLATFORM_DISTRIBUTED, setup, scripts, after)
    return case, time.perf_counter() - started


def bare_run(case) -> float:
    """Seconds the case's calls take run one after another on one thread (in the order they were invoked), on a
    fresh conforming simulated queue manager: the calls alone, without a case's threads and clock."""
    from adapters.simulated import SimulatedAdapter

    adapter = SimulatedAdapter()
    adapter.start_case("bench-concurrency-bare", C.PLATFORM_DISTRIBUTED)
    ops = [op for op, _ in case.setup] + [e.op for e in sorted(case.events, key=lambda e: e.invoked)] + [
        op for op, _ in case.after]
    started = time.perf_counter()
    for op in ops:
        adapter.execute(op)
    seconds = time.perf_counter() - started
    adapter.end_case()
    return seconds


def widened(events, order, rng: random.Random):
    """The events with intervals on a timeline of their own: invoked in ``order`` (the checker's witness order of
    the history as recorded), each lasting up to three more invocations, each client's own calls still in order.
    Every order the new intervals keep is one of many; the witness is among them, so a history that was
    linearizable stays so."""
    placed = set(order)
    order = list(order) + [i for i in range(len(events)) if i not in placed]
    out, ends, last = [], {}, -1.0
    for n, event in enumerate(events[i] for i in order):
        last = invoked = max(float(n), ends.get(event.client, -1.0) + 0.01, last + 0.01)
        ends[event.client] = invoked + 0.5 + rng.uniform(0.0, 3.0)
        out.append(attrs.evolve(event, invoked=invoked, returned=ends[event.client]
                                if event.returned is not None else None))
    rng.shuffle(out)
    return out


def measure(cases: int = CASES, seed: int = 7) -> ConcurrencyCost:
    from adapters.simulated import SimulatedAdapter
    from conformance.checker.linearizable import INDETERMINATE, NOT_LINEARIZABLE, check

    def judged(events):
        started = time.perf_counter()
        result = check(C.PLATFORM_DISTRIBUTED, case.setup, events, case.after)
        return time.perf_counter() - started, result

    rng = random.Random(seed)
    adapter = SimulatedAdapter()
    run_s, check_s, wide_s, bare_s = [], [], [], []
    verdicts, wide = [], []
    for _ in range(cases):
        case, seconds = one_case(rng, adapter)
        run_s.append(seconds)
        spent, result = judged(case.events)
        check_s.append(spent)
        verdicts.append(result.verdict)
        spent, wide_result = judged(widened(case.events, result.order, rng))
        wide_s.append(spent)
        wide.append(wide_result.verdict)
        bare_s.append(bare_run(case))
    return ConcurrencyCost(cases=cases, run_seconds=tuple(run_s), check_seconds=tuple(check_s),
                           indeterminate=verdicts.count(INDETERMINATE), not_linearizable=verdicts.count(NOT_LINEARIZABLE),
                           wide_check_seconds=tuple(wide_s), wide_indeterminate=wide.count(INDETERMINATE),
                           wide_not_linearizable=wide.count(NOT_LINEARIZABLE), bare_seconds=tuple(bare_s))


def report(out) -> ConcurrencyCost:
    from conformance.bench.suite import _mark, _table

    out.write(f"Concurrency: judging a concurrent case ({len(CLIENTS)} clients x {OPS_PER_CLIENT} operations "
              f"(a consumer's twice as many)) against running it on a conforming simulated queue manager as a "
              f"concurrent run does (threads released together), {CASES} cases\n")
    cost = measure()

    def row(name, seconds):
        return (name, statistics.median(seconds) * 1e3, max(seconds) * 1e3)

    rows = [row("run", cost.run_seconds), row("check", cost.check_seconds),
            row("check, intervals widened", cost.wide_check_seconds),
            row("the calls alone, one thread", cost.bare_seconds)]
    out.write(_table(rows, ("per case", "median ms", "max ms")) + "\n")
    share = cost.indeterminate / cost.cases
    out.write(f"checker / run: {cost.ratio:.2f}x (goal <= {GOAL_RATIO:g}: {_mark(cost.ratio <= GOAL_RATIO)}); "
              f"indeterminate {cost.indeterminate} of {cost.cases} ({share:.1%}; goal < {GOAL_INDETERMINATE:.0%}: "
              f"{_mark(share < GOAL_INDETERMINATE)}); not linearizable (false alarms on a conforming queue "
              f"manager): {cost.not_linearizable}\n")
    out.write(f"with every interval widened to overlap up to 3 calls: checker / run {cost.wide_ratio:.2f}x, "
              f"indeterminate {cost.wide_indeterminate} of {cost.cases}, not linearizable "
              f"{cost.wide_not_linearizable}; checker / the calls alone on one thread: {cost.bare_ratio:.2f}x "
              f"(the model's steps against the simulated queue manager's)\n\n")
    return cost
