"""A session drives one adapter through test cases, checking every step against the model."""

from __future__ import annotations

import itertools
import uuid

from adapters.base import Adapter, AdapterError
from conformance.checker import Mismatch, ModelTracker
from conformance.history import Failure, Step
from conformance.results import Coverage
from reference_model import language as L
from reference_model.cluster import share_expectation


class NonConformance(AssertionError):
    """Raised inside a machine when the system under test broke a rule."""

    def __init__(self, failure: Failure) -> None:
        from conformance.render import render_failure

        super().__init__(render_failure(failure))
        self.failure = failure


class HarnessError(RuntimeError):
    """The adapter or the system under test failed; not a conformance verdict."""


class Session:
    """Executes operations on an adapter and checks each observation against the model."""

    def __init__(self, adapter: Adapter, area: str, adapter_options: dict | None = None,
                 seed: int | None = None, coverage: Coverage | None = None,
                 platform: str | None = None) -> None:
        self.adapter = adapter
        self.area = area
        self.adapter_options = {k: v for k, v in (adapter_options or {}).items() if not _secret(k)}
        self.seed = seed
        self.capabilities = adapter.capabilities()
        self.platform = platform or self.capabilities.platform
        self.coverage = coverage if coverage is not None else Coverage()
        self._prefix = uuid.uuid4().hex[:6]
        self._cases = itertools.count(1)
        self.tracker: ModelTracker | None = None
        self.history: list[Step] = []

    def start_case(self) -> None:
        self.coverage.examples += 1
        self.tracker = ModelTracker(self.platform, expiry_tolerance=self.capabilities.expiry_tolerance)
        self.history = []
        try:
            self.adapter.start_case(f"{self._prefix}{next(self._cases)}", self.platform)
        except AdapterError as exc:
            raise HarnessError(f"adapter {self.adapter.name!r}: {exc}") from exc

    def end_case(self) -> None:
        try:
            self.adapter.end_case()
        except AdapterError as exc:
            raise HarnessError(f"adapter {self.adapter.name!r}: {exc}") from exc

    def execute(self, op: L.Op) -> L.Observation:
        assert self.tracker is not None, "start_case() first"
        expected_shares = None
        if isinstance(op, L.ClusterPut) and self.tracker.candidates:
            expected_shares = share_expectation(self.tracker.candidates[0], op)
        try:
            observed = self.adapter.execute(op)
        except AdapterError as exc:
            raise HarnessError(f"adapter {self.adapter.name!r}: {exc}") from exc
        check = self.tracker.advance(op, observed)
        if expected_shares and check.mismatch is None:
            self.coverage.record_share(dict(observed.attrs or ()).get("DESTINATION", ""), expected_shares)
        self.history.append(Step(op=op, observed=observed))
        self.coverage.record(check)
        if check.mismatch is not None:
            raise NonConformance(self.failure(check.mismatch))
        return observed

    def failure(self, mismatch: Mismatch) -> Failure:
        return Failure(
            area=self.area, adapter=self.adapter.name, adapter_options=self.adapter_options,
            platform=self.platform, seed=self.seed, steps=tuple(self.history), mismatch=mismatch,
        )


def _secret(key: str) -> bool:
    k = key.lower()
    return any(word in k for word in ("password", "passcode", "secret", "token", "credential"))
