"""Coverage adds the steps that matched to its counters when they are read: the counts are those
of adding each step as it comes, however the steps share their tuples and whenever they are read."""

import copy
import pickle
import random
from collections import Counter

from conformance.checker.sequential import Mismatch, StepCheck
from conformance.records.results import Coverage
from reference_model import language as L

RULES = ("CORE-01", "CORE-02", "TRIG-03", "EXP-04", "DLQ-05", "SYNC-06")


def _checks(rng: random.Random, n: int) -> list[StepCheck]:
    shared = [tuple(rng.sample(RULES, rng.randint(0, 4))) for _ in range(5)]
    classes = [tuple(f"{r}:c{rng.randint(0, 2)}" for r in rules) for rules in shared]
    out = []
    for i in range(n):
        k = rng.randrange(len(shared))
        # the same tuple object (as the memo gives), an equal one made anew, or another
        rules = shared[k] if rng.random() < 0.6 else tuple(list(shared[k]))
        kind = rng.random()
        if kind < 0.8:
            out.append(StepCheck(index=i, rules=rules, classes=classes[k]))
        elif kind < 0.9:
            out.append(StepCheck(index=i, rules=rules, in_doubt=True, decided=rules[:1]))
        else:
            mismatch = Mismatch(index=i, op=L.Connect(conn="c"), observed=L.OK, allowed=(), fields=("rc",),
                                rules=rules)
            out.append(StepCheck(index=i, rules=rules, mismatch=mismatch))
    return out


def _eager(checks) -> dict[str, Counter]:
    want = {name: Counter() for name in ("exercised", "checked", "indeterminate", "classes")}
    for c in checks:
        want["exercised"].update(c.rules + c.decided)
        want["checked"].update(c.decided)
        if c.in_doubt:
            want["indeterminate"].update(c.rules)
        elif c.mismatch is None:
            want["checked"].update(c.rules)
            want["classes"].update(c.classes)
    return want


def _counts(coverage: Coverage) -> dict[str, Counter]:
    return {name: +getattr(coverage, name) for name in ("exercised", "checked", "indeterminate", "classes")}


def test_counts_are_those_of_adding_each_step_whenever_they_are_read():
    for seed in range(20):
        rng = random.Random(seed)
        checks = _checks(rng, 300)
        coverage = Coverage()
        for i, check in enumerate(checks):
            coverage.record(check)
            if rng.random() < 0.05:
                assert _counts(coverage) == {k: +v for k, v in _eager(checks[:i + 1]).items()}
        assert _counts(coverage) == {k: +v for k, v in _eager(checks).items()}
        assert coverage.steps == len(checks)
        assert Coverage.from_json(coverage.to_json()).to_json() == coverage.to_json()


def test_a_copy_counts_on_as_the_original():
    rng = random.Random(3)
    checks = _checks(rng, 400)
    coverage = Coverage()
    for check in checks[:200]:
        coverage.record(check)
    # steps still pending are carried by a copy (as a Spark task's coverage is), and each counts on
    for other in (pickle.loads(pickle.dumps(coverage)), copy.deepcopy(coverage)):
        for check in checks[200:]:
            other.record(check)
        assert _counts(other) == {k: +v for k, v in _eager(checks).items()}
    merged = Coverage()
    merged.merge(coverage)
    merged.merge(coverage)
    assert +merged.checked == Counter({k: 2 * v for k, v in _eager(checks[:200])["checked"].items() if v})
