"""``mqconform protocol check``: a server author's self-test of the JSON-lines protocol, before any run.

It passes on the kit's reference server, the Node.js example and a server that declines what its system
cannot express, each in seconds; on each of the hostile test servers it fails, naming the exact fault."""

from __future__ import annotations

import json
import shutil
import sys
import time
from pathlib import Path

import pytest

from conformance.tools.protocol_check import FAIL, NOT_RUN, PASS, check_server
from tests.clikit import run_cli

ROOT = Path(__file__).resolve().parent.parent
SERVERS = ROOT / "tests" / "data" / "servers"
REFERENCE = f"{sys.executable} -m adapters.simulated.serve"


def _check(command: str, *extra: str) -> tuple[int, dict]:
    code, out, err = run_cli("protocol", "check", "--command", command, "--format", "json", "--timeout", "3",
                             "--start-timeout", "5", *extra)
    assert code in (0, 1), err
    return code, json.loads(out)


def test_the_reference_server_passes_every_check_in_seconds():
    began = time.monotonic()
    code, report = _check(REFERENCE)
    assert code == 0 and report["passed"], [c for c in report["checks"] if c["result"] != PASS]
    names = [c["check"] for c in report["checks"]]
    # every operation type of the language was sent (the reference server declares them all), the edge cases, the
    # unknown method and the shutdown
    assert {"hello", "shutdown", "an unknown method is answered with an error"} <= set(names)
    assert any(n.startswith("edge-case arguments: a browse with a lock") for n in names)
    assert any(n.startswith("the nemesis: restart") for n in names)
    assert any(n.startswith("calls of the other areas: put to a cluster queue") for n in names)
    assert time.monotonic() - began < 30


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_the_node_example_passes_every_check():
    code, report = _check(f"node {ROOT / 'examples' / 'node-qm' / 'server.js'}")
    assert code == 0, [c for c in report["checks"] if c["result"] != PASS]
    # it declares the core area's operations only: nothing of the other areas is sent to it
    assert not any(c["check"].startswith("calls of the other areas") for c in report["checks"])


def test_a_server_that_declines_passes_and_each_decline_is_shown_with_its_reason():
    code, report = _check(f"{sys.executable} {SERVERS / 'declines_lock.py'}")
    assert code == 0
    lock = next(c for c in report["checks"] if c["check"] == "edge-case arguments: a browse with a lock")
    assert lock["result"] == PASS and lock["detail"].startswith("declined: ")


@pytest.mark.parametrize("mode, after, check, needle", [
    ("garbage", 3, "core calls: connect", "not JSON"),
    ("silent", 2, "core calls: alter a queue", "did not answer within 3s"),
    ("crash", 4, "core calls: connect a second time", "ended (exit status 7)"),
    ("wrong-types", 0, "core calls: define a queue", "is not of type 'integer'"),
    ("unknown-observation", 0, "core calls: define a queue", "invalid answer to execute"),
    ("text-before-hello", 0, "hello", "not JSON"),
    ("huge-line", 0, "core calls: define a queue", "longer than"),
    ("protocol-2", 0, "hello", "speaks protocol 2"),
    ("error", 1, "core calls: define a queue with attributes", "reported an error: the queue manager's log is full"),
    ("wrong-id", 0, "core calls: define a queue", "with id"),
    ("exit-at-hello", 0, "hello", "ended (exit status 3)"),
    ("omit-field", 0, "core calls: browse", "leaves out backout_count"),
])
def test_each_hostile_server_fails_at_its_fault_named_exactly(mode, after, check, needle):
    code, report = _check(f"{sys.executable} {SERVERS / 'misbehave.py'} {mode} --after {after}")
    assert code == 1 and not report["passed"]
    failed = [c for c in report["checks"] if c["result"] == FAIL]
    assert failed[0]["check"] == check and needle in failed[0]["detail"], failed[0]
    assert all(c["result"] == PASS for c in report["checks"][:report["checks"].index(failed[0])])
    if mode in ("garbage", "silent", "crash", "text-before-hello", "huge-line", "wrong-id", "exit-at-hello"):
        # the server stopped answering (or every answer after is another request's): nothing after is judged
        assert report["checks"][-1]["result"] == NOT_RUN and len(failed) == 1


def test_a_server_that_ignores_an_unknown_method_fails_that_check_alone():
    """misbehave.py answers every operation (its fault comes after 1000 of them) but no unknown method."""
    checks = check_server(f"{sys.executable} {SERVERS / 'misbehave.py'} error --after 1000", timeout=2)
    failed = [c for c in checks if c.result == FAIL]
    assert [c.name for c in failed] == ["an unknown method is answered with an error"]
    assert checks[-1].result == NOT_RUN   # the shutdown: the server may still answer the unknown method
    assert "did not answer within 2s" in failed[0].detail


def test_bad_input_is_one_line_and_exit_2():
    for command in ("", "   ", "'unclosed"):
        code, out, err = run_cli("protocol", "check", "--command", command)
        assert code == 2 and err.startswith("mqconform: error: --command") and err.count("\n") == 1, err
    code, out, err = run_cli("protocol", "check", "--command", REFERENCE, "--timeout", "0")
    assert code == 2 and err.count("\n") == 1


def test_a_server_that_cannot_start_fails_the_first_check(tmp_path):
    code, out, err = run_cli("protocol", "check", "--command", str(tmp_path / "no-such-server"))
    assert code == 1 and "cannot start server" in out and "0 of 1 checks passed" in out


def test_a_server_that_declares_a_lacking_field_may_leave_it_out():
    """The same omission as ``omit-field``, declared in capabilities.lacks: every check passes but the unknown
    method (misbehave.py answers none)."""
    checks = check_server(f"{sys.executable} {SERVERS / 'misbehave.py'} omit-field --lacks message.backout_count",
                          timeout=2)
    assert [c.name for c in checks if c.result == FAIL] == ["an unknown method is answered with an error"]
