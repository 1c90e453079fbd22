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


def test_the_written_test_reads_as_the_kits_operations_and_rebuilds_the_replay_file_exactly(tmp_path):
    """The history is code a reviewer can read (``L.Put(...)``, one step a line with the kit's reading beside
    it), not one JSON string; loaded, it is the replay file again, step for step, for a failure of every area."""
    import importlib.util
    import json

    from conformance.records.history import Failure
    from conformance.runner.regression import as_code
    from reference_model import language as L

    for area, fault in (("core", "priority-ignored"), ("syncpoint", "second-mark-accepted"),
                        ("expiry", "expiry-not-decremented"), ("trigger", "trigmpri-ignored"),
                        ("cluster", "clwlprty-ignored"), ("dlq", "dlq-ignore-not-assumed")):
        results = tmp_path / area
        code, out, err = run_cli("run", "--adapter", "simulated", "--faults", fault, "--area", area, "--seed", "7",
                                 "--keep-going", "0", "--results", results, "--no-minimise")
        assert code == 1, (area, out[-2000:] + err)
        replay = sorted((results / "failures").glob("*.json"))[0]
        target = tmp_path / f"test_{area}.py"
        assert run_cli("replay", replay, "--as-pytest", target)[0] == 0
        source = target.read_text()
        assert "json.loads" not in source and "HISTORY" not in source
        spec = importlib.util.spec_from_file_location(f"generated_{area}", target)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        recorded = Failure.from_json(json.loads(replay.read_text()))
        assert [(s.op, s.observed) for s in recorded.steps] == [tuple(pair) for pair in module.STEPS], area
        for step in recorded.steps:
            assert eval(as_code(step.op), {"L": L}) == step.op   # noqa: S307 - the kit's own source
        assert "<- the departure" in source and source.count("\n    # ") == len(recorded.steps)
