"""The JSON-lines adapter protocol: the reference server, its schemas, and servers that misbehave."""

import json
import sys
from pathlib import Path

import psutil
import pytest

from adapters.simulated.faults import FAULTS
from adapters.subprocess import schemas
from tests.clikit import run_cli
from tests.faultkit import fault_run_args, platform_of, seed_of

ROOT = Path(__file__).resolve().parent.parent
SERVER = f"{sys.executable} -m adapters.simulated.serve"
MISBEHAVE = ROOT / "tests" / "data" / "servers" / "misbehave.py"


def _rows(directory: Path) -> dict:
    return {r["rule"]: r for r in map(json.loads, (directory / "rules.jsonl").read_text().splitlines())}


def _subprocess(command: str, *argv) -> tuple[int, str, str]:
    return run_cli("run", "--adapter", "subprocess", "--adapter-opt", f"command={command}", *argv)


@pytest.fixture
def check_requests(monkeypatch):
    """The reference server validates every request the kit sends against its schema."""
    monkeypatch.setenv("MQCONFORM_CHECK_REQUESTS", "1")


def test_every_area_through_the_reference_server_gives_the_in_process_verdicts(tmp_path, check_requests):
    args = ("--examples", "8", "--seed", "3")
    code, out, err = _subprocess(SERVER, *args, "--results", tmp_path / "sub")
    assert code == 0, out + err
    assert run_cli("run", "--adapter", "simulated", *args, "--results", tmp_path / "in")[0] == 0
    sub, inproc = _rows(tmp_path / "sub"), _rows(tmp_path / "in")
    assert sub == inproc   # same verdicts, same counts of exercise, rule by rule
    assert {r["verdict"] for r in sub.values()} >= {"pass"}
    meta = json.loads((tmp_path / "sub" / "run.json").read_text())
    assert meta["system"]["system"] == "mqconform simulated queue manager"
    assert meta["system"]["protocol"] == schemas.PROTOCOL
    assert (tmp_path / "sub" / "server.log").exists()


#: Two faults per area, among those the in-process run finds fastest, so that the suite can afford them.
SAMPLE = ("get-inhibit-ignored", "priority-ignored", "mark-reinstated-on-backout", "rrs-mark-allowed",
          "expiry-zero-accepted", "expiry-not-decremented", "trigger-message-expires", "depth-off-by-one",
          "put-disabled-chosen", "local-not-preferred", "dlq-no-dlh-processed", "dlq-format-not-restored")


@pytest.mark.parametrize("fault", SAMPLE)
def test_a_fault_is_found_through_the_server_with_the_in_process_counterexample(fault, tmp_path):
    """The fault's run as ``tests/test_faults.py`` makes it (its seed, its platform), once in process and once with
    the simulated queue manager behind the reference server: the same counterexamples, step for step."""
    spec = FAULTS[fault]
    code, out, _ = run_cli(*fault_run_args(fault, seed_of(fault), str(tmp_path / "in")))
    assert code == 1, out
    code, out, err = _subprocess(f"{SERVER} --faults {fault} --platform {platform_of(fault) or 'any'}",
                                 "--adapter-opt", "timeout=30", "--area", spec.area, "--seed", seed_of(fault),
                                 "--keep-going", "0", "--results", tmp_path / "sub")
    assert code == 1, out + err
    sub = {p.name: json.loads(p.read_text()) for p in (tmp_path / "sub" / "failures").glob("*.json")}
    inproc = {p.name: json.loads(p.read_text()) for p in (tmp_path / "in" / "failures").glob("*.json")}
    assert sub and sorted(sub) == sorted(inproc)
    for name in sub:
        assert sub[name]["steps"] == inproc[name]["steps"], name
        assert set(sub[name]["rules"]) & set(spec.rules)


MISBEHAVIOURS = {
    "garbage": "wrote a line that is not JSON",
    "silent": "did not answer within 2s",
    "crash": "ended (exit status 7)",
    "wrong-types": "sent an invalid answer to execute: result/observation/cc",
    "unknown-observation": "sent an invalid answer to execute",
    "text-before-hello": "wrote a line that is not JSON: 'Starting the queue manager",
    "huge-line": "wrote a line longer than",
    "protocol-2": "speaks protocol 2; the kit speaks 1",
    "error": "reported an error in execute: the queue manager's log is full",
    "wrong-id": "answered request",
    "exit-at-hello": "ended (exit status 3); its last log line: \"cannot open the queue manager's data directory\"",
}


