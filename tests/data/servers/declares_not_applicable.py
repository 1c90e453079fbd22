"""A protocol server whose system declares rules not applicable in its hello: the simulated queue manager with
the faults given, declaring the rules given (``RULE=reason`` each) not applicable.

    python declares_not_applicable.py --faults priority-ignored CORE-04="no message priorities"
"""

import argparse
import sys

import attrs

from adapters.simulated import SimulatedAdapter
from adapters.subprocess.serve import serve


class Declaring(SimulatedAdapter):
    def __init__(self, declared: dict[str, str], **options) -> None:
        super().__init__(**options)
        self._declared = declared

    def capabilities(self):
        caps = super().capabilities()
        return attrs.evolve(caps, not_applicable={**caps.not_applicable, **self._declared})


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--faults", default="")
    parser.add_argument("declared", nargs="*", help="RULE=reason")
    args = parser.parse_args()
    declared = dict(d.split("=", 1) for d in args.declared)
    options = {"platform": "distributed", **({"faults": args.faults} if args.faults else {})}
    sys.exit(serve(Declaring(declared, **options)))
