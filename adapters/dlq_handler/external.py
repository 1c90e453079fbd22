"""An external DLQ handler: any program that speaks the handler protocol over its stdin and stdout.

The protocol is JSON, one object per line.  The kit writes commands:

* ``{"cmd": "start", "handler": NAME, "table": TEXT, "dead_q": QUEUE, "clock": TENTHS}``
* ``{"cmd": "run", "clock": TENTHS}``: work until idle
* ``{"cmd": "stop"}``

While it works on a command, the program may ask for MQ calls: it writes
``{"op": OP}`` (an operation of the kit's language in its JSON form, see
``reference_model/language.py``) and reads back ``{"observation": OBS}``.  It
ends each command with ``{"result": ...}``: for ``start`` the observation of the
start (with ``"queue"``, the queue it opened), for ``run`` ``{"status":
"RUNNING" | "ENDED"}``, for ``stop`` ``{}``.

``python -m adapters.dlq_handler`` serves the kit's own handler this way
(``--fault NAME`` breaks it on purpose: :mod:`adapters.dlq_handler.serve`), and is
the reference for writing a bridge to a site's own handler.
"""

from __future__ import annotations

from typing import Callable

from adapters.base import AdapterError
from adapters.subprocess.channel import JsonLinesChannel
from reference_model import language as L

#: Seconds to wait for each line from the external program.
TIMEOUT = 30.0


class ExternalHandler:
    """A handler instance run by an external program (``command``, an argument list)."""

    def __init__(self, command: list[str], name: str, text: str,
                 execute: Callable[[L.Op], L.Observation], dead_q: str) -> None:
        self.command = command
        self.name = name
        self.text = text
        self.execute = execute
        self.dead_q = dead_q
        self.queue = ""
        self.running = False
        self.chan: JsonLinesChannel | None = None

    def start(self, clock: int) -> L.Observation:
        self.chan = JsonLinesChannel(self.command, f"the external DLQ handler {self.command[0]!r}")
        result = self._command({"cmd": "start", "handler": self.name, "table": self.text,
                                "dead_q": self.dead_q, "clock": clock})
        self.queue = result.pop("queue", "") if isinstance(result, dict) else ""
        obs = self._decode(result)
        self.running = obs.cc != 2
        return obs

    def run(self, clock: int) -> str:
        if self.chan is None or not self.chan.alive():
            return "ENDED"
        status = self._command({"cmd": "run", "clock": clock}).get("status")
        if status not in ("RUNNING", "ENDED"):
            raise AdapterError(f"external DLQ handler answered run with status {status!r}")
        self.running = status == "RUNNING"
        return status

    def stop(self) -> None:
        if self.chan is not None:
            if self.chan.alive():
                try:
                    self._command({"cmd": "stop"})
                except AdapterError:
                    pass
            self.chan.close()
        self.chan = None
        self.running = False

    # ------------------------------------------------------------------
    def _decode(self, data) -> L.Observation:
        try:
            obs = L.from_json(data)
        except L.LanguageError as exc:
            raise AdapterError(f"external DLQ handler sent a malformed observation: {exc}") from None
        if not isinstance(obs, L.Observation):
            raise AdapterError("external DLQ handler's start result is not an Observation")
        return obs

    def _command(self, command: dict) -> dict:
        self._write(command)
        while True:
            message = self._read()
            if "result" in message:
                return message["result"]
            if "op" not in message:
                raise AdapterError(f"external DLQ handler sent {sorted(message)!r}, expected 'op' or 'result'")
            try:
                op = L.from_json(message["op"])
            except L.LanguageError as exc:
                raise AdapterError(f"external DLQ handler asked for a malformed op: {exc}") from None
            if not isinstance(op, L.Op):
                raise AdapterError("external DLQ handler asked for something that is not an op")
            self._write({"observation": L.to_json(self.execute(op))})

    def _write(self, data: dict) -> None:
        self.chan.send(data)

    def _read(self) -> dict:
        return self.chan.receive(TIMEOUT)
