"""A run shared among worker processes (mqconform run --jobs N): the workers' findings merged into one run."""

import json
import subprocess
import sys

from conformance.runner.jobs import job_examples, job_seed
from reference_model import language as L
from tests.clikit import run_cli


def test_each_worker_has_its_share_and_a_seed_of_its_own():
    assert job_examples(40, 3) == [14, 13, 13] and sum(job_examples(40, 3)) == 40
    assert job_examples(2, 4) == [1, 1, 1, 1]      # every worker runs at least one case
    seeds = [job_seed(7, k) for k in range(4)]
    assert seeds[0] == 7 and len(set(seeds)) == 4 and seeds == [job_seed(7, k) for k in range(4)]


def test_a_run_shared_among_jobs_finds_the_fault_and_writes_one_result_directory(tmp_path):
    import time

    out = tmp_path / "r"
    began = time.monotonic()
    code, text, err = run_cli("run", "--adapter", "simulated", "--faults", "priority-ignored", "--area", "core",
                              "--adapter-opt", "platform=distributed", "--examples", "30", "--seed", "3",
                              "--jobs", "2", "--results", out)
    took = time.monotonic() - began
    assert code == 1, text + err
    meta = json.loads((out / "run.json").read_text())
    # the time by area is the wall clock's, not the workers' summed
    assert 0 < sum(meta["seconds"].values()) <= took, (meta["seconds"], took)
    assert meta["examples_run"] > 0 and meta["system"]["faults"] == ["priority-ignored"]
    rows = {r["rule"]: r for r in map(json.loads, (out / "rules.jsonl").read_text().splitlines())}
    assert rows["CORE-04"]["verdict"] == "fail"
    assert not (out / ".jobs").exists()   # the workers' own directories are gone once merged
    replay = sorted((out / "failures").glob("*CORE-04*.json"))[0]
    code, text, err = run_cli("replay", replay)
    assert code == 1 and "Still failing" in text, text + err


def test_the_workers_of_a_conformant_system_pass_together(tmp_path):
    code, text, err = run_cli("run", "--adapter", "simulated", "--area", "core,expiry", "--examples", "10",
                              "--adapter-opt", "platform=distributed", "--seed", "1", "--jobs", "2",
                              "--results", tmp_path / "r")
    assert code == 0, text + err
    assert "core: 2 workers" in text and "expiry: 2 workers" in text


def test_restarts_and_the_nemesis_are_refused_with_jobs(tmp_path):
    for opt in ("restart=on", "nemesis=on"):
        code, text, err = run_cli("run", "--adapter", "simulated", "--adapter-opt", opt, "--jobs", "2",
                                  "--results", tmp_path / opt)
        assert code == 2 and "--jobs 1" in err and len(err.strip().splitlines()) == 1, err


