"""A broker's start that fails leaves nothing behind, and no port held a moment more: what a failed start's
message says of its ports (taken by another program or not) is read once its own processes are gone."""

from __future__ import annotations

import os
import socket
import sys

import psutil
import pytest
from mirakuru.exceptions import ProcessExitedWithError, TimeoutExpired

from adapters.brokers.activemq import ActiveMQServer
from adapters.brokers.server import Process, _bindable, _holder, free_port

#: A broker's stand-in: a child of the started shell listens on the port, never answering a handshake.
LISTENER = ("import socket, sys, time\n"
            "s = socket.socket(); s.bind(('127.0.0.1', int(sys.argv[1]))); s.listen(); time.sleep(60)\n")


def _start(tmp_path, shell: str, timeout: float):
    port = free_port()
    script = tmp_path / "listen.py"
    script.write_text(LISTENER)
    listener = f"{sys.executable} {script} {port}"
    proc = Process(label="stand-in", command=["sh", "-c", shell.format(listener=listener)], port=port,
                   log=tmp_path / "log" / "stand-in.log", handshake=lambda host, port: False)
    srv = ActiveMQServer(tmp_path / "srv")
    srv.dir.mkdir(parents=True)
    return port, script, lambda: srv._start(proc, timeout)


def _left(script) -> list[psutil.Process]:
    return [p for p in psutil.process_iter(["cmdline"]) if str(script) in " ".join(p.info.get("cmdline") or [])]


@pytest.mark.parametrize("shell, error", [
    # never ready: the start's deadline passes with the listener up
    ("{listener} & wait", TimeoutExpired),
    # the start script exits (as RabbitMQ's does on a failed boot) while what it started still holds the port
    ("{listener} & sleep 1; exit 0", ProcessExitedWithError),
])
def test_a_failed_start_is_gone_with_its_ports_before_it_is_reported(shell, error, tmp_path):
    port, script, start = _start(tmp_path, shell, timeout=2.5)
    with pytest.raises(error):
        start()
    assert _bindable(port, reuse_address=True), f"port {port} still held{_holder(port)}"
    assert not _left(script)


def test_who_holds_a_port_is_named():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        assert _holder(sock.getsockname()[1]) == f" (pid {os.getpid()}, {psutil.Process().name()})"
    assert _holder(free_port()) == ""
