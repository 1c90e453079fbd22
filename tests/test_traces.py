"""Comparing two traces of one seed: where they part, and whether the system or the kit made them part."""

from __future__ import annotations

import io
import json

from conformance import cli
from conformance.records import traces as T
from reference_model import language as L
from reference_model import mqconst as C


def run_cli(*argv):
    out = io.StringIO()
    return cli.main(list(argv), out=out), out.getvalue()


def traced_run(tmp_path, monkeypatch, name, *extra):
    trace = tmp_path / f"{name}.jsonl"
    monkeypatch.setenv("MQCONFORM_TRACE", str(trace))
    run_cli("run", "--adapter", "simulated", "--area", "core", "--seed", "7", "--examples", "8",
            "--adapter-opt", "platform=distributed", "--keep-going", "0", "--results", str(tmp_path / name), *extra)
    monkeypatch.delenv("MQCONFORM_TRACE")
    return trace


def test_two_runs_of_a_seed_leave_the_same_trace(tmp_path, monkeypatch):
    a, b = traced_run(tmp_path, monkeypatch, "a"), traced_run(tmp_path, monkeypatch, "b")
    assert T.load(a)
    code, out = run_cli("compare-traces", str(a), str(b))
    assert code == 0 and "same operations and got the same answers" in out


def test_a_system_that_answers_otherwise_is_named_at_the_first_answer_that_differs(tmp_path, monkeypatch):
    """The same seed on a queue manager that ignores priority: the traces part at the first get whose
    answer the fault changes, and the difference is the system's, not the kit's."""
    clean = traced_run(tmp_path, monkeypatch, "clean")
    faulty = traced_run(tmp_path, monkeypatch, "faulty", "--faults", "priority-ignored")
    d = T.first_divergence(T.load(clean), T.load(faulty))
    assert d is not None and d.kind == "system"
    assert d.first.op == d.second.op and isinstance(d.first.op, L.Get)
    # another message, or one where the clean queue manager had none left (a browse past the order)
    assert d.first.observed != d.second.observed
    code, out = run_cli("compare-traces", str(clean), str(faulty))
    assert code == 1 and "the system answered differently at step" in out and str(faulty) in out


def row(op, observed=L.OK, case=1):
    return {"area": "core", "platform": "distributed", "case": case, "op": L.to_json(op), "observed": L.to_json(observed)}


def test_clock_advances_and_generated_message_ids_are_left_out_and_a_different_operation_is_the_kit():
    got = lambda mid: L.Observation(message=L.ReturnedMessage(body="m", priority=0, persistence=0, msg_id=mid))  # noqa: E731
    get = L.Get(conn="a", handle="h", options=C.MQGMO_NO_SYNCPOINT)
    first = [row(L.Connect(conn="a")), row(L.AdvanceClock(tenths=3)), row(get, got("id-1"))]
    second = [row(L.Connect(conn="a")), row(get, got("id-2")), row(L.AdvanceClock(tenths=1))]
    first, second = T.steps(first), T.steps(second)
    assert T.first_divergence(first, second) is None
    third = T.steps([row(L.Connect(conn="a")), row(L.Disconnect(conn="a"))])
    d = T.first_divergence(first, third)
    assert d.kind == "kit" and d.first.number == 2 and isinstance(d.second.op, L.Disconnect)
    assert "a defect of the kit" in T.describe(d)
    d = T.first_divergence(first, first[:1])
    assert d.kind == "length" and d.first.op == get and d.second is None


def test_a_file_that_is_not_a_trace_is_one_line_and_exit_2(tmp_path, capsys):
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"area": "core"}) + "\n")
    good = tmp_path / "good.jsonl"
    good.write_text(json.dumps(row(L.Connect(conn="a"))) + "\n")
    for args in ((bad, good), (good, tmp_path / "missing.jsonl")):
        code, out = run_cli("compare-traces", *map(str, args))
        err = capsys.readouterr().err
        assert code == 2 and out == "" and err.count("\n") == 1 and "Traceback" not in err, err


def test_a_binary_or_empty_trace_is_one_line_and_exit_2_never_the_same(tmp_path, capsys):
    """A binary file is not UTF-8 text (it was an internal error); two empty files are not two runs that went
    alike (they were called "the same", exit 0): nothing was compared."""
    binary = tmp_path / "bin.jsonl"
    binary.write_bytes(bytes(range(256)))
    empty, blank = tmp_path / "empty.jsonl", tmp_path / "blank.jsonl"
    empty.write_text("")
    blank.write_text("\n  \n")
    good = tmp_path / "good.jsonl"
    good.write_text(json.dumps(row(L.Connect(conn="a"))) + "\n")
    for args, needle in (((binary, good), "not UTF-8 text"), ((empty, blank), "holds no step"),
                         ((good, empty), "holds no step")):
        code, out = run_cli("compare-traces", *map(str, args))
        err = capsys.readouterr().err
        assert code == 2 and out == "" and needle in err and err.count("\n") == 1 and "internal error" not in err, err
