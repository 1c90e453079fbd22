"""The mqconform command line: listings, exit codes, and one-line errors for bad input."""

import contextlib
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from conformance import cli
from reference_model import language as L
from reference_model import mqconst as C
from reference_model.rules import RULES

ROOT = Path(__file__).resolve().parent.parent


def run_cli(*argv):
    out = io.StringIO()
    code = cli.main(list(argv), out=out)
    return code, out.getvalue()


def run_process(*argv):
    """``mqconform ARGV`` as the command runs it: (exit code, standard output, standard error), in this process.
    What a process of its own adds (``python -m conformance.cli``'s exit with main's code, nothing else on
    standard error) is checked by test_the_command_in_a_process_of_its_own_exits_with_mains_code_and_one_line."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = cli.main(list(argv), out=out)
        except SystemExit as exc:   # argparse's --help and --version
            code = exc.code
    return code, out.getvalue(), err.getvalue()


def run_as_process(*argv):
    proc = subprocess.run([sys.executable, "-m", "conformance.cli", *argv], capture_output=True, text=True)
    return proc.returncode, proc.stdout, proc.stderr


@pytest.mark.parametrize("argv, code, needle", [
    (["run", "--adapter", "nope"], 2, "unknown adapter 'nope'"),
    (["replay", "/nonexistent/replay.json"], 2, "cannot read"),
    (["frobnicate"], 2, "invalid choice"),
    (["rules", "--area", "core"], 0, ""),
])
def test_the_command_in_a_process_of_its_own_exits_with_mains_code_and_one_line(argv, code, needle):
    """The in-process calls of these tests are the command: the same exit code, and on standard error the one
    line main writes (no warning, no traceback from the interpreter around it)."""
    got = run_as_process(*argv)
    same = run_process(*argv)
    assert got[0] == same[0] == code and got[2] == same[2], (got, same)
    assert needle in got[2] and len(got[2].strip().splitlines()) == (1 if code else 0) and "Traceback" not in got[2]
    assert got[1] == same[1]


def test_rules_listing_is_tab_separated_with_sources():
    code, out = run_cli("rules", "--area", "core")
    lines = out.splitlines()
    assert code == 0 and len(lines) == len(RULES.all("core"))
    for line in lines:
        rid, area, source, summary = line.split("\t")
        assert rid.startswith("CORE-") and area == "core" and source and summary


def test_an_unexpected_exception_is_one_line_exit_2_and_a_saved_traceback(tmp_path, monkeypatch):
    def boom(args, out):
        raise ZeroDivisionError("deliberately")

    monkeypatch.setitem(cli.COMMANDS, "rules", boom)
    err = io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    code = cli.main(["rules"], out=io.StringIO())
    line = err.getvalue()
    assert code == 2 and line.count("\n") == 1 and "internal error (ZeroDivisionError: deliberately)" in line
    saved = line.rsplit("traceback in ", 1)[1].strip()
    assert "ZeroDivisionError" in open(saved).read()
    os.unlink(saved)


def test_a_binary_replay_file_is_refused_in_one_line(tmp_path):
    binary = tmp_path / "bin.json"
    binary.write_bytes(b"\xf0\x28\x8c\x28" * 50)
    code, out, err = run_process("replay", str(binary))
    assert code == 2 and "not UTF-8 text" in err and len(err.strip().splitlines()) == 1


def test_faults_listing_takes_several_areas():
    code, out = run_cli("faults", "--area", "core,dlq")
    assert code == 0 and {line.split("\t")[1] for line in out.splitlines()} == {"core", "dlq"}


def test_faults_and_adapters_listings_in_json():
    code, out = run_cli("faults", "--area", "dlq", "--format", "json")
    rows = [json.loads(line) for line in out.splitlines()]
    from adapters.simulated.faults import FAULTS

    assert code == 0 and {r["fault"] for r in rows} == {n for n, f in FAULTS.items() if f.area == "dlq"}
    assert all(r["rules"] == list(FAULTS[r["fault"]].rules) and r["description"] for r in rows)
    code, out = run_cli("adapters", "--format", "json")
    assert code == 0 and {"reference", "simulated", "rabbitmq"} <= {json.loads(line)["adapter"] for line in out.splitlines()}


def test_faults_and_adapters_listings():
    code, out = run_cli("faults", "--area", "core")
    assert code == 0 and len(out.splitlines()) >= 6
    assert all(len(line.split("\t")) == 3 for line in out.splitlines())
    code, out = run_cli("adapters")
    listing = dict(line.split("\t") for line in out.splitlines())
    assert {"reference", "simulated"} <= set(listing)
    # each on one line, with every option it takes (the ibmmq adapter's summary runs over two in its source)
    from adapters.ibmmq import OPTIONS

    assert all(f" {option}" in listing["ibmmq"] for option in OPTIONS), listing["ibmmq"]


@pytest.mark.parametrize("adapter", ["reference", "simulated"])
def test_run_conformant_adapter_exits_0_and_writes_results(adapter, tmp_path):
    # (5 cases an area: what the default budget reaches is tests/test_rules_exercised.py's)
    code, out = run_cli("run", "--adapter", adapter, "--examples", "5", "--seed", "3", "--results", str(tmp_path))
    assert code == 0, out
    run = json.loads((tmp_path / "run.json").read_text())
    assert run["status"] == "pass" and run["examples_run"] >= 5 and run["seed"] == 3
    rows = [json.loads(line) for line in (tmp_path / "rules.jsonl").read_text().splitlines()]
    assert {r["rule"] for r in rows} == {r.id for r in RULES.all()}
    areas = set(run["capabilities"]["areas"])
    assert {r["verdict"] for r in rows if r["area"] in areas} <= {"pass", "partly exercised", "not exercised"}
    assert {r["verdict"] for r in rows if r["area"] not in areas} <= {"not applicable"}
    assert sum(r["verdict"] == "pass" for r in rows) > 20


def test_same_seed_same_results(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    for d in (a, b):
        assert run_cli("run", "--adapter", "simulated", "--examples", "8", "--seed", "11", "--results", str(d))[0] == 0
    assert (a / "rules.jsonl").read_text() == (b / "rules.jsonl").read_text()


@pytest.mark.parametrize("argv, needle", [
    (["run", "--adapter", "nope"], "unknown adapter 'nope' (known: activemq, activemq-stomp, ibmmq, rabbitmq, reference, simulated"),
    (["run", "--adapter", "simulated", "--faults", "no-such-fault"], "unknown fault 'no-such-fault'"),
    (["run", "--adapter", "simulated", "--area", "weather"], "unknown area 'weather'"),
    (["run", "--adapter", "simulated", "--adapter-opt", "faults"], "malformed adapter option 'faults'"),
    (["run", "--adapter", "simulated", "--adapter-opt", "colour=red"], "has no option 'colour'"),
    (["run", "--adapter", "simulated", "--adapter-opt", "platform=vms"], "platform must be one of"),
    (["run", "--adapter", "simulated", "--examples", "0"], "must be at least 1"),
    (["run"], "required"),
    (["run", "--adapter", "simulated", "--faults", ""], "--faults names no fault"),
    (["run", "--adapter", "simulated", "--area", ""], "no area named"),
    (["rules", "--area", ","], "no area named"),
    (["replay", "README.md", "--adapter-opt", "platform=zos"], "--adapter-opt needs --adapter"),
    (["frobnicate"], "invalid choice"),
])
def test_bad_input_gets_one_line_and_exit_2(argv, needle):
    code, out, err = run_process(*argv)
    assert code == 2
    assert needle in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


@pytest.mark.parametrize("content, needle", [
    ("{not json", "not JSON"),
    ('{"format": "something-else"}', "not a mqconform replay file"),
    ('{"format": "mqconform-replay", "version": 99}', "version 99 is not supported"),
    ('{"format": "mqconform-replay", "version": 1, "steps": []}', "not a valid replay file"),
    ('{"format": "mqconform-replay", "version": 1, "area": "core", "adapter": "simulated", "platform": "distributed",'
     ' "steps": [{"op": {"type": "Bogus"}, "observed": {}}], "mismatch": {}}', "'Bogus' is not an operation"),
])
def test_corrupt_or_foreign_replay_file(tmp_path, content, needle):
    f = tmp_path / "r.json"
    f.write_text(content)
    code, out, err = run_process("replay", str(f))
    assert code == 2 and needle in err and len(err.strip().splitlines()) == 1


@pytest.fixture(scope="session")
def replay_file(tmp_path_factory):
    """A genuine replay file: the simulated queue manager with a priority fault."""
    d = tmp_path_factory.mktemp("replay")
    code, _ = run_cli("run", "--adapter", "simulated", "--faults", "priority-ignored", "--area", "core", "--seed", "7",
                      "--keep-going", "0", "--adapter-opt", "platform=distributed", "--results", str(d / "r"))
    assert code == 1
    return next((d / "r" / "failures").glob("*.json"))


def _edit_steps(data, fn):
    fn(data["steps"])
    return data


@pytest.mark.parametrize("edit, needle", [
    (lambda d: _edit_steps(d, lambda s: s.clear()), "steps: [] should be non-empty"),
    (lambda d: {**d, "area": "mars"}, "area: 'mars' is not one of"),
    (lambda d: _edit_steps(d, lambda s: s[0]["op"].update(queue=7)), "steps/0/op/queue: 7 is not of type 'string'"),
    (lambda d: _edit_steps(d, lambda s: s[0]["op"].update(type="Teleport")), "'Teleport' is not an operation"),
    (lambda d: _edit_steps(d, lambda s: s[0]["observed"].update(cc="ok")), "steps/0/observed/cc"),
    (lambda d: _edit_steps(d, lambda s: s[0].update(op={"type": "Observation"})), "is not an operation"),
    (lambda d: {**d, "mismatch": {**d["mismatch"], "index": 999}}, "the failing step 999 is beyond"),
    (lambda d: {**d, "mismatch": {**d["mismatch"], "rules": ["CORE-99"]}}, "unknown rule CORE-99"),
])
def test_an_edited_replay_is_refused_not_judged(replay_file, tmp_path, edit, needle):
    data = edit(json.loads(replay_file.read_text()))
    f = tmp_path / "edited.json"
    f.write_text(json.dumps(data))
    code, out, err = run_process("replay", str(f))
    assert code == 2 and needle in err and len(err.strip().splitlines()) == 1, err
    assert "conformant" not in out and "Non-conformance" not in out


def test_the_genuine_replay_file_the_edits_are_made_to_is_judged(replay_file):
    """What each edit above is refused for is the edit: the file it was made to is judged (once for them all)."""
    assert run_process("replay", str(replay_file))[0] == 1


def test_missing_replay_file():
    code, out, err = run_process("replay", "/nonexistent/replay.json")
    assert code == 2 and "cannot read" in err


def test_cluster_simulator_example_and_plot(tmp_path):
    png = tmp_path / "shares.png"
    code, out = run_cli("cluster", "simulate", "docs/cluster-example.toml", "--messages", "1000", "--plot", str(png))
    assert code == 0, out
    lines = {line.split()[0]: line.split() for line in out.splitlines()[3:] if line.startswith("QM")}
    assert lines["QM2/SALES.QM2"][1:3] == ["75.0%", "75.4%"]
    assert lines["QM3/SALES.QM3"][1:3] == ["25.0%", "24.6%"]
    assert lines["QM4/SALES.QM4"][-1] == "CLWL-05" and lines["QM5/SALES.QM5"][-1] == "CLWL-01"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize("change, needle", [
    ("channel", "no instance of it is reachable"),
    ("instance", "no instance of it is reachable"),
    ("disabled", "every candidate was dropped"),
])
def test_cluster_simulator_says_why_there_is_no_destination(tmp_path, change, needle):
    """The example without its channels, without its instances, or with every instance PUT(DISABLED): no eligible
    destination, the answer an administrator runs the what-if for, with why each candidate was dropped."""
    import re

    blocks = re.split(r"(?m)^(?=\[\[)", (ROOT / "docs" / "cluster-example.toml").read_text())
    if change == "disabled":
        text = "".join(b.replace("put_enabled = false", "") + ("put_enabled = false\n" if b.startswith("[[instance]]")
                                                               else "") for b in blocks)
    else:
        text = "".join(b for b in blocks if not b.startswith(f"[[{change}]]"))
    f = tmp_path / "c.toml"
    f.write_text(text)
    code, out = run_cli("cluster", "simulate", str(f), "--messages", "10", "--plot", str(tmp_path / "p.png"))
    assert code == 0 and needle in out and "MQ fails every put" in out, out
    assert "internal error" not in out and not (tmp_path / "p.png").exists()
    if change == "disabled":
        assert out.count("CLWL-01") == 4   # each of the four instances, dropped at step 1


def test_cluster_simulator_puts_naming_a_queue_manager_through_aliases(tmp_path):
    f = tmp_path / "alias.toml"
    f.write_text("local = \"GW\"\nqueue = \"Q\"\n[message]\nqmgr = \"PAY\"\n"
                 "[[qmgr]]\nname = \"GW\"\nclusters = [\"C\"]\n"
                 + "".join(f"[[qmgr]]\nname = \"{q}\"\nclusters = [\"C\"]\n[[channel]]\nname = \"TO.{q}\"\n"
                           f"qmgr = \"{q}\"\nclusters = [\"C\"]\nstate = \"RUNNING\"\n" for q in ("H1", "H2", "H3"))
                 + "[[alias]]\nname = \"PAY\"\nqmgr = \"H1\"\nclusters = [\"C\"]\nclwlprty = 5\n"
                 + "[[alias]]\nname = \"PAY\"\nqmgr = \"H2\"\nclusters = [\"C\"]\nclwlprty = 1\n"
                 + "[[alias]]\nname = \"PAY\"\nqmgr = \"H3\"\nclusters = [\"C\"]\nput_enabled = false\n")
    code, out = run_cli("cluster", "simulate", str(f), "--messages", "10")
    assert code == 0, out
    lines = {line.split()[0]: line.split() for line in out.splitlines()[3:] if line.startswith("H")}
    assert lines["H1/TO.H1"][1] == "100.0%"
    assert lines["H2/TO.H2"][-1] == "CLWL-11a" and lines["H3/TO.H3"][-1] == "CLWL-02"


@pytest.mark.parametrize("config, needle", [

    ("local = \"A\"\nqueue = \"Q\"\n[[qmgr]\n", "line"),
    ("queue = \"Q\"\n", "key 'local'"),
    ("local = \"A\"\nqueue = \"Q\"\n[[qmgr]]\nname = \"B\"\nclusters = [\"C\"]\n", "local queue manager 'A'"),
    ("local = \"A\"\nqueue = \"Q\"\n[[qmgr]]\nname = \"A\"\nclusters = [\"C\"]\n[[channel]]\nname = \"X\"\n"
     "qmgr = \"A\"\nclusters = [\"C\"]\nstate = \"ASLEEP\"\n", "line 6: [[channel]] #1: state 'ASLEEP'"),
    ("local = \"A\"\nqueue = \"Q\"\n[[qmgr]]\nname = \"A\"\nclusters = [\"C\"]\ncolour = 1\n", "line 3: [[qmgr]] #1: unknown key 'colour'"),
    ("local = \"A\"\nqueue = \"Q\"\n[[qmgr]]\nname = \"A\"\nclusters = [\"C\"]\n[[instance]]\nqmgr = \"Z\"\n"
     "clusters = [\"C\"]\n", "[[instance]] #1: qmgr 'Z' is not a defined qmgr"),
    # A value out of range names the table, its line and the allowed values, never the library's internals.
    ("local = \"A\"\nqueue = \"Q\"\n[[qmgr]]\nname = \"A\"\nclusters = [\"C\"]\n[[channel]]\nname = \"X\"\n"
     "qmgr = \"A\"\nclusters = [\"C\"]\nclwlwght = 500\n",
     "line 6: [[channel]] #1: 'clwlwght' must be a whole number from 1 to 99, not 500"),
    # CLWLMRUC is 1 to 999,999,999; a queue manager hosts one instance of the queue; channel names are unique.
    ("local = \"A\"\nqueue = \"Q\"\n[[qmgr]]\nname = \"A\"\nclusters = [\"C\"]\nclwlmruc = 1000000000\n",
     "line 3: [[qmgr]] #1: 'clwlmruc' must be a whole number from 1 to 999999999, not 1000000000"),
    ("local = \"A\"\nqueue = \"Q\"\n[[qmgr]]\nname = \"A\"\nclusters = [\"C\"]\n"
     + "[[instance]]\nqmgr = \"A\"\nclusters = [\"C\"]\n" * 2,
     "line 9: [[instance]] #2: a second instance of the queue on qmgr 'A'"),
    ("local = \"A\"\nqueue = \"Q\"\n[[qmgr]]\nname = \"A\"\nclusters = [\"C\"]\n"
     + "[[channel]]\nname = \"X\"\nqmgr = \"A\"\nclusters = [\"C\"]\n" * 2,
     "line 10: [[channel]] #2: a second channel named 'X'"),
    # A misnamed table is an unknown key with a suggestion, not a missing queue manager.
    ("local = \"A\"\nqueue = \"Q\"\n[[qmgrs]]\nname = \"A\"\nclusters = [\"C\"]\n",
     "unknown key 'qmgrs'; did you mean 'qmgr'?"),
])
def test_cluster_simulator_rejects_bad_configs_with_one_line(tmp_path, config, needle):
    f = tmp_path / "c.toml"
    f.write_text(config)
    code, out, err = run_process("cluster", "simulate", str(f))
    assert code == 2 and needle in err and len(err.strip().splitlines()) == 1, err
    assert len(err) < 300 and "Attribute(" not in err, err


def test_cluster_and_report_inputs_that_used_to_crash_are_one_line(tmp_path, replay_file):
    binary = tmp_path / "bin.toml"
    binary.write_bytes(bytes(range(256)))
    cases = [
        (["cluster", "simulate", binary], "not UTF-8 text"),
        (["cluster", "simulate", "docs/cluster-example.toml", "--plot", tmp_path / "no" / "x.png"], "no such directory"),
        (["cluster", "simulate", "docs/cluster-example.toml", "--plot", tmp_path / "x.xyz"], "by the file's extension"),
    ]
    results = replay_file.parent.parent
    broken = tmp_path / "broken"
    broken.mkdir()
    for name in ("run.json", "rules.jsonl"):
        (broken / name).write_text((results / name).read_text())
    meta = json.loads((broken / "run.json").read_text())
    (broken / "run.json").write_text(json.dumps({**meta, "examples_run": None}))
    cases.append((["report", broken, "--out", tmp_path / "r.md"], "examples_run is None, not a count"))
    for argv, needle in cases:
        code, out, err = run_process(*map(str, argv))
        assert code == 2 and needle in err and len(err.strip().splitlines()) == 1, (argv, err)
        assert "internal error" not in err and "Traceback" not in err
    assert not (tmp_path / "x.xyz").exists() and not (tmp_path / "r.md").exists()


def test_report_format_follows_the_extension(tmp_path, replay_file):
    results = replay_file.parent.parent
    for name, start in (("r.html", "<!DOCTYPE html>"), ("r.json", "{"), ("r.xml", "<?xml"), ("r.md", "# mqconform")):
        code, out, err = run_process("report", str(results), "--out", str(tmp_path / name), "--report-only")
        assert code == 0, err
        assert (tmp_path / name).read_text().lstrip().startswith(start), name


def test_a_trace_holds_every_step_run_and_replays_on_the_model(tmp_path, monkeypatch):
    """MQCONFORM_TRACE: every step the system ran, as JSON lines of the operation language; a case of
    it checked again on the model gives the same verdict the run gave (here: none broken)."""
    from conformance.checker.sequential import check_history

    trace = tmp_path / "trace.jsonl"
    monkeypatch.setenv("MQCONFORM_TRACE", str(trace))
    code, out = run_cli("run", "--adapter", "simulated", "--area", "core", "--seed", "3", "--examples", "5",
                        "--results", str(tmp_path / "r"))
    assert code == 0, out
    rows = [json.loads(line) for line in trace.read_text().splitlines()]
    cases = {(r["platform"], r["case"]) for r in rows}
    assert {p for p, _ in cases} == {"distributed", "zos"} and all(r["area"] == "core" for r in rows)
    for platform, case in cases:
        steps = [(L.from_json(r["op"]), L.from_json(r["observed"])) for r in rows
                 if (r["platform"], r["case"]) == (platform, case)]
        assert steps and all(c.mismatch is None for c in check_history(platform, steps))


def test_replay_minimise_saves_a_smaller_counterexample_beside_the_file(tmp_path):
    """A counterexample kept as Hypothesis shrank it (--no-minimise) is minimised on the adapter by
    ``replay --minimise``: the smaller history is saved beside it, the original is kept, and the
    smaller one still fails for the same rules when replayed."""
    from conformance.records.history import load_failure

    code, _ = run_cli("run", "--adapter", "simulated", "--faults", "priority-ignored", "--area", "core", "--seed", "7",
                      "--keep-going", "0", "--adapter-opt", "platform=distributed", "--no-minimise",
                      "--results", str(tmp_path / "r"))
    assert code == 1
    # the run's first departure (others its shrinking met are saved beside it)
    original = tmp_path / "r" / json.loads((tmp_path / "r" / "run.json").read_text())["failures"][0]
    saved = set((tmp_path / "r" / "failures").glob("*.json"))
    before = original.read_bytes()
    code, out = run_cli("replay", str(original), "--minimise")
    assert code == 1 and "Minimised: " in out, out
    [smaller] = set((tmp_path / "r" / "failures").glob("*.json")) - saved
    assert original.read_bytes() == before
    big, small = load_failure(original), load_failure(smaller)
    assert small.size < big.size and small.rules[0] == big.rules[0]
    assert f"{big.size} calls to {small.size}" in out
    code, out = run_cli("replay", str(smaller))
    assert code == 1 and "Still failing" in out


def test_replay_minimise_steps_past_the_departures_its_run_had_set_aside(tmp_path):
    """A queue manager that accepts a put past MAXDEPTH (CORE-27, found broken before) and ignores priority: the
    get returns the first message, where MQ returns the second, which only the put past MAXDEPTH left there.  The
    history, recorded with CORE-27 set aside as its run had it, carries two inquiries nothing needs; minimised
    with ``replay --minimise``, its replays step past the accepted put as the run did (without, each departs
    there and nothing smaller is found), and the inquiries go."""
    import attrs

    from adapters.registry import create_adapter
    from conformance.records.history import load_failure, save_failure
    from conformance.runner.session import NonConformance, Session

    faults = "priority-ignored,q-full-ignored"
    opts = C.MQOO_INPUT_SHARED | C.MQOO_OUTPUT | C.MQOO_INQUIRE
    put = lambda body, priority: L.Put(conn="a", handle="h", body=body, options=C.MQPMO_NO_SYNCPOINT,
                                       md=L.MessageDescriptor(priority=priority))
    ops = [L.DefineQueue(queue="Q", attrs=(("MAXDEPTH", 1),)), L.Connect(conn="a"),
           L.Open(conn="a", handle="h", queue="Q", options=opts), L.InquireQueue(queue="Q", names=("CURDEPTH",)),
           put("m1", 0), L.InquireQueue(queue="Q", names=("MAXDEPTH",)), put("m2", 5),
           L.Get(conn="a", handle="h", options=C.MQGMO_NO_SYNCPOINT)]
    adapter = create_adapter("simulated", {"faults": faults, "platform": C.PLATFORM_DISTRIBUTED})
    session = Session(adapter, "core", {"faults": faults}, 1, platform=C.PLATFORM_DISTRIBUTED,
                      set_aside=frozenset({"CORE-27"}))
    session.start_case()
    with pytest.raises(NonConformance) as raised:
        for op in ops:
            session.execute(op)
    adapter.close()
    recorded = attrs.evolve(raised.value.failure, set_aside=("CORE-27",))
    assert recorded.rules == ("CORE-04",) and len(recorded.steps) == len(ops)
    original = save_failure(recorded, tmp_path)
    code, out = run_cli("replay", str(original), "--minimise")
    assert code == 1 and "Still failing" in out and f"{len(ops)} calls to {len(ops) - 2}" in out, out
    [smaller] = set(tmp_path.glob("*.json")) - {original}
    small = load_failure(smaller)
    assert small.rules == ("CORE-04",) and not any(isinstance(s.op, L.InquireQueue) for s in small.steps)


def test_replay_minimise_options_are_checked(replay_file, capsys):
    for argv, needle in ((("--replays", "0", "--minimise"), "must be at least 1"),
                         (("--replays", "5"), "--replays bounds --minimise"),
                         (("--minimise", "--as-pytest", "t.py"), "one at a time")):
        code, out = run_cli("replay", str(replay_file), *argv)
        err = capsys.readouterr().err
        assert code == 2 and needle in err and "Traceback" not in err and out == "", (argv, err)


class _ShowsOnCase:
    """The simulated queue manager with the priority fault on its ``n``th case only, faultless before and
    after: a departure a real system's timing shows in some replays and not in others."""

    def __init__(self, n: int, otherwise_before: bool = False) -> None:
        from adapters.registry import create_adapter
        self.n, self.cases = n, 0
        # cases before the ``n``th depart otherwise: their first put refused as if the queue were full
        self.otherwise_before = otherwise_before
        self.faulty = create_adapter("simulated", {"faults": "priority-ignored", "platform": "distributed"})
        self.sound = create_adapter("simulated", {"platform": "distributed"})
        self.name = "simulated"

    def _now(self):
        return self.faulty if self.cases == self.n else self.sound

    def start_case(self, *args):
        self.cases += 1
        self.refused = False
        return self._now().start_case(*args)

    def execute(self, op):
        if self.otherwise_before and self.cases < self.n and isinstance(op, L.Put) and not self.refused:
            self.refused = True
            return L.Observation.of(C.MQRC_Q_FULL)
        return self._now().execute(op)

    def close(self):
        self.faulty.close()
        self.sound.close()

    def __getattr__(self, name):
        return getattr(self._now(), name)


