"""One lifecycle for the private brokers the kit starts itself.

A broker runs from its Debian package's files with every piece of state
(configuration, data, logs) in its own directory ``DIR/NAME`` (``DIR`` is
``--dir``, ``$MQCONFORM_RUN_DIR``, or ``~/.cache/mqconform/run``).  Starting it:

- picks free ports on 127.0.0.1 (parallel test workers and a user's own brokers
  never collide) and writes a fresh private configuration;
- starts each process through mirakuru with stdin from /dev/null, all output to a
  log file and a session of its own, and waits until the port accepts a
  connection *and* one protocol handshake succeeds, within an explicit deadline;
  a process that exits before that, whatever its exit code, is a failed start;
- records the ports, the PIDs (with their start times, so a PID the system has
  since given to another program is never signalled) and the log in
  ``state.json``, which ``status`` and ``down`` read.

Stopping signals exactly the recorded processes: SIGTERM first, SIGKILL after a
deadline; afterwards no process and no listening port remain.
"""

from __future__ import annotations

import json
import os
import random
import shutil

import signal
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Callable

import attrs
import psutil
from mirakuru import TCPExecutor
from mirakuru.base import ENV_UUID
from mirakuru.exceptions import AlreadyRunning, ProcessExitedWithError, TimeoutExpired

LOOPBACK = "127.0.0.1"
_ROOT = Path(__file__).resolve().parents[2]
#: Seconds a start may take before it is reported as failed (ready times here: 2-15 s).
START_DEADLINE = 55.0
#: Seconds a graceful stop may take before the processes are killed.
STOP_DEADLINE = 20.0


#: What this process (and its children) must not start: a comma-separated list of ``broker`` and ``spark``.  The
#: kit's own quick tests (``scripts/test.sh --quick``) set it for every test not marked as needing one, so that
#: a test that would start one, unmarked, fails at once instead of making the quick suite slow.
REFUSE = "MQCONFORM_REFUSE"


def refused() -> set[str]:
    """What :data:`REFUSE` says not to start."""
    return {part.strip() for part in os.environ.get(REFUSE, "").split(",") if part.strip()}


class BrokerControlError(RuntimeError):
    """A broker could not be installed, started or stopped; the message is one line."""


def run_dir() -> Path:
    base = os.environ.get("MQCONFORM_RUN_DIR") or str(Path.home() / ".cache" / "mqconform" / "run")
    return Path(base)


def _ephemeral_range() -> tuple[int, int]:
    """The ports the system gives to outgoing connections and to binds on port 0."""
    try:
        low, high = (int(x) for x in Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split())
        return low, high
    except (OSError, ValueError):
        return 32768, 60999


