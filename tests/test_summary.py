"""The suite's summary says where the time went: per test file the seconds and the CPU its tests counted, and what
the whole machine's CPU did, which the tests do not count (a shared broker, Spark's JVMs and Python workers)."""

import os
import subprocess
import sys
from pathlib import Path

import conftest

ROOT = Path(__file__).resolve().parent.parent


def test_the_machine_line_is_the_busy_cpu_over_the_cores_of_the_run(monkeypatch):
    monkeypatch.setattr(conftest, "_MACHINE_AT_START", (1000.0, 5000.0))
    monkeypatch.setattr(conftest.time, "monotonic", lambda: 1100.0)
    monkeypatch.setattr(conftest, "_machine_busy", lambda: 5150.0)
    monkeypatch.setattr(conftest.psutil, "cpu_count", lambda: 2)
    assert conftest._machine_line().startswith("the machine: 150 s of CPU in 100 s, 75% of its 2 cores")
    monkeypatch.setattr(conftest, "_MACHINE_AT_START", None)
    assert conftest._machine_line() is None


def test_a_run_prints_its_time_per_file_and_the_machines_cpu(tmp_path):
    """A detached process spinning a second of CPU that no test waits for: the files' CPU leaves it out, the
    machine's takes it in."""
    (tmp_path / "conftest.py").write_text((ROOT / "conftest.py").read_text())   # the suite's own, as it is
    (tmp_path / "test_spins.py").write_text(
        "import subprocess, sys, time\n\n"
        "SPIN = 'import time\\nend = time.process_time() + 1.0\\nwhile time.process_time() < end: pass'\n\n"
        "def test_spins():\n"
        "    subprocess.Popen([sys.executable, '-c', SPIN], start_new_session=True)\n"
        "    time.sleep(1.5)\n")
    proc = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "test_spins.py"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    lines = proc.stdout.splitlines()
    per_file = next(line for line in lines if line.endswith("test_spins.py") and " CPU " in line)
    counted = float(per_file.split("s CPU")[0].split()[-1])
    machine = next(line for line in lines if line.startswith("the machine: "))
    used = float(machine.split()[2])
    assert counted < 0.5 and used >= 1.0, (per_file, machine)
