"""queuelib behind mqconform's JSON-lines protocol: a real in-memory queue library, mapped honestly.

queuelib (PyPI, Scrapy's queues) has FIFO and priority queues of byte strings: push, pop, peek, len.  It has
no connections, handles, units of work, message descriptors, identifiers, delivery counts, expiry, browse
cursors or queue attributes.  This server makes, for each operation, queuelib's own call where there is one,
declines (``not_expressible``, with the reason) what queuelib cannot express, declares the fields it has no
value for (``lacks``), and states the little glue it adds (``depends_on``).  It never does what MQ would do and
queuelib does not: the kit's run then says, rule by rule, where queuelib's queues depart from MQ's.

    mqconform protocol check --command "python examples/queuelib-qm/server.py"
    mqconform run --adapter subprocess --adapter-opt command="python examples/queuelib-qm/server.py" --area core
"""

from __future__ import annotations

import json
import sys

from queuelib.pqueue import PriorityQueue
from queuelib.queue import FifoMemoryQueue

MQMDS_FIFO = 1
PUT_OPTIONS = {0, 4}              # MQPMO_NONE, MQPMO_NO_SYNCPOINT: a push, no unit of work
GET_PLAIN = {0, 4}                # a pop
BROWSE_FIRST = 16                 # a peek (queuelib has no cursor: no BROWSE_NEXT)
MQEI_UNLIMITED = -1

CAPABILITIES = {
    "areas": ["core"],
    "operations": ["DefineQueue", "InquireQueue", "Connect", "Disconnect", "Open", "Close", "Put", "Put1", "Get",
                   "AdvanceClock"],
    "lacks": ["message.backout_count", "attrs.IPPROCS", "attrs.OPPROCS"],
    "not_applicable": {
        "CORE-32": "queuelib's memory queues live in the server process: there is no queue manager to restart",
    },
    "depends_on": [
        {"kind": "adapter code", "what": "a queue is a FifoMemoryQueue (MSGDLVSQ(FIFO)) or a PriorityQueue of them; "
                                         "its other attributes (MAXDEPTH, DEFPRTY, GET, PUT, ...) are accepted and "
                                         "have no effect", "why": "queuelib queues have no attributes",
         "rules": ["CORE-04", "CORE-06"], "needed": True},
        {"kind": "adapter code", "what": "a message is pushed at its priority (MQPRI_PRIORITY_AS_Q_DEF at 0), and "
                                         "its descriptor is kept with its body and returned as it was put",
         "why": "queuelib keeps byte strings and needs a number to order them by", "rules": ["CORE-01", "CORE-04"],
         "needed": True},
    ],
}