@pytest.mark.parametrize("mode", sorted(MISBEHAVIOURS))
def test_a_misbehaving_server_is_an_error_never_a_verdict(mode, tmp_path):
    pidfile = tmp_path / "pid"
    results = tmp_path / "r"
    command = f"{sys.executable} {MISBEHAVE} {mode} --after 40 --pidfile {pidfile}"
    code, out, err = _subprocess(command, "--adapter-opt", "timeout=2", "--area", "core", "--examples", "5",
                                 "--seed", "1", "--results", results)
    assert code == 2, out + err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert "server" in err and MISBEHAVIOURS[mode] in err, err
    assert "Non-conformance" not in out
    pid = int(pidfile.read_text())
    assert not psutil.pid_exists(pid) or psutil.Process(pid).status() == psutil.STATUS_ZOMBIE is False
    if results.exists() and (results / "rules.jsonl").exists():   # failed after the run began
        verdicts = {r["verdict"] for r in _rows(results).values()}
        assert "fail" not in verdicts and "error" in verdicts


def test_what_was_recorded_before_a_crash_is_kept(tmp_path):
    # a clean run tells how many operations the core area takes; the server crashes just after them
    assert _subprocess(f"{SERVER} --platform distributed", "--area", "core", "--examples", "5", "--seed", "1",
                       "--results", tmp_path / "clean")[0] == 0
    steps = json.loads((tmp_path / "clean" / "run.json").read_text())["steps_run"]
    results = tmp_path / "r"
    command = f"{sys.executable} {MISBEHAVE} crash --after {steps}"
    code, out, err = _subprocess(command, "--area", "core,expiry", "--examples", "5", "--seed", "1",
                                 "--results", results)
    assert code == 2, out + err
    rows = _rows(results)
    assert {r["verdict"] for r in rows.values() if r["area"] == "core"} <= {"pass", "partly exercised", "not exercised"}
    assert any(r["verdict"] == "pass" for r in rows.values() if r["area"] == "core")
    expiry = {r["verdict"] for r in rows.values() if r["area"] == "expiry"}
    assert "error" in expiry and expiry <= {"error", "not applicable"}
    assert "ended (exit status 7)" in json.loads((results / "run.json").read_text())["error"]


@pytest.mark.parametrize("opts, message", [
    ((), "needs --adapter-opt command="),
    (("command=",), "needs --adapter-opt command="),
    (("command=x", "timeout=soon"), "timeout must be a positive number"),
    (("command=/no/such/server",), "cannot start server"),
    (("command=x", "colour=blue"), "has no option 'colour'"),
])
def test_bad_adapter_options_are_one_line(opts, message, tmp_path):
    argv = ["run", "--adapter", "subprocess", "--area", "core", "--results", tmp_path / "r"]
    for o in opts:
        argv += ["--adapter-opt", o]
    code, out, err = run_cli(*argv)
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "r").exists()


def test_schema_files_are_current_and_name_every_message():
    files = {p.name: json.loads(p.read_text()) for p in schemas.SCHEMA_DIR.glob("*.json")}
    generated = {f"{name}.json": schema for name, schema in schemas.message_schemas().items()}
    assert files == generated, "regenerate: python -c 'from adapters.subprocess import schemas; schemas.write()'"
    for method in schemas.METHODS:
        assert f"{method}.request.json" in files and f"{method}.response.json" in files


def test_a_valid_answer_passes_and_each_kind_of_invalid_one_is_named():
    ok = {"id": 3, "result": {"observation": {"type": "Observation", "cc": 0, "rc": 0, "message": None,
                                              "attrs": [["CURDEPTH", 2]]}}}
    assert schemas.problem("execute.response", ok) is None
    assert schemas.problem("execute.response", {"id": 3, "error": {"message": "x"}}) is None
    assert "cc" in schemas.problem("execute.response", {"id": 3, "result": {"observation": {"type": "Observation",
                                                                                              "cc": "0"}}})
    assert "observation" in schemas.problem("execute.response", {"id": 3, "result": {}})
    assert "mars" in schemas.problem("hello.response", {"id": 1, "result": {
        "protocol": 1, "server": {"name": "s", "version": "1"}, "capabilities": {"areas": ["mars"]}}})


NODE = ROOT / "examples" / "node-qm" / "server.js"


def test_the_node_example_gets_a_verdict_per_core_rule_and_other_areas_are_not_applicable(tmp_path):
    code, out, err = _subprocess(f"node {NODE}", "--examples", "15", "--seed", "2", "--results", tmp_path / "r")
    assert code in (0, 1), out + err   # a verdict on MQ either way, never an error
    rows = _rows(tmp_path / "r")
    core = {rid: r["verdict"] for rid, r in rows.items() if r["area"] == "core"}
    assert core and set(core.values()) <= {"pass", "partly exercised", "fail", "one of", "not exercised", "not applicable"}
    assert list(core.values()).count("pass") >= 20
    assert core["CORE-32"] == "not applicable"   # the example declares it cannot restart
    others = [r for r in rows.values() if r["area"] != "core"]
    assert others and all(r["verdict"] == "not applicable" for r in others)
    meta = json.loads((tmp_path / "r" / "run.json").read_text())
    assert meta["system"]["system"].startswith("node-qm") and meta["system"]["runtime"].startswith("node v")
    assert (code == 1) == any(v in ("fail", "one of") for v in core.values())


