"""The ``simulated`` adapter: an in-process queue manager with injectable faults.

Options: ``faults=a,b`` (see ``mqconform faults``), ``platform=distributed|zos``.
"""

from __future__ import annotations

from adapters.base import AdapterOptionError, Capabilities, check_options, platform_option
from adapters.simulated.faults import FAULTS, parse_faults
from adapters.simulated.queue_manager import SimulatedQueueManager
from reference_model import language as L
from reference_model.rules import AREAS

#: Areas the simulated queue manager implements so far.
SIMULATED_AREAS = ("core",)


class SimulatedAdapter:
    """In-process simulated queue manager with injectable faults (options: faults, platform)."""

    name = "simulated"

    def __init__(self, **options: str) -> None:
        check_options(self.name, options, {"faults", "platform"})
        self.platform = platform_option(self.name, options)
        try:
            self.faults = parse_faults(options.get("faults"))
        except ValueError as exc:
            raise AdapterOptionError(str(exc)) from None
        self.qm = SimulatedQueueManager(self.platform, self.faults)

    @staticmethod
    def fault_catalogue():
        return FAULTS

    def capabilities(self) -> Capabilities:
        return Capabilities(areas=[a for a in AREAS if a in SIMULATED_AREAS], platform=self.platform)

    def describe(self) -> dict:
        from conformance import __version__

        return {
            "system": "mqconform simulated queue manager",
            "version": __version__,
            "platform": self.platform,
            "faults": list(self.faults),
        }

    def start_case(self, case_id: str) -> None:
        self.qm = SimulatedQueueManager(self.platform, self.faults)

    def execute(self, op: L.Op) -> L.Observation:
        return self.qm.execute(op)

    def end_case(self) -> None:
        pass

    def close(self) -> None:
        pass
