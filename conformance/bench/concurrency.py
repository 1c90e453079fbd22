"""``mqconform bench --only concurrency``: what judging a concurrent case costs, against running it.

Each case: of a kind drawn as a concurrent run draws it (:data:`conformance.runner.concurrent.KINDS`), three clients
each with a script of :mod:`conformance.runner.concurrent` (on a queue case a producer, a consumer, a browser or
a mix of puts and gets in and out of syncpoint, commits, backouts and depth inquiries; six calls, a consumer's
twelve), then the check after them, run on a conforming simulated queue manager in an interleaving drawn from the seed.  Each operation is then given an interval on a shared timeline that overlaps its neighbours' (up to
three operations of the other clients at once) while keeping each client's own calls in order, and the
history is judged by :mod:`conformance.checker.linearizable`.  The figures: the checker's time per case against the
time the case took to run, and the share of cases the search ended indeterminate (a conforming queue manager
must never give a history that is not linearizable: one would be a false alarm, counted apart).
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

    @property
    def ratio(self) -> float:
        """The checker's median time per case over the run's median time per case."""
        return statistics.median(self.check_seconds) / max(statistics.median(self.run_seconds), 1e-9)


def one_case(rng: random.Random):
    """Run one case, of a kind drawn as concurrent runs draw it, on a conforming simulated queue manager: (set-up
    steps, events, the check's steps after them, seconds it took)."""
    from adapters.simulated import SimulatedAdapter
    from conformance.runner.concurrent import KIND_WEIGHTS, KINDS, after_ops, client_script, setup_ops
    from conformance.checker.linearizable import Event

    adapter = SimulatedAdapter()
    adapter.start_case("bench-concurrency", C.PLATFORM_DISTRIBUTED)
    kind = rng.choices(KINDS, KIND_WEIGHTS)[0]
    started = time.perf_counter()
    setup_steps = setup_ops(CLIENTS, 0, kind)
    setup = [(op, adapter.execute(op)) for op in setup_steps]
    scripts = {client: client_script(rng, client, OPS_PER_CLIENT, kind) for client in CLIENTS}
    after_steps = after_ops(kind, setup_steps, scripts)
    order = [client for client in CLIENTS for _ in scripts[client]]
    rng.shuffle(order)
    ran = []
    for client in order:
        op = scripts[client].pop(0)
        ran.append((client, op, adapter.execute(op)))
    after = [(op, adapter.execute(op)) for op in after_steps]
    seconds = time.perf_counter() - started
    adapter.end_case()
    # intervals on a shared timeline: invoked in the order run, each lasting up to three more invocations
    events, ends, last = [], {}, -1.0
    for n, (client, op, observed) in enumerate(ran):
        last = invoked = max(float(n), ends.get(client, -1.0) + 0.01, last + 0.01)
        ends[client] = invoked + 0.5 + rng.uniform(0.0, 3.0)
        events.append(Event(client=client, op=op, observed=observed, invoked=invoked, returned=ends[client]))
    rng.shuffle(events)
    return setup, events, after, seconds


def measure(cases: int = CASES, seed: int = 7) -> ConcurrencyCost:
    from conformance.checker.linearizable import INDETERMINATE, NOT_LINEARIZABLE, check

    rng = random.Random(seed)
    run_s, check_s, indeterminate, wrong = [], [], 0, 0
    for _ in range(cases):
        setup, events, after, seconds = one_case(rng)
        started = time.perf_counter()
        verdict = check(C.PLATFORM_DISTRIBUTED, setup, events, after).verdict
        check_s.append(time.perf_counter() - started)
        run_s.append(seconds)
        indeterminate += verdict == INDETERMINATE
        wrong += verdict == NOT_LINEARIZABLE
    return ConcurrencyCost(cases=cases, run_seconds=tuple(run_s), check_seconds=tuple(check_s),
                           indeterminate=indeterminate, not_linearizable=wrong)


def report(out) -> ConcurrencyCost:
    from conformance.bench.suite import _mark, _table

    out.write(f"Concurrency: judging a concurrent case ({len(CLIENTS)} clients x {OPS_PER_CLIENT} operations "
              f"(a consumer's twice as many), "
              f"overlapping up to 3 at once) against running it on a conforming simulated queue manager, "
              f"{CASES} cases\n")
    cost = measure()
    rows = [("run", statistics.median(cost.run_seconds) * 1e3, max(cost.run_seconds) * 1e3),
            ("check", statistics.median(cost.check_seconds) * 1e3, max(cost.check_seconds) * 1e3)]
    out.write(_table(rows, ("per case", "median ms", "max ms")) + "\n")
    share = cost.indeterminate / cost.cases
    out.write(f"checker / run: {cost.ratio:.2f}x (goal <= {GOAL_RATIO:g}: {_mark(cost.ratio <= GOAL_RATIO)}); "
              f"indeterminate {cost.indeterminate} of {cost.cases} ({share:.1%}; goal < {GOAL_INDETERMINATE:.0%}: "
              f"{_mark(share < GOAL_INDETERMINATE)}); not linearizable (false alarms on a conforming queue "
              f"manager): {cost.not_linearizable}\n\n")
    return cost
