"""The ``simulated`` adapter: an in-process queue manager with injectable faults.

Options: ``faults=a,b`` (see ``mqconform faults``), ``platform=distributed|zos|any`` (default any:
the queue manager shows the platform each test case asks for).
"""

from __future__ import annotations

from adapters.base import AdapterOptionError, Capabilities, check_options, platform_option
from adapters.simulated.faults import FAULTS, parse_faults
from adapters.simulated.queue_manager import SimulatedQueueManager
from reference_model import language as L
from reference_model.rules import AREAS

#: Areas the simulated queue manager implements so far.
SIMULATED_AREAS = ("core", "syncpoint", "expiry", "trigger", "cluster")


class SimulatedAdapter:
    """In-process simulated queue manager with injectable faults (options: faults, platform)."""

    name = "simulated"

    def __init__(self, **options: str) -> None:
        check_options(self.name, options, {"faults", "platform"})
        self.platforms = platform_option(self.name, options)
        self.platform = self.platforms[0]
        try:
            self.faults = parse_faults(options.get("faults"))
        except ValueError as exc:
            raise AdapterOptionError(str(exc)) from None
        self.qm = SimulatedQueueManager(self.platform, self.faults)

    @staticmethod
    def fault_catalogue():
        return FAULTS

    def capabilities(self) -> Capabilities:
        return Capabilities(areas=[a for a in AREAS if a in SIMULATED_AREAS], platforms=self.platforms)

    def describe(self) -> dict:
        from conformance import __version__

        return {
            "system": "mqconform simulated queue manager",
            "version": __version__,
            "platforms": list(self.platforms),
            "faults": list(self.faults),
        }

    def start_case(self, case_id: str, platform: str | None = None) -> None:
        self.platform = platform or self.platforms[0]
        self.qm = SimulatedQueueManager(self.platform, self.faults)

    def execute(self, op: L.Op) -> L.Observation:
        return self.qm.execute(op)

    def end_case(self) -> None:
        pass

    def close(self) -> None:
        pass
