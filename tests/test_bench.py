"""``mqconform bench``: every figure is computed from real runs and printed; nothing here is timed.

The figures' values depend on the machine; the tests check that each part
measures what it names (cases run, operations done, a fault found, CPU counted),
not how fast.
"""

from __future__ import annotations

import io
import multiprocessing
import os
import time

import pytest

from conformance.bench import suite as bench
from conformance.bench import campaign as BC
from conformance.cli import main
from conformance.runner.engine import STEPS_PER_CASE
from tests.clikit import run_cli


def test_the_bare_machine_runs_the_cases_asked_for():
    assert bench.bare_run(20, steps=10) > 0
    seconds, steps = bench.bare_counted(20, steps=10)
    assert seconds > 0 and 20 <= steps <= 200
    assert bench.calibration_unit() > 0


def test_the_bare_machine_runs_in_a_process_of_its_own():
    """So that the collector there walks only what that process holds, not what this one measured before."""
    seconds, steps = bench.bare_counted(5, steps=5)
    worker = bench._WORKER
    assert seconds > 0 and steps >= 5
    assert worker is not None and worker.process.is_alive() and worker.process.pid != os.getpid()
    assert bench.bare_counted(5, steps=5)[1] == steps and bench._WORKER is worker   # one process, reused
    bench.close_bare_worker()
    assert bench._WORKER is None and not worker.process.is_alive()


def test_throughput_runs_the_same_cases_on_both_sides():
    t = bench.throughput("core", examples=10, seeds=(1, 2), repeats=1)
    assert t.cases >= 20 and t.platform == "distributed"
    assert t.kit_seconds > 0 and t.bare_seconds > 0 and t.ratio == t.bare_seconds / t.kit_seconds
    # every case runs operations on both sides, and the bare machine runs no more steps than its budget
    assert t.kit_operations > t.cases and t.cases <= t.bare_steps <= t.cases * STEPS_PER_CASE


@pytest.fixture
def worker_calls(monkeypatch):
    """(what, the worker's pid) of each call made to a bench worker process while the test runs."""
    calls = []
    real = bench._Worker

    class Recording(real):
        def call(self, what, *arguments):
            calls.append((what, self.process.pid))
            return super().call(what, *arguments)

    monkeypatch.setattr(bench, "_Worker", Recording)
    return calls


def test_the_kits_side_runs_in_a_fresh_process_for_each_area(worker_calls):
    """What the bench measured before (detect's caches, heap) weighs on neither side of a throughput figure."""
    pids = worker_calls
    for area in ("core", "core"):
        bench.throughput(area, examples=3, seeds=(1,), repeats=2)
    kit = [pid for what, pid in pids if what == "kit"]
    assert len(kit) == 4 and os.getpid() not in kit
    assert kit[0] == kit[1] and kit[2] == kit[3] and kit[0] != kit[2]   # one process per area


def test_a_measurement_that_fails_in_a_worker_is_raised_and_the_worker_lives_on():
    with bench._Worker("kit") as worker:
        with pytest.raises(KeyError, match="no-such-area"):
            worker.call("kit", "no-such-area", "distributed", 1, 1)
        assert worker.process.is_alive()
        cases, seconds, operations = worker.call("kit", "core", "distributed", 2, 1)
        assert cases >= 2 and seconds > 0 and operations >= cases
    assert not worker.process.is_alive()


def test_the_deep_queue_workload_does_the_same_work_at_every_depth():
    """The same operations succeed at 10 and at 1,000 messages (the model agrees with the simulated queue manager)."""
    for depth in (10, 1000):
        sim, tracker, ops = bench.prepared(depth)
        results = [sim.execute(op) for op in ops]
        got = sum(1 for r in results if r.message is not None)
        assert got >= 24
    costs = bench.depth_cost(depths=(10, 100), repeats=1)
    assert [c.depth for c in costs] == [10, 100] and all(c.simulated > 0 and c.model > 0 for c in costs)


def test_time_to_detect_finds_and_minimises_a_fault():
    d = bench.detect("get-inhibit-ignored", examples=100)
    assert d.found and d.area == "core" and 0 < d.steps <= 8
    assert d.units == d.seconds / d.unit and d.cases > 0
    # the counterexample is recorded before the run ends: the other platform still runs after it
    assert 0 < d.seconds < d.whole and d.whole_units == d.whole / d.unit
    missing = bench.detect("expiry-zero-accepted", examples=1, seed=3)
    assert missing.area == "expiry" and missing.cases >= 1


