"""Spark campaigns: local mode, a real standalone cluster, resume after a kill, crash retries, faults found once."""

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import psutil
import pytest

from conformance.campaign import spark as CP
from tests.clikit import run_cli

pytestmark = pytest.mark.spark

ROOT = Path(__file__).resolve().parent.parent
QUIET = ["--adapter-opt", "platform=distributed"]


def rules(directory: Path) -> dict:
    return {r["rule"]: (r["verdict"], r["exercised"], r["checked"])
            for r in map(json.loads, (directory / "rules.jsonl").read_text().splitlines())}


def test_plan_is_deterministic_and_covers_the_budget():
    pairs = [("core", "distributed"), ("dlq", "zos")]
    a = CP.plan_tasks(7, pairs, 120, 50)
    assert a == CP.plan_tasks(7, pairs, 120, 50)
    assert [t.examples for t in a if t.area == "core"] == [50, 50, 20]
    assert len({t.seed for t in a}) == len(a) and a != CP.plan_tasks(8, pairs, 120, 50)
    endless = CP.endless_tasks(7, pairs, deadline=0.0)
    later = [next(endless) for _ in range(10)][6:]   # indices 3 and 4 of each pair
    assert [t.index for t in later] == [3, 3, 4, 4]
    assert [t.seed for t in later] == [CP.task_seed(7, a, p, i) for i in (3, 4) for a, p in pairs]


def test_timeout_and_crash_paths_of_a_task():
    spec = CP.plan_tasks(1, [("dlq", "distributed")], 5, 5)[0].to_json()
    # a crash on a non-final attempt raises (so Spark retries); on the last one it is an error record
    with pytest.raises(RuntimeError, match="died"):
        CP.run_task(spec, "simulated", {"platform": "distributed"}, [], 60, 0, False, {spec["id"]: 1})
    record = CP.run_task(spec, "simulated", {"platform": "distributed"}, [], 60, 0, True, {spec["id"]: 1})
    assert "died" in record["error"] and str(spec["seed"]) in record["error"]
    record = CP.run_task(spec, "simulated", {"platform": "distributed"}, [], 0.001, 1, True, {})
    assert "did not finish within" in record["error"]
    ok = CP.run_task(spec, "simulated", {"platform": "distributed"}, [], 120, 0, True, {})
    # Every case started is counted, and Hypothesis may start one it then discards (a case that
    # drew more choices than it keeps) and run another in its place: at least the budget ran.
    assert ok["error"] is None and 5 <= ok["examples"] <= 6 and ok["coverage"]["checked"]


def test_a_task_reports_the_departures_its_shrinking_met():
    """Hypothesis keeps the smallest departure only: the others a task met are its failures too."""
    from conformance.records.history import Failure
    from conformance.runner.minimise import minimise
    from adapters.registry import create_adapter

    faults = "priority-ignored,backout-count-not-incremented,get-inhibit-ignored,browse-next-skips"
    spec = CP.plan_tasks(2, [("core", "distributed")], 100, 100)[0].to_json()
    record = CP.run_task(spec, "simulated", {"faults": faults}, [], 300, 0, True, {})
    assert record["error"] is None
    failures = [Failure.from_json(f) for f in record["failures"]]
    assert len(failures) > 1, [f.rules for f in failures]
    covered: set[str] = set()
    for failure in failures:
        assert not set(failure.rules) <= covered, [f.rules for f in failures]   # each adds a rule
        covered |= set(failure.rules)
        assert set(minimise(failure, create_adapter("simulated", {"faults": faults}), budget=5.0).rules) == \
            set(failure.rules)
    # (a history that breaks one of several rules counts them among those it names, not as failed each)
    assert covered <= {r for r, n in record["coverage"]["failed"].items() if n} | {
        r for key, n in (record["coverage"].get("one_of") or {}).items() if n for r in key.split("+")}


