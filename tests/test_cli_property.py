"""The command line itself, under generated use: argument lists and input files for every subcommand that
reads input (valid ones, broken ones, binary ones, missing ones, ones edited a little).  Whatever it is
given, the kit never prints a traceback or an "internal error", and exits 0, 1 or 2 with the documented
meaning: 2 is one line on standard error; 0 and 1 say nothing is wrong with the input."""

from __future__ import annotations

import itertools
import json
import os
import shutil
import tempfile
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.clikit import faulty_run, run_cli

ROOT = Path(__file__).resolve().parent.parent
AREAS = ["core", "syncpoint", "expiry", "trigger", "cluster", "dlq"]
FAULTS = ["priority-ignored", "dlq-ignore-not-assumed", "expiry-not-decremented", "second-mark-accepted",
          "trigmpri-ignored", "clwlprty-ignored"]
#: Invocations per run of the test: at least 300 (the issue's bar), in about two minutes on two cores.
INVOCATIONS = 300


@pytest.fixture(scope="session")
def inputs(tmp_path_factory):
    """Valid inputs of every kind, made once: a result directory with a replay file, a trace, the documented
    cluster configuration, DLQ table and messages file."""
    base = tmp_path_factory.mktemp("cli-inputs")
    replay = faulty_run(base / "results", fault="priority-ignored", seed="3")
    trace = base / "trace.jsonl"
    old = os.environ.get("MQCONFORM_TRACE")
    os.environ["MQCONFORM_TRACE"] = str(trace)
    try:
        code, out, err = run_cli("run", "--adapter", "simulated", "--area", "core", "--examples", "2", "--seed", "1",
                                 "--results", base / "traced")
        assert code == 0, out + err
    finally:
        if old is None:
            os.environ.pop("MQCONFORM_TRACE", None)
        else:
            os.environ["MQCONFORM_TRACE"] = old
    return _Inputs({
        "replay": replay.read_bytes(),
        "results": base / "results",
        "trace": trace.read_bytes(),
        "cluster": (ROOT / "docs" / "cluster-example.toml").read_bytes(),
        "table": (ROOT / "docs" / "dlq" / "rules-example.tbl").read_bytes(),
        "messages": (ROOT / "docs" / "dlq" / "messages-example.toml").read_bytes(),
    })


class _Inputs(dict):
    """The valid inputs, named shortly where Hypothesis shows how a failing invocation was drawn."""

    def __repr__(self) -> str:
        return "inputs"


# ----------------------------------------------------------------------------- input files
#: A new name for every file an invocation is given (two arguments never share one by chance).
_NAMES = itertools.count()
json_values = st.recursive(st.none() | st.booleans() | st.integers(-3, 2**40) | st.text(max_size=8),
                           lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner,
                                                                                       max_size=3),
                           max_leaves=6)


def _paths(data, prefix=()):
    """Every path into parsed JSON, with the container at its end."""
    if isinstance(data, dict):
        for key, value in data.items():
            yield prefix + (key,)
            yield from _paths(value, prefix + (key,))
    elif isinstance(data, list):
        for i, value in enumerate(data):
            yield prefix + (i,)
            yield from _paths(value, prefix + (i,))


@st.composite
def edited_json(draw, original: bytes) -> bytes:
    """A JSON document (or JSON lines) with one value replaced by another or one key taken out."""
    text = original.decode()
    try:
        lines, index, data = [text], 0, json.loads(text)   # one document
    except ValueError:
        lines = text.splitlines()                            # JSON lines
        index = draw(st.integers(0, len(lines) - 1))
        data = json.loads(lines[index])
    paths = list(_paths(data))
    if not paths:
        return original
    path = draw(st.sampled_from(paths))
    holder = data
    for key in path[:-1]:
        holder = holder[key]
    if draw(st.booleans()) and isinstance(holder, dict):
        del holder[path[-1]]
    else:
        holder[path[-1]] = draw(json_values)
    lines[index] = json.dumps(data)
    return ("\n".join(lines) + "\n").encode()


@st.composite
def edited_text(draw, original: bytes) -> bytes:
    """The text with a line taken out, a line doubled, or a stretch of it replaced by other text."""
    lines = original.decode().splitlines(keepends=True)
    i = draw(st.integers(0, max(0, len(lines) - 1)))
    how = draw(st.sampled_from(["drop", "double", "replace"]))
    if how == "drop":
        lines = lines[:i] + lines[i + 1:]
    elif how == "double":
        lines = lines[:i + 1] + lines[i:]
    else:
        line = lines[i] if lines else ""
        a = draw(st.integers(0, len(line)))
        b = draw(st.integers(a, len(line)))
        lines[i:i + 1] = [line[:a] + draw(st.text(max_size=6)) + line[b:]]
    return "".join(lines).encode()


