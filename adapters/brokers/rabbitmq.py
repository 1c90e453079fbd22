"""A private RabbitMQ node (Debian's ``rabbitmq-server``) on 127.0.0.1.

The node, its own epmd and every file it writes (configuration, Erlang cookie,
mnesia, logs) live in the broker's directory.  ``/usr/lib/rabbitmq/bin`` is
called directly because the ``/usr/sbin`` wrappers switch user and directory.
Console logging is off and the node logs to a file, so it never blocks on a full
pipe; SIGTERM to the start script stops the node cleanly.
"""

from __future__ import annotations

import glob
import os
import re
import socket
import struct
from pathlib import Path

from adapters.brokers.server import LOOPBACK, BrokerServer, Process, free_port

BIN = Path("/usr/lib/rabbitmq/bin")
#: AMQP 0-9-1 protocol header; a broker answers it with a Connection.Start method frame.
PROTOCOL_HEADER = b"AMQP\x00\x00\x09\x01"


def amqp_handshake(host: str, port: int, timeout: float = 3.0) -> bool:
    """The first step of an AMQP 0-9-1 handshake: the broker answers the header with Connection.Start."""
    try:
        with socket.create_connection((host, port), timeout=timeout) as sock:
            sock.settimeout(timeout)
            sock.sendall(PROTOCOL_HEADER)
            data = b""
            while len(data) < 11:
                chunk = sock.recv(64)
                if not chunk:
                    return False
                data += chunk
    except OSError:
        return False
    frame_type, channel, _size = struct.unpack(">BHI", data[:7])
    return frame_type == 1 and channel == 0 and data[7:11] == b"\x00\x0a\x00\x0a"


def plugins_dir() -> Path | None:
    """The distribution's plugins directory (RabbitMQ's own applications and its plugins), None where not found."""
    found = sorted(glob.glob(str(BIN.parent / "lib" / "rabbitmq_server-*" / "plugins")))
    return Path(found[-1]) if found else None


#: An application's dependencies in its ``.app`` file: ``{applications, [...]}`` and ``{included_applications, [...]}``.
_DEPENDENCIES = re.compile(r"\{(?:included_)?applications,\s*\[([^\]]*)\]\}")


def core_applications(plugins: Path) -> list[str]:
    """The directories of ``plugins`` that RabbitMQ's own ``rabbit`` application needs, its dependencies' closure
    read from the ``.app`` files (the rest are plugins); empty where ``rabbit`` is not found there."""
    apps: dict[str, tuple[str, list[str]]] = {}
    for app_file in plugins.glob("*/ebin/*.app"):
        text = app_file.read_text(encoding="utf-8", errors="replace")
        needs = [name for listed in _DEPENDENCIES.findall(text) for name in re.findall(r"\w+", listed)]
        apps[app_file.stem] = (app_file.parent.parent.name, needs)
    needed: set[str] = set()
    todo = ["rabbit", "rabbitmq_prelaunch"]
    while todo:
        app = todo.pop()
        if app in needed or app not in apps:
            continue
        needed.add(app)
        todo += apps[app][1]
    return sorted(apps[a][0] for a in needed) if "rabbit" in needed else []


def epmd_path() -> str | None:
    found = sorted(glob.glob("/usr/lib/erlang/erts-*/bin/epmd"))
    return found[-1] if found else None


class RabbitMQServer(BrokerServer):
    name = "rabbitmq"
    package = "rabbitmq-server"
    scheme = "amqp"

    def installed(self) -> str | None:
        if not (BIN / "rabbitmq-server").exists():
            return f"{BIN / 'rabbitmq-server'} is missing (Debian package {self.package})"
        if not epmd_path():
            return "epmd is missing (Debian package erlang-base)"
        return None

    def ports(self) -> dict[str, int]:
        return {"main": free_port(), "epmd": free_port(), "dist": free_port()}

    @property
    def log(self) -> Path:
        return self.dir / "log" / "console.out"

    handshake = staticmethod(amqp_handshake)

    def prepare(self, ports: dict[str, int]) -> list[Process]:
        d = self.dir
        for sub in ("mnesia", "log", "home"):
            (d / sub).mkdir(parents=True, exist_ok=True)
        (d / "rabbitmq.conf").write_text(
            f"listeners.tcp.default = {LOOPBACK}:{ports['main']}\n"
            "log.console = false\n"
            "log.file.level = warning\n"
            "disk_free_limit.absolute = 50MB\n"
        )
        (d / "enabled_plugins").write_text("[].\n")
        (d / "rabbitmq-env.conf").write_text("")
        # No plugin is enabled; the node's plugins directory holds RabbitMQ's own applications alone (links to the
        # distribution's), not the fifty plugins beside them: the node reads and loads less at each start (about
        # a fifth of a start's CPU, measured in docs/testing.md), and what it does with messages is the same
        plugins = self._plugins(d / "plugins")
        env = {
            "HOME": str(d / "home"),
            "RABBITMQ_NODENAME": f"mqconform{ports['main']}@localhost",
            "RABBITMQ_NODE_IP_ADDRESS": LOOPBACK,
            "RABBITMQ_NODE_PORT": str(ports["main"]),
            "RABBITMQ_DIST_PORT": str(ports["dist"]),
            "RABBITMQ_CONFIG_FILE": str(d / "rabbitmq.conf"),
            "RABBITMQ_CONF_ENV_FILE": str(d / "rabbitmq-env.conf"),
            "RABBITMQ_ENABLED_PLUGINS_FILE": str(d / "enabled_plugins"),
            **({"RABBITMQ_PLUGINS_DIR": str(plugins)} if plugins is not None else {}),
            "RABBITMQ_MNESIA_BASE": str(d / "mnesia"),
            "RABBITMQ_LOG_BASE": str(d / "log"),
            "RABBITMQ_PID_FILE": str(d / "rabbit.pid"),
            "ERL_EPMD_ADDRESS": LOOPBACK,
            "ERL_EPMD_PORT": str(ports["epmd"]),
            # (+sbwt none ...: Erlang's schedulers sleep when out of work rather than spin for a while first;
            # a broker beside a run on a machine of two cores otherwise takes the cores the run computes on)
            "RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS": "-kernel inet_dist_use_interface {127,0,0,1} "
                                                   "+sbwt none +sbwtdcpu none +sbwtdio none",
        }
        return [
            Process("epmd", [epmd_path(), "-address", LOOPBACK, "-port", str(ports["epmd"])], ports["epmd"],
                    d / "log" / "epmd.out", env=env),
            Process("rabbitmq", [str(BIN / "rabbitmq-server")], ports["main"], self.log, self.handshake, env=env),
        ]

    @staticmethod
    def _plugins(directory: Path) -> Path | None:
        """``directory`` made to hold links to RabbitMQ's own applications (None, and the distribution's directory
        used, where they cannot be told apart)."""
        source = plugins_dir()
        core = core_applications(source) if source is not None else []
        if not core:
            return None
        directory.mkdir(exist_ok=True)
        for name in core:
            link = directory / name
            if not link.is_symlink():
                os.symlink(source / name, link)
        return directory