def test_local_campaign_covers_the_rules_and_is_reportable(tmp_path):
    out = tmp_path / "camp"
    ctrl_c = signal.getsignal(signal.SIGINT)
    code, text, err = run_cli("campaign", "--adapter", "simulated", "--area", "dlq", "--examples", "20",
                              "--task-examples", "10", "--seed", "3", "--master", "local[2]", "--out", out, *QUIET)
    assert code == 0, text + err
    # PySpark's Ctrl-C handler, which fails once its session is stopped, is not left in after the campaign
    assert signal.getsignal(signal.SIGINT) is ctrl_c, signal.getsignal(signal.SIGINT)
    # Progress with the total and an estimate of the time left.
    assert "tasks 1/2 done (50% of the examples)" in text and "left" in text, text
    assert "tasks 2/2 done (100% of the examples)" in text, text
    verdicts = {v for v, _, _ in rules(out).values()}
    assert verdicts <= {"pass", "partly exercised", "not exercised"} and "pass" in verdicts
    assert sorted(p.name for p in (out / "tasks").iterdir()) == ["dlq-distributed-00000.json",
                                                                  "dlq-distributed-00001.json"]
    assert run_cli("report", out, "--format", "json", "--out", tmp_path / "r.json")[0] == 0
    # the driver's JVM (this process's, kept for the next campaign) runs with the kit's options (a child gone, or a
    # zombie of an earlier test's, reads as no command line)
    commands = (p.as_dict(["cmdline"], ad_value=[])["cmdline"] or [] for p in psutil.Process().children(recursive=True))
    drivers = [c for c in commands if "org.apache.spark.deploy.SparkSubmit" in c]
    assert drivers and all(set(CP.JVM_OPTIONS.split()) <= set(d) for d in drivers), drivers
    # the same campaign directory is not overwritten by mistake
    code, _, err = run_cli("campaign", "--adapter", "simulated", "--area", "dlq", "--examples", "20",
                           "--out", out, *QUIET)
    assert code == 2 and "--resume" in err


def test_fault_found_once_and_replayable(tmp_path):
    # a budget of cases, not minutes: a loaded machine took 18 s to start Spark, most of a 24 s budget
    out = tmp_path / "camp"
    code, text, err = run_cli("campaign", "--adapter", "simulated", "--faults", "dlq-no-dlh-processed",
                              "--area", "dlq", "--examples", "50", "--task-examples", "25", "--seed", "7",
                              "--master", "local[2]", "--out", out, *QUIET)
    assert code == 1, text + err
    failures = list((out / "failures").glob("*.json"))
    assert len(failures) == 1 and text.count("Distinct failure:") == 1
    assert "DLQ-07" in json.loads(failures[0].read_text())["rules"]
    assert run_cli("replay", failures[0])[0] == 1
    assert run_cli("replay", failures[0], "--adapter", "simulated")[0] == 0
    # the report shows the campaign's throughput and distinct failures over time
    assert run_cli("report", out, "--format", "html", "--out", tmp_path / "r.html")[0] == 1
    assert "Campaign throughput and distinct failures" in (tmp_path / "r.html").read_text()