@pytest.mark.parametrize("shown_on, tries, code, needle", [
    (3, 5, 1, "shown on try 3 of at most 5"),
    (3, 2, 0, "2 times: conformant every time"),
    (1, 1, 1, "Still failing"),
])
def test_replay_tries_until_an_unsteady_departure_shows(replay_file, monkeypatch, shown_on, tries, code, needle):
    """``--tries N`` replays on fresh cases until one shows the departure, and says which try did; when
    none does, it says how many ran, without calling the departure fixed outright."""
    from conformance.cli import run as run_cmd
    made = []

    def create(name, options):
        made.append(_ShowsOnCase(shown_on))
        return made[-1]

    monkeypatch.setattr(run_cmd, "create_adapter", create)
    got, out = run_cli("replay", str(replay_file), "--tries", str(tries))
    assert (got, needle in out) == (code, True), out
    [adapter] = made
    assert adapter.cases == min(shown_on, tries)
    if code == 1:
        assert "CORE-" in out


@pytest.mark.parametrize("shown_on, tries, needle", [
    (3, 5, "Still failing: "),
    (9, 3, "Departs, but not as recorded (on try 1; none of 3 tries showed the recorded departure)"),
])
def test_replay_tries_go_on_past_a_departure_of_another_kind(replay_file, monkeypatch, shown_on, tries, needle):
    """A try that departs otherwise than recorded (on a real system, timing met on the way: a commit seen late)
    does not stop ``--tries``: the tries go on until one shows the recorded departure, and only when none does
    is the other departure reported, with how many tries ran."""
    from conformance.cli import run as run_cmd
    made = []

    def create(name, options):
        made.append(_ShowsOnCase(shown_on, otherwise_before=True))
        return made[-1]

    monkeypatch.setattr(run_cmd, "create_adapter", create)
    got, out = run_cli("replay", str(replay_file), "--tries", str(tries))
    assert got == 1 and needle in out, out
    [adapter] = made
    assert adapter.cases == min(shown_on, tries)
    if shown_on <= tries:
        assert f"shown on try {shown_on} of at most {tries}" in out, out


