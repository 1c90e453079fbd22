"""A system with no value for a field of its answers says so (capabilities.lacks): the field is never compared, the
rules about it alone are not applicable with that reason, and a field left out without being declared lacking is
a protocol error naming it, never read as MQ's default."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from adapters.base import LACKABLE, Capabilities
from conformance.checker.sequential import differing_fields
from reference_model import language as L
from tests.clikit import run_cli

SERVER = Path(__file__).resolve().parent / "data" / "servers" / "misbehave.py"


def _verdicts(results: Path) -> dict[str, dict]:
    return {row["rule"]: row for row in map(json.loads, (results / "rules.jsonl").read_text().splitlines())}


def test_a_count_the_system_does_not_keep_is_not_compared_and_its_rules_are_not_applicable(tmp_path):
    command = f"{sys.executable} {SERVER} omit-field --lacks message.backout_count"
    code, out, err = run_cli("run", "--adapter", "subprocess", "--adapter-opt", f"command={command}", "--area", "core",
                             "--examples", "30", "--seed", "7", "--results", tmp_path / "r")
    assert code == 0, out[-2000:] + err
    rows = _verdicts(tmp_path / "r")
    for rule in LACKABLE["message.backout_count"]:
        if rule in rows and rows[rule]["area"] == "core" and rule != "SYNC-19":
            assert rows[rule]["verdict"] == "not applicable", (rule, rows[rule]["verdict"])
            assert "no message.backout_count (declared lacking)" in rows[rule]["not_applicable"]
    assert rows["CORE-15"]["verdict"] == "pass"   # the backout's reinstating is still judged, its count is not
    run = json.loads((tmp_path / "r" / "run.json").read_text())
    assert run["capabilities"]["lacks"] == ["message.backout_count"]


def test_a_field_left_out_without_being_declared_lacking_is_a_protocol_error_naming_it(tmp_path):
    command = f"{sys.executable} {SERVER} omit-field"
    code, out, err = run_cli("run", "--adapter", "subprocess", "--adapter-opt", f"command={command}", "--area", "core",
                             "--examples", "30", "--seed", "7", "--results", tmp_path / "r")
    assert code == 2 and "leaves out backout_count" in err and "capabilities.lacks" in err, err
    assert "Traceback" not in out + err


def test_only_the_fields_the_kit_knows_how_to_leave_uncompared_may_be_lacking():
    assert Capabilities(areas={"core"}, lacks={"message.backout_count"}).with_lacks().not_applicable["CORE-17"]
    with pytest.raises(ValueError, match="may lack only"):
        Capabilities(areas={"core"}, lacks={"message.body"})
    code, out, err = run_cli("run", "--adapter", "subprocess", "--adapter-opt",
                             f"command={sys.executable} {SERVER} omit-field --lacks message.body", "--area", "core")
    assert code == 2 and "lacks" in err and err.count("\n") == 1, err


def test_a_null_the_system_answers_for_a_lacking_field_matches_any_value_mq_gives():
    want = L.Observation(message=L.ReturnedMessage(body="m", priority=0, persistence=0, msg_id="X", backout_count=1,
                                                   expiry=20))
    lacking = L.Observation(message=L.ReturnedMessage(body="m", priority=0, persistence=0, msg_id="X",
                                                      backout_count=None, expiry=None))
    assert differing_fields(want, lacking) == []
    wrong = L.Observation(message=L.ReturnedMessage(body="m", priority=0, persistence=0, msg_id="X", backout_count=0,
                                                    expiry=20))
    assert differing_fields(want, wrong) == ["message.backout_count"]
    depth = L.Observation(attrs=(("CURDEPTH", 3), ("IPPROCS", 1)))
    assert differing_fields(depth, L.Observation(attrs=(("CURDEPTH", None), ("IPPROCS", 1)))) == []
    assert differing_fields(depth, L.Observation(attrs=(("CURDEPTH", 2), ("IPPROCS", 1)))) == ["attrs.CURDEPTH"]
    # the JSON form keeps the null (a replay file says the system returned none)
    assert L.from_json(L.to_json(lacking)) == lacking
