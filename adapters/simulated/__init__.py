"""The ``simulated`` adapter: an in-process queue manager with injectable faults.

Options: ``faults=a,b`` (see ``mqconform faults``), ``platform=distributed|zos|any`` (default any:
the queue manager shows the platform each test case asks for), ``dlq-handler=COMMAND`` (run this
program, speaking the protocol of :mod:`adapters.dlq_handler.external`, as the DLQ handler
instead of the kit's own), ``call-ms=N`` (each call takes N milliseconds more, holding the queue
manager, as a real one's take time: clients of a concurrent case then overlap; default 0).
"""

from __future__ import annotations

import shlex
import zlib

from adapters.base import AdapterOptionError, Capabilities, check_options, platform_option
from adapters.simulated.faults import FAULTS, parse_faults
from adapters.simulated.queue_manager import SimulatedQueueManager
from reference_model import language as L
from reference_model.rules import AREAS

#: Areas the simulated queue manager implements so far.
SIMULATED_AREAS = ("core", "syncpoint", "expiry", "trigger", "cluster", "dlq")


class SimulatedAdapter:
    """In-process simulated queue manager with injectable faults (options: faults, platform, dlq-handler)."""

    name = "simulated"
    #: Takes calls from several threads at once (``mqconform run --concurrency``): each call runs whole under the
    #: queue manager's lock, as a queue manager's calls are atomic (its race faults break that).
    concurrent_calls = True

    def __init__(self, **options: str) -> None:
        check_options(self.name, options, {"faults", "platform", "dlq-handler", "call-ms"})
        try:
            self.call_seconds = float(options.get("call-ms") or 0) / 1000
        except ValueError:
            raise AdapterOptionError(f"call-ms: a number of milliseconds, not {options['call-ms']!r}") from None
        if not 0 <= self.call_seconds <= 1:
            raise AdapterOptionError("call-ms: from 0 to 1000 milliseconds")
        self.platforms = platform_option(self.name, options)
        self.platform = self.platforms[0]
        try:
            self.faults = parse_faults(options.get("faults"))
        except ValueError as exc:
            raise AdapterOptionError(str(exc)) from None
        self.dlq_handler = None
        if options.get("dlq-handler"):
            try:
                self.dlq_handler = shlex.split(options["dlq-handler"])
            except ValueError as exc:
                raise AdapterOptionError(f"dlq-handler: {exc}") from None
            if not self.dlq_handler:
                raise AdapterOptionError("dlq-handler: empty command")
        self.qm = SimulatedQueueManager(self.platform, self.faults, self.dlq_handler)

    @staticmethod
    def fault_catalogue():
        return FAULTS

    def capabilities(self) -> Capabilities:
        return Capabilities(areas=[a for a in AREAS if a in SIMULATED_AREAS], platforms=self.platforms)

    def describe(self) -> dict:
        from reference_model.version import __version__

        return {
            "system": "mqconform simulated queue manager",
            "version": __version__,
            "platforms": list(self.platforms),
            "faults": list(self.faults),
            "dlq_handler": " ".join(self.dlq_handler) if self.dlq_handler else "mqconform (built in)",
        }

    def start_case(self, case_id: str, platform: str | None = None, concurrent: bool = False) -> None:
        # each call runs whole under the queue manager's lock whether or not the case is concurrent
        self.platform = platform or self.platforms[0]
        self.qm.close()
        self.qm = SimulatedQueueManager(self.platform, self.faults, self.dlq_handler,
                                        chance_seed=zlib.crc32(case_id.encode("utf-8", "surrogatepass")))

    def execute(self, op: L.Op) -> L.Observation:
        # (a slow call holds the queue manager while it lasts: another client's call waits)
        return self.qm.execute(op, hold=self.call_seconds)

    def end_case(self) -> None:
        self.qm.dlq.close()

    def close(self) -> None:
        self.qm.close()