def test_a_campaign_of_concurrent_cases_finds_each_race_once_and_records_it(tmp_path):
    """``campaign --concurrency 3``: its tasks run concurrent cases on Spark; the races they find are kept once
    per set of rules, written as race files that replay, and the run's verdicts fail their rules."""
    from adapters.simulated.faults import RACES

    out = tmp_path / "camp"
    # Two races planted, in two kinds of case (a queue's gets, an exclusive open), so that however a loaded machine
    # schedules the threads one of them shows in the 40 cases (the exclusive opens alone raced in none once, on CI).
    planted = set(RACES["get-not-atomic"].rules) | set(RACES["exclusive-open-not-atomic"].rules)
    code, text, err = run_cli("campaign", "--adapter", "simulated", "--faults", "get-not-atomic,exclusive-open-not-atomic",
                              "--adapter-opt", "call-ms=0.2", "--concurrency", "3", "--area", "core",
                              "--examples", "40", "--task-examples", "20", "--seed", "3", "--master", "local[2]",
                              "--out", out, *QUIET)
    assert code == 1, text + err
    run = json.loads((out / "run.json").read_text())
    assert run["concurrency"] == 3 and run["races"] and text.count("Distinct race:") == len(run["races"])
    races = [json.loads((out / path).read_text()) for path in run["races"]]
    assert len({tuple(sorted(r["rules"])) for r in races}) == len(races)
    assert all(set(r["rules"]) & planted for r in races), [r["rules"] for r in races]
    verdicts = rules(out)
    # each rule of a race failed; a race that breaks one of several (two orders, each its own rule) leaves each of
    # them *one of*, or is explained by one of them that another race breaks alone (failed; the others then not)
    assert all(verdicts[rule][0] == "fail" for r in races if not r.get("one_of") for rule in set(r["rules"]) & planted)
    assert all(any(verdicts[rule][0] == "fail" for rule in r["rules"])
               or all(verdicts[rule][0] == "one of" for rule in r["rules"])
               for r in races if r.get("one_of")), [(r["rules"], [verdicts[x] for x in r["rules"]]) for r in races]
    assert run_cli("replay", out / run["races"][0], "--tries", "20")[0] == 1
    code, _, err = run_cli("campaign", "--adapter", "simulated", "--concurrency", "3", "--area", "dlq",
                           "--examples", "5", "--out", tmp_path / "bad")
    assert code == 2 and "of the core area" in err and err.count("\n") == 1 and not (tmp_path / "bad").exists()