def contents(original: bytes, is_json: bool):
    """What a generated input file holds: the valid one, an edited one, or any bytes at all."""
    edits = edited_json(original) if is_json else edited_text(original)
    return st.one_of(st.just(original), edits, edits, st.binary(max_size=40), st.text(max_size=40).map(str.encode))


@st.composite
def input_file(draw, inputs: dict, kind: str, where: Path) -> str:
    """A path for an input of ``kind``: a file with generated contents, or no file, or a directory."""
    shape = draw(st.sampled_from(["file", "file", "file", "file", "missing", "directory"]))
    path = where / f"{kind}-{next(_NAMES)}"
    if shape == "directory":
        path.mkdir(exist_ok=True)
    elif shape == "file":
        path.write_bytes(draw(contents(inputs[kind], is_json=kind in ("replay", "trace"))))
    return str(path)


@st.composite
def out_path(draw, where: Path, suffixes=("",)) -> str:
    """Where a command is told to write: a new path, one that exists (a file, a directory with something in
    it), or one in a directory that does not exist."""
    shape = draw(st.sampled_from(["new", "new", "new", "file", "full", "nowhere"]))
    path = where / f"out-{next(_NAMES)}{draw(st.sampled_from(suffixes))}"
    if shape == "file":
        path.write_text("mine\n")
    elif shape == "full":
        path.mkdir(exist_ok=True)
        (path / "keep").write_text("mine\n")
    elif shape == "nowhere":
        path = where / "no-such-dir" / path.name
    return str(path)


def flag(name: str, values) -> st.SearchStrategy[list[str]]:
    """``[name, value]`` or nothing."""
    return st.one_of(st.just([]), st.builds(lambda v: [name, v], values))


def area_text():
    return st.lists(st.sampled_from(AREAS + ["bogus", ""]), min_size=1, max_size=3).map(",".join)


