"""The private brokers' lifecycle: ``mqconform brokers up|status|down`` on 127.0.0.1.

Every broker here is started by the test in a temporary run directory, on ports
chosen at start, and stopped by its recorded PIDs; each command runs under a
deadline so a hang fails the test instead of holding the suite.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time

import psutil
import pytest

from adapters.brokers import SERVERS, BrokerControlError, server
from adapters.brokers.activemq import stomp_handshake
from adapters.brokers.rabbitmq import RabbitMQServer, amqp_handshake, core_applications
from adapters.brokers.server import _ephemeral_range, free_port, port_open


pytestmark = [pytest.mark.broker, pytest.mark.skipif(
    any(SERVERS[n]().installed() for n in SERVERS),
    reason="broker packages not installed (bash scripts/system-packages.sh)")]


def mqconform(*argv, timeout=120):
    """``mqconform ARGV`` as a separate process with its output in pipes (a broker holding them would hang here)."""
    started = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "conformance.cli", *map(str, argv)], capture_output=True,
                          text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    return proc.returncode, proc.stdout, proc.stderr, time.monotonic() - started


def recorded_pids(directory, name):
    state = json.loads((directory / name / "state.json").read_text())
    return [p["pid"] for p in state["processes"]], state["ports"]


def test_up_status_down_both_brokers_leaves_nothing_behind(tmp_path):
    code, out, err, _ = mqconform("brokers", "up", "all", "--dir", tmp_path)
    try:
        assert code == 0, err
        lines = out.splitlines()
        assert [line.split(":")[0] for line in lines] == ["activemq", "rabbitmq"]
        assert lines[0].startswith("activemq: ready on stomp 127.0.0.1:") and " and openwire 127.0.0.1:" in lines[0]
        assert lines[1].startswith("rabbitmq: ready on 127.0.0.1:"), out
        pids = {name: recorded_pids(tmp_path, name) for name in ("activemq", "rabbitmq")}
        for _, ports in pids.values():
            assert port_open("127.0.0.1", ports["main"])
        assert amqp_handshake("127.0.0.1", pids["rabbitmq"][1]["main"])
        assert stomp_handshake("127.0.0.1", pids["activemq"][1]["main"])
        # Not a STOMP server, not an AMQP server: each handshake tells them apart.
        assert not amqp_handshake("127.0.0.1", pids["activemq"][1]["main"])
        assert not stomp_handshake("127.0.0.1", pids["rabbitmq"][1]["main"], timeout=1.0)

        # RabbitMQ's schedulers sleep when out of work instead of spinning on the cores a run computes on
        beam = [psutil.Process(p).cmdline() for p in pids["rabbitmq"][0]
                if psutil.pid_exists(p) and "beam" in psutil.Process(p).name()]
        assert beam and all(" -sbwt none " in f" {' '.join(args)} " for args in beam), beam
        # ... and finds RabbitMQ's own applications alone in its plugins directory, no plugin beside them
        plugins = {psutil.Process(p).environ().get("RABBITMQ_PLUGINS_DIR") for p in pids["rabbitmq"][0]
                   if psutil.pid_exists(p) and "beam" in psutil.Process(p).name()}
        assert len(plugins) == 1 and None not in plugins, plugins
        held = {name.rsplit("-", 1)[0] for name in os.listdir(plugins.pop())}
        assert {"rabbit", "rabbit_common", "ra"} <= held and not any(n.startswith("rabbitmq_") and n != "rabbitmq_prelaunch"
                                                                    for n in held), held
        # ActiveMQ's JVM compiles with the JIT's first tier alone (a third less CPU for a run's short traffic)
        java = [psutil.Process(p).cmdline() for p in pids["activemq"][0]
                if psutil.pid_exists(p) and "java" in psutil.Process(p).name()]
        assert java and all("-XX:TieredStopAtLevel=1" in args for args in java), java

        code, out, err, _ = mqconform("brokers", "status", "--dir", tmp_path)
        assert code == 0 and out.count(": ready on") == 2, out + err
        # up again: the recorded brokers are kept, not started twice.
        code, out, _, seconds = mqconform("brokers", "up", "rabbitmq", "--dir", tmp_path)
        assert code == 0 and recorded_pids(tmp_path, "rabbitmq") == pids["rabbitmq"]
    finally:
        code, out, err, _ = mqconform("brokers", "down", "--dir", tmp_path)
    assert code == 0, err
    assert out.splitlines() == ["activemq: stopped", "rabbitmq: stopped"]
    for name, (proc_ids, ports) in pids.items():
        assert not any(psutil.pid_exists(p) and psutil.Process(p).status() != psutil.STATUS_ZOMBIE
                       for p in proc_ids), name
        for port in ports.values():
            assert not port_open("127.0.0.1", port), (name, port)
    code, out, _, _ = mqconform("brokers", "status", "--dir", tmp_path)
    assert code == 3 and out.splitlines() == ["activemq: stopped", "rabbitmq: stopped"]


class BadConfigRabbitMQ(RabbitMQServer):
    """A node whose configuration has an unknown key: the start script exits 0 without a node."""

    def prepare(self, ports):
        processes = super().prepare(ports)
        with open(self.dir / "rabbitmq.conf", "a") as fh:
            fh.write("no_such_setting.at_all = 1\n")
        return processes


def test_a_broker_that_exits_during_start_is_reported_at_once_with_its_log(tmp_path):
    srv = BadConfigRabbitMQ(tmp_path)
    started = time.monotonic()
    with pytest.raises(BrokerControlError) as info:
        srv.up(deadline=50)
    elapsed = time.monotonic() - started
    message = str(info.value)
    assert elapsed < 40, elapsed  # not the whole deadline: an exit before readiness is a failure at once
    assert "\n" not in message and message.startswith("rabbitmq: did not start on 127.0.0.1:")
    assert str(srv.log) in message and "exited" in message
    assert not srv.state_file.exists() and srv.status().state == "stopped"
    assert not [p for p in psutil.process_iter(["environ"])
                if (p.info.get("environ") or {}).get("RABBITMQ_MNESIA_BASE", "").startswith(str(tmp_path))]


def test_a_broker_not_ready_by_the_deadline_is_killed_and_reported(tmp_path):
    srv = server("activemq", tmp_path)
    started = time.monotonic()
    with pytest.raises(BrokerControlError) as info:
        try:
            srv.up(deadline=0.05)  # no JVM starts, let alone opens its STOMP port, within 50 ms
        finally:
            if srv.status().state != "stopped":
                print("up did not fail:", srv.status(), "after", time.monotonic() - started)
                srv.down()

    assert time.monotonic() - started < 15
    assert "not ready within" in str(info.value) and str(srv.log) in str(info.value)
    assert not [p for p in psutil.process_iter(["cmdline"])
                if str(tmp_path) in " ".join(p.info.get("cmdline") or [])]


def test_a_private_rabbitmq_is_given_its_own_applications_and_no_plugin(tmp_path):
    """What a private node's plugins directory holds: ``rabbit`` and what its ``.app`` files say it needs, through
    their dependencies' dependencies and included applications; none of the plugins beside them."""
    def app(name: str, *needs: str, included: tuple[str, ...] = ()) -> None:
        ebin = tmp_path / f"{name}-1.0" / "ebin"
        ebin.mkdir(parents=True)
        (ebin / f"{name}.app").write_text(
            f"{{application, '{name}', [{{vsn, \"1.0\"}}, {{modules, []}},\n {{applications, [{', '.join(needs)}]}}"
            + (f", {{included_applications, [{', '.join(included)}]}}" if included else "") + "]}.\n")
    app("rabbit", "kernel", "stdlib", "rabbit_common", "ra", included=("cuttlefish",))
    app("rabbitmq_prelaunch", "kernel", "stdlib")
    app("rabbit_common", "kernel", "recon")
    app("ra", "aten")
    for name in ("aten", "recon", "cuttlefish", "rabbitmq_management", "rabbitmq_mqtt", "cowboy"):
        app(name)
    assert core_applications(tmp_path) == sorted(f"{n}-1.0" for n in (
        "rabbit", "rabbitmq_prelaunch", "rabbit_common", "ra", "aten", "recon", "cuttlefish"))
    # where rabbit itself is not there, the distribution's directory is used as it is
    assert core_applications(tmp_path / "rabbit-1.0" / "ebin") == []