def test_a_run_that_exercised_no_rule_is_an_error_not_conformant(tmp_path):
    server = f"{sys.executable} {ROOT / 'tests' / 'data' / 'servers' / 'express_nothing.py'}"
    code, out, err = _subprocess(server, "--area", "core", "--examples", "5", "--seed", "1", "--results", tmp_path / "r")
    assert code == 2, out + err
    assert "no rule was exercised" in err and len(err.strip().splitlines()) == 1
    assert "conformant" not in out.lower().replace("non-conformant", "")


DECLINES_LOCK = ROOT / "tests" / "data" / "servers" / "declines_lock.py"


def test_a_server_declines_what_it_cannot_express_and_no_rule_fails_for_it(tmp_path, check_requests):
    """A get with MQGMO_LOCK answered not_expressible: left out as the broker adapters' express() leaves an
    operation out (no failure, no model step), counted with its reason, and the lock's classes of CORE-21 are
    not expressible there, not unreached."""
    code, out, err = _subprocess(f"{sys.executable} {DECLINES_LOCK}", "--area", "core", "--seed", "3",
                                 "--examples", "30", "--results", tmp_path / "r")
    assert code == 0, out + err
    meta = json.loads((tmp_path / "r" / "run.json").read_text())
    assert meta["not_expressible"].get("Get", 0) >= 1
    assert any(why.startswith("Get: Get as given cannot be expressed") for why in meta["declined"]), meta["declined"]
    assert "fail" not in {r["verdict"] for r in _rows(tmp_path / "r").values()}
    code, _, err = run_cli("report", tmp_path / "r", "--format", "md", "--out", tmp_path / "r.md")
    assert code == 0, err
    assert "declined by the system when run: Get: Get as given cannot be expressed" in (tmp_path / "r.md").read_text()


def test_the_schema_takes_a_not_expressible_answer_and_refuses_an_empty_reason():
    ok = {"id": 4, "result": {"not_expressible": "no browse locks"}}
    assert schemas.problem("execute.response", ok) is None
    assert schemas.problem("execute.response", {"id": 4, "result": {"not_expressible": ""}}) is not None
    assert schemas.problem("execute.response", {"id": 4, "result": {"not_expressible": "x", "observation": {}}}) \
        is not None


DECLARES = ROOT / "tests" / "data" / "servers" / "declares_not_applicable.py"


#: Each fault, its rule, and whether the declared run meets its departures and steps past them: a get of a priority
#: queue shows priority-ignored wherever it runs; a queue inhibited for gets (CORE-25's input) is not drawn at all
#: once the rule is declared not applicable (never searched for).
@pytest.mark.parametrize("fault, rule, met", [("priority-ignored", "CORE-04", True),
                                              ("get-inhibit-ignored", "CORE-25", False)])
def test_a_rule_the_server_declares_not_applicable_is_never_searched_for_nor_failed(fault, rule, met, tmp_path):
    """The system's own declaration is honoured: its departures from the rule are stepped past unreported, the rule
    is n/a with the server's reason, and the run exits 0 when nothing else departs.  Undeclared, the same server
    fails the rule (the test can fail)."""
    args = ("--area", "core", "--seed", "7", "--examples", "10")
    command = f"{sys.executable} {DECLARES} --faults {fault}"
    # (undeclared, the first departure is all that is asked of the run: not minimised, no further rounds)
    code, out, err = _subprocess(command, *args, "--keep-going", "0", "--no-minimise",
                                 "--results", tmp_path / "undeclared")
    assert code == 1 and _rows(tmp_path / "undeclared")[rule]["verdict"] == "fail", out + err

    code, out, err = _subprocess(f"{command} '{rule}=the system has no such thing'", *args,
                                 "--results", tmp_path / "declared")
    assert code == 0, out + err
    rows = _rows(tmp_path / "declared")
    assert rows[rule]["verdict"] == "not applicable" and rows[rule]["failed"] == 0
    assert rows[rule]["not_applicable"] == "the system has no such thing"
    assert not list((tmp_path / "declared" / "failures").glob("*.json"))
    assert "fail" not in {r["verdict"] for r in rows.values()}
    run = json.loads((tmp_path / "declared" / "run.json").read_text())
    assert run["capabilities"]["declared_by_system"] is True
    # where met, the departures were stepped past: a case that a departure the declaration explains ends does not
    # use up the budget of 10 (a declared run without the fault, or one that never meets it, runs exactly 10)
    assert (run["examples_run"] > 10) is met, run["examples_run"]
