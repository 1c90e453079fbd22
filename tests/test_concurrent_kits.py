"""Kit processes side by side on one machine (#65 item 8): two runs against RabbitMQ at once, each with its
own private broker (its own ports, Erlang node name, epmd, directories), neither disturbs the other, and
both leave nothing behind."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import psutil
import pytest

from adapters.brokers import server

pytestmark = [pytest.mark.broker, pytest.mark.skipif(
    server("rabbitmq").installed() is not None, reason="rabbitmq not installed (bash scripts/system-packages.sh)")]


def _verdicts(directory) -> dict[str, str]:
    return {r["rule"]: r["verdict"] for r in map(json.loads, (directory / "rules.jsonl").read_text().splitlines())}


def test_two_broker_runs_at_once_each_get_their_own_broker_and_the_verdicts_of_one_alone(tmp_path):
    env = {**os.environ, "TMPDIR": str(tmp_path), "MQCONFORM_RUN_DIR": str(tmp_path / "no-shared-run-dir")}
    command = [sys.executable, "-m", "conformance.cli", "run", "--adapter", "rabbitmq", "--area", "core",
               "--examples", "4", "--keep-going", "0", "--seed", "11"]
    procs = [subprocess.Popen([*command, "--results", str(tmp_path / f"r{n}")], stdin=subprocess.DEVNULL,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
             for n in (1, 2)]
    outputs = []
    try:
        for proc in procs:
            outputs.append(proc.communicate(timeout=600))
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
    for proc, (out, err) in zip(procs, outputs):
        assert proc.returncode in (0, 1), out[-2000:] + err
    brokers = [json.loads((tmp_path / f"r{n}" / "run.json").read_text())["system"] for n in (1, 2)]
    assert all("private" in json.dumps(b) for b in brokers), brokers
    assert brokers[0] != brokers[1], "both runs were given the same broker"
    # core departures on RabbitMQ do not depend on timing: the same seed, the same verdicts, run side by side
    first, second = _verdicts(tmp_path / "r1"), _verdicts(tmp_path / "r2")
    assert first == second, {r: (first[r], second.get(r)) for r in first if first[r] != second.get(r)}
    assert "pass" in first.values()
    # nothing of either is left running, and their private directories are gone
    left = [p.info["cmdline"] for p in psutil.process_iter(["cmdline", "environ"])
            if str(tmp_path) in " ".join(p.info.get("cmdline") or [])
            or str(tmp_path) in json.dumps(p.info.get("environ") or {})]
    assert not left, left
    assert not list(tmp_path.glob("mqconform-rabbitmq-*"))
    assert not (tmp_path / "no-shared-run-dir").exists()