def test_killed_then_resumed_equals_uninterrupted(tmp_path):
    args = ["campaign", "--adapter", "simulated", "--area", "dlq", "--examples", "40", "--task-examples", "8",
            "--seed", "11", "--master", "local[1]", *QUIET]
    whole = tmp_path / "whole"
    assert run_cli(*args, "--out", whole)[0] == 0
    part = tmp_path / "part"
    proc = subprocess.Popen([str(ROOT / ".venv/bin/mqconform"), *args, "--out", str(part)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.time() + 300
    while time.time() < deadline and len(list((part / "tasks").glob("*.json"))) < 2:
        time.sleep(0.2)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    done = len(list((part / "tasks").glob("*.json")))
    assert 2 <= done < 5 and not (part / "run.json").exists()
    code, text, err = run_cli(*args, "--out", part, "--resume")
    assert code == 0, text + err
    assert f"resuming with {done} task(s) done" in text
    assert rules(part) == rules(whole)


def test_crashing_task_is_retried_then_recorded_as_error(tmp_path):
    base = ["campaign", "--adapter", "simulated", "--area", "dlq", "--examples", "10", "--task-examples", "5",
            "--seed", "2", "--master", "local[2]", *QUIET]
    code, text, err = run_cli(*base, "--out", tmp_path / "retried", "--inject-crash", "dlq-distributed-00000:1")
    assert code == 0, text + err   # the first attempt crashed, Spark's retry succeeded
    code, text, err = run_cli(*base, "--out", tmp_path / "failed", "--inject-crash", "dlq-distributed-00001:9")
    assert code == 2 and "dlq-distributed-00001" in err
    record = json.loads((tmp_path / "failed" / "tasks" / "dlq-distributed-00001.json").read_text())
    assert "died" in record["error"] and str(record["seed"]) in record["error"]
    other = json.loads((tmp_path / "failed" / "tasks" / "dlq-distributed-00000.json").read_text())
    assert other["error"] is None and other["examples"] == 5     # nothing else lost


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def standalone_cluster(tmp_path):
    """A Spark master and two workers from the pyspark installation, on 127.0.0.1, stopped by PID."""
    import pyspark

    spark_class = Path(pyspark.__file__).parent / "bin" / "spark-class"
    env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", "SPARK_WORKER_DIR": str(tmp_path / "work"),
           "PYSPARK_PYTHON": sys.executable, "SPARK_LOG_DIR": str(tmp_path / "logs"),
           "SPARK_NO_DAEMONIZE": "1", "SPARK_DAEMON_JAVA_OPTS": "-XX:TieredStopAtLevel=1"}
    port, ui = _free_port(), _free_port()
    procs = [subprocess.Popen([str(spark_class), "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                               "--port", str(port), "--webui-port", str(ui)], env=env,
                              stdout=open(tmp_path / "master.log", "w"), stderr=subprocess.STDOUT)]
    url = f"spark://127.0.0.1:{port}"
    for n in range(2):
        procs.append(subprocess.Popen([str(spark_class), "org.apache.spark.deploy.worker.Worker", "--host",
                                       "127.0.0.1", "--cores", "1", "--memory", "1g", "--webui-port",
                                       str(_free_port()), url], env=env,
                                      stdout=open(tmp_path / f"worker{n}.log", "w"), stderr=subprocess.STDOUT))
    try:
        deadline = time.time() + 120
        alive = 0
        while time.time() < deadline and alive < 2:
            time.sleep(1)
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{ui}/json/", timeout=2) as resp:
                    alive = json.load(resp).get("aliveworkers", 0)
            except (OSError, ValueError):
                pass        # not listening yet, or an empty or partial answer while the master starts
        assert alive == 2, (tmp_path / "master.log").read_text()[-2000:]
        yield url
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            try:
                p.wait(20)
            except subprocess.TimeoutExpired:
                p.kill()


def test_campaign_on_a_standalone_cluster(standalone_cluster, tmp_path, monkeypatch):
    monkeypatch.setenv("SPARK_LOCAL_IP", "127.0.0.1")
    out = tmp_path / "camp"
    code, text, err = run_cli("campaign", "--adapter", "simulated", "--area", "dlq", "--examples", "20",
                              "--task-examples", "5", "--seed", "3", "--master", standalone_cluster,
                              "--partitions", "2", "--out", out, *QUIET)
    assert code == 0, text + err
    pids = {json.loads(p.read_text())["worker_pid"] for p in (out / "tasks").glob("*.json")}
    assert len(list((out / "tasks").glob("*.json"))) == 4 and os.getpid() not in pids
    # the cluster's executors ran with the kit's JVM options too (each worker writes an executor's command line
    # where it keeps the executor's output)
    executors = [line for f in (tmp_path / "work").glob("app-*/*/stderr")
                 for line in f.read_text(errors="replace").splitlines() if line.startswith("Spark Executor Command:")]
    assert executors and all(f'"{o}"' in c for c in executors for o in CP.JVM_OPTIONS.split()), executors


def test_bad_input_is_one_line_and_writes_nothing(tmp_path):
    code, _, err = run_cli("campaign", "--adapter", "nope", "--examples", "5", "--out", tmp_path / "a")
    assert code == 2 and "unknown adapter 'nope'" in err and err.count("\n") == 1
    assert not (tmp_path / "a").exists()
    code, _, err = run_cli("campaign", "--adapter", "simulated", "--minutes", "0", "--out", tmp_path / "b")
    assert code == 2 and "must be more than 0" in err
    code, _, err = run_cli("campaign", "--adapter", "simulated", "--examples", "5", "--resume", "--out", tmp_path / "c")
    assert code == 2 and "cannot read" in err and "campaign.json" in err
    # A master URL Spark would refuse with a Java stack trace is refused before Spark starts.
    proc = subprocess.run([sys.executable, "-m", "conformance.cli", "campaign", "--adapter", "simulated", "--area",
                           "dlq", "--examples", "5", "--master", "nonsense://nowhere", "--out", str(tmp_path / "d")],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    assert "'nonsense://nowhere' is not a Spark master URL" in proc.stderr and not (tmp_path / "d").exists()
    # A result directory of a run is not a campaign: refused, and nothing in it changes.
    run_dir = tmp_path / "run"
    assert run_cli("run", "--adapter", "simulated", "--area", "core", "--examples", "3", "--seed", "1",
                   "--results", run_dir)[0] == 0
    before = {p: p.read_bytes() for p in run_dir.rglob("*") if p.is_file()}
    code, _, err = run_cli("campaign", "--adapter", "simulated", "--examples", "5", "--out", run_dir)
    assert code == 2 and "holds no campaign" in err and err.count("\n") == 1, err
    assert {p: p.read_bytes() for p in run_dir.rglob("*") if p.is_file()} == before


def _timed_simulated_campaign(out, budget: float):
    command = ["timeout", "300", sys.executable, "-m", "conformance.cli", "campaign", "--adapter", "simulated",
               "--area", "core,dlq", "--minutes", f"{budget / 60:.3f}", "--task-examples", "40", "--seed", "3",
               "--adapter-opt", "call-ms=2", "--master", "local[1]", "--out", str(out)]
    started = time.monotonic()
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT)
    lines = [(time.monotonic() - started, line) for line in proc.stdout]
    err = proc.stderr.read()
    code = proc.wait()
    return lines, err, time.monotonic() - started, code


def test_a_time_boxed_campaign_says_what_it_does_at_once_and_ends_within_ten_percent_of_its_budget(tmp_path):
    """At once, before Spark has started: what it runs and that Spark is starting; then how the budget is shared out, a line per
    task with the time left, and where the time went.  Every area and platform ran, and it ended within
    10% of its budget, having used most of it.  (75 s: Spark starts in about 10 s on an idle machine, but took
    35 s on a loaded one, which left a 45 s budget too little to run every pair once: the campaign then
    refused to go on, rightly, and the test failed on the machine's speed.)  One Spark worker: a time-boxed
    campaign keeps its workers busy to the end of its budget (with two, both cores of the machine for a minute,
    130 s of CPU taken from the tests beside it), and what this checks is the budget kept, not the cases run.
    Each call holds the simulated queue manager 2 ms (``call-ms=2``), as a broker's calls take time: the worker
    waits out most of the budget instead of computing cases (20 s of the machine's CPU in the 75 s, not 70 s), and
    the budget is shared out by cases that take real time, as against a broker."""
    budget = 75
    out = tmp_path / "c"
    lines, err, elapsed, code = _timed_simulated_campaign(out, budget)
    needed = re.search(r"give --minutes ([0-9.]+) or more", err)
    if code == 2 and needed:
        # Spark's start left too little of the budget: refused on one line, nothing run; the budget it names is kept
        assert err.count("\n") == 1 and not list(out.glob("tasks/*.json")), err
        budget = max(budget, float(needed.group(1)) * 60 + 15)
        out = tmp_path / "c-again"
        lines, err, elapsed, code = _timed_simulated_campaign(out, budget)
    text = "".join(line for _, line in lines)
    assert code == 0, text + err
    # what it runs and that Spark is starting, said before Spark has started (on an idle machine within a second;
    # a loaded one took 2.5 s to import the kit, which is no part of what this checks)
    spark_up = next(at for at, line in lines if "Spark started in" in line)
    early = [line for at, line in lines if at < spark_up]
    assert any("starting Spark" in line for line in early), lines[:3]
    assert any("Spark started in" in line and "each of the 4 area/platform pairs first" in line for _, line in lines)
    assert sum("of the time budget left" in line for _, line in lines) >= 4, text
    assert f"of the {CP._duration(round(budget))} budget: starting Spark" in text, text
    assert budget * 0.8 <= elapsed <= budget * 1.1, elapsed   # never past its budget by more than 10%, and it used it
    tasks = [json.loads(p.read_text()) for p in (out / "tasks").glob("*.json")]
    assert {(t["area"], t["platform"]) for t in tasks if t["examples"]} == {
        ("core", "distributed"), ("core", "zos"), ("dlq", "distributed"), ("dlq", "zos")}
    # the input classes the tasks reached count: a rule that declares classes can pass
    verdicts = rules(out)
    assert verdicts["CORE-13"][0] == "pass", verdicts["CORE-13"]
    meta = json.loads((out / "run.json").read_text())
    assert meta["examples_run"] > 0 and meta["status"] == "pass"


def test_a_budget_too_short_to_reach_every_area_is_refused_before_anything_is_written(tmp_path):
    code, out, err = run_cli("campaign", "--adapter", "simulated", "--minutes", "0.05", "--out", tmp_path / "c")
    assert code == 2 and err.count("\n") == 1 and "too short to run each of the" in err, err
    assert "--minutes 1 or more" in err and not (tmp_path / "c").exists()
    # a cluster master, whose parallelism its URL does not say, gets at least the one-round bound (never a
    # Spark start that a budget of seconds cannot cover)
    code, out, err = run_cli("campaign", "--adapter", "simulated", "--minutes", "0.1", "--master", "yarn",
                             "--out", tmp_path / "y")
    assert code == 2 and "however many workers the master has" in err and not (tmp_path / "y").exists(), err
    # the minimum it names is one it accepts: a budget that leaves every pair its least task time
    pairs, workers = 11, 2
    least = CP.minimum_minutes(pairs, workers)
    after_spark = least * 60 * (1 - CP.TEARDOWN_SHARE) - CP.SPARK_START_ESTIMATE
    assert CP.task_seconds(after_spark, pairs, workers) >= CP.MIN_TASK_SECONDS - 1e-9
    assert CP.task_seconds(after_spark * 0.9, pairs, workers) < CP.MIN_TASK_SECONDS


def test_a_campaign_that_reaches_no_rule_of_an_area_is_an_error_not_a_pass(tmp_path):
    """Cases ran in every area, but no rule of the dlq area was reached (the system cannot run a handler):
    exit 2 with the reason, and the report of the directory says the same and exits 2."""
    server = f"{sys.executable} {ROOT / 'tests' / 'data' / 'servers' / 'no_dlq_handler.py'}"
    code, out, err = run_cli("campaign", "--adapter", "subprocess", "--adapter-opt", f"command={server}",
                             "--area", "core,dlq", "--examples", "4", "--task-examples", "4", "--seed", "3",
                             "--master", "local[2]", "--out", tmp_path / "c")
    assert code == 2, out + err
    assert "area dlq was asked for, but no rule of it was exercised" in err and err.count("\n") == 1, err
    meta = json.loads((tmp_path / "c" / "run.json").read_text())
    assert meta["status"] != "pass"
    code, _, err = run_cli("report", tmp_path / "c", "--out", tmp_path / "r.md")
    assert code == 2 and "area dlq was asked for, but no rule of it was exercised" in err, err


def test_a_budget_is_reckoned_with_the_seconds_a_real_time_case_takes(tmp_path):
    """Against a system that runs on the wall clock (here the IBM MQ stand-in) a task needs tens of seconds to
    run any case to its end: a minute for two areas is refused, where the simulated queue manager gets it."""
    from tests import ibmmq_standin

    ibmmq_standin.reset()
    code, out, err = run_cli("campaign", "--adapter", "ibmmq", "--adapter-opt", "client=tests.ibmmq_standin",
                             "--area", "core,syncpoint", "--minutes", "1", "--master", "local[2]",
                             "--out", tmp_path / "c")
    assert code == 2 and "too short to run each of the" in err and err.count("\n") == 1, err
    assert not (tmp_path / "c").exists()
    realtime = CP.minimum_minutes(4, 2, least=CP.least_task_seconds(True))
    assert realtime > 1 > CP.minimum_minutes(4, 2, least=CP.least_task_seconds(False))
