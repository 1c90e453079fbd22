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

    return argparse.Namespace(**{"part": None, "minutes": None, **given})


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
