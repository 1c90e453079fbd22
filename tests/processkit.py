"""What the suite's tests leave running: every process a test starts carries the suite's mark in its environment
(conftest.py sets it), and what still carries it once every worker has ended was left behind."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
import time

import psutil

#: The suite's mark, inherited by every process its tests start: ``PID-UUID``, PID the process that runs the suite.
SESSION_MARK = "MQCONFORM_TEST_SESSION"
#: The id of the test during which a process was started.
TEST_MARK = "MQCONFORM_TEST_NODE"
#: Seconds the processes a test started may take to end once the suite is over (a reaper's poll, then a broker's
#: graceful stop: adapters.brokers.reaper).
LEFT_DEADLINE = 60.0


def marked(mark: str, exclude: set[int]) -> list[psutil.Process]:
    """The running processes whose environment carries ``mark`` as :data:`SESSION_MARK`."""
    out = []
    for proc in psutil.process_iter(["environ"]):
        env = proc.info.get("environ") or {}
        if proc.pid not in exclude and env.get(SESSION_MARK) == mark:
            out.append(proc)
    return out


def left_behind(mark: str, exclude: set[int], deadline: float = LEFT_DEADLINE,
                poll: float = 0.5) -> list[str]:
    """What the suite's tests left running ``deadline`` seconds from now, one line each; stopped (SIGKILL) here."""
    end = time.monotonic() + deadline
    left = marked(mark, exclude)
    while left and time.monotonic() < end:
        time.sleep(poll)
        left = marked(mark, exclude)
    lines = []
    for proc in left:
        try:
            env, cmd = proc.environ(), " ".join(proc.cmdline())[:160]
        except psutil.Error:
            continue
        lines.append(f"pid {proc.pid} started during {env.get(TEST_MARK) or 'a session fixture'}: {cmd}")
        try:
            proc.send_signal(signal.SIGKILL)
        except psutil.Error:
            pass
    return lines


def stop_spark_gateway(timeout: float = 30.0) -> int | None:
    """Stop the Spark JVM this process started, if any, and wait for it to end: its pid, or None.

    PySpark keeps the JVM of a stopped session running until the Python process exits, for the next session to
    reuse (the suite's campaigns in one worker share it). A worker ends before the suite looks for what was left
    running; a run without workers does not, and its own JVM would be counted as left behind. The JVM ends when
    its standard input closes."""
    if "pyspark" not in sys.modules:
        return None
    from pyspark import SparkContext

    if SparkContext._active_spark_context is not None:
        SparkContext._active_spark_context.stop()
    handler = signal.getsignal(signal.SIGINT)
    if getattr(handler, "__module__", "").startswith("pyspark") and threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.default_int_handler)   # PySpark's, which fails on a stopped context
    gateway = SparkContext._gateway
    proc = getattr(gateway, "proc", None)
    if gateway is None or proc is None:
        return None
    try:
        gateway.shutdown()
    except Exception:  # noqa: BLE001 - a gateway whose JVM is already gone
        pass
    if proc.stdin is not None:
        proc.stdin.close()
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:   # it did not end on its own
        proc.kill()
        proc.wait(timeout=timeout)
    SparkContext._gateway = None
    SparkContext._jvm = None
    return proc.pid