def test_replay_tries_is_checked(replay_file, capsys):
    for argv, needle in ((("--tries", "0"), "must be at least 1"),
                         (("--tries", "3", "--as-pytest", "t.py"), "one at a time")):
        code, out = run_cli("replay", str(replay_file), *argv)
        err = capsys.readouterr().err
        assert code == 2 and needle in err and "Traceback" not in err and out == "", (argv, err)


def test_replay_says_still_failing_only_for_the_recorded_departure(replay_file, tmp_path):
    """The same step, rules and fields: "Still failing".  A file recording other rules (or another step)
    for the same history is told what departed instead, still with exit 1."""
    code, out = run_cli("replay", str(replay_file))
    assert code == 1 and "Still failing" in out, out
    data = json.loads(replay_file.read_text())
    data["mismatch"]["rules"] = data["mismatch"]["blamed"] = data["rules"] = ["CORE-05"]
    data.pop("mentioned", None)
    other = tmp_path / "other.json"
    other.write_text(json.dumps(data))
    code, out = run_cli("replay", str(other))
    assert code == 1 and "Still failing" not in out and "Departs, but not as recorded" in out, out
    assert f"step {data['mismatch']['index'] + 1} (CORE-05" in out
    # the rules blamed the same, the checker's mentions beside them not (a model that now names another rule it
    # rules out by relaxing it): the same departure, still failing
    data = json.loads(replay_file.read_text())
    assert data["mismatch"]["blamed"], data["mismatch"]
    data["mismatch"]["rules"] = data["rules"] = [*data["mismatch"]["blamed"], "CORE-05"]
    mentioned = tmp_path / "mentioned.json"
    mentioned.write_text(json.dumps(data))
    code, out = run_cli("replay", str(mentioned))
    assert code == 1 and "Still failing" in out, out