class Server:
    def __init__(self) -> None:
        self.queues: dict[str, object] = {}
        self.handles: dict[str, str] = {}

    def start_case(self) -> None:
        self.queues.clear()
        self.handles.clear()

    # Each operation: an observation (cc, rc, message, attrs), or a reason it cannot be expressed.
    def execute(self, op: dict):
        kind = op["type"]
        if kind == "DefineQueue":
            attrs = dict(op["attrs"])
            if op["queue"] in self.queues:
                return 2, 4001, None, None   # MQRCCF_OBJECT_ALREADY_EXISTS: the server's name is taken
            fifo = attrs.get("MSGDLVSQ") == MQMDS_FIFO
            self.queues[op["queue"]] = FifoMemoryQueue() if fifo else PriorityQueue(lambda _: FifoMemoryQueue())
            return 0, 0, None, None
        if kind == "InquireQueue":
            other = [n for n in op["names"] if n not in ("CURDEPTH", "IPPROCS", "OPPROCS")]
            if other:
                return f"queuelib queues have no {', '.join(other)}"
            q = self.queues.get(op["queue"])
            if q is None:
                return 2, 2085, None, None   # MQRC_UNKNOWN_OBJECT_NAME
            return 0, 0, None, [["CURDEPTH", len(q)]]   # IPPROCS, OPPROCS: lacking
        if kind in ("Connect", "Disconnect", "Close", "AdvanceClock"):
            return 0, 0, None, None          # queuelib has no connections, handles or clock: nothing to do
        if kind == "Open":
            if op["queue"] not in self.queues:
                return 2, 2085, None, None
            self.handles[op["handle"]] = op["queue"]
            return 0, 0, None, None
        if kind in ("Put", "Put1"):
            md = op["md"]
            if op["options"] not in PUT_OPTIONS:
                return "queuelib has no units of work or put options"
            if md["expiry"] != MQEI_UNLIMITED:
                return "queuelib messages do not expire"
            name = op["queue"] if kind == "Put1" else self.handles.get(op["handle"])
            q = self.queues.get(name)
            if q is None:
                return 2, 2085 if kind == "Put1" else 2019, None, None
            data = json.dumps({"body": op["body"], "md": md})
            if isinstance(q, PriorityQueue):
                q.push(data.encode(), -max(md["priority"], 0))   # queuelib pops the lowest number first
            else:
                q.push(data.encode())
            return 0, 0, None, None
        if kind == "Get":
            options, wait = op["options"], op["options"] & 1
            if wait:
                return "queuelib cannot wait for a message"
            browse = options == BROWSE_FIRST or options == BROWSE_FIRST | 4
            if not browse and options not in GET_PLAIN:
                return "queuelib has no units of work, browse cursors or locks (only a pop, or a peek at the head)"
            q = self.queues.get(self.handles.get(op["handle"], ""))
            if q is None:
                return 2, 2019, None, None   # MQRC_HOBJ_ERROR
            data = q.peek() if browse else q.pop()
            if data is None:
                return 2, 2033, None, None   # MQRC_NO_MSG_AVAILABLE
            stored = json.loads(data)
            return 0, 0, returned(stored), None
        return f"queuelib has no {kind}"


def returned(stored: dict) -> dict:
    md = stored["md"]
    return {"type": "ReturnedMessage", "body": stored["body"], "priority": md["priority"],
            "persistence": md["persistence"], "expiry": MQEI_UNLIMITED, "report": md["report"],
            "msg_type": md["msg_type"], "feedback": md["feedback"], "format": md["format"],
            "reply_to_q": md["reply_to_q"], "reply_to_qmgr": md["reply_to_qmgr"], "msg_id": md["msg_id"],
            "correl_id": md["correl_id"], "xmit_header": None, "trigger": None, "context": md["context"],
            "dlh": None, "segment_status": " ", "offset": 0}


def main() -> int:
    server = Server()
    out = sys.stdout
    for line in sys.stdin:
        request = json.loads(line)
        rid, method, params = request.get("id"), request.get("method"), request.get("params") or {}
        try:
            if method == "hello":
                result = {"protocol": 1, "server": {"name": "queuelib", "version": _version()},
                          "capabilities": CAPABILITIES}
            elif method == "start_case":
                server.start_case()
                result = {}
            elif method == "execute":
                answer = server.execute(params["op"])
                if isinstance(answer, str):
                    result = {"not_expressible": answer}
                else:
                    cc, rc, message, attrs = answer
                    result = {"observation": {"type": "Observation", "cc": cc, "rc": rc, "message": message,
                                              "attrs": attrs}}
            elif method in ("end_case", "shutdown"):
                result = {}
            else:
                raise ValueError(f"unknown method {method!r}")
        except Exception as exc:  # noqa: BLE001 - the server's own failure, reported as such
            print(f"{type(exc).__name__}: {exc}", file=sys.stderr)
            out.write(json.dumps({"id": rid, "error": {"message": f"{type(exc).__name__}: {exc}"}}) + "\n")
            out.flush()
            continue
        out.write(json.dumps({"id": rid, "result": result}) + "\n")
        out.flush()
        if method == "shutdown":
            return 0
    return 0


def _version() -> str:
    from importlib.metadata import version

    return f"queuelib {version('queuelib')}"


if __name__ == "__main__":
    sys.exit(main())
