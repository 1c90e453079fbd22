"""A replay file is checked first by a compiled schema check, and by the slower one that words the error only when
that refuses it: the two must accept exactly the same files, or a file the kit would refuse could be judged."""

from __future__ import annotations

import copy
import json
from pathlib import Path

from jsonschema import Draft7Validator
from referencing import Registry, Resource

from conformance.records import history
from reference_model.language_schema import language_schema

ROOT = Path(__file__).resolve().parent.parent
#: Published counterexamples: one of an expiry area's, one of a nemesis run's.
FILES = [next((ROOT / "docs" / "compliance" / "results" / d / "failures").glob(pattern))
         for d, pattern in (("activemq", "expiry-*.json"), ("rabbitmq-nemesis", "core-*.json"))]


def _full_check_accepts(data) -> bool:
    language = language_schema()
    registry = Registry().with_resource(language["$id"], Resource.from_contents(language))
    return not any(True for _ in Draft7Validator(history._replay_schema(), registry=registry).iter_errors(data))


def _fast_check_accepts(data) -> bool:
    import fastjsonschema

    try:
        history._fast_replay_check()(data)
        return True
    except fastjsonschema.JsonSchemaException:
        return False


def _edits(data: dict):
    """The file with one thing changed: a field of an operation, an observation or the mismatch removed, given
    another type or an unknown value, an unknown field added, an operation of another type."""
    for where in ("op", "observed"):
        term = data["steps"][0][where]
        for key in term:
            for value in (None, "x", -1, {"type": "Nothing"}):
                edited = copy.deepcopy(data)
                edited["steps"][0][where][key] = value
                yield edited
            edited = copy.deepcopy(data)
            del edited["steps"][0][where][key]
            yield edited
        edited = copy.deepcopy(data)
        edited["steps"][0][where]["no_such_field"] = 1
        yield edited
    for key, value in (("platform", "windows"), ("area", "nothing"), ("steps", []), ("version", 99),
                       ("rules", ["core-1"]), ("seed", "seven")):
        edited = copy.deepcopy(data)
        edited[key] = value
        yield edited
    for key in ("index", "rules", "op"):
        edited = copy.deepcopy(data)
        del edited["mismatch"][key]
        yield edited


def test_the_fast_check_accepts_exactly_the_files_the_full_check_accepts():
    assert len(FILES) == 2
    checked = refused = 0
    for path in FILES:
        data = json.loads(path.read_text())
        assert _fast_check_accepts(data) and _full_check_accepts(data), path
        assert history.replay_problem(data) is None, path
        for edited in _edits(data):
            fast, full = _fast_check_accepts(edited), _full_check_accepts(edited)
            assert fast == full, (path.name, fast, full, edited["steps"][0])
            checked += 1
            refused += not full
            if not full:   # refused, and said why in one line
                why = history.replay_problem(edited)
                assert why and "\n" not in why, why
    assert checked > 100 and refused > 50
