"""Nothing a run found is lost: interrupts, existing directories, platforms, failed starts."""

from __future__ import annotations

import io
import json
import signal
import subprocess
import sys
import time

from tests.clikit import run_cli


def test_an_interrupted_run_keeps_the_departure_it_found(tmp_path):
    results = tmp_path / "r"
    proc = subprocess.Popen(
        [sys.executable, "-m", "conformance.cli", "run", "--adapter", "simulated", "--faults", "priority-ignored",
         "--area", "core,cluster,trigger", "--adapter-opt", "platform=distributed", "--examples", "100000",
         "--keep-going", "0",
         "--seed", "3", "--results", str(results)],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        seen = []
        deadline = time.monotonic() + 240
        for line in proc.stdout:
            seen.append(line)
            if "core on distributed: NON-CONFORMANT" in line or time.monotonic() > deadline:
                break
        assert any("NON-CONFORMANT" in line for line in seen), seen
        time.sleep(1)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 130, (out, err)
    assert "Interrupted during cluster" in out and str(results) in out
    assert list((results / "failures").glob("core-distributed-*.json"))
    replays = list((results / "failures").glob("*.json"))
    rows = {json.loads(line)["rule"]: json.loads(line) for line in (results / "rules.jsonl").read_text().splitlines()}
    assert rows["CORE-04"]["verdict"] == "fail"
    assert rows["CLWL-12"]["verdict"] == "error" and rows["CLWL-12"]["interrupted"]
    run = json.loads((results / "run.json").read_text())
    assert run["interrupted"] == ["cluster", "trigger"] and run["status"] == "error"

    assert sorted(run["failures"]) == sorted(str(p.relative_to(results)) for p in replays)
    # every report format says the run was interrupted, and where, beside its errors
    for fmt in ("md", "html"):
        code, text, err = run_cli("report", str(results), "--format", fmt, "--out", str(tmp_path / f"r.{fmt}"))
        body = (tmp_path / f"r.{fmt}").read_text()
        assert "INTERRUPTED" in body and "trigger, cluster" in body, (fmt, err)   # in the kit's order of areas
    code, _, _ = run_cli("report", str(results), "--format", "json", "--out", str(tmp_path / "r.json"))
    assert json.loads((tmp_path / "r.json").read_text())["columns"][0]["claim"]["interrupted"] == ["trigger", "cluster"]


def test_two_runs_in_the_same_second_keep_two_result_directories(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for _ in range(2):
        code, _, err = run_cli("run", "--adapter", "simulated", "--area", "core", "--examples", "2", "--seed", "1")
        assert code == 0, err
    dirs = sorted((tmp_path / "mqconform-results").iterdir())
    assert len(dirs) == 2 and all((d / "rules.jsonl").exists() and (d / "run.json").exists() for d in dirs)


def test_an_existing_result_directory_is_refused_and_kept(tmp_path):
    results = tmp_path / "r"
    code, _, _ = run_cli("run", "--adapter", "simulated", "--faults", "priority-ignored", "--area", "core",
                         "--examples", "30", "--seed", "2", "--keep-going", "0", "--results", results)
    assert code == 1
    before = {p: p.read_bytes() for p in results.rglob("*") if p.is_file()}
    code, out, err = run_cli("run", "--adapter", "simulated", "--area", "core", "--examples", "2",
                             "--results", results)
    assert code == 2 and err.count("\n") == 1 and "already holds something" in err and out == ""
    assert {p: p.read_bytes() for p in results.rglob("*") if p.is_file()} == before


def test_each_platform_keeps_its_own_replay_file(tmp_path):
    code, out, _ = run_cli("run", "--adapter", "simulated", "--faults", "priority-ignored", "--area", "core",
                           "--examples", "60", "--seed", "4", "--keep-going", "0", "--results", tmp_path / "r")
    assert code == 1
    names = sorted(p.name for p in (tmp_path / "r" / "failures").glob("*.json"))
    platforms = {json.loads((tmp_path / "r" / "failures" / n).read_text())["platform"] for n in names}
    assert platforms == {"zos", "distributed"}, names
    assert any(n.startswith("core-zos-") for n in names) and any(n.startswith("core-distributed-") for n in names)
    run = json.loads((tmp_path / "r" / "run.json").read_text())
    assert len(set(run["failures"])) == len(run["failures"]) == len(names)


def test_a_failed_start_leaves_no_result_directory(tmp_path):
    for argv in (["--adapter", "simulated", "--faults", "no-such-fault"],
                 ["--adapter", "nope"],
                 ["--adapter", "rabbitmq", "--adapter-opt", "port=notanumber"]):
        results = tmp_path / "r"
        code, out, err = run_cli("run", *argv, "--results", results)
        assert code == 2 and err.count("\n") == 1, (argv, err)
        assert not results.exists(), argv


def test_a_crash_during_a_run_leaves_its_traceback_in_the_results_directory(tmp_path, monkeypatch, capsys):
    from conformance import cli
    from conformance.cli import run

    def explode(*args, **kwargs):
        raise RuntimeError("a bug in the kit")

    monkeypatch.setattr(run, "run_areas", explode)
    results = tmp_path / "r"
    code = cli.main(["run", "--adapter", "simulated", "--area", "core", "--results", str(results)], out=io.StringIO())
    err = capsys.readouterr().err
    assert code == 2 and "internal error (RuntimeError: a bug in the kit)" in err
    assert len(err.strip().splitlines()) == 1
    crash = list(results.glob("crash-*.txt"))
    assert crash and "RuntimeError: a bug in the kit" in crash[0].read_text() and str(crash[0]) in err
