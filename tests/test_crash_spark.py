"""A crash campaign as Spark tasks: each task on an adapter of its own, the results merged, and a report of them."""

from __future__ import annotations

import json

import pytest

from tests.clikit import run_cli

pytestmark = pytest.mark.spark


def test_a_crash_campaign_on_spark_runs_its_tasks_and_merges_their_results(tmp_path):
    out = tmp_path / "c"
    code, text, err = run_cli("crash", "--adapter", "simulated", "--faults", "restart-keeps-nonpersistent",
                              "--schedules", "12", "--seed", "4", "--master", "local[2]", "--tasks", "3",
                              "--results", out)
    assert code == 1, text + err
    data = json.loads((out / "crash.json").read_text())
    parts = [json.loads(p.read_text()) for p in sorted((out / "tasks").glob("*.json"))]
    assert len(parts) == 3 and data["schedules"] == 12 == sum(p["schedules"] for p in parts)
    assert set(data["rules"]) == {"CORE-32"} and data["rules"]["CORE-32"]["schedules"] == sum(
        p["rules"].get("CORE-32", {}).get("schedules", 0) for p in parts)
    assert "ran in 3 tasks" in text and "Replay CORE-32: mqconform crash" in text
    saved = json.loads((out / "schedules" / "CORE-32.json").read_text())
    assert saved["rule"] == "CORE-32" and saved["ops"]
    # the merged result is a crash campaign's results as any other: the report reads it
    code, text, err = run_cli("report", out, "--out", tmp_path / "r.md")
    assert code == 1 and "CORE-32 " in text and "## Crash campaigns" in (tmp_path / "r.md").read_text(), text + err
