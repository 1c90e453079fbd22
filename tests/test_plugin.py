"""The pytest plugin: ``pytest --pyargs conformance`` with the --mq-* options, from any directory."""

import subprocess
import sys

import pytest


def pytest_run(tmp_path, *args):
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "--pyargs", "conformance", "-p", "no:cacheprovider",
         "--hypothesis-profile", "dev", "-q", *args],
        capture_output=True, text=True, cwd=tmp_path,
    )
    return proc.returncode, proc.stdout + proc.stderr


def test_conformant_adapter_passes_from_any_directory(tmp_path):
    code, out = pytest_run(tmp_path, "--mq-adapter", "simulated", "--mq-seed", "5",
                           "--mq-results", str(tmp_path / "res"))
    assert code == 0, out
    assert " passed" in out and "failed" not in out
    assert (tmp_path / "res" / "rules.jsonl").exists()


def test_fault_fails_with_counterexample_and_replay_file(tmp_path):
    code, out = pytest_run(tmp_path, "--mq-adapter", "simulated", "--mq-adapter-opt", "faults=get-inhibit-ignored",
                           "--mq-area", "core", "--mq-seed", "3")
    assert code == 1, out
    assert "CORE-25" in out and "Replay file:" in out
    # Printed once: no chained "During handling of the above exception" copy.
    assert out.count("Rules broken") == 1 and "During handling" not in out, out
    assert list((tmp_path / ".mqconform" / "failures").glob("*.json"))


@pytest.mark.parametrize("args, needle", [
    (["--mq-adapter", "nope"], "unknown adapter 'nope'"),
    (["--mq-adapter", "simulated", "--mq-adapter-opt", "junk"], "malformed adapter option"),
    (["--mq-adapter", "simulated", "--mq-area", "weather"], "unknown area 'weather'"),
])
def test_bad_options_are_usage_errors(tmp_path, args, needle):
    code, out = pytest_run(tmp_path, *args)
    assert code == 4, out
    assert needle in out
