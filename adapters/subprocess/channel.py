"""JSON lines to and from a child process: the framing every external program of the kit speaks.

One JSON object per line on the child's stdin and stdout; its stderr goes to a
log file.  Every way a child can misbehave ends in one :class:`ChannelError`
naming the child and what it did: a line that is not JSON or not an object, a
line longer than the limit, no answer within the deadline, an exit.  The child
runs in its own session, so :meth:`JsonLinesChannel.close` stops it and anything
it started, and reaps it.

Used by the ``subprocess`` adapter and by the external DLQ handler.
"""

from __future__ import annotations

import json
import os
import selectors
import signal
import subprocess
import time
from pathlib import Path

from adapters.base import AdapterError

#: The longest line accepted from a child, in bytes (a longer one is an error, not a memory hog).
MAX_LINE = 4 * 1024 * 1024
#: Seconds a child gets to exit after its input is closed, and again after SIGTERM.
GRACE = 3.0


class ChannelError(AdapterError):
    """The child misbehaved or went away (never a conformance verdict)."""


class JsonLinesChannel:
    """A child process spoken to in JSON lines.  ``name`` names it in every error ("server 'x'")."""

    def __init__(self, command: list[str], name: str, *, log: Path | None = None,
                 max_line: int = MAX_LINE, cwd: str | None = None) -> None:
        self.name = name
        self.max_line = max_line
        self._buf = bytearray()
        self._log = open(log, "ab") if log is not None else None  # noqa: SIM115 - closed in close()
        try:
            self.proc = subprocess.Popen(
                command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=self._log if self._log is not None else subprocess.DEVNULL,
                start_new_session=True, cwd=cwd, bufsize=0)
        except OSError as exc:
            if self._log is not None:
                self._log.close()
            raise ChannelError(f"cannot start {name}: {exc.strerror or exc}") from None
        os.set_blocking(self.proc.stdout.fileno(), False)
        self._sel = selectors.DefaultSelector()
        self._sel.register(self.proc.stdout, selectors.EVENT_READ)

    @property
    def pid(self) -> int:
        return self.proc.pid

    def alive(self) -> bool:
        return self.proc.poll() is None

    def send(self, message: dict) -> None:
        data = (json.dumps(message, ensure_ascii=False) + "\n").encode()
        try:
            self.proc.stdin.write(data)
            self.proc.stdin.flush()
        except (OSError, ValueError):
            raise ChannelError(f"{self.name} has gone: its input is closed{self._status()}") from None

    def receive(self, timeout: float, said: float | None = None) -> dict:
        """The next line as a JSON object; ChannelError on anything else or after ``timeout`` seconds (the error
        names ``said`` seconds where given: the whole wait of which ``timeout`` is what was left)."""
        line = self._line(timeout, timeout if said is None else said)
        try:
            data = json.loads(line)
        except (json.JSONDecodeError, UnicodeDecodeError):
            text = line[:60].decode("utf-8", "replace")
            raise ChannelError(f"{self.name} wrote a line that is not JSON: {text!r}") from None
        if not isinstance(data, dict):
            raise ChannelError(f"{self.name} wrote JSON that is not an object: {line[:60].decode('utf-8', 'replace')!r}")
        return data

    def _line(self, timeout: float, said: float) -> bytes:
        deadline = time.monotonic() + timeout
        while True:
            end = self._buf.find(b"\n")
            if end >= 0:
                line = bytes(self._buf[:end])
                del self._buf[:end + 1]
                return line.rstrip(b"\r")
            if len(self._buf) > self.max_line:
                raise ChannelError(f"{self.name} wrote a line longer than {self.max_line} bytes")
            left = deadline - time.monotonic()
            if left <= 0 or not self._sel.select(left):
                raise ChannelError(f"{self.name} did not answer within {said:g}s")
            try:
                chunk = os.read(self.proc.stdout.fileno(), 1 << 16)
            except BlockingIOError:
                continue
            if not chunk:
                if self._buf:
                    text = bytes(self._buf[:60]).decode("utf-8", "replace")
                    raise ChannelError(f"{self.name} ended in the middle of a line ({text!r}){self._status(wait=True)}")
                raise ChannelError(f"{self.name} ended{self._status(wait=True)}")
            self._buf += chunk

    def _status(self, wait: bool = False) -> str:
        try:
            code = self.proc.wait(timeout=GRACE) if wait else self.proc.poll()
        except subprocess.TimeoutExpired:
            code = None
        if code is None:
            return ""
        if code < 0:
            try:
                return f" (killed by {signal.Signals(-code).name})"
            except ValueError:
                return f" (killed by signal {-code})"
        return f" (exit status {code})"

    def close(self) -> int | None:
        """Stop the child (input closed, then SIGTERM, then SIGKILL to its whole session) and reap it."""
        proc = self.proc
        try:
            proc.stdin.close()
        except OSError:
            pass
        code = None
        try:
            code = proc.wait(timeout=GRACE)
        except subprocess.TimeoutExpired:
            for sig in (signal.SIGTERM, signal.SIGKILL):
                try:
                    os.killpg(proc.pid, sig)
                except (ProcessLookupError, PermissionError):
                    pass
                try:
                    code = proc.wait(timeout=GRACE)
                    break
                except subprocess.TimeoutExpired:
                    continue
        # whatever the child left running in its session goes too
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        self._sel.close()
        proc.stdout.close()
        if self._log is not None:
            self._log.close()
        return code