_RANDOM = random.SystemRandom()   # never the seeded ``random`` that Hypothesis and tests share
_HANDED_OUT: set[int] = set()


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nobody holds now, outside the ephemeral range.

    A broker restarts on the ports it was given. Had they come from the
    ephemeral range (a bind on port 0), any client anywhere on the machine could
    be given one as its own local port while the broker is down, and the broker
    would then fail to bind it (seen as a restart that exits with status 1). Ports
    below the range (or above it) are never handed out by the system, so only a
    program that asks for that very port can take it. Falls back to port 0 if
    the range leaves no room.
    """
    low, high = _ephemeral_range()
    pool = [r for r in (range(max(10000, low - 20000), low), range(high + 1, 65536)) if len(r) > 100]
    for _ in range(200):
        if not pool:
            break
        port = _RANDOM.choice(_RANDOM.choice(pool))
        if port in _HANDED_OUT or not _bindable(port, reuse_address=False):
            continue
        if len(_HANDED_OUT) > 2000:
            _HANDED_OUT.clear()
        _HANDED_OUT.add(port)
        return port
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((LOOPBACK, 0))
        return sock.getsockname()[1]


def port_open(host: str, port: int, timeout: float = 0.5) -> bool:
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


class _BrokerExecutor(TCPExecutor):
    """mirakuru's TCP executor, strict about readiness and not tied to this Python process.

    - Ready means the port accepts a connection *and* ``handshake`` succeeds.
    - Any exit before readiness is a failed start, exit status 0 included (the
      RabbitMQ start script exits 0 when the node fails to boot).
    - mirakuru marks its children and kills them when the interpreter exits; a
      broker started by ``mqconform brokers up`` must outlive the command, so the
      mark is left out: the kit stops its brokers by their recorded PIDs.
    """

    def __init__(self, command: list[str], host: str, port: int, handshake: Callable[[str, int], bool] | None,
                 **kwargs) -> None:
        super().__init__(command, host, port, **kwargs)
        self._handshake = handshake

    @property
    def envvars(self) -> dict[str, str]:
        env = os.environ.copy()
        env.pop(ENV_UUID, None)
        env.update(self._envvars)
        return env

    def check_subprocess(self) -> bool:
        if self.process is None:  # pragma: no cover - start() made it
            return False
        code = self.process.poll()
        if code is not None:
            # whatever it left behind in its session goes too, waited for (it may hold a port a moment more)
            _kill_group(self.process.pid)
            self._clear_process()
            raise ProcessExitedWithError(self, code)
        return self.after_start_check()

    def after_start_check(self) -> bool:
        if not self.pre_start_check():
            return False
        return self._handshake is None or self._handshake(self.host, self.port)

    def forget(self) -> int:
        """Leave the process running and return its PID."""
        pid = self.process.pid
        self.process = None
        self._endtime = None
        return pid


@attrs.frozen
class Status:
    name: str
    state: str                 # ready, stopped, not ready, not installed
    address: str = ""
    pids: tuple[int, ...] = ()
    log: str = ""
    detail: str = ""
    #: Other client ports, as ``name host:port`` (ActiveMQ's OpenWire beside STOMP).
    others: tuple[str, ...] = ()
    #: The protocol of the main port, named when there are others.
    scheme: str = ""

    @property
    def ready(self) -> bool:
        return self.state == "ready"

    def line(self) -> str:
        parts = [f"{self.name}: {self.state}"]
        if self.address:
            parts.append(f"on {self.scheme} {self.address}" if self.others and self.scheme else f"on {self.address}")
            parts.extend(f"and {other}" for other in self.others)
        if self.pids:
            parts.append(f"(pid {', '.join(map(str, self.pids))})")
        if self.log:
            parts.append(f"log {self.log}")
        text = " ".join(parts)
        return f"{text} - {self.detail}" if self.detail else text


@attrs.frozen
class Process:
    """One process of a broker: how to start it and how to know it is ready."""

    label: str
    command: list[str]
    port: int
    log: Path
    handshake: Callable[[str, int], bool] | None = None
    env: dict = attrs.field(factory=dict)


class BrokerServer:
    """A broker the kit installs, starts and stops itself.  Subclasses describe the broker."""

    name: str = ""
    #: Debian package that provides the broker.
    package: str = ""
    #: The protocol the broker's main port speaks (its URL scheme).
    scheme: str = ""
    #: Ports other than ``main`` that clients use.
    client_ports: tuple[str, ...] = ()

    #: How the broker is configured: ``faithful`` (the settings that bring it closest to MQ) or ``defaults`` (as
    #: it installs); a broker with nothing to configure ignores it.
    settings = "faithful"

    def __init__(self, base: Path | None = None) -> None:
        self.base = Path(base) if base is not None else run_dir()
        self.dir = self.base / self.name
        self.state_file = self.dir / "state.json"
        #: The process whose end stops the broker (:mod:`adapters.brokers.reaper`): set for a private broker a
        #: run, a campaign or a test starts for itself, so that it never outlives them, even when they are
        #: killed; ``None`` (``mqconform brokers up``) leaves the broker running until ``brokers down``.
        self.owner: int | None = None

    # ------------------------------------------------------------ per broker
    def installed(self) -> str | None:
        """``None`` when the broker's files are present, else what is missing."""
        raise NotImplementedError

    def ports(self) -> dict[str, int]:
        """Fresh ports for a start; ``main`` is the port clients use."""
        raise NotImplementedError

    def prepare(self, ports: dict[str, int]) -> list[Process]:
        """Write the private configuration; returns the processes to start, in order."""
        raise NotImplementedError

    @property
    def log(self) -> Path:
        """The log file a failed start points the user to."""
        raise NotImplementedError

    # ------------------------------------------------------------ recorded state
    def recorded(self) -> dict | None:
        try:
            state = json.loads(self.state_file.read_text())
        except (OSError, ValueError):
            return None
        return state if isinstance(state, dict) and state.get("broker") == self.name else None

    def address(self, port: str = "main") -> tuple[str, int] | None:
        """Where the recorded broker listens (its ``port``: main, or another the broker has), when it is running."""
        state = self.recorded()
        if state is None or not self._alive(state) or port not in state["ports"]:
            return None
        return LOOPBACK, int(state["ports"][port])

    def _alive(self, state: dict) -> list[psutil.Process]:
        return alive_processes(state)

    def status(self) -> Status:
        missing = self.installed()
        if missing:
            return Status(self.name, "not installed", detail=missing)
        state = self.recorded()
        if state is None:
            return Status(self.name, "stopped")
        alive = self._alive(state)
        address = f"{LOOPBACK}:{state['ports']['main']}"
        pids = tuple(p.pid for p in alive)
        if not alive:
            return Status(self.name, "stopped", detail="its processes have ended", log=state.get("log", ""))
        ready = port_open(LOOPBACK, int(state["ports"]["main"]))
        if ready:
            ready = self.handshake(LOOPBACK, int(state["ports"]["main"]))
        others = tuple(f"{key} {LOOPBACK}:{state['ports'][key]}" for key in self.client_ports
                       if key in state["ports"])
        return Status(self.name, "ready" if ready else "not ready", address, pids, state.get("log", ""),
                      others=others, scheme=self.scheme)

    def handshake(self, host: str, port: int) -> bool:
        """One protocol exchange with the main port (bounded by socket timeouts)."""
        raise NotImplementedError

    # ------------------------------------------------------------ up and down
    def up(self, deadline: float = START_DEADLINE) -> Status:
        """Start the broker unless the recorded one is running; raises BrokerControlError in one line."""
        if "broker" in refused():
            raise BrokerControlError(f"{self.name}: not started: {REFUSE}=broker (the kit's quick tests start "
                                     "no broker: mark a test that needs one with pytest.mark.broker)")
        missing = self.installed()
        if missing:
            raise BrokerControlError(
                f"{self.name}: not installed ({missing}); run: bash scripts/system-packages.sh")
        state = self.recorded()
        if state is not None and self._alive(state):
            return self.status()
        if state is not None:
            self._stop(state)
        # A fresh directory for every start: a broker never finds an earlier one's data or lock.
        shutil.rmtree(self.dir, ignore_errors=True)
        self.dir.mkdir(parents=True, exist_ok=True)
        ports = self.ports()
        state = {"broker": self.name, "scheme": self.scheme, "host": LOOPBACK, "ports": ports,
                 "log": str(self.log), "processes": [], "started": time.time()}
        if self.owner is not None:
            self._watch(state)
        return self._launch(state, deadline)

    def _watch(self, state: dict) -> None:
        """Start the reaper that stops this broker when its owner ends (before the broker, so that an owner
        killed while the broker starts leaves nothing running either)."""
        try:
            owner = psutil.Process(self.owner)
            state["owner"] = {"pid": owner.pid, "created": owner.create_time()}
        except psutil.Error as exc:
            raise BrokerControlError(f"{self.name}: its owner, process {self.owner}, is not running") from exc
        state["reaper"] = {"token": uuid.uuid4().hex}
        self._write(state)
        with open(self.dir / "reaper.log", "ab") as out:
            reaper = subprocess.Popen([sys.executable, "-m", "adapters.brokers.reaper", str(self.state_file),
                                       state["reaper"]["token"]], stdin=subprocess.DEVNULL, stdout=out,
                                      stderr=subprocess.STDOUT, start_new_session=True, cwd=str(self.dir),
                                      env=dict(os.environ, PYTHONPATH=os.pathsep.join(
                                          filter(None, (str(_ROOT), os.environ.get("PYTHONPATH"))))))
        state["reaper"].update(pid=reaper.pid, created=psutil.Process(reaper.pid).create_time())
        self._write(state)

    def restart(self, deadline: float = START_DEADLINE, kill: bool = False) -> Status:
        """Stop the recorded broker gracefully (``kill``: with SIGKILL, as a power cut would) and start
        it again on the same ports and data.

        What survives is what the broker itself keeps on disk, as after a queue
        manager's end and start; raises BrokerControlError in one line.
        """
        state = self.recorded()
        if state is None or not self._alive(state):
            raise BrokerControlError(f"{self.name}: not running, so it cannot be restarted")
        if kill:
            alive = self._alive(state)
            for proc in alive:
                _send(proc, signal.SIGKILL)
            psutil.wait_procs(alive, timeout=10)
        self._stop(state)
        state = dict(state, processes=[], restarted=time.time())
        return self._launch(state, deadline)

    def pause(self, deadline: float = 5.0) -> None:
        """SIGSTOP every recorded process: the broker stops answering (its sockets stay open).

        A stop signal is delivered asynchronously: a thread busy on another core may
        still answer one more request after ``kill`` returns.  This returns only once
        every thread of every signalled process is seen stopped, or raises.
        """
        procs = self._signal_all(signal.SIGSTOP)
        end = time.monotonic() + deadline
        while not all(_stopped(proc.pid) for proc in procs):
            if time.monotonic() > end:
                for proc in procs:
                    _send(proc, signal.SIGCONT)
                raise BrokerControlError(f"{self.name}: not stopped within {deadline:g} s of SIGSTOP")
            time.sleep(0.01)

    def resume(self) -> None:
        """SIGCONT every recorded process after :meth:`pause`."""
        self._signal_all(signal.SIGCONT)

    def _signal_all(self, sig: int) -> list[psutil.Process]:
        state = self.recorded()
        alive = self._alive(state) if state is not None else []
        if not alive:
            raise BrokerControlError(f"{self.name}: not running")
        for proc in alive:
            _send(proc, sig)
        return alive

    def _launch(self, state: dict, deadline: float) -> Status:
        ports = state["ports"]
        processes = self.prepare(ports)
        end = time.monotonic() + deadline
        try:
            for group, proc in enumerate(processes):
                # what is left of the deadline (a sliver at least, for a process started right at its end)
                pid = self._start(proc, max(0.05, end - time.monotonic()))
                state["processes"].extend(dict(entry, group=group) for entry in _tree(pid))
                self._write(state)
        except (TimeoutExpired, ProcessExitedWithError, AlreadyRunning, OSError) as exc:
            self._stop(state)
            self._forget()
            _end_reaper(state)
            taken = [f"{name} {port}{_holder(int(port))}" for name, port in sorted(ports.items())
                     if not _bindable(int(port))]
            why = (f"its port {', '.join(taken)} was taken by another program" if taken
                   else _why(exc, deadline))
            raise BrokerControlError(f"{self.name}: did not start on {LOOPBACK}:{ports['main']} "
                                     f"({why}); see {self.log}") from None
        state["processes"] = _refresh(state["processes"])
        self._write(state)
        return self.status()

    def down(self, deadline: float = STOP_DEADLINE) -> Status:
        state = self.recorded()
        if state is not None:
            self._stop(state, deadline)
            self._forget()
            _end_reaper(state)
        return self.status()

    def _start(self, proc: Process, timeout: float) -> int:
        proc.log.parent.mkdir(parents=True, exist_ok=True)
        with open(proc.log, "ab") as out:
            executor = _BrokerExecutor(proc.command, LOOPBACK, proc.port, proc.handshake, timeout=timeout,
                                       envvars=proc.env, stdin=subprocess.DEVNULL, stdout=out,
                                       stderr=subprocess.STDOUT, cwd=str(self.dir), sleep=0.2)
            try:
                executor.start()
            except BaseException:
                # A start cut short (a failed readiness, or a signal while waiting for it): nothing is
                # recorded yet, so its process group goes now, or nobody would ever stop it; and is waited
                # for, so that a port it still held is not then taken for another program's.
                if executor.process is not None:
                    _kill_group(executor.process.pid)
                raise
            return executor.forget()

    def _stop(self, state: dict, deadline: float = STOP_DEADLINE) -> None:
        stop_processes(state, deadline)

    def _write(self, state: dict) -> None:
        tmp = self.state_file.with_suffix(".tmp")
        tmp.write_text(json.dumps(state, indent=1))
        tmp.replace(self.state_file)

    def _forget(self) -> None:
        try:
            self.state_file.unlink()
        except FileNotFoundError:
            pass