def test_a_replay_passes_through_the_departures_its_run_had_set_aside(tmp_path):
    """A keep-going round's counterexample may pass through a departure from a rule found earlier (here a
    BackoutCount left at 0) before its own (priority order); the replay file says which rules were set
    aside, and the replay steps past them to reach its own step.  Without them it departs earlier."""
    from adapters.registry import create_adapter
    from conformance.records.history import save_failure, with_alternatives
    from conformance.runner.session import Session, one_case

    options = {"faults": "priority-ignored,backout-count-not-incremented", "platform": "distributed"}
    std = C.MQOO_INPUT_SHARED | C.MQOO_BROWSE | C.MQOO_OUTPUT | C.MQOO_INQUIRE
    ops = [L.DefineQueue(queue="Q1"), L.Connect(conn="c1"), L.Open(conn="c1", handle="h1", queue="Q1", options=std),
           L.Put(conn="c1", handle="h1", body="m1", md=L.MessageDescriptor(priority=0), options=C.MQPMO_NO_SYNCPOINT),
           L.Get(conn="c1", handle="h1", options=C.MQGMO_SYNCPOINT), L.Backout(conn="c1"),
           L.Get(conn="c1", handle="h1", options=C.MQGMO_NO_SYNCPOINT),
           L.Put(conn="c1", handle="h1", body="low", md=L.MessageDescriptor(priority=1), options=C.MQPMO_NO_SYNCPOINT),
           L.Put(conn="c1", handle="h1", body="high", md=L.MessageDescriptor(priority=7), options=C.MQPMO_NO_SYNCPOINT),
           L.Get(conn="c1", handle="h1", options=C.MQGMO_NO_SYNCPOINT)]

    def run(aside):
        adapter = create_adapter("simulated", options)
        try:
            failure = one_case(Session(adapter, "core", options, platform="distributed", set_aside=aside), ops)
        finally:
            adapter.close()
        assert failure is not None, "the faulty queue manager departs nowhere"
        return failure

    first = run(frozenset())
    assert first.mismatch.index == 6 and "message.backout_count" in first.mismatch.fields
    aside = frozenset(first.rules)
    later = with_alternatives(run(aside), 0, aside)
    assert later.mismatch.index == 9 and later.blamed == ("CORE-04",) and set(later.set_aside) == aside
    path = save_failure(later, tmp_path)
    code, out = run_cli("replay", str(path))
    assert code == 1 and "Still failing" in out, out
    data = json.loads(path.read_text())
    del data["set_aside"]
    bare = tmp_path / "bare.json"
    bare.write_text(json.dumps(data))
    code, out = run_cli("replay", str(bare))
    assert code == 1 and "Departs, but not as recorded: at step 7" in out, out


