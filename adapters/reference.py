"""The ``reference`` adapter: the reference model itself, as a sanity baseline.

Where the model allows several outcomes it takes the first one, so a run
against it checks that the model is self-consistent and that the machines and
checker agree with it.
"""

from __future__ import annotations

import hashlib

from adapters.base import Capabilities, check_options, platform_option
from reference_model import language as L
from reference_model import model
from reference_model.rules import AREAS


class ReferenceAdapter:
    """The reference model itself, as a sanity baseline (option: platform)."""

    name = "reference"

    def __init__(self, **options: str) -> None:
        check_options(self.name, options, {"platform"})
        self.platforms = platform_option(self.name, options)
        self.platform = self.platforms[0]
        self.state = model.initial_state(self.platform)

    def capabilities(self) -> Capabilities:
        return Capabilities(areas=AREAS, platforms=self.platforms)

    def describe(self) -> dict:
        from reference_model.version import __version__

        return {"system": "mqconform reference model", "version": __version__,
                "platforms": list(self.platforms)}

    def start_case(self, case_id: str, platform: str | None = None) -> None:
        self.platform = platform or self.platforms[0]
        self.state = model.initial_state(self.platform)

    def execute(self, op: L.Op) -> L.Observation:
        branch = model.step(self.state, op)[0]
        self.state = branch.state
        return branch.observation if branch.observation.message is None else _concrete(branch.observation)

    def end_case(self) -> None:
        pass

    def close(self) -> None:
        pass


def _concrete(obs: L.Observation) -> L.Observation:
    """Fill the model's "any generated id" and ranges with a concrete value."""
    import attrs

    m = obs.message
    changes = {}
    if m.msg_id is None:
        # one of its own for each body (MQ's are unique; two bodies must never share one)
        changes["msg_id"] = "MODEL-" + hashlib.sha1(m.body.encode("utf-8", "surrogatepass")).hexdigest()
    if isinstance(m.expiry, L.IntRange):
        changes["expiry"] = m.expiry.hi
    if isinstance(m.backout_count, L.IntRange):
        changes["backout_count"] = m.backout_count.hi
    return attrs.evolve(obs, message=attrs.evolve(m, **changes)) if changes else obs
