"""One private broker for a long job (a campaign): started when the job's adapter has no broker of its own,
shared by every task, brought back when it dies, and stopped when the job ends.

A real-broker adapter finds its broker through options, ``$MQCONFORM_<NAME>_URL`` or the
broker recorded in the run directory (``$MQCONFORM_RUN_DIR``); with none of them it
would start a private broker per adapter, that is per task.  A campaign instead
starts one here, in a directory of its own, and points the run directory at it, so
every task (each in its own Spark worker) uses the same broker, each case under
its own queue prefix.
"""

from __future__ import annotations

import os
from pathlib import Path

from adapters.brokers import SERVERS, BrokerServer
from adapters.brokers.server import Status
from adapters.broker_shim import NO_PRIVATE_BROKER


def broker_for(adapter_name: str, options: dict) -> str | None:
    """The broker a job must start for ``adapter_name``, or None when it needs none.

    None for an adapter that drives no broker the kit installs, and for one that
    is told where its broker is (options, URL in the environment, or a broker
    already recorded as running in the run directory).
    """
    from adapters.registry import adapter_class

    try:
        cls = adapter_class(adapter_name)
    except LookupError:
        return None
    server_class = getattr(cls, "server_class", None)
    name = getattr(server_class, "name", "")
    if name not in SERVERS:
        return None
    if any(options.get(k) for k in ("host", "port")):
        return None
    if os.environ.get(f"MQCONFORM_{cls.name.upper().replace('-', '_')}_URL"):
        return None
    if SERVERS[name]().status().ready:
        return None
    return name


class ManagedBroker:
    """A private broker in ``base``, recorded there as ``mqconform brokers up`` records one."""

    def __init__(self, name: str, base: Path) -> None:
        self.server: BrokerServer = SERVERS[name](Path(base))
        self.server.owner = os.getpid()   # stopped when the job ends, even killed (adapters.brokers.reaper)
        self._previous_run_dir: str | None = None
        self._pointed = False

    @property
    def name(self) -> str:
        return self.server.name

    def up(self) -> Status:
        """Start it (or find it still running from an earlier attempt of the same job) and point the
        run directory at it, for this process and every process it starts."""
        status = self.server.up()
        if not self._pointed:
            self._previous_run_dir, self._pointed = os.environ.get("MQCONFORM_RUN_DIR"), True
        os.environ["MQCONFORM_RUN_DIR"] = str(self.server.base)
        os.environ[NO_PRIVATE_BROKER] = "1"   # a task that finds it gone fails; it never starts its own
        return status

    def ensure(self) -> bool:
        """Bring the broker back if it is gone or not answering; True when it had to be started again."""
        if self.server.status().ready:
            return False
        self.server.down()
        self.server.up()
        return True

    def down(self) -> Status:
        """Stop it, and point the run directory back where it was."""
        try:
            return self.server.down()
        finally:
            os.environ.pop(NO_PRIVATE_BROKER, None)
            if self._pointed:
                if self._previous_run_dir is None:
                    os.environ.pop("MQCONFORM_RUN_DIR", None)
                else:
                    os.environ["MQCONFORM_RUN_DIR"] = self._previous_run_dir
                self._pointed = False


__all__ = ["ManagedBroker", "broker_for"]
