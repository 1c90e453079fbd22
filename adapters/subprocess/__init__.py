"""The ``subprocess`` adapter: any program that speaks the kit's JSON-lines protocol is the system under test.

The protocol is described in ``docs/adapters/protocol.md``, with a JSON Schema
per message in ``adapters/subprocess/schemas/``.  The kit starts the server
command, sends requests on its stdin and reads answers from its stdout, one
JSON object per line; the server's stderr is its log, kept with the results.
Every answer is validated against its schema: a server that misbehaves ends the
run with an *error* (exit 2) naming what it did, never with a verdict on MQ.

Options: ``command`` (required; the server's command line), ``timeout``
(seconds per operation, default 10), ``start-timeout`` (seconds for the
handshake, default 30), ``max-line`` (longest answer in bytes, default 4 MiB).
"""

from __future__ import annotations

import json
import shlex
import shutil
import tempfile
import threading
import time
import weakref
from pathlib import Path

import attrs

from adapters.base import (LACKABLE, AdapterError, AdapterOptionError, Capabilities, Dependency, NotExpressible,
                           check_options)
from adapters.subprocess import schemas
from adapters.subprocess.channel import MAX_LINE, ChannelError, JsonLinesChannel
from reference_model import language as L

OPTIONS = {"command", "timeout", "start-timeout", "max-line"}


def _positive(name: str, text: str, kind=float):
    try:
        value = kind(text)
    except ValueError:
        value = 0
    if value <= 0:
        raise AdapterOptionError(f"adapter 'subprocess': {name} must be a positive number, not {text!r}")
    return value


