"""The simulated queue manager behind the JSON-lines protocol: the reference server.

    python -m adapters.simulated.serve [--faults a,b] [--platform distributed|zos|any] [--dlq-handler CMD]
                                       [--call-ms MS]

The kit runs it with ``--adapter subprocess --adapter-opt command="python -m
adapters.simulated.serve"``; every area passes through it as in-process, and
every fault of ``mqconform faults`` is found through it.  It takes calls of several connections at once
(declared ``concurrent``), as the simulated queue manager does: ``mqconform run --concurrency`` runs through it.
"""

from __future__ import annotations

import argparse
import sys

from adapters.base import AdapterOptionError
from adapters.simulated import SimulatedAdapter
from adapters.subprocess.serve import serve


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m adapters.simulated.serve",
                                     description="serve the simulated queue manager over the kit's protocol")
    parser.add_argument("--faults", default="", help="faults to inject (see mqconform faults)")
    parser.add_argument("--platform", default="any")
    parser.add_argument("--dlq-handler", default="")
    parser.add_argument("--call-ms", default="", help="milliseconds each call holds the queue manager (default 0)")
    args = parser.parse_args(argv)
    options = {"platform": args.platform}
    if args.faults:
        options["faults"] = args.faults
    if args.dlq_handler:
        options["dlq-handler"] = args.dlq_handler
    if args.call_ms:
        options["call-ms"] = args.call_ms
    try:
        adapter = SimulatedAdapter(**options)
    except AdapterOptionError as exc:
        print(f"simulated server: {exc}", file=sys.stderr)
        return 2
    return serve(adapter)


if __name__ == "__main__":
    sys.exit(main())
