"""A protocol server that takes part in every area but cannot run a DLQ handler: the dlq area's cases run,
and none of them reaches a rule of the area."""

import sys

import attrs

from adapters.simulated import SimulatedAdapter
from adapters.subprocess.serve import serve
from reference_model import language as L

HANDLER_OPERATIONS = {"StartDlqHandler", "ChangeDlqTable", "RestartDlqHandler", "RunDlqHandler"}


class NoHandler(SimulatedAdapter):
    def capabilities(self):
        every = {cls.__name__ for cls in L.Op.__subclasses__()}
        return attrs.evolve(super().capabilities(), operations=frozenset(every - HANDLER_OPERATIONS))


if __name__ == "__main__":
    sys.exit(serve(NoHandler(platform="distributed")))