class SubprocessAdapter:
    """Any queue manager behind a program speaking the kit's JSON-lines protocol (options: command, timeout)."""

    name = "subprocess"

    def __init__(self, **options: str) -> None:
        check_options(self.name, options, OPTIONS)
        text = options.get("command", "").strip()
        if not text:
            raise AdapterOptionError("adapter 'subprocess' needs --adapter-opt command=\"SERVER COMMAND\"")
        try:
            self.command = shlex.split(text)
        except ValueError as exc:
            raise AdapterOptionError(f"adapter 'subprocess': command: {exc}") from None
        self.timeout = _positive("timeout", options.get("timeout", "10"))
        start_timeout = _positive("start-timeout", options.get("start-timeout", "30"))
        max_line = _positive("max-line", options.get("max-line", str(MAX_LINE)), int)
        self._dir = Path(tempfile.mkdtemp(prefix="mqconform-server-"))
        weakref.finalize(self, shutil.rmtree, self._dir, True)
        self.log = self._dir / "server.log"
        self.label = f"server {' '.join(self.command)[:80]!r}"
        self._ids = 0
        self._failed: AdapterError | None = None
        # requests in flight, answers read for another caller than the one reading, and who reads (a server that
        # takes calls at once answers them in any order)
        self._lock = threading.Lock()
        self._sending = threading.Lock()
        self._arrived = threading.Condition(self._lock)
        self._waiting: set[int] = set()
        self._answers: dict[int, dict] = {}
        self._reading = False
        self._observed: dict[tuple, L.Observation] = {}
        self.chan = JsonLinesChannel(self.command, self.label, log=self.log, max_line=max_line)
        try:
            result = self._call("hello", {"protocol": schemas.PROTOCOL, "kit": _kit()}, start_timeout)
            if result["protocol"] != schemas.PROTOCOL:
                raise AdapterError(f"{self.label} speaks protocol {result['protocol']}; "
                                   f"the kit speaks {schemas.PROTOCOL}")
            self.server = dict(result["server"])
            self.concurrent_calls = bool(result["capabilities"].get("concurrent"))
            try:
                self._caps = capabilities_from(result["capabilities"])
            except ValueError as exc:
                raise AdapterError(f"{self.label} declared impossible capabilities: {exc}") from None
        except AdapterError:
            self.close()
            raise
        self.label = f"server {self.server['name']!r} (pid {self.chan.pid})"
        self.chan.name = self.label

    # ---------------------------------------------------------------- the adapter contract
    def capabilities(self) -> Capabilities:
        return self._caps

    def describe(self) -> dict:
        extra = {k: v for k, v in self.server.items() if k not in ("name", "version")}
        return {"system": self.server["name"], "version": self.server["version"], "protocol": schemas.PROTOCOL,
                "command": shlex.join(self.command), "platforms": list(self._caps.platforms), **extra}

    def start_case(self, case_id: str, platform: str | None = None, concurrent: bool = False) -> None:
        params = {"case": case_id, "platform": platform or self._caps.platform}
        if concurrent and self.concurrent_calls:   # said only to a server that declared it can take it
            params["concurrent"] = True
        self._call("start_case", params)

    def express(self, op: L.Op) -> L.Op | None:
        """An operation the server did not declare is not sent: it is not applicable, not a failure."""
        return op if self._caps.can(type(op)) else None

    def execute(self, op: L.Op) -> L.Observation:
        answer = self._exchange("execute", {"op": L.to_json(op)})
        # An answer whose result is, to the byte, one already found valid and read for an operation of the same
        # kind gives the same observation: a history replayed while shrinking gets the same answers many times,
        # and checking each against the schema again was a fifth of a run through the protocol.
        key = _result_key(answer)
        if key is not None:
            key = (key, type(op), op.names if isinstance(op, L.InquireQueue) else None)
            known = self._observed.get(key)
            if known is not None:
                return known
        result = self._checked("execute", answer)
        if "not_expressible" in result:
            raise NotExpressible(result["not_expressible"])
        raw = result["observation"]
        why = left_out(op, raw, self._caps.lacks)
        if why:
            raise self._fail(f"{self.label} answered {type(op).__name__} {why}")
        try:
            observation = L.from_json(_lacking_as_null(op, raw, self._caps.lacks))
        except L.LanguageError as exc:
            raise self._fail(f"{self.label} answered {type(op).__name__} with an invalid observation: {exc}") from None
        if key is not None:
            if len(self._observed) >= _OBSERVED_KEPT:
                self._observed.clear()
            self._observed[key] = observation
        return observation

    def elapsed_tenths(self) -> int:
        return self._call("elapsed", None)["tenths"]

    def end_case(self) -> None:
        self._call("end_case", None)

    def artifacts(self) -> list[Path]:
        """Files worth keeping with the results: the server's log."""
        return [self.log] if self.log.exists() else []

    def close(self) -> None:
        if self.chan is None:
            return
        if self._failed is None and self.chan.alive():
            try:
                self._call("shutdown", None, timeout=min(self.timeout, 5.0))
            except AdapterError:
                pass
        self.chan.close()
        self.chan = None

    def __del__(self) -> None:   # a forgotten adapter still stops its server
        try:
            if getattr(self, "chan", None) is not None:
                self.chan.close()
        except Exception:  # noqa: BLE001
            pass

    # ---------------------------------------------------------------- the protocol
    def _log_tail(self) -> str:
        return log_tail(self.log)

    def _fail(self, text: str) -> AdapterError:
        self._failed = AdapterError(text)
        return self._failed

    def _call(self, method: str, params: dict | None, timeout: float | None = None):
        return self._checked(method, self._exchange(method, params, timeout))

    def _exchange(self, method: str, params: dict | None, timeout: float | None = None) -> dict:
        """Send a request and read its answer, not yet checked."""
        if self._failed is not None:
            raise self._failed
        with self._lock:
            self._ids += 1
            request = {"id": self._ids, "method": method}
            if params is not None:
                request["params"] = params
            self._waiting.add(request["id"])
        try:
            with self._sending:
                self.chan.send(request)
            answer = self._answer(request["id"], self.timeout if timeout is None else timeout)
        except ChannelError as exc:
            if self._failed is None:
                tail = self._log_tail() if not self.chan.alive() else ""
                self._failed = ChannelError(f"{exc}; its last log line: {tail!r}") if tail else exc
            raise self._failed from None
        finally:
            with self._lock:
                self._waiting.discard(request["id"])
        return answer

    def _checked(self, method: str, answer: dict):
        """The result of a valid answer to ``method``; the adapter fails on a server's error or an invalid answer."""
        if "error" in answer and not schemas.problem("error", answer):
            message = " ".join(str(answer["error"]["message"]).split())[:200]
            raise self._fail(f"{self.label} reported an error in {method}: {message}")
        why = schemas.problem(f"{method}.response", answer)
        if why:
            raise self._fail(f"{self.label} sent an invalid answer to {method}: {why}")
        return answer["result"]

    def _answer(self, rid: int, timeout: float) -> dict:
        """The answer to request ``rid``.  One waiting caller at a time reads the next line and hands it to the
        caller whose request it answers (a server that takes calls at once may answer them in any order); an
        answer to no request in flight is an error, as is none within ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        with self._lock:
            while True:
                if rid in self._answers:
                    return self._answers.pop(rid)
                if self._failed is not None:
                    raise self._failed
                if not self._reading:
                    self._reading = True
                    break
                left = deadline - time.monotonic()
                if left <= 0:
                    raise ChannelError(f"{self.label} did not answer within {timeout:g}s")
                self._arrived.wait(left)
        while True:
            try:
                answer = self.chan.receive(max(0.0, deadline - time.monotonic()), said=timeout)
            except ChannelError:
                with self._lock:
                    self._reading = False
                    self._arrived.notify_all()
                raise
            aid = answer.get("id")
            with self._lock:
                if aid == rid:
                    self._reading = False
                    self._arrived.notify_all()
                    return answer
                if aid in self._waiting:
                    self._answers[aid] = answer
                    self._arrived.notify_all()
                    continue
                self._reading = False
                self._arrived.notify_all()
            # an answer to no request in flight
            alone = len(self._waiting) <= 1
            if "error" in answer and not schemas.problem("error", answer) and (aid is None or alone):
                return answer   # the server's own error about a request: the caller reports it
            if alone:
                raise self._fail(f"{self.label} answered request {rid} with id {aid}")
            raise self._fail(f"{self.label} answered with id {aid}, which no request in flight has")


#: Observations kept by the text of the answer they were read from (cleared when full).
_OBSERVED_KEPT = 50_000


def _result_key(answer: dict) -> str | None:
    """The text of an answer's result, for an answer with nothing but an id and a result (the only valid answer
    that carries a result): the same text is the same JSON value, so the same check and the same reading."""
    if type(answer.get("id")) is int and len(answer) == 2 and "result" in answer:
        return json.dumps(answer["result"], ensure_ascii=False)
    return None


#: Fields of a returned message the kit compares (the rest are MQ's own structures, null where absent).
_MESSAGE_FIELDS = tuple(a.name for a in attrs.fields(L.ReturnedMessage))


def left_out(op: L.Op, raw: dict, lacks: frozenset[str]) -> str | None:
    """Why an observation breaks the protocol by leaving a field out that the server did not declare lacking."""
    message = raw.get("message")
    if isinstance(message, dict):
        missing = [f for f in _MESSAGE_FIELDS if f not in message and f"message.{f}" not in lacks]
        if missing:
            return (f"with a message that leaves out {', '.join(missing)}: answer what the system returned, or "
                    f"declare the fields it has no value for in capabilities.lacks")
        # a null where a system may have no value (never compared) counts only where the server says it has none
        nulls = [f for f in _MESSAGE_FIELDS if f"message.{f}" in LACKABLE and f"message.{f}" not in lacks
                 and f in message and message[f] is None]
        if nulls:
            return (f"with a message whose {', '.join(nulls)} is null: answer the value, or declare the fields the "
                    f"system has no value for in capabilities.lacks")
    if isinstance(op, L.InquireQueue) and raw.get("cc") == 0 and isinstance(raw.get("attrs"), list):
        pairs = [pair for pair in raw["attrs"] if isinstance(pair, list) and pair]
        answered = {pair[0] for pair in pairs}
        missing = [n for n in op.names if n not in answered and f"attrs.{n}" not in lacks]
        if missing:
            return (f"leaving out {', '.join(missing)}: answer each name asked for, or declare the attributes the "
                    f"system has no value for in capabilities.lacks")
        nulls = [pair[0] for pair in pairs if len(pair) == 2 and pair[1] is None and isinstance(pair[0], str)
                 and f"attrs.{pair[0]}" in LACKABLE and f"attrs.{pair[0]}" not in lacks]
        if nulls:
            return (f"with {', '.join(nulls)} null: answer the value, or declare the attributes the system has no "
                    f"value for in capabilities.lacks")
    return None


def _lacking_as_null(op: L.Op, raw: dict, lacks: frozenset[str]) -> dict:
    """``raw`` with each field the system lacks set to null (never compared), whatever the server sent for it."""
    if not lacks:
        return raw
    out = dict(raw)
    if isinstance(raw.get("message"), dict):
        out["message"] = {**raw["message"], **{f: None for f in _MESSAGE_FIELDS if f"message.{f}" in lacks}}
    if isinstance(op, L.InquireQueue) and isinstance(raw.get("attrs"), list):
        pairs = [p for p in raw["attrs"] if not (isinstance(p, list) and p and f"attrs.{p[0]}" in lacks)]
        out["attrs"] = pairs + [[n, None] for n in op.names if f"attrs.{n}" in lacks]
    return out


def capabilities_from(caps: dict) -> Capabilities:
    """The capabilities a server declared in its answer to ``hello`` (valid by the schema); ValueError when they
    are impossible (an unknown area, platform or rule)."""
    return Capabilities(
        areas=caps["areas"], platforms=caps.get("platforms") or ("distributed",),
        operations=caps.get("operations"), realtime=caps.get("realtime", False),
        expiry_tolerance=caps.get("expiry_tolerance", 0), not_applicable=caps.get("not_applicable") or {},
        depends_on=[Dependency(kind=d["kind"], what=d["what"], why=d.get("why", ""), rules=d["rules"],
                               needed=d.get("needed", False)) for d in caps.get("depends_on") or ()],
        lacks=caps.get("lacks") or (), declared_by_system=True).with_lacks()


def log_tail(log: Path) -> str:
    """The last line of a server's log (its stderr), on one line and cut short: what to show when it went away."""
    try:
        lines = log.read_bytes()[-4096:].decode("utf-8", "replace").strip().splitlines()
    except OSError:
        return ""
    return " ".join(lines[-1].split())[:160] if lines else ""


def _kit() -> str:
    from reference_model.version import __version__

    return f"mqconform {__version__}"


def keep_artifacts(adapter, directory: Path) -> None:
    """Copy whatever an adapter wants kept (a server's log) into a results directory."""
    for path in getattr(adapter, "artifacts", lambda: [])():
        try:
            shutil.copyfile(path, directory / path.name)
        except OSError:
            pass
