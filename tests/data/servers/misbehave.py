"""A protocol server that serves the simulated queue manager correctly, then misbehaves on purpose.

    python misbehave.py MODE [--after N] [--pidfile PATH]

It answers the first N execute requests properly, then does MODE on the next
request (before the handshake for the modes that concern it).  With ``--lacks FIELD`` it declares a field its
system has no value for (``omit-field --lacks message.backout_count`` is then an honest server).
"""

import argparse
import json
import os
import sys
import time

from adapters.simulated import SimulatedAdapter
from adapters.subprocess.serve import capabilities_json
from reference_model import language as L

MODES = ("garbage", "silent", "crash", "wrong-types", "unknown-observation", "text-before-hello", "huge-line",
         "protocol-2", "error", "wrong-id", "exit-at-hello", "omit-field")


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=MODES)
    parser.add_argument("--after", type=int, default=0)
    parser.add_argument("--pidfile")
    parser.add_argument("--lacks", action="append", default=[],
                        help="declare a field the system has no value for (capabilities.lacks)")
    args = parser.parse_args()
    if args.pidfile:
        with open(args.pidfile, "w") as f:
            f.write(str(os.getpid()))
    out = sys.stdout
    adapter = SimulatedAdapter(platform="distributed")
    executed = 0

    def send(message):
        out.write(json.dumps(message) + "\n")
        out.flush()

    if args.mode == "text-before-hello":
        out.write("Starting the queue manager, please wait...\n")
        out.flush()
    for line in sys.stdin:
        request = json.loads(line)
        rid, method, params = request["id"], request["method"], request.get("params", {})
        if method == "hello":
            if args.mode == "exit-at-hello":
                print("cannot open the queue manager's data directory", file=sys.stderr)
                return 3
            caps = {**capabilities_json(adapter.capabilities()), **({"lacks": args.lacks} if args.lacks else {})}
            send({"id": rid, "result": {"protocol": 2 if args.mode == "protocol-2" else 1,
                                        "server": {"name": f"misbehaving ({args.mode})", "version": "0"},
                                        "capabilities": caps}})
        elif method == "start_case":
            adapter.start_case(params["case"], params["platform"])
            send({"id": rid, "result": {}})
        elif method == "end_case":
            adapter.end_case()
            send({"id": rid, "result": {}})
        elif method == "shutdown":
            send({"id": rid, "result": {}})
            return 0
        elif method == "execute":
            observation = L.to_json(adapter.execute(L.from_json(params["op"])))
            executed += 1
            if executed <= args.after:
                send({"id": rid, "result": {"observation": observation}})
                continue
            mode = args.mode
            if mode == "garbage":
                out.write("\x00\x01 segfault at 0x0 ???\n")
                out.flush()
            elif mode == "silent":
                time.sleep(3600)
            elif mode == "crash":
                os._exit(7)
            elif mode == "wrong-types":
                send({"id": rid, "result": {"observation": {**observation, "cc": str(observation["cc"])}}})
            elif mode == "unknown-observation":
                send({"id": rid, "result": {"observation": {"type": "Answer", "cc": 0}}})
            elif mode == "huge-line":
                # written whole by the descriptor: a write the text layer hands on in one piece can end part way
                # when a signal interrupts it (a profiler attaching), and a shorter line is not the fault meant
                line = b'{"id": %d, "result": {"observation": {"type": "Observation", "pad": "%s"}}}\n' % (
                    rid, b"x" * (50 * 1024 * 1024))
                out.flush()
                view = memoryview(line)
                while view:
                    view = view[os.write(out.fileno(), view):]
            elif mode == "error":
                send({"id": rid, "error": {"message": "the queue manager's log is full"}})
            elif mode == "wrong-id":
                send({"id": rid + 1, "result": {"observation": observation}})
            elif mode == "omit-field" and observation.get("message"):
                # a returned message without its BackoutCount (valid by the schema: the field has a default)
                message = {k: v for k, v in observation["message"].items() if k != "backout_count"}
                send({"id": rid, "result": {"observation": {**observation, "message": message}}})
            else:
                send({"id": rid, "result": {"observation": observation}})
    return 0


if __name__ == "__main__":
    sys.exit(main())
