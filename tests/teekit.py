"""Two systems run as one, step for step: the simulated queue manager in process and the same queue manager
behind the JSON-lines protocol (``python -m adapters.simulated.serve``), each operation sent to both.

The kit judges what the in-process one answers; the first operation the protocol answers otherwise (another
observation, declined where the other ran it, expressed otherwise) stops the run with an AdapterError that
names the step and both answers (the run then errs: no verdict).  A run of it is
the in-process run, with proof that a run through the protocol would have made the same choices at every
step, and so come to the same verdicts and counterexamples: the kit's choices depend on nothing else.
"""

from __future__ import annotations

import shlex
import sys

from adapters.base import AdapterError, NotExpressible
from adapters.simulated import SimulatedAdapter
from adapters.subprocess import SubprocessAdapter
from reference_model import language as L


class ProtocolDiffers(AdapterError):
    """The protocol carried another answer than the queue manager behind it gave in process."""


class TeeAdapter:
    """Options: ``faults`` (both queue managers' faults), ``outside-faults`` (the served one's instead: a
    protocol that carries other answers, for the tests of this comparison)."""

    name = "tee"

    def __init__(self, **options: str) -> None:
        faults = options.get("faults", "")
        self.inside = SimulatedAdapter(**({"faults": faults} if faults else {}))
        outside = options.get("outside-faults", faults)
        command = [sys.executable, "-m", "adapters.simulated.serve", *(["--faults", outside] if outside else [])]
        self.outside = SubprocessAdapter(command=shlex.join(command))
        #: The steps of the case so far (the one that differs is named by its number).
        self.steps = 0
        # judged as a run through the protocol is: with what the server declared (the system's own declaration)
        ours, theirs = self.inside.capabilities().to_json(), self.outside.capabilities().to_json()
        if ours != {k: v for k, v in theirs.items() if k != "declared_by_system"}:
            self.outside.close()
            raise ProtocolDiffers(f"capabilities through the protocol {theirs} are not those in process {ours}")

    def capabilities(self):
        return self.outside.capabilities()

    def describe(self) -> dict:
        return {**self.inside.describe(), "through": self.outside.describe()}

    def start_case(self, case_id: str, platform: str | None = None) -> None:
        self.steps = 0
        self.inside.start_case(case_id, platform)
        self.outside.start_case(case_id, platform)

    def _differs(self, op: L.Op, what: str) -> ProtocolDiffers:
        return ProtocolDiffers(f"step {self.steps} of the case ({type(op).__name__}) answered otherwise through "
                               f"the protocol than in process: {what}")

    def express(self, op: L.Op) -> L.Op | None:
        theirs = self.outside.express(op)
        if theirs != op:
            self.steps += 1
            raise self._differs(op, f"expressed as {theirs!r}, not as {op!r}")
        return op

    def execute(self, op: L.Op) -> L.Observation:
        self.steps += 1
        ours = self.inside.execute(op)
        try:
            theirs = self.outside.execute(op)
        except NotExpressible as exc:
            raise self._differs(op, f"declined ({exc}), where in process {ours!r}") from None
        if theirs != ours:
            raise self._differs(op, f"{theirs!r}, where in process {ours!r}")
        return ours

    def end_case(self) -> None:
        self.inside.end_case()
        self.outside.end_case()

    def close(self) -> None:
        try:
            self.inside.close()
        finally:
            self.outside.close()
