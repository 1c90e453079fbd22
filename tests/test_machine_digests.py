"""A machine's digest (Hypothesis's example database key) is worked out once per machine class, not once per run:
the same digest Hypothesis gives, for every round's fresh bound subclass (conformance/runner/stable.py)."""

from __future__ import annotations

from hypothesis import stateful

from conformance.generator import MACHINES
from conformance.generator.base import bind
from conformance.runner import stable
from conformance.runner.stable import machine_digests_kept


def test_a_bound_machines_digest_is_hypothesiss_own_and_worked_out_once(monkeypatch):
    original, calls = stateful.function_digest, []

    def counted(function):
        calls.append(function)
        return original(function)

    monkeypatch.setattr(stateful, "function_digest", counted)
    monkeypatch.setattr(stable, "_DIGESTS", {})
    machines = sorted(set(MACHINES.values()), key=lambda m: m.__name__)
    assert len(machines) >= 6
    expected = {m: original(m) for m in machines}
    assert len(set(expected.values())) == len(machines)   # a key of its own for each machine
    with machine_digests_kept():
        for _ in range(3):   # three rounds, each on a fresh subclass bound to its session
            for m in machines:
                assert stateful.function_digest(bind(m, session=None)) == expected[m]
        closure = lambda: None  # noqa: E731 - not a class: worked out each time, as before
        stateful.function_digest(closure)
        stateful.function_digest(closure)
    assert stateful.function_digest is counted   # given back as it was
    assert sum(isinstance(c, type) for c in calls) == len(machines)
    assert calls.count(closure) == 2