def alive_processes(state: dict) -> list[psutil.Process]:
    """The recorded processes of ``state`` still running (a PID now another program's is not one of them)."""
    out = []
    for entry in state.get("processes", []):
        proc = running_process(entry)
        if proc is not None:
            out.append(proc)
    return out


def running_process(entry: dict) -> psutil.Process | None:
    """The process ``entry`` (a PID and its start time) records, if it is still running and not a zombie."""
    try:
        proc = psutil.Process(int(entry["pid"]))
        if abs(proc.create_time() - float(entry["created"])) < 1.0 and proc.status() != psutil.STATUS_ZOMBIE:
            return proc
    except (psutil.Error, KeyError, ValueError, TypeError):
        pass
    return None


def stop_processes(state: dict, deadline: float = STOP_DEADLINE) -> None:
    """Stop the recorded processes of ``state``, the last started first.

    Each started process gets SIGTERM (a broker's start script passes it on and
    the broker shuts down cleanly); whatever of its tree is still there after
    ``deadline`` gets SIGKILL.
    """
    entries = state.get("processes", [])
    for group in sorted({e.get("group", 0) for e in entries}, reverse=True):
        members = [e for e in entries if e.get("group", 0) == group]
        alive = alive_processes({"processes": members})
        if not alive:
            continue
        for proc in alive:   # a paused broker (the nemesis) must run to hear SIGTERM
            _send(proc, signal.SIGCONT)
        _send(alive[0], signal.SIGTERM)
        _, left = psutil.wait_procs(alive, timeout=deadline)
        for proc in left:
            _send(proc, signal.SIGKILL)
        psutil.wait_procs(left, timeout=5)