# ----------------------------------------------------------------------------- invocations
@st.composite
def invocation(draw, inputs: dict, where: Path) -> list[str]:
    command = draw(st.sampled_from(["run", "replay", "report", "dlq check", "dlq simulate", "cluster simulate",
                                    "compare-traces", "campaign", "listing", "protocol check"]))
    f = lambda kind: input_file(inputs, kind, where)  # noqa: E731
    if command == "run" and draw(st.booleans()):
        # a run that makes sense: an area or two of the simulated queue manager, perhaps with a fault
        args = ["run", "--adapter", "simulated", "--examples", draw(st.sampled_from(["1", "2"])),
                "--area", ",".join(draw(st.lists(st.sampled_from(AREAS), min_size=1, max_size=2, unique=True))),
                "--seed", str(draw(st.integers(0, 50))), "--results", str(where / f"run-{next(_NAMES)}")]
        return args + draw(flag("--faults", st.sampled_from(FAULTS))) + draw(st.sampled_from(
            [[], ["--no-minimise"], ["--keep-going", "0"], ["--jobs", "2"]]))
    if command == "run":
        args = ["run", "--adapter", draw(st.sampled_from(["simulated", "reference", "simulated", "no-such"])),
                "--examples", draw(st.sampled_from(["1", "2", "3", "0", "-1", "x"])),
                "--results", draw(out_path(where))]
        args += draw(flag("--area", area_text()))
        args += draw(flag("--faults", st.lists(st.sampled_from(FAULTS + ["nope", ""]), max_size=2).map(",".join)))
        args += draw(flag("--seed", st.sampled_from(["1", "7", "-5", "abc", str(2**70)])))
        args += draw(flag("--keep-going", st.sampled_from(["0", "1", "-2"])))
        args += draw(flag("--shrink-cases", st.sampled_from(["0", "5", "x"])))
        args += draw(flag("--jobs", st.sampled_from(["1", "2", "0", "x"])))
        args += draw(flag("--adapter-opt", st.sampled_from(["platform=distributed", "platform=zos", "platform=x",
                                                            "=", "novalue", "bogus=1"])))
        args += draw(st.sampled_from([[], ["--no-minimise"]]))
        return args
    if command in ("replay", "compare-traces") and draw(st.booleans()):
        # input the kit wrote itself: a replay to run, two traces to compare
        kind = "replay" if command == "replay" else "trace"
        paths = []
        for _ in range(1 if command == "replay" else 2):
            paths.append(where / f"{kind}-{next(_NAMES)}")
            paths[-1].write_bytes(inputs[kind])
        return [command, *map(str, paths)] + (draw(st.sampled_from([[], ["--adapter", "simulated"]]))
                                               if command == "replay" else [])
    if command == "replay":
        args = ["replay", draw(f("replay"))]
        args += draw(flag("--adapter", st.sampled_from(["simulated", "reference", "no-such"])))
        args += draw(flag("--tries", st.sampled_from(["1", "2", "0", "x"])))
        args += draw(st.sampled_from([[], ["--minimise"], ["--minimise", "--replays", "2"], ["--replays", "2"]]))
        args += draw(flag("--as-pytest", st.builds(str, out_path(where, (".py", ".txt")))))
        return args
    if command == "report":
        dirs = draw(st.lists(st.sampled_from([str(inputs["results"]), str(where / "missing"), str(where)]),
                             min_size=1, max_size=2))
        args = ["report", *dirs, "--out", draw(out_path(where, (".md", ".html", ".json", ".xml", "")))]
        args += draw(flag("--format", st.sampled_from(["md", "html", "json", "junit", "migration", "pdf"])))
        args += draw(flag("--baseline", st.sampled_from([str(inputs["results"]), str(where / "missing")])))
        args += draw(flag("--known-deviations", f("cluster")))
        args += draw(st.sampled_from([[], ["--report-only"]]))
        return args
    if command == "dlq check":
        return ["dlq", "check", draw(f("table"))]
    if command == "dlq simulate":
        return ["dlq", "simulate", draw(f("table")), "--messages", draw(f("messages"))]
    if command == "cluster simulate" and draw(st.booleans()):
        # a description that makes sense (the documented example), as a run above: the command gets to its answer
        return ["cluster", "simulate", str(ROOT / "docs" / "cluster-example.toml"), "--messages",
                draw(st.sampled_from(["1", "50"]))]
    if command == "cluster simulate":
        args = ["cluster", "simulate", draw(f("cluster"))]
        args += draw(flag("--messages", st.sampled_from(["1", "50", "0", "x"])))
        args += draw(flag("--plot", out_path(where, (".png", ""))))
        return args
    if command == "compare-traces":
        return ["compare-traces", draw(f("trace")), draw(f("trace"))]
    if command == "protocol check":
        servers = [f"{sys.executable} -m adapters.simulated.serve",
                   f"{sys.executable} {ROOT / 'tests' / 'data' / 'servers' / 'misbehave.py'} crash --after 2",
                   str(where / "no-such-server"), "", "'unclosed", "   "]
        args = ["protocol", "check", "--command", draw(st.sampled_from(servers))]
        args += draw(flag("--timeout", st.sampled_from(["5", "0", "-1", "x", "inf"])))
        args += draw(flag("--format", st.sampled_from(["text", "json", "xml"])))
        return args
    if command == "campaign":
        # a budget too short for any campaign: every such invocation ends before Spark would start
        args = ["campaign", "--adapter", draw(st.sampled_from(["simulated", "no-such"])), "--minutes", "0.1",
                "--out", draw(out_path(where))]
        args += draw(flag("--area", area_text()))
        args += draw(flag("--master", st.sampled_from(["local[2]", "local[x]", "spark://", "yarn"])))
        return args
    listing = draw(st.sampled_from(["rules", "faults", "adapters", "sources"]))
    args = [listing]
    if listing in ("rules", "faults"):
        args += draw(flag("--area", area_text()))
    args += draw(flag("--format", st.sampled_from(["text", "json", "markdown", "yaml"])))
    return args


def test_no_generated_invocation_crashes_or_gives_an_undocumented_exit(inputs):
    seen: dict[str, int] = {}

    @settings(max_examples=INVOCATIONS, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(data=st.data())
    def check(data):
        where = Path(tempfile.mkdtemp(prefix="cli-prop-"))
        cwd = os.getcwd()
        os.chdir(where)   # a run without --results writes under the working directory
        try:
            argv = data.draw(invocation(inputs, where))
            code, out, err = run_cli(*argv)
        finally:
            os.chdir(cwd)
            shutil.rmtree(where, ignore_errors=True)
        shown = f"mqconform {' '.join(argv)}\nexit {code}\n--- stdout\n{out[-1500:]}\n--- stderr\n{err[-1500:]}"
        assert "Traceback" not in out + err and "internal error" not in err, shown
        assert code in (0, 1, 2), shown
        if code == 2:
            assert err.startswith("mqconform: ") and err.count("\n") == 1, shown
        else:
            assert "mqconform: error" not in err, shown
        seen[argv[0]] = seen.get(argv[0], 0) + 1
        seen[f"{argv[0]} exit {code}"] = seen.get(f"{argv[0]} exit {code}", 0) + 1

    check()
    # every subcommand was tried
    assert {"run", "replay", "report", "dlq", "cluster", "compare-traces", "campaign", "protocol"} <= set(seen), seen
    # and not only refused: every subcommand that reads input also got as far as a verdict or a result
    for command in ("run", "replay", "report", "dlq", "cluster", "compare-traces", "protocol"):
        assert seen.get(f"{command} exit 0", 0) + seen.get(f"{command} exit 1", 0) > 0, (command, seen)
