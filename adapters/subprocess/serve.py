"""The server side of the protocol: any Python adapter served over JSON lines on stdin and stdout.

``serve(adapter)`` answers the kit's requests until ``shutdown`` or the end of
its input.  It is how ``python -m adapters.simulated.serve`` puts the simulated
queue manager behind the protocol, and a reference for authors of servers in
other languages (see ``docs/adapters/protocol.md``).
"""

from __future__ import annotations

import json
import os
import sys
import threading
from typing import IO

from adapters.subprocess.schemas import METHODS, PROTOCOL, problem
from reference_model import language as L


def capabilities_json(caps) -> dict:
    return {"areas": sorted(caps.areas), "platforms": list(caps.platforms),
            "operations": None if caps.operations is None else sorted(caps.operations),
            "realtime": caps.realtime, "expiry_tolerance": caps.expiry_tolerance,
            "not_applicable": dict(caps.not_applicable),
            **({"depends_on": [d.to_json() for d in caps.depends_on]} if caps.depends_on else {})}


def serve(adapter, stdin: IO[str] | None = None, stdout: IO[str] | None = None, check: bool | None = None) -> int:
    """Answer requests for ``adapter``; returns the exit status (0 after shutdown or end of input).

    With ``check`` (default: the environment variable MQCONFORM_CHECK_REQUESTS is set) every
    request is validated against its schema first, and an invalid one is answered with an error.
    An adapter that takes calls from several threads at once (``concurrent_calls``) is declared
    ``concurrent``: in a case the kit starts as concurrent, each execute request runs on a thread of its
    own, so that the next can be read before it is answered, and answers go out as they are ready; any
    other request waits for the executes in flight to end.  In any other case (the kit then sends each
    execute only once the one before is answered) executes run on the reading thread, at no thread's cost.
    """
    if check is None:
        check = bool(os.environ.get("MQCONFORM_CHECK_REQUESTS"))
    if stdout is None:   # the protocol owns file descriptor 1; anything else printed goes to the log
        stdout = os.fdopen(os.dup(sys.stdout.fileno()), "w", encoding="utf-8")
        sys.stdout = sys.stderr
    stdin = stdin if stdin is not None else sys.stdin
    concurrent = bool(getattr(adapter, "concurrent_calls", False))
    at_once = False   # the case under way was started as concurrent
    writing = threading.Lock()
    in_flight: list[threading.Thread] = []

    def send(message: dict) -> None:
        text = json.dumps(message, ensure_ascii=False) + "\n"
        with writing:
            stdout.write(text)
            stdout.flush()

    def answer(rid, method: str, params: dict) -> None:
        try:
            result = _result(adapter, method, params)
        except Exception as exc:  # noqa: BLE001 - the kit is told, and decides
            send({"id": rid, "error": {"message": f"{type(exc).__name__}: {exc}"}})
            return
        except BaseException as exc:
            if threading.current_thread() is threading.main_thread():
                raise
            # the server's own end (sys.exit in a call) on a call's thread: the whole process ends with it, as it
            # would have on the main thread
            code = exc.code if isinstance(exc, SystemExit) and isinstance(exc.code, int) else 1
            try:
                adapter.close()
            finally:
                os._exit(code)
        send({"id": rid, "result": result})

    def settle() -> None:
        while in_flight:
            in_flight.pop().join()

    try:
        for line in stdin:
            try:
                request = json.loads(line)
                rid, method, params = request["id"], request["method"], request.get("params") or {}
            except (ValueError, KeyError, TypeError) as exc:
                send({"id": None, "error": {"message": f"not a request: {exc}"}})
                continue
            why = problem(f"{method}.request", request) if check and method in METHODS else None
            if why:
                send({"id": rid, "error": {"message": f"invalid {method} request: {why}"}})
                continue
            if at_once and method == "execute":
                worker = threading.Thread(target=answer, args=(rid, method, params), daemon=True)
                in_flight.append(worker)
                worker.start()
                continue
            settle()
            if method == "shutdown":
                send({"id": rid, "result": {}})
                return 0
            if method == "start_case":
                at_once = concurrent and params.get("concurrent") is True
            answer(rid, method, params)
        settle()
        return 0
    finally:
        adapter.close()


def _result(adapter, method: str, params: dict) -> dict:
    """The result of one request (an exception: the server's own error, told to the kit)."""
    if method == "hello":
        about = adapter.describe()
        server = {"name": str(about.get("system", adapter.name)), "version": str(about.get("version", "")),
                  **{k: v for k, v in about.items() if k not in ("system", "version")}}
        caps = capabilities_json(adapter.capabilities())
        if getattr(adapter, "concurrent_calls", False):
            caps["concurrent"] = True
        return {"protocol": PROTOCOL, "server": server, "capabilities": caps}
    if method == "start_case":
        if params.get("concurrent") is True and getattr(adapter, "concurrent_calls", False):
            adapter.start_case(params["case"], params["platform"], concurrent=True)
        else:
            adapter.start_case(params["case"], params["platform"])
        return {}
    if method == "execute":
        op = L.from_json(params["op"])
        express = getattr(adapter, "express", None)
        expressed = express(op) if express is not None else op
        if expressed != op:   # what the adapter cannot express as given: declined, with the reason
            return {"not_expressible": f"{type(op).__name__} as given cannot be expressed on "
                                       f"{getattr(adapter, 'name', 'this system')}"}
        return {"observation": L.to_json(adapter.execute(expressed))}
    if method == "elapsed":
        return {"tenths": int(adapter.elapsed_tenths())}
    if method == "end_case":
        adapter.end_case()
        return {}
    raise ValueError(f"unknown method {method!r}")
