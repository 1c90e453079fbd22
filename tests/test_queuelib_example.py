"""The example server over a real queue library (examples/queuelib-qm): it speaks the protocol, every check of
``mqconform protocol check`` passes, and a short run judges queuelib: what it cannot express is declined with
its reason and shown, what it can is run, and its departures are found."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from tests.clikit import run_cli

ROOT = Path(__file__).resolve().parent.parent
COMMAND = f"{sys.executable} {ROOT / 'examples' / 'queuelib-qm' / 'server.py'}"


def test_it_passes_every_protocol_check():
    code, out, err = run_cli("protocol", "check", "--command", COMMAND, "--format", "json")
    report = json.loads(out)
    assert code == 0 and report["passed"], [c for c in report["checks"] if c["result"] != "pass"]
    declined = [c for c in report["checks"] if c["detail"].startswith("declined: ")]
    assert any("no units of work" in c["detail"] for c in declined)


def test_a_short_run_finds_its_departures_and_shows_what_it_declined(tmp_path):
    code, out, err = run_cli("run", "--adapter", "subprocess", "--adapter-opt", f"command={COMMAND}", "--area", "core",
                             "--examples", "40", "--seed", "7", "--results", tmp_path / "r")
    assert code == 1, out[-2000:] + err
    rows = {row["rule"]: row for row in map(json.loads, (tmp_path / "r" / "rules.jsonl").read_text().splitlines())}
    # queuelib enforces no MAXDEPTH and generates no MsgId: each a departure, with a counterexample
    assert rows["CORE-27"]["verdict"] == "fail" and rows["CORE-11"]["verdict"] == "fail"
    # what it keeps no count of is not applicable with that reason; a restart is not applicable as declared
    assert rows["CORE-17"]["verdict"] == "not applicable" and "backout_count" in rows["CORE-17"]["not_applicable"]
    assert rows["CORE-32"]["verdict"] == "not applicable"
    run = json.loads((tmp_path / "r" / "run.json").read_text())
    assert any(reason.startswith("Put: queuelib has no units of work") for reason in run["declined"])
    assert run["capabilities"]["depends_on"] and run["system"]["version"].startswith("queuelib ")
