"""A plain install (no extras) runs the kit's core; each command that needs an extra says which, on one line.

The packages of every extra are installed in the kit's own environment, so a plain install is what a process
sees when its import system is told to find none of them (a ``sitecustomize`` that hides them, as if never
installed): a fresh venv with ``pip install -e .`` behaves alike, without the download."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from reference_model.version import EXTRAS, extra_for, install_hint

ROOT = Path(__file__).resolve().parent.parent

HIDE = '''
import sys
HIDDEN = {hidden!r}

class _Without:
    """Every finder, but none finds a hidden package: importing one fails as if it were not installed."""
    def __init__(self, finder):
        self.finder = finder
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in HIDDEN:
            return None
        find = getattr(self.finder, "find_spec", None)
        return find(name, path, target) if find else None
    def __getattr__(self, attr):
        return getattr(self.finder, attr)

sys.meta_path[:] = [_Without(f) for f in sys.meta_path]
'''


def test_the_extras_named_in_the_code_are_those_pyproject_declares():
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    optional = declared["optional-dependencies"]
    for extra, brings in EXTRAS.items():
        names = {spec.split(">")[0].split("=")[0].split("[")[0].strip() for spec in optional[extra]}
        assert names == set(brings), extra
    assert optional["all"] == [f"mqconform[{','.join(EXTRAS)}]"]
    plain = {spec.split(">")[0].strip() for spec in declared["dependencies"]}
    assert not plain & {name for brings in EXTRAS.values() for name in brings}, "an extra's package is mandatory"
    assert extra_for("pyspark.sql") == "spark" and extra_for("jpype.imports") == "activemq"
    assert extra_for("attrs") is None and extra_for(None) is None


@pytest.fixture(scope="session")
def plain(tmp_path_factory):
    """``mqconform ARGS`` in a process that finds none of the extras' packages: (exit code, stdout, stderr)."""
    hide = tmp_path_factory.mktemp("plain-install")
    hidden = sorted(module for brings in EXTRAS.values() for module in brings.values())
    (hide / "sitecustomize.py").write_text(HIDE.format(hidden=set(hidden)))
    env = {k: v for k, v in os.environ.items() if not k.startswith("MQCONFORM_")}
    env.update(PYTHONPATH=os.pathsep.join([str(hide), str(ROOT)]), MQCONFORM_RUN_DIR=str(hide / "no-brokers"))

    def run(*argv, timeout=240):
        proc = subprocess.run([sys.executable, "-m", "conformance.cli", *map(str, argv)], capture_output=True,
                              text=True, timeout=timeout, stdin=subprocess.DEVNULL, env=env, cwd=hide)
        return proc.returncode, proc.stdout, proc.stderr

    code, _, err = run("--version")
    assert code == 0, err
    probe = subprocess.run([sys.executable, "-c", "import pyspark"], capture_output=True, text=True, env=env)
    assert "No module named 'pyspark'" in probe.stderr   # the extras are hidden indeed
    return run


def test_a_plain_install_runs_the_simulated_queue_manager_and_a_protocol_server_and_reports(plain, tmp_path):
    code, out, err = plain("run", "--adapter", "simulated", "--area", "core", "--examples", "5", "--seed", "1",
                           "--results", tmp_path / "sim")
    assert code in (0, 1) and "Traceback" not in err, out[-2000:] + err
    server = f"{sys.executable} -m adapters.simulated.serve"
    code, out, err = plain("run", "--adapter", "subprocess", "--adapter-opt", f"command={server}", "--area", "expiry",
                           "--examples", "3", "--seed", "1", "--results", tmp_path / "proto")
    assert code in (0, 1) and "Traceback" not in err, out[-2000:] + err
    # the HTML report, without its pictures (and says why)
    code, out, err = plain("report", tmp_path / "sim", "--format", "html", "--out", tmp_path / "r.html")
    assert code in (0, 1), err
    html = (tmp_path / "r.html").read_text()
    assert "<img" not in html and "they need matplotlib" in html and "mqconform[plots]" in html


@pytest.mark.parametrize("argv, extra", [
    (("campaign", "--adapter", "simulated", "--minutes", "1", "--out", "{tmp}/c"), "spark"),
    (("run", "--adapter", "rabbitmq", "--adapter-opt", "host=127.0.0.1", "--adapter-opt", "port=1",
      "--results", "{tmp}/r"), "rabbitmq"),
    (("run", "--adapter", "activemq", "--adapter-opt", "host=127.0.0.1", "--adapter-opt", "port=1",
      "--results", "{tmp}/a"), "activemq"),
    (("cluster", "simulate", str(ROOT / "docs" / "cluster-example.toml"), "--plot", "{tmp}/p.png"), "plots"),
], ids=["campaign", "rabbitmq", "activemq", "cluster plot"])
def test_a_command_that_needs_a_missing_extra_says_which_on_one_line(plain, tmp_path, argv, extra):
    code, out, err = plain(*(a.format(tmp=tmp_path) for a in argv))
    assert code == 2, out + err
    assert err.count("\n") == 1 and install_hint(extra) in err and "Traceback" not in err, err
    assert "internal error" not in err and "conformant" not in out.lower()
