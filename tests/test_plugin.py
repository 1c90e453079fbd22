"""The pytest plugin: ``pytest --pyargs conformance`` with the --mq-* options, from any directory."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conformance.records.history import load_failure


def pytest_run(tmp_path, *args):
    # Hypothesis's example database in the run's own directory: a storage directory some other test of
    # this process set (a campaign sets one for its Spark workers) would let one run replay another's
    # failing cases, and the run would not search as a fresh one does
    env = {**os.environ, "HYPOTHESIS_STORAGE_DIRECTORY": str(Path(tmp_path) / ".hypothesis")}
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "--pyargs", "conformance", "-p", "no:cacheprovider",
         "--hypothesis-profile", "mqconform-dev", "-q", *args],
        capture_output=True, text=True, cwd=tmp_path, env=env,
    )
    return proc.returncode, proc.stdout + proc.stderr


def test_conformant_adapter_passes_from_any_directory(tmp_path):
    # (10 cases an area, not the profile's 50: what this checks is the plugin run from elsewhere; the default
    # budget's reach is tests/test_rules_exercised.py's)
    code, out = pytest_run(tmp_path, "--mq-adapter", "simulated", "--mq-seed", "5", "--mq-examples", "10",
                           "--mq-results", str(tmp_path / "res"))
    assert code == 0, out
    assert " passed" in out and "failed" not in out
    assert (tmp_path / "res" / "rules.jsonl").exists()
    run = json.loads((tmp_path / "res" / "run.json").read_text())
    assert run["examples"] == 10, run["examples"]


@pytest.mark.parametrize("given", ["0", "ten", "-3"])
def test_a_number_of_cases_that_is_not_one_is_a_one_line_usage_error(tmp_path, given):
    code, out = pytest_run(tmp_path, "--mq-adapter", "simulated", "--mq-examples", given)
    assert code == 4, out
    assert f"--mq-examples: {given!r} is not a number of cases" in out and "Traceback" not in out


def test_fault_fails_with_counterexample_and_replay_file(tmp_path):
    code, out = pytest_run(tmp_path, "--mq-adapter", "simulated", "--mq-adapter-opt", "faults=get-inhibit-ignored",
                           "--mq-area", "core", "--mq-seed", "3")
    assert code == 1, out
    assert "CORE-25" in out and "Replay file:" in out
    # the area stopped at the departure on distributed: that z/OS was not run is said, not silent
    assert "Not run after this departure: platform zos" in out
    # Printed once: no chained "During handling of the above exception" copy.
    # (pytest's short summary may repeat the message: under CI it is not cut to one line)
    details = out.split("short test summary info")[0]
    assert details.count("Rules broken") == 1 and "During handling" not in out, out
    assert list((tmp_path / ".mqconform" / "failures").glob("*.json"))


def test_departures_met_while_shrinking_are_reported_with_their_replay_files(tmp_path):
    faults = "priority-ignored,backout-count-not-incremented,get-inhibit-ignored,browse-next-skips"
    code, out = pytest_run(tmp_path, "--mq-adapter", "simulated", "--mq-adapter-opt", f"faults={faults}",
                           "--mq-area", "core", "--mq-seed", "1", "--mq-results", str(tmp_path / "res"))
    assert code == 1, out
    # pytest's short summary may repeat the message (under CI it is not cut to one line)
    details = out.split("short test summary info")[0]
    also = [line for line in details.splitlines() if line.startswith("Also broken")]
    assert also, out
    saved = list((tmp_path / "res" / "failures").glob("*.json"))
    assert len(saved) == len(also) + 1, (saved, also)
    failed = {row["rule"] for row in map(json.loads, (tmp_path / "res" / "rules.jsonl").read_text().splitlines())
              if row["verdict"] in ("fail", "one of")}
    for line in also:
        rules = line[line.index("(") + 1:line.index(")")].split(", ")
        assert set(rules) <= failed, (rules, failed)


def test_concurrent_cases_from_pytest_find_a_race_and_pass_a_conforming_queue_manager(tmp_path):
    """``--mq-concurrency N``: concurrent cases instead of the areas' machines; a race fails the test with its
    timeline and replay command, recorded in the result directory as ``mqconform run --concurrency`` records it."""
    code, out = pytest_run(tmp_path, "--mq-adapter", "simulated", "--mq-adapter-opt", "faults=exclusive-open-not-atomic",
                           "--mq-adapter-opt", "call-ms=0.2", "--mq-concurrency", "3", "--mq-seed", "1",
                           "--mq-results", str(tmp_path / "res"))
    assert code == 1, out
    assert "Race on adapter 'simulated'" in out and "CORE-23" in out and "mqconform replay" in out, out
    assert "1 skipped" in out   # the areas' machine: concurrent cases ran instead
    run = json.loads((tmp_path / "res" / "run.json").read_text())
    assert run["concurrency"] == 3 and run["races"] and run["status"] == "fail"
    verdicts = {r["rule"]: r["verdict"] for r in
                map(json.loads, (tmp_path / "res" / "rules.jsonl").read_text().splitlines())}
    assert verdicts["CORE-23"] == "fail"
    code, out = pytest_run(tmp_path, "--mq-adapter", "simulated", "--mq-adapter-opt", "call-ms=0.2",
                           "--mq-concurrency", "2", "--mq-seed", "2", "--mq-examples", "30",
                           "--mq-results", str(tmp_path / "ok"))
    assert code == 0 and "1 passed" in out, out
    verdicts = {r["rule"]: r["verdict"] for r in
                map(json.loads, (tmp_path / "ok" / "rules.jsonl").read_text().splitlines())}
    assert "fail" not in verdicts.values() and "pass" in verdicts.values()


@pytest.mark.parametrize("args, needle", [
    (["--mq-adapter", "simulated", "--mq-concurrency", "5"], "not a number of clients from 2 to 4"),
    (["--mq-adapter", "simulated", "--mq-concurrency", "2", "--mq-area", "expiry"], "of the core area"),
    (["--mq-adapter", "nope"], "unknown adapter 'nope'"),
    (["--mq-adapter", "simulated", "--mq-adapter-opt", "junk"], "malformed adapter option"),
    (["--mq-adapter", "simulated", "--mq-area", "weather"], "unknown area 'weather'"),
])
def test_bad_options_are_usage_errors(tmp_path, args, needle):
    code, out = pytest_run(tmp_path, *args)
    assert code == 4, out
    assert needle in out


def _verdicts(directory):
    import json

    rows = [json.loads(line) for line in (directory / "rules.jsonl").read_text().splitlines()]
    return {r["rule"]: (r["verdict"], r["exercised"], r["failed"]) for r in rows}


def test_xdist_workers_records_are_merged_not_overwritten(tmp_path):
    """Under ``-n 2`` each worker runs some areas; the result directory holds them all."""
    args = ["--mq-adapter", "simulated", "--mq-adapter-opt", "faults=priority-ignored",
            "--mq-area", "core,trigger", "--mq-seed", "7"]
    alone, parallel = tmp_path / "alone", tmp_path / "parallel"
    alone.mkdir()
    parallel.mkdir()
    code, out = pytest_run(alone, *args, "--mq-results", str(alone / "res"))
    assert code == 1, out
    code, out = pytest_run(parallel, *args, "--mq-results", str(parallel / "res"), "-n", "2")
    assert code == 1 and "2 failed" in out, out
    expected, merged = _verdicts(alone / "res"), _verdicts(parallel / "res")
    assert merged == expected
    failed = {rule for rule, (verdict, _, _) in merged.items() if verdict in ("fail", "one of")}
    assert "CORE-04" in failed
    # both workers' departures are there: one found by the core machine, one by the trigger machine
    assert {p.name.split("-")[0] for p in (parallel / "res" / "failures").iterdir()} == {"core", "trigger"}
    assert sorted(p.name for p in (parallel / "res" / "failures").iterdir()) == \
        sorted(p.name for p in (alone / "res" / "failures").iterdir())
    assert not (parallel / "res" / ".mqconform-workers").exists()


def test_an_area_no_case_reached_is_a_harness_error_and_the_session_exits_2(tmp_path):
    """The one rule of every command that gives verdicts: cases of the dlq area ran, none reached a rule of
    it (the system cannot run a handler), so the area's test fails as a harness error, the session exits 2
    with the reason, and the core area keeps its verdicts."""
    root = Path(__file__).resolve().parent.parent
    server = f"{sys.executable} {root / 'tests' / 'data' / 'servers' / 'no_dlq_handler.py'}"
    code, out = pytest_run(tmp_path, "--mq-adapter", "subprocess", "--mq-adapter-opt", f"command={server}",
                           "--mq-area", "core,dlq", "--mq-seed", "3", "--mq-examples", "10",
                           "--mq-results", str(tmp_path / "res"))
    assert code == 2, out
    assert "mqconform: not a verdict (exit 2): area dlq:" in out and "no rule of the area was exercised" in out, out
    rows = {r["rule"]: r["verdict"] for r in map(json.loads, (tmp_path / "res" / "rules.jsonl").read_text().splitlines())}
    assert {v for r, v in rows.items() if r.startswith("DLQ-")} == {"error"}
    assert "pass" in {v for r, v in rows.items() if r.startswith("CORE-")}


RECORDED = Path(__file__).parent / "data" / "histories" / "dlq-context-lost-behind-an-order.json"


def test_a_recorded_counterexample_the_search_did_not_meet_fails_the_area_when_shown_again(tmp_path):
    """A DLQ handler that loses its messages' context, searched with one case: the search meets nothing, and the
    area passes.  Given the recorded counterexample of that departure, the area's test replays it after its
    search and fails with it, shown again; the run's record says what the replay showed."""
    args = ("--mq-adapter", "simulated", "--mq-adapter-opt", "faults=dlq-context-not-passed,priority-ignored",
            "--mq-area", "dlq", "--mq-seed", "1", "--mq-examples", "1")
    code, out = pytest_run(tmp_path, *args, "--mq-results", str(tmp_path / "plain"))
    assert code == 0, out
    code, out = pytest_run(tmp_path, *args, "--mq-recorded", str(RECORDED), "--mq-results", str(tmp_path / "res"))
    assert code == 1, out
    assert "DLQ-12" in out and f"Shown again by the recorded counterexample {RECORDED.name}" in out, out
    run = json.loads((tmp_path / "res" / "run.json").read_text())
    assert run["recorded"] == [{"file": RECORDED.name, "area": "dlq", "platform": "distributed",
                                "shown": "shown again"}], run.get("recorded")
    saved = list((tmp_path / "res" / "failures").glob("dlq-distributed-DLQ-12-*.json"))
    assert saved
    # ... minimised as any departure: the recorded history shows the lost context only behind another message in
    # its place, which the departure does not need
    assert all(load_failure(p).size < load_failure(RECORDED).size for p in saved), \
        [(p.name, load_failure(p).size) for p in saved]


def test_a_recorded_file_that_is_not_one_is_a_usage_error(tmp_path):
    (tmp_path / "bad.json").write_text("{}")
    code, out = pytest_run(tmp_path, "--mq-adapter", "simulated", "--mq-recorded", str(tmp_path / "bad.json"))
    assert code == 4 and "--mq-recorded:" in out and "Traceback" not in out, out
