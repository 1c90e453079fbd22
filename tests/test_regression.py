"""``mqconform replay FILE --as-pytest OUT.py``: a failure becomes a standalone regression test."""

import subprocess
import sys

from tests.clikit import faulty_run, run_cli


def _pytest(path):
    proc = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", str(path)],
                          capture_output=True, text=True, cwd=path.parent, timeout=120)
    return proc.returncode, proc.stdout + proc.stderr


def test_a_failure_becomes_a_pytest_test_that_fails_until_the_fault_is_gone(tmp_path):
    replay = faulty_run(tmp_path / "r", seed="3")
    faulty, fixed = tmp_path / "test_faulty.py", tmp_path / "test_fixed.py"
    code, out, err = run_cli("replay", replay, "--as-pytest", faulty)
    assert code == 0 and str(faulty) in out, err
    source = faulty.read_text()
    assert "import hypothesis" not in source and "from hypothesis" not in source
    code, text = _pytest(faulty)
    assert code == 1 and "CORE-04" in text and "1 failed" in text, text
    # The same history against the queue manager without the fault: the test passes.
    assert run_cli("replay", replay, "--adapter", "simulated", "--as-pytest", fixed)[0] == 0
    code, text = _pytest(fixed)
    assert code == 0 and "1 passed" in text, text


def test_as_pytest_refuses_bad_targets_in_one_line(tmp_path):
    code, _, _ = run_cli("run", "--adapter", "simulated", "--faults", "priority-ignored", "--area", "core",
                         "--seed", "3", "--keep-going", "0", "--adapter-opt", "platform=distributed",
                         "--results", tmp_path / "r")
    replay = next((tmp_path / "r" / "failures").glob("core-*.json"))
    existing = tmp_path / "test_there.py"
    existing.write_text("# mine\n")
    for target, needle in ((tmp_path / "t.txt", "ends in .py"), (tmp_path / "no" / "t.py", "no such directory"),
                           (existing, "already exists")):
        code, _, err = run_cli("replay", replay, "--as-pytest", target)
        assert code == 2 and needle in err and err.count("\n") == 1, err
    assert existing.read_text() == "# mine\n"