def test_the_command_prints_the_figures_asked_for(tmp_path):
    out = io.StringIO()
    code = main(["bench", "--only", "depth,detect", "--faults", "get-inhibit-ignored"], out=out)
    text = out.getvalue()
    assert code == 0
    assert "Cost per operation" in text and "1000" in text and "goal <= 3" in text
    assert "Time to detect" in text and "get-inhibit-ignored" in text and "found 1 of 1" in text
    assert "Throughput" not in text and "Campaign" not in text


def test_bad_figures_or_faults_are_one_line_and_exit_2():
    for args in (["bench", "--only", "speed"], ["bench", "--faults", "no-such-fault"]):
        code, _, err = run_cli(*args)
        assert code == 2 and err.count("\n") == 1 and "mqconform: error:" in err
        assert "Traceback" not in err


def _spin(cpu_seconds: float) -> None:
    """Busy until this process has used ``cpu_seconds`` of CPU (however long a loaded machine takes to give them)."""
    end = time.process_time() + cpu_seconds
    while time.process_time() < end:
        pass


def test_the_sampler_counts_a_busy_child_process():
    idle = BC.Sampler(interval=0.05).start()
    time.sleep(1.0)
    idle_busy, _ = idle.stop()
    started = time.monotonic()
    sampler = BC.Sampler(interval=0.05).start()
    child = multiprocessing.get_context("fork").Process(target=_spin, args=(1.0,))
    child.start()
    child.join()
    busy, elsewhere = sampler.stop()
    wall = time.monotonic() - started
    # the spinning child's second of CPU is counted as this process tree's, however loaded the machine is (the
    # sampler gives cores averaged over the wall time: times the wall time, the CPU seconds it counted; a sample
    # interval of the child's last CPU may be missed)
    assert busy * wall >= 0.8 and idle_busy < 0.2 and elsewhere >= 0, (busy, wall, idle_busy)


def test_campaign_tasks_cover_every_area_and_are_sized_by_time():
    specs = BC.tasks(seconds=2.0)
    assert {s.area for s in specs} == {"core", "syncpoint", "expiry", "trigger", "cluster", "dlq"}
    assert all(s.seconds == 2.0 and s.examples > 1000 for s in specs)


@pytest.mark.parametrize("cores", [1, 2, 3, 4, 8])
def test_campaign_tasks_divide_by_the_cores_so_no_core_idles_for_a_whole_last_task(cores):
    specs = BC.tasks(seconds=2.0, cores=cores)
    assert len(specs) % cores == 0 and len({s.id for s in specs}) == len(specs)
    assert len(specs) - len(BC.tasks(seconds=2.0, cores=1)) < cores


def test_the_plain_way_runs_the_tasks_in_a_fresh_process_and_counts_its_core(worker_calls):
    """Not in the bench's own process, whose heap from the figures before would slow the baseline
    the Spark ways are compared with."""
    pids = worker_calls
    specs = [s for s in BC.tasks(seconds=0.3, cores=1) if s.area == "core"][:2]
    got = BC.plain(specs)
    assert [what for what, _ in pids] == ["import", "plain"] and os.getpid() not in {p for _, p in pids}
    # each task ran for its time, one after the other; the child's busy core is counted as the tree's (the
    # parent only waits: uncounted, the tree would show next to none; how much of a core the child gets
    # depends on what else the machine runs, another test worker say)
    assert got.examples >= len(specs) and got.seconds >= 0.6 and got.cores_busy > 0.2


def test_the_command_offers_the_figures_bench_prints():
    from conformance.cli import BENCH_FIGURES

    assert BENCH_FIGURES == bench.FIGURES