@pytest.mark.parametrize("argv, needle", [
    (["--faults", "dlq-retry-ignored", "--area", "core"], "dlq-retry-ignored (dlq): not in the areas run (core)"),
    (["--area", "core,,expiry"], "an empty area name"),
    (["--area", ",core"], "an empty area name"),
])
def test_run_refuses_a_fault_it_would_not_run_and_an_empty_area_name(argv, needle, tmp_path):
    """A fault injected into an area the run leaves out used to give a conformant run with no word of it;
    an empty area between commas was accepted.  Both are one line and exit 2, before anything runs."""
    code, out, err = run_process("run", "--adapter", "simulated", *argv, "--examples", "1",
                                 "--results", str(tmp_path / "r"))
    assert code == 2 and needle in err and len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "r").exists()


def _one_failure(tmp_path, fault, area, platform):
    results = tmp_path / fault
    code, out = run_cli("run", "--adapter", "simulated", "--faults", fault, "--area", area, "--seed", "7",
                        "--keep-going", "0", "--adapter-opt", f"platform={platform}", "--results", str(results))
    assert code == 1, out
    return json.loads(next((results / "failures").glob("*.json")).read_text())


def test_a_replay_file_that_contradicts_itself_is_refused_before_any_verdict(tmp_path):
    """Labels and steps are checked against what the file itself records: a DLQ failure relabelled area core,
    a z/OS skip-backout failure relabelled distributed, a failing get whose handle was edited.  Each is one
    line and exit 2, never a verdict ("conformant (fixed)" or a failure judged in the wrong area)."""
    dlq = _one_failure(tmp_path, "dlq-retry-ignored", "dlq", "distributed")
    mark = _one_failure(tmp_path, "second-mark-accepted", "syncpoint", "zos")
    edited = json.loads(json.dumps(mark))
    index = edited["mismatch"]["index"]
    op = edited["steps"][index]["op"]
    key = "handle" if "handle" in op else "conn"
    op[key] = op[key] + "x"
    cases = [(dict(dlq, area="core"), "labelled area core"), (dict(mark, platform="distributed"), "labelled platform"),
             (edited, f"failing step {index + 1}")]
    for n, (data, needle) in enumerate(cases):
        f = tmp_path / f"bad{n}.json"
        f.write_text(json.dumps(data))
        code, out, err = run_process("replay", str(f))
        assert code == 2 and needle in err and "contradicts itself" in err and len(err.strip().splitlines()) == 1, err
        assert "onformant" not in out and "Still failing" not in out


