"""A protocol server for a queue manager without browse locks: the simulated queue manager, declining (with
``not_expressible`` and a reason) every get that asks for MQGMO_LOCK or MQGMO_UNLOCK."""

import sys

from adapters.simulated import SimulatedAdapter
from adapters.subprocess.serve import serve
from reference_model import language as L
from reference_model import mqconst as C


class NoLocks(SimulatedAdapter):
    def express(self, op):
        if isinstance(op, L.Get) and op.options & (C.MQGMO_LOCK | C.MQGMO_UNLOCK):
            return None
        return op


if __name__ == "__main__":
    sys.exit(serve(NoLocks(platform="distributed")))
