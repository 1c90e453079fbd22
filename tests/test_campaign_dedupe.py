"""Which failures a campaign counts as one: pure functions over fingerprints."""

from conformance.records.identity import distinct_count, fingerprint, same_failure
from conformance.checker.sequential import Mismatch
from conformance.records.history import Failure


def failure(rules, fields, area="dlq"):
    mismatch = Mismatch(index=0, op=None, observed=None, allowed=(), fields=tuple(fields), rules=tuple(rules))
    return Failure(area=area, adapter="simulated", platform="distributed", seed=1, steps=(), mismatch=mismatch)


def test_field_names_are_taken_by_kind():
    assert fingerprint(failure(["DLQ-07"], ["attrs.M2"])) == fingerprint(failure(["DLQ-07"], ["attrs.M3", "attrs.M1"]))
    assert fingerprint(failure(["DLQ-07"], ["attrs.M2"])) != fingerprint(failure(["DLQ-07"], ["rc"]))


def test_one_deciding_rule_one_failure():
    a = fingerprint(failure(["DLQ-07", "DLQ-18", "DLQ-28"], ["attrs.M2"]))
    b = fingerprint(failure(["DLQ-07", "DLQ-17"], ["attrs.M3"]))
    c = fingerprint(failure(["DLQ-22", "DLQ-11"], ["attrs.M3"]))
    d = fingerprint(failure(["DLQ-07"], ["attrs.M3"], area="core"))
    assert same_failure(a, b) and same_failure(b, a)
    assert not same_failure(a, c) and not same_failure(a, d)
    assert distinct_count([a, b, a, c, d]) == 3
    assert distinct_count([]) == 0