def test_the_campaign_figure_keeps_the_fastest_of_interleaved_rounds(monkeypatch, tmp_path):
    """A drift of the machine's speed falls on every way alike: the order turns round every other
    round, and each way's fastest round is the one reported."""
    ran = []
    rates = iter([10, 20, 40, 45, 22, 9])   # plain, one, all; then all, one, plain

    def fake(how):
        def run(*args):
            ran.append(how)
            return BC.Measured(how, 1.0, next(rates), 1.0, 0.0)
        return run

    monkeypatch.setattr(BC, "plain", fake("plain"))
    monkeypatch.setattr(BC, "on_spark", lambda specs, cores, workdir: fake(f"local[{cores}]")())
    monkeypatch.setattr(BC.os, "cpu_count", lambda: 2)
    got = BC.measure(seconds=0.1, rounds=2)
    assert ran == ["plain", "local[1]", "local[2]", "local[2]", "local[1]", "plain"]
    assert [(m.how, m.examples) for m in got] == [("plain", 10), ("local[1]", 22), ("local[2]", 45)]


def test_the_concurrency_figure_judges_cases_a_conforming_queue_manager_ran_and_finds_no_race():
    """Each case runs as a concurrent run runs it (threads, the monotonic clock) and its history is linearizable;
    so is the same history with its intervals widened around the witness order; the figure prints the checker's
    time against the run's, the indeterminate share, and both figures the goal leaves out."""
    import io
    import random

    from conformance.bench import concurrency as bench_concurrency
    from conformance.checker.linearizable import LINEARIZABLE, check
    from conformance.runner.concurrent import KINDS
    from reference_model import mqconst as C

    cost = bench_concurrency.measure(cases=8, seed=3)
    assert cost.cases == 8 and cost.not_linearizable == 0 and cost.indeterminate == 0 and cost.ratio > 0
    assert cost.wide_not_linearizable == 0 and len(cost.bare_seconds) == 8 and cost.bare_ratio > 0
    kinds = set()
    for seed in range(5, 11):
        case, seconds = bench_concurrency.one_case(random.Random(seed))
        # the concurrent mode's own kind and scripts, drawn in the same order from the same seed: every call ran
        kind, setup, scripts, after = bench_concurrency.draw(random.Random(seed))
        assert kind in KINDS and seconds > 0
        kinds.add(kind)
        assert sorted(map(repr, (e.op for e in case.events))) == sorted(
            map(repr, (op for ops in scripts.values() for op in ops)))
        assert [op for op, _ in case.setup] == list(setup) and [op for op, _ in case.after] == list(after) and after
        assert {e.client for e in case.events} == {"a", "b", "c"}
        assert all(e.returned is not None and e.returned >= e.invoked for e in case.events)
        result = check(C.PLATFORM_DISTRIBUTED, case.setup, case.events, case.after)
        assert result.verdict == LINEARIZABLE
        wide = bench_concurrency.widened(case.events, result.order, random.Random(seed))
        assert sorted(map(repr, (e.op for e in wide))) == sorted(map(repr, (e.op for e in case.events)))
        assert check(C.PLATFORM_DISTRIBUTED, case.setup, wide, case.after).verdict == LINEARIZABLE
        # widened: each call overlaps some other client's
        assert any(a.client != b.client and a.invoked < b.returned and b.invoked < a.returned
                   for a in wide for b in wide)
    assert len(kinds) >= 2, kinds
    out = io.StringIO()
    bench_concurrency.report(out)
    assert "checker / run:" in out.getvalue() and "indeterminate 0 of" in out.getvalue()
    assert "intervals widened" in out.getvalue() and "the calls alone" in out.getvalue()


def test_the_broker_jobs_figure_counts_every_case_of_both_runs(tmp_path):
    """The figure's two runs, here on the simulated queue manager: each spends the whole budget (one worker all of
    it, two workers half each), and cases per second are cases run over the run's own seconds."""
    from conformance.bench import brokers as BB

    got = BB.measure_jobs("simulated", tmp_path, jobs=2, area="syncpoint", examples=6, options=())
    assert got.one_cases == 6 and got.many_cases == 6 and got.jobs == 2
    assert 0 < got.one_seconds < 120 and 0 < got.many_seconds < 120
    assert abs(got.ratio - (6 / got.many_seconds) / (6 / got.one_seconds)) < 1e-9
    with pytest.raises(RuntimeError, match="exit 2"):
        BB.measure_jobs("simulated", tmp_path / "bad", jobs=2, area="syncpoint", examples=6, options=("nope=1",))
