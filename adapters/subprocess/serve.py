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
    """
    if check is None:
        check = bool(os.environ.get("MQCONFORM_CHECK_REQUESTS"))
    if stdout is None:   # the protocol owns file descriptor 1; anything else printed goes to the log
        stdout = os.fdopen(os.dup(sys.stdout.fileno()), "w", encoding="utf-8")
        sys.stdout = sys.stderr
    stdin = stdin if stdin is not None else sys.stdin

    def send(message: dict) -> None:
        stdout.write(json.dumps(message, ensure_ascii=False) + "\n")
        stdout.flush()

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
            try:
                if method == "hello":
                    about = adapter.describe()
                    server = {"name": str(about.get("system", adapter.name)), "version": str(about.get("version", "")),
                              **{k: v for k, v in about.items() if k not in ("system", "version")}}
                    result = {"protocol": PROTOCOL, "server": server,
                              "capabilities": capabilities_json(adapter.capabilities())}
                elif method == "start_case":
                    adapter.start_case(params["case"], params["platform"])
                    result = {}
                elif method == "execute":
                    op = L.from_json(params["op"])
                    express = getattr(adapter, "express", None)
                    expressed = express(op) if express is not None else op
                    if expressed != op:   # what the adapter cannot express as given: declined, with the reason
                        result = {"not_expressible": f"{type(op).__name__} as given cannot be expressed on "
                                                     f"{getattr(adapter, 'name', 'this system')}"}
                    else:
                        result = {"observation": L.to_json(adapter.execute(expressed))}
                elif method == "elapsed":
                    result = {"tenths": int(adapter.elapsed_tenths())}
                elif method == "end_case":
                    adapter.end_case()
                    result = {}
                elif method == "shutdown":
                    send({"id": rid, "result": {}})
                    return 0
                else:
                    raise ValueError(f"unknown method {method!r}")
            except Exception as exc:  # noqa: BLE001 - the kit is told, and decides
                send({"id": rid, "error": {"message": f"{type(exc).__name__}: {exc}"}})
                continue
            send({"id": rid, "result": result})
        return 0
    finally:
        adapter.close()