def test_ports_are_chosen_outside_the_range_the_system_gives_to_clients():
    """A client's own local port never lands on a broker's port while it restarts."""
    low, high = _ephemeral_range()

    ports = [free_port() for _ in range(50)]
    assert len(set(ports)) == 50
    assert all(not low <= p <= high and p >= 1024 for p in ports), (low, high, ports)


def test_a_restart_whose_port_was_taken_names_the_port_and_leaves_nothing(tmp_path):
    srv = server("activemq", tmp_path)
    srv.up(deadline=50)
    try:
        state = srv.recorded()
        openwire = int(state["ports"]["openwire"])
        launch = srv._launch
        held = []

        def taken_then_launch(state, deadline):
            # While the broker is down, a client connection happens to hold its OpenWire port.
            listener = socket.socket()
            listener.bind(("127.0.0.1", 0))
            listener.listen()
            client = socket.socket()
            client.bind(("127.0.0.1", openwire))
            client.connect(listener.getsockname())
            held.extend((listener, client))
            return launch(state, deadline)

        srv._launch = taken_then_launch
        with pytest.raises(BrokerControlError) as info:
            srv.restart(deadline=50)
        message = str(info.value)
        assert "\n" not in message and f"its port openwire {openwire} (pid {os.getpid()}, " in message
        assert "was taken by another program" in message
        assert srv.status().state == "stopped"
        assert not [p for p in psutil.process_iter(["cmdline"])
                    if str(tmp_path) in " ".join(p.info.get("cmdline") or [])]
    finally:
        for sock in held:
            sock.close()
        srv.down()


