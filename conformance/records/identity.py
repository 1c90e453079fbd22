"""What makes two failures one, and how many distinct ones a collection holds: the identity a campaign
deduplicates its tasks' failures by, and that reports count them by."""

from __future__ import annotations

from conformance.records.history import Failure


def fingerprint(failure: Failure) -> str:
    """What makes two failures one: the area, the rules broken and the fields of the observation that
    differed.  It is known before shrinking, so a failure met again is not shrunk again; of the
    counterexamples with one fingerprint the campaign keeps the smallest.  A field is taken by its
    kind, not by the queue or message it names (``attrs.M2`` and ``attrs.M3`` are one kind): the same
    departure met on another object is the same failure."""
    kinds = sorted({_field_kind(f) for f in failure.mismatch.fields})
    return f"{failure.area}|{'+'.join(failure.rules)}|{'+'.join(kinds)}"


def same_failure(a: str, b: str) -> bool:
    """Two fingerprints are one failure when area and field kinds agree and the rule that decides one
    (its first) is among the other's rules: the same departure, met where the model names other rules
    beside it for the value observed (a rules-table line that matched, a rescan still to come), is not
    a second failure."""
    area_a, rules_a, kinds_a = a.split("|")
    area_b, rules_b, kinds_b = b.split("|")
    if (area_a, kinds_a) != (area_b, kinds_b):
        return False
    ra, rb = rules_a.split("+"), rules_b.split("+")
    return ra[0] in rb or rb[0] in ra


def known_as(fp: str, known) -> str | None:
    """The fingerprint in ``known`` that ``fp`` is the same failure as, if any."""
    return next((k for k in known if same_failure(fp, k)), None)


def distinct_count(prints) -> int:
    """How many distinct failures a sequence of fingerprints holds."""
    seen: list[str] = []
    for fp in prints:
        if known_as(fp, seen) is None:
            seen.append(fp)
    return len(seen)


def _field_kind(field: str) -> str:
    head, dot, _name = field.partition(".")
    return f"{head}.*" if dot and head == "attrs" else field
