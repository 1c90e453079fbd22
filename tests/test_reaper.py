"""Nothing the kit or its tests start outlives its owner: a private broker's reaper stops it when the process
that started it ends, however it ends (adapters.brokers.reaper), and the suite names and fails what a test left
running (tests/processkit.py)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import psutil
import pytest

from adapters.brokers import SERVERS, server
from adapters.brokers.reaper import watch
from tests.processkit import SESSION_MARK, TEST_MARK, left_behind


def _sleeper(env: dict | None = None) -> psutil.Process:
    proc = subprocess.Popen(["sleep", "300"], stdin=subprocess.DEVNULL, start_new_session=True, env=env)
    return psutil.Process(proc.pid)


def _entry(proc: psutil.Process) -> dict:
    return {"pid": proc.pid, "created": proc.create_time()}


def _still_running(procs) -> list:
    """The command lines of those of ``procs`` still running (one that ends while it is read is not)."""
    out = []
    for p in procs:
        try:
            if p.is_running():
                out.append(p.cmdline())
        except psutil.NoSuchProcess:
            pass
    return out


def _gone(procs, deadline: float = 60.0) -> bool:
    """Whether every process of ``procs`` has ended (or is a zombie nobody waited for) within ``deadline``."""
    end = time.monotonic() + deadline
    while time.monotonic() < end:
        if not [p for p in procs if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]:
            return True
        time.sleep(0.1)
    return False


def test_the_reaper_stops_the_recorded_processes_once_their_owner_has_ended(tmp_path):
    owner, broker = _sleeper(), _sleeper()
    state = tmp_path / "state.json"
    state.write_text(json.dumps({"broker": "x", "owner": _entry(owner), "reaper": {"token": "t"},
                                 "processes": [dict(_entry(broker), group=0)]}))
    try:
        owner.kill()
        owner.wait(5)
        assert watch(state, "t", poll=0.05) is True
        assert _gone([broker], 5)
        assert not state.exists()
    finally:
        for proc in (owner, broker):
            if proc.is_running():
                proc.kill()


def test_the_reaper_leaves_a_broker_stopped_or_started_again_on_purpose(tmp_path):
    owner, broker = _sleeper(), _sleeper()
    state = tmp_path / "state.json"
    record = {"broker": "x", "owner": _entry(owner), "reaper": {"token": "t"},
              "processes": [dict(_entry(broker), group=0)]}
    try:
        state.write_text(json.dumps(dict(record, reaper={"token": "another start's"})))
        assert watch(state, "t", poll=0.05) is False
        state.unlink()
        assert watch(state, "t", poll=0.05) is False
        assert broker.is_running()   # nothing of the owner's was touched: it is still running too
        # its owner's PID given to another program later: not the owner (the start time differs)
        state.write_text(json.dumps(dict(record, owner={"pid": owner.pid, "created": owner.create_time() - 100})))
        assert watch(state, "t", poll=0.05) is True
        assert _gone([broker], 5) and owner.is_running()
    finally:
        for proc in (owner, broker):
            if proc.is_running():
                proc.kill()


def test_what_a_test_leaves_running_is_named_with_its_test_and_killed():
    mark = f"{os.getpid()}-left-behind-test"
    env = dict(os.environ, **{SESSION_MARK: mark, TEST_MARK: "tests/test_x.py::test_y"})
    lingering, ending = _sleeper(env), subprocess.Popen(["sleep", "0.3"], env=env)
    other = _sleeper(dict(os.environ, **{SESSION_MARK: "another suite's"}))
    try:
        lines = left_behind(mark, {os.getpid()}, deadline=2, poll=0.05)
        assert len(lines) == 1, lines
        assert f"pid {lingering.pid} started during tests/test_x.py::test_y: sleep 300" == lines[0]
        assert _gone([lingering], 5)
        assert other.is_running()
        assert left_behind(mark, {os.getpid()}, deadline=0.1) == []
    finally:
        ending.wait(5)
        for proc in (lingering, other):
            if proc.is_running():
                proc.kill()


_OWNER = """
import json, os, sys, time
from pathlib import Path
from adapters.brokers import server
srv = server(sys.argv[1], Path(sys.argv[2]))
srv.owner = os.getpid()
srv.up()
print(json.dumps(srv.recorded()), flush=True)
time.sleep(600)
"""


@pytest.mark.broker
@pytest.mark.skipif(bool(SERVERS["rabbitmq"]().installed()), reason="RabbitMQ is not installed")
def test_a_private_broker_whose_owner_is_killed_is_stopped(tmp_path):
    owner = subprocess.Popen([sys.executable, "-c", _OWNER, "rabbitmq", str(tmp_path)], stdin=subprocess.DEVNULL,
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        state = json.loads(owner.stdout.readline() or "null")   # the broker is ready when its record is printed
        assert state is not None, "the owner did not start its broker"
        procs = [psutil.Process(e["pid"]) for e in state["processes"]]
        assert procs and all(p.is_running() for p in procs)
        os.kill(owner.pid, signal.SIGKILL)   # neither close nor atexit runs
        owner.wait(10)
        assert _gone(procs, 60), _still_running(procs)
        assert _gone([psutil.Process(state["reaper"]["pid"])], 10)
        assert not (tmp_path / "rabbitmq" / "state.json").exists()
        assert "broker rabbitmq stopped" in (tmp_path / "rabbitmq" / "reaper.log").read_text()
    finally:
        if owner.poll() is None:
            owner.kill()
        server("rabbitmq", tmp_path).down()


@pytest.mark.broker
@pytest.mark.skipif(bool(SERVERS["rabbitmq"]().installed()), reason="RabbitMQ is not installed")
def test_a_broker_stopped_by_its_owner_takes_its_reaper_with_it(tmp_path):
    srv = server("rabbitmq", tmp_path)
    srv.owner = os.getpid()
    srv.up()
    try:
        reaper = psutil.Process(srv.recorded()["reaper"]["pid"])
        assert "adapters.brokers.reaper" in " ".join(reaper.cmdline())
    finally:
        srv.down()
    assert _gone([reaper], 1)


@pytest.mark.spark
def test_the_spark_jvm_a_process_kept_is_stopped_at_the_end_of_its_session():
    """PySpark keeps its JVM until the Python process ends (the next session reuses it); a pytest run without
    workers would find it still running when it looks for what the tests left behind.  ``stop_spark_gateway``,
    which every process of the suite calls at its end, stops it and waits for it."""
    script = """
import json, os
import psutil
os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
from pyspark.java_gateway import launch_gateway
from pyspark import SparkContext
SparkContext._gateway = launch_gateway()
pid = SparkContext._gateway.proc.pid
before = psutil.pid_exists(pid) and psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
from tests.processkit import stop_spark_gateway
stopped = stop_spark_gateway()
print(json.dumps({"pid": pid, "before": before, "stopped": stopped, "after": psutil.pid_exists(pid),
                  "again": stop_spark_gateway()}))
"""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=root, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    seen = json.loads(proc.stdout.strip().splitlines()[-1])
    assert seen["before"] is True and seen["stopped"] == seen["pid"], seen
    assert seen["after"] is False and seen["again"] is None, seen