def test_a_counterexample_both_platforms_show_alike_is_printed_once(tmp_path):
    """Priorities ignored, found on distributed and on z/OS with the same history: the second is one line naming
    its replay file, not the whole counterexample again; both files are written."""
    code, out = run_cli("run", "--adapter", "simulated", "--faults", "priority-ignored", "--area", "core", "--seed", "7",
                        "--keep-going", "0", "--results", str(tmp_path / "r"))
    assert code == 1
    assert out.count("Non-conformance in area") == 1, out
    assert "The same counterexample on platform zos (as on distributed)" in out
    assert len(list((tmp_path / "r" / "failures").glob("*.json"))) == 2


def test_a_run_says_where_its_time_went(tmp_path):
    code, out = run_cli("run", "--adapter", "simulated", "--area", "core,dlq", "--examples", "3", "--seed", "1",
                        "--results", str(tmp_path / "r"))
    assert code == 0, out
    spent = json.loads((tmp_path / "r" / "run.json").read_text())["seconds"]
    assert set(spent) == {"core on distributed", "core on zos", "dlq on distributed", "dlq on zos"}, spent
    assert all(s > 0 for s in spent.values())
    line = next(l for l in out.splitlines() if l.startswith("Time by area and platform"))
    assert all(where in line for where in spent) and "%" in line, line