def test_handshakes_fail_fast_where_nothing_or_something_else_listens():
    port = free_port()
    assert not amqp_handshake("127.0.0.1", port) and not stomp_handshake("127.0.0.1", port)
    with socket.socket() as silent:  # accepts connections, never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        started = time.monotonic()
        assert not amqp_handshake("127.0.0.1", silent.getsockname()[1], timeout=0.5)
        assert not stomp_handshake("127.0.0.1", silent.getsockname()[1], timeout=0.5)
        assert time.monotonic() - started < 3


def test_bad_broker_names_get_one_line_and_exit_2(tmp_path):
    code, out, err, _ = mqconform("brokers", "up", "kafka", "--dir", tmp_path, timeout=60)
    assert code == 2 and out == "" and err.count("\n") == 1 and "unknown broker 'kafka'" in err
    assert not (tmp_path / "rabbitmq").exists()


def test_stopped_waits_for_every_thread_of_a_process():
    """``pause`` returns only once each thread is stopped: SIGSTOP is delivered asynchronously."""
    from adapters.brokers.server import _stopped

    busy = ("import threading\n"
            "def spin():\n    while True: pass\n"
            "for _ in range(3): threading.Thread(target=spin, daemon=True).start()\n"
            "spin()\n")
    proc = subprocess.Popen([sys.executable, "-c", busy], stdin=subprocess.DEVNULL)
    try:
        time.sleep(0.3)
        assert not _stopped(proc.pid)
        proc.send_signal(signal.SIGSTOP)
        deadline = time.monotonic() + 5
        while not _stopped(proc.pid):
            assert time.monotonic() < deadline, "never seen stopped"
            time.sleep(0.01)
        assert psutil.Process(proc.pid).status() == psutil.STATUS_STOPPED
        proc.send_signal(signal.SIGCONT)
        time.sleep(0.2)
        assert not _stopped(proc.pid)
    finally:
        proc.kill()
        proc.wait(timeout=10)
    assert _stopped(proc.pid)  # gone counts as stopped: nothing of it can answer
