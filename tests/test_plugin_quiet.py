"""The plugin stays out of the way: no adapter, no header, skipped tests without --mq-adapter."""

import subprocess
import sys


def test_without_mq_adapter_nothing_starts_and_no_header(tmp_path):
    (tmp_path / "test_other.py").write_text("def test_other():\n    assert 1 + 1 == 2\n")
    proc = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", str(tmp_path / "test_other.py")],
                          capture_output=True, text=True, cwd=tmp_path, env={"PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "mqconform:" not in proc.stdout
    proc = subprocess.run([sys.executable, "-m", "pytest", "--pyargs", "conformance", "-p", "no:cacheprovider", "-rs"],
                          capture_output=True, text=True, cwd=tmp_path, env={"PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0 and "give --mq-adapter" in proc.stdout, proc.stdout


def test_the_installed_plugin_uses_the_kit_budget_not_hypothesis_default(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "pytest", "--pyargs", "conformance", "-p", "no:cacheprovider",
                           "--mq-adapter", "reference", "--mq-area", "syncpoint", "--mq-seed", "1",
                           "--mq-results", str(tmp_path / "r")],
                          capture_output=True, text=True, cwd=tmp_path, env={"PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "hypothesis profile" in proc.stdout
    import json
    assert json.loads((tmp_path / "r" / "run.json").read_text())["examples"] == 50