def test_several_files_are_replayed_in_one_process_each_as_alone_then_listed(replay_file, tmp_path):
    """``mqconform replay A B C``: each file replayed as it would be alone, one after another, then a list of what
    each showed; exit 1 while any still departs, 0 when all conform."""
    data = json.loads(replay_file.read_text())
    fixed = dict(data, adapter_options={k: v for k, v in data["adapter_options"].items() if k != "faults"})
    (tmp_path / "fixed.json").write_text(json.dumps(fixed))
    other = json.loads(replay_file.read_text())
    other["mismatch"]["rules"] = other["mismatch"]["blamed"] = other["rules"] = ["CORE-05"]
    other.pop("mentioned", None)
    (tmp_path / "other.json").write_text(json.dumps(other))
    files = [str(replay_file), str(tmp_path / "fixed.json"), str(tmp_path / "other.json")]
    code, out = run_cli("replay", *files)
    assert code == 1, out
    assert [line for line in out.splitlines() if line.startswith("== ")] == \
        [f"== {f} ({i} of 3)" for i, f in enumerate(files, 1)]
    assert f"Still failing: {files[0]}" in out and "conformant (fixed)" in out and "Departs, but not as recorded" in out
    listed = out.split("Replayed 3 files: ", 1)[1].splitlines()
    assert listed == ["1 still failing, 1 departs otherwise than recorded, 1 conformant",
                      f"still failing: {files[0]}", f"conformant: {files[1]}",
                      f"departs otherwise than recorded: {files[2]}"], out
    # every file conforming: exit 0
    code, out = run_cli("replay", files[1], files[1])
    assert code == 0 and "Replayed 2 files: 0 still failing, 0 departs otherwise than recorded, 2 conformant" in out


