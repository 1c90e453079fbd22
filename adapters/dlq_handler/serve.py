"""The program side of the external handler protocol (:mod:`adapters.dlq_handler.external`): the kit's own
handler served over stdin and stdout.

It is started once for every handler a case runs, so it imports no more than it serves with: the language
and the handler, not the adapters' client side (the protocol's schemas, the channel).
"""

from __future__ import annotations

import json
import sys

from reference_model import language as L


def serve(faults: frozenset[str] = frozenset(), stdin=sys.stdin, stdout=sys.stdout) -> int:
    """Serve the kit's own handler over the protocol (the program side)."""
    from adapters.dlq_handler.handler import DlqHandler

    def send(data: dict) -> None:
        stdout.write(json.dumps(data) + "\n")
        stdout.flush()

    def remote(op: L.Op) -> L.Observation:
        send({"op": L.to_json(op)})
        return L.from_json(json.loads(stdin.readline())["observation"])

    handler = None
    for line in stdin:
        command = json.loads(line)
        if command["cmd"] == "start":
            handler = DlqHandler(command["handler"], command["table"], remote, command["dead_q"], faults)
            obs = L.to_json(handler.start(command["clock"]))
            send({"result": {**obs, "queue": handler.queue}})
        elif command["cmd"] == "run":
            send({"result": {"status": handler.run(command["clock"]) if handler else "ENDED"}})
        elif command["cmd"] == "stop":
            if handler:
                handler.stop()
            send({"result": {}})
            return 0
    return 0
