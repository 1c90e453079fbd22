"""A protocol server that states what its verdicts depend on (its ``depends_on`` capability): the simulated queue
manager, with a client setting and a piece of server code declared; with ``unknown-rule``, one naming a rule the
kit does not have."""

import sys

import attrs

from adapters.base import Dependency
from adapters.simulated import SimulatedAdapter
from adapters.subprocess.serve import serve

GLUE = (Dependency(kind="client setting", what="consumers pull (prefetch 0)", why="order is the queue's",
                   rules={"CORE-04", "CORE-05"}),
        Dependency(kind="adapter code", what="a blank MsgId replaced by the server", why="", rules={"CORE-11"}))


class WithGlue(SimulatedAdapter):
    def capabilities(self):
        return attrs.evolve(super().capabilities(), depends_on=GLUE)


if __name__ == "__main__":
    adapter = WithGlue(platform="distributed")
    if sys.argv[1:] == ["unknown-rule"]:
        import adapters.subprocess.serve as served

        plain = served.capabilities_json
        served.capabilities_json = lambda caps: {**plain(caps), "depends_on": [
            {"kind": "adapter code", "what": "x", "why": "", "rules": ["CORE-999"]}]}
    sys.exit(serve(adapter))