def test_several_files_are_all_read_before_any_is_replayed(replay_file, tmp_path, capsys):
    """A bad file among several is a usage error before anything runs; so is an option that takes one file."""
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    code, out = run_cli("replay", str(replay_file), str(bad))
    err = capsys.readouterr().err
    assert code == 2 and out == "" and "not JSON" in err and len(err.strip().splitlines()) == 1, (out, err)
    for flags, needle in ((["--minimise"], "takes one file, not 2"), (["--as-pytest=t.py"], "takes one file, not 2"),
                          (["--replays", "5"], "takes one file, not 2"),
                          (["--adapter-opt", "platform=zos"], "--adapter-opt needs --adapter")):
        code, out = run_cli("replay", str(replay_file), str(replay_file), *flags)
        err = capsys.readouterr().err
        assert code == 2 and out == "" and needle in err and len(err.strip().splitlines()) == 1, (flags, err)


def test_the_parser_kept_between_calls_hands_out_nothing_a_call_could_change():
    """The command line's parser is built once a process: each parse gets values of its own, a repeated option's
    list a new one every time, and what one call does with its values is not seen by the next."""
    parse = cli.build_parser().parse_args
    assert cli.build_parser() is cli.build_parser()
    base = ["campaign", "--adapter", "simulated", "--minutes", "1", "--out", "c"]
    first = parse([*base, "--inject-crash", "core-distributed", "--inject-crash", "dlq-zos:2"])
    assert first.inject_crash == ["core-distributed", "dlq-zos:2"]
    first.inject_crash.append("changed")
    again = parse([*base, "--inject-crash", "core-distributed"])
    assert again.inject_crash == ["core-distributed"]
    assert not parse(base).inject_crash
    run = parse(["run", "--adapter", "simulated", "--adapter-opt", "platform=zos"])
    run.adapter_opt.append("faults=priority-ignored")
    assert parse(["run", "--adapter", "simulated"]).adapter_opt in (None, [])
    assert not parse(["run", "--adapter", "simulated"]).recorded