def test_a_worker_whose_system_breaks_is_an_error_never_a_verdict(tmp_path):
    # a server that ends at its first execute: each worker's adapter fails, and the run is an error in one line
    server = tmp_path / "dies.py"
    server.write_text("import sys\nfrom adapters.subprocess.serve import serve\n"
                      "from adapters.simulated import SimulatedAdapter\n"
                      "class Dies(SimulatedAdapter):\n"
                      "    def execute(self, op):\n"
                      "        sys.exit(5)\n"
                      "sys.exit(serve(Dies(platform='distributed')))\n")
    proc = subprocess.run([sys.executable, "-m", "conformance.cli", "run", "--adapter", "subprocess",
                           "--adapter-opt", f"command={sys.executable} {server}", "--area", "core",
                           "--examples", "4", "--jobs", "2", "--results", str(tmp_path / "r")],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "ended (exit status 5)" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert "Traceback" not in proc.stderr and not list((tmp_path / "r").glob("failures/*.json"))


def _args(**given):
    import argparse

    return argparse.Namespace(**{"part": None, "minutes": None, "recorded": [], **given})


def test_a_system_on_real_time_shares_a_default_run_among_workers_and_a_small_or_whole_system_run_does_not():
    """A broker's cases mostly wait: a default run (200 cases an area) on one is shared among workers; a budget too
    small to pay for their start, a run bounded by time, one that acts on the whole system, a worker itself, and a
    system on the virtual clock run in one process."""
    import attrs

    from adapters.simulated import SimulatedAdapter
    from conformance.cli.run import CASES_PER_JOB, REAL_TIME_JOBS, _default_jobs

    class OnRealTime(SimulatedAdapter):
        def capabilities(self):
            return attrs.evolve(super().capabilities(), realtime=True)

        def sibling_env(self):
            return {}

    class OwnSystem(SimulatedAdapter):   # on real time, but each process would reach a system of its own
        def capabilities(self):
            return attrs.evolve(super().capabilities(), realtime=True)

    broker, model = OnRealTime(platform="distributed"), SimulatedAdapter(platform="distributed")
    assert _default_jobs(_args(), broker, {}, 200) == REAL_TIME_JOBS > 1
    assert _default_jobs(_args(), broker, {}, 2 * CASES_PER_JOB) == 2
    assert _default_jobs(_args(), broker, {}, CASES_PER_JOB + 10) == 1
    assert _default_jobs(_args(), model, {}, 200) == 1
    assert _default_jobs(_args(), OwnSystem(platform="distributed"), {}, 200) == 1
    assert _default_jobs(_args(minutes=5.0), broker, {}, 200) == 1
    assert _default_jobs(_args(part="p.json"), broker, {}, 200) == 1
    assert _default_jobs(_args(recorded=["failures"]), broker, {}, 200) == 1   # replayed in one process
    for whole in ({"restart": "on"}, {"nemesis": "on"}):
        assert _default_jobs(_args(), broker, whole, 200) == 1


def test_the_restarts_of_a_run_shared_among_jobs_are_made_after_the_workers_one_case_at_a_time():
    """The workers make no restart (each would disturb the others' cases); the run's own adapter then runs core
    cases one at a time with the few restarts a run on a broker the kit started makes, stepping past what the
    workers found from the first case: a departure only a restart shows is found there, the workers' is not
    reported again."""
    from conformance.runner.engine import run_areas
    from conformance.runner.jobs import restart_cases, restarts_left, run_restarts
    from tests.test_restart_limit import _Limited

    faults = "priority-ignored,restart-keeps-nonpersistent"
    workers = _Limited(limit=0, platform="distributed", faults=faults)   # as the workers run: no restart
    record = run_areas(workers, ["core"], examples=40, seed=3, keep_going=0)
    assert [f.blamed for f in record.failures] == [("CORE-04",)], [f.blamed for f in record.failures]
    assert workers.ran == 0
    own = _Limited(limit=2, platform="distributed", faults=faults)
    own.restarts = True
    assert restarts_left(own) and not restarts_left(workers)
    said = []
    run_restarts(own, record, examples=200, seed=3, jobs=3, options={"platform": "distributed", "faults": faults},
                 progress=said.append)
    assert 0 < own.budget.spent <= 2
    assert sum("CORE-04" in f.blamed for f in record.failures) == 1
    assert not any("departure from CORE-04" in line for line in said), said   # stepped past, not found again
    assert any("CORE-32" in f.blamed and any(isinstance(s.op, L.Restart) for s in f.steps)
               for f in record.failures), [f.blamed for f in record.failures]
    assert record.coverage.examples >= 40 + 1 and restart_cases(200) == 20
    assert any("restart phase" in line for line in said), said


def test_an_area_the_system_cannot_express_starts_no_worker_and_is_not_applicable(tmp_path):
    """As in one process: the system's other areas run among the workers, and the area it cannot express is said
    not applicable (its rules too), never an error of its workers."""
    code, text, err = run_cli("run", "--adapter", "simulated", "--area", "syncpoint,core", "--examples", "6",
                              "--adapter-opt", "platform=distributed", "--seed", "1", "--jobs", "2",
                              "--results", tmp_path / "r")
    assert code == 0, text + err
    assert "syncpoint: not applicable to adapter 'simulated'" in text and "core: 2 workers" in text, text
    rows = {r["rule"]: r for r in map(json.loads, (tmp_path / "r" / "rules.jsonl").read_text().splitlines())}
    assert {r["verdict"] for r in rows.values() if r["area"] == "syncpoint"} == {"not applicable"}
    code, text, err = run_cli("run", "--adapter", "simulated", "--area", "syncpoint", "--examples", "6",
                              "--adapter-opt", "platform=distributed", "--seed", "1", "--jobs", "2",
                              "--results", tmp_path / "none")
    assert code == 2 and "no test case ran" in err and len(err.strip().splitlines()) == 1, err


def test_the_workers_make_no_restart_whatever_bound_the_run_was_given():
    """A bound of restarts asked for (restart=2) is the restart phase's, as the default one is: the workers, on a
    broker they were given, could make none (the adapter refuses restarts there) and would disturb each other."""
    from conformance.cli.run import _worker_options

    assert _worker_options("rabbitmq", {"restart": "2", "mapping": "defaults"}) == {"restart": "off",
                                                                                   "mapping": "defaults"}
    assert _worker_options("activemq", {}) == {"restart": "off"}
    assert _worker_options("simulated", {"platform": "zos"}) == {"platform": "zos"}


def test_workers_tell_one_another_what_they_found_through_files_beside_their_parts(tmp_path):
    """Each worker's recorded departures are written whole beside its part; a worker reads the others' (of every
    area: one system), never its own, and a file being written or gone is read at the next look."""
    from conformance.runner.jobs import Found, Siblings
    from conformance.records.results import RunRecord
    from tests.clikit import faulty_run
    from conformance.records.history import load_failure

    failure = load_failure(faulty_run(tmp_path / "r"))
    one, other = Siblings(tmp_path / "core-0.json"), Siblings(tmp_path / "expiry-1.json")
    assert one.found() == () and other.found() == ()
    record = RunRecord(adapter="simulated", describe={}, capabilities={}, areas=["core"], seed=7, examples=1)
    record.failures.append(failure)
    one.publish(record)
    assert one.found() == ()   # its own
    assert other.found() == (Found("distributed", failure.blamed, failure.mentioned),)
    assert set(other.found()[0].rules) == set(failure.rules)
    (tmp_path / "trigger-2.found.json").write_text('[{"platform": "distr')   # half written: not yet
    assert len(other.found()) == 1 and len(one.found()) == 0


def _elsewhere(after: int, found: tuple):
    """A sibling that has found ``found`` from the ``after``-th look on."""
    looks = []

    def look():
        looks.append(1)
        return found if len(looks) > after else ()
    return look, looks


def test_a_departure_another_worker_found_is_stepped_past_or_not_shrunk_again():
    """Heard before a round, another worker's departure is set aside as one of the run's own (found broken, never
    recorded twice); heard while this worker shrinks the same departure, its shrinking stops at the next case and
    it is neither minimised nor recorded (counted as found elsewhere).  Without the exchange each worker shrank
    and minimised the shallow departures for itself."""
    from adapters.simulated import SimulatedAdapter
    from conformance.records.results import RunRecord
    from conformance.runner.engine import run_area
    from conformance.runner.jobs import Found

    def run(elsewhere=None):
        adapter = SimulatedAdapter(platform="distributed", faults="priority-ignored")
        record = RunRecord(adapter="simulated", describe={}, capabilities=adapter.capabilities().to_json(),
                           areas=["core"], seed=3, examples=40)
        run_area(adapter, "core", "distributed", 40, 3, {}, record, keep_going=None, elsewhere=elsewhere)
        return record

    alone = run()
    assert [f.blamed for f in alone.failures] == [("CORE-04",)] and alone.found_elsewhere == 0
    assert alone.phases.get("minimise", 0) > 0
    sibling = (Found("distributed", ("CORE-04",)),)

    # heard from the start: set aside, stepped past, failed in coverage, never recorded; a case that departs
    # otherwise but that it explains is neither shrunk on nor minimised
    look, _ = _elsewhere(0, sibling)
    before = run(look)
    assert before.failures == [] and before.phases.get("minimise", 0) == 0
    # the cases it cut short are counted as such, not against the budget: the area still runs its 40 cases
    assert before.cut_short >= before.found_elsewhere > 0 and before.coverage.examples >= 40 + before.found_elsewhere

    # heard once this worker met it and began shrinking: shrinking stops, nothing minimised or recorded
    look, looks = _elsewhere(1, sibling)
    during = run(look)
    assert len(looks) > 1
    assert during.failures == [] and during.found_elsewhere >= 1, (during.failures, during.found_elsewhere)
    assert during.phases.get("minimise", 0) == 0
    # another worker's departure from other rules changes nothing here
    look, _ = _elsewhere(0, (Found("distributed", ("CORE-05",)),))
    assert [f.blamed for f in run(look).failures] == [("CORE-04",)]


def test_a_worker_reads_what_the_others_found_and_writes_its_own(tmp_path):
    """The exchange as the workers of ``run --jobs`` make it: a worker started with another's departure beside its
    part steps past it, and writes what it finds itself for the others."""
    work = tmp_path / ".jobs"
    work.mkdir()
    (work / "core-1.found.json").write_text(json.dumps([{"platform": "distributed", "blamed": ["CORE-04"]}]))
    code, text, err = run_cli("run", "--adapter", "simulated", "--faults", "priority-ignored,get-inhibit-ignored",
                              "--area", "core", "--adapter-opt", "platform=distributed", "--examples", "40",
                              "--seed", "3", "--results", work / "core-0", "--part", work / "core-0.json")
    assert code in (0, 1), text + err
    part = json.loads((work / "core-0.json").read_text())
    assert not any("CORE-04" in f["rules"] for f in part["failures"]), [f["rules"] for f in part["failures"]]
    assert part["coverage"]["failed"].get("CORE-04"), part["coverage"]["failed"]
    own = json.loads((work / "core-0.found.json").read_text())
    assert [sorted(f["blamed"]) for f in own] == [sorted(f["rules"]) for f in part["failures"]] and own


def test_a_worker_stops_shrinking_a_departure_once_another_worker_has_found_it():
    """Hypothesis shrinks a departure case after case; once another worker has recorded rules that explain it,
    the next case ends the shrink (the other's counterexample is the run's), where alone it goes on."""
    import pytest

    from adapters.simulated import SimulatedAdapter
    from conformance.records.results import Coverage
    from conformance.runner.engine import bound_machine, machine_settings, run_machine
    from conformance.runner.session import NonConformance

    from conformance.checker.blame import explained_by

    def shrink(elsewhere):
        """The departure shrunk, the session asking before each shrinking case whether the rules another worker
        found broken (``elsewhere``) explain it, as the engine asks it (``run_area(elsewhere=...)``)."""
        adapter = SimulatedAdapter(platform="distributed", faults="priority-ignored")
        explained = None if elsewhere is None else lambda failure: explained_by(
            [(s.op, s.observed) for s in failure.steps], "distributed", elsewhere, 0)
        machine = bound_machine(adapter, "core", "distributed", 3, {}, Coverage(), explained=explained)
        with pytest.raises(NonConformance):
            run_machine(machine, machine_settings(40))
        return machine.session

    alone = shrink(None)
    assert alone._shrink_cases > 3 and not alone.shrink_timed_out
    told = shrink(frozenset({"CORE-04"}))
    assert told._shrink_cases == 1 and told.shrink_spent, told._shrink_cases
    unrelated = shrink(frozenset({"CORE-05"}))
    assert unrelated._shrink_cases == alone._shrink_cases


def test_stepping_past_a_departure_of_one_of_several_rules_found_elsewhere_fails_none_of_them():
    """A history another worker found breaks one of CORE-04 / CORE-06 (which, it does not show): a worker stepping
    past departures it explains fails neither (as one process would, whose coverage knows the history), so the
    merged run still says "one of"; where the other's history breaks each, they are failed.  The same for the
    departures a restart phase is handed (``found_before``)."""
    from adapters.simulated import SimulatedAdapter
    from conformance.records.results import RunRecord
    from conformance.runner.engine import run_area
    from conformance.runner.jobs import Found

    def failed(one_of: bool, handed: bool) -> tuple[int, int]:
        adapter = SimulatedAdapter(platform="distributed", faults="priority-ignored")
        record = RunRecord(adapter="simulated", describe={}, capabilities=adapter.capabilities().to_json(),
                           areas=["core"], seed=3, examples=40)
        other = (Found("distributed", ("CORE-04", "CORE-06"), ("CORE-05",), one_of=one_of),)
        run_area(adapter, "core", "distributed", 40, 3, {}, record, keep_going=0,
                 **({"found_before": other} if handed else {"elsewhere": lambda: other}))
        assert record.failures == [], record.failures
        # counted as found by another worker where heard of while running, not where handed from the start
        assert (record.found_elsewhere > 0) != handed, record.found_elsewhere
        return record.coverage.failed["CORE-04"], record.coverage.failed["CORE-06"]

    for handed in (False, True):
        assert failed(one_of=True, handed=handed) == (0, 0)
        assert failed(one_of=False, handed=handed)[0] > 0
