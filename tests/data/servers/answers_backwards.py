"""A protocol server that declares it takes calls at once and answers every two execute requests in the other
order than they came (the second first): what a concurrent server may do.  Each answer says which operation it
is for (an InquireQueue's CURDEPTH is the request's own id), so that the kit can be checked to hand each answer
to its caller.  Any other request is answered at once.

    python answers_backwards.py
"""

import json
import sys

CAPS = {"areas": ["core"], "platforms": ["distributed"], "concurrent": True}


def main() -> int:
    held = []
    for line in sys.stdin:
        request = json.loads(line)
        rid, method = request["id"], request["method"]
        if method == "execute":
            observation = {"type": "Observation", "cc": 0, "rc": 0, "message": None,
                           "attrs": [["CURDEPTH", rid]]}
            held.append({"id": rid, "result": {"observation": observation}})
            if len(held) == 2:
                for answer in reversed(held):
                    sys.stdout.write(json.dumps(answer) + "\n")
                sys.stdout.flush()
                held.clear()
            continue
        result = {"protocol": 1, "server": {"name": "backwards", "version": "1"}, "capabilities": CAPS} \
            if method == "hello" else {}
        sys.stdout.write(json.dumps({"id": rid, "result": result}) + "\n")
        sys.stdout.flush()
        if method == "shutdown":
            return 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
