"""Answers read once are not checked again (adapters.subprocess): a history replayed while shrinking gets the same
answers many times, so an answer whose result is, to the byte, one already found valid for an operation of the
same kind gives the observation read before.  What that must never do: let through an answer it did not check, or
read an answer as right for an operation it does not answer."""

from __future__ import annotations

import sys
import textwrap

import pytest

from adapters.base import AdapterError
from adapters.subprocess import SubprocessAdapter
from reference_model import language as L

#: A server that answers every execute with the observation given for its operation's type, in order.
SERVER = textwrap.dedent('''
    import json, sys
    answers = json.loads(sys.argv[1])
    seen = {}
    for line in sys.stdin:
        request = json.loads(line)
        rid, method = request["id"], request["method"]
        if method == "hello":
            result = {"protocol": 1, "server": {"name": "scripted", "version": "0"},
                      "capabilities": {"areas": ["core"], "platforms": ["distributed"]}}
        elif method == "execute":
            kind = request["params"]["op"]["type"]
            n = seen[kind] = seen.get(kind, -1) + 1
            result = {"observation": answers[kind][min(n, len(answers[kind]) - 1)]}
        else:
            result = {}
        print(json.dumps({"id": rid, "result": result}), flush=True)
        if method == "shutdown":
            break
''')

OK = {"type": "Observation", "cc": 0, "rc": 0}
DEPTH = {"type": "Observation", "cc": 0, "rc": 0, "attrs": [["CURDEPTH", 0]]}


def _adapter(tmp_path, answers: dict) -> SubprocessAdapter:
    import json
    import shlex
    script = tmp_path / "server.py"
    script.write_text(SERVER)
    adapter = SubprocessAdapter(command=shlex.join([sys.executable, str(script), json.dumps(answers)]))
    adapter.start_case("c1", "distributed")
    return adapter


def test_the_same_answer_to_an_inquiry_of_more_names_is_still_refused_for_the_names_it_leaves_out(tmp_path):
    adapter = _adapter(tmp_path, {"InquireQueue": [DEPTH]})
    try:
        first = adapter.execute(L.InquireQueue(queue="Q1", names=("CURDEPTH",)))
        assert adapter.execute(L.InquireQueue(queue="Q1", names=("CURDEPTH",))) == first == L.from_json(DEPTH)
        with pytest.raises(AdapterError, match="leaving out MAXDEPTH"):
            adapter.execute(L.InquireQueue(queue="Q1", names=("CURDEPTH", "MAXDEPTH")))
    finally:
        adapter.close()


def test_an_invalid_answer_after_valid_ones_is_refused(tmp_path):
    wrong = {**OK, "cc": "0"}
    adapter = _adapter(tmp_path, {"Connect": [OK, OK, wrong]})
    try:
        for _ in range(2):
            assert adapter.execute(L.Connect(conn="a")) == L.from_json(OK)
        with pytest.raises(AdapterError, match="invalid answer to execute"):
            adapter.execute(L.Connect(conn="a"))
    finally:
        adapter.close()


def test_an_answer_read_before_is_read_again_only_from_the_same_text(tmp_path):
    # 0 and 0.0 are one number to Python (and to the schema), not to the language: an rc of 0.0 is refused
    adapter = _adapter(tmp_path, {"Connect": [OK, {**OK, "rc": 0.0}]})
    try:
        adapter.execute(L.Connect(conn="a"))
        with pytest.raises(AdapterError, match="invalid"):
            adapter.execute(L.Connect(conn="a"))
    finally:
        adapter.close()