def _end_reaper(state: dict) -> None:
    """End the reaper of a broker stopped on purpose (it would see the record gone and end within a poll)."""
    reaper = running_process(state.get("reaper") or {})
    if reaper is not None:
        _send(reaper, signal.SIGTERM)
        psutil.wait_procs([reaper], timeout=5)


def _tree(pid: int) -> list[dict]:
    """``pid`` and its descendants, each with its start time."""
    try:
        root = psutil.Process(pid)
        procs = [root] + root.children(recursive=True)
    except psutil.Error:
        return []
    out = []
    for p in procs:
        try:
            out.append({"pid": p.pid, "created": p.create_time(), "name": p.name()})
        except psutil.Error:
            continue
    return out


def _refresh(entries: list[dict]) -> list[dict]:
    """The recorded processes plus any child they have started since."""
    seen = {e["pid"] for e in entries}
    out = list(entries)
    for entry in entries:
        for extra in _tree(entry["pid"])[1:]:
            if extra["pid"] not in seen:
                seen.add(extra["pid"])
                out.append(dict(extra, group=entry.get("group", 0)))
    return out


def _kill_group(pgid: int, wait: float = 5.0) -> None:
    """SIGKILL the process group ``pgid`` (a broker started in its own session) and wait up to ``wait`` seconds
    for its processes to be gone: a process killed still holds its ports until it has exited."""
    group = []
    for proc in psutil.process_iter():
        try:
            if os.getpgid(proc.pid) == pgid:
                group.append(proc)
        except (OSError, psutil.Error):
            continue
    try:
        os.killpg(pgid, signal.SIGKILL)
    except OSError:
        pass
    psutil.wait_procs(group, timeout=wait)


