"""A protocol server that declares it can execute AdvanceClock only: cases run, nothing can be checked."""

import sys

import attrs

from adapters.simulated import SimulatedAdapter
from adapters.subprocess.serve import serve


class ClockOnly(SimulatedAdapter):
    def capabilities(self):
        return attrs.evolve(super().capabilities(), operations=frozenset({"AdvanceClock"}))


if __name__ == "__main__":
    sys.exit(serve(ClockOnly(platform="distributed")))