def _holder(port: int) -> str:
    """Who holds ``port`` on this machine, as a message says it (" (pid N, name)"; empty where unknown)."""
    try:
        for conn in psutil.net_connections(kind="tcp"):
            if conn.laddr and conn.laddr.port == port and conn.pid:
                return f" (pid {conn.pid}, {psutil.Process(conn.pid).name()})"
    except (psutil.Error, OSError):
        pass
    return ""


def _bindable(port: int, reuse_address: bool = True) -> bool:
    """Whether a server could bind ``port`` on 127.0.0.1 now: with SO_REUSEADDR, as a broker does, or
    without it (stricter: not even a connection lingering in TIME_WAIT holds it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        if reuse_address:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((LOOPBACK, port))
        except OSError:
            return False
    return True


def _stopped(pid: int) -> bool:
    """Whether every thread of ``pid`` is stopped (or gone)."""
    try:
        tasks = list(Path(f"/proc/{pid}/task").iterdir())
    except OSError:
        return True
    for task in tasks:
        try:
            stat = (task / "stat").read_text()
        except OSError:
            continue
        # The state letter follows the command name, which is in parentheses and may hold spaces.
        if stat[stat.rindex(")") + 2] not in "Tt":
            return False
    return True


def _send(proc: psutil.Process, sig: int) -> None:

    try:
        proc.send_signal(sig)
    except psutil.Error:
        pass


def _why(exc: BaseException, deadline: float) -> str:
    if isinstance(exc, TimeoutExpired):
        return f"not ready within {deadline:g} s"

    if isinstance(exc, ProcessExitedWithError):
        return f"it exited with status {exc.exit_code} before it was ready"
    if isinstance(exc, AlreadyRunning):
        return "its port was taken by another program"
    return " ".join(str(exc).split())[:120] or type(exc).__name__
