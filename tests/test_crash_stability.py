"""scripts/crash_stability.py: the same seed run several times, each rule's counts judged against the binomial
spread of their pooled rate."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _script():
    spec = importlib.util.spec_from_file_location("crash_stability", ROOT / "scripts" / "crash_stability.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _run(schedules: int, **broke: int) -> dict:
    return {"schedules": schedules, "rules": {rule.replace("_", "-"): {"schedules": k} for rule, k in broke.items()}}


def test_counts_within_the_spread_are_steady_and_one_far_outside_is_not():
    s = _script()
    import math

    from conformance.records.crash import binomial_interval

    low, high = binomial_interval(80, 0.25)
    cdf = lambda k: sum(math.comb(80, i) * 0.25 ** i * 0.75 ** (80 - i) for i in range(k + 1))  # noqa: E731
    assert cdf(low - 1) <= 0.025 < cdf(low) and cdf(high - 1) < 0.975 <= cdf(high)
    lines, steady = s.judge([_run(40, CORE_32=10), _run(40, CORE_32=12), _run(40, CORE_32=9)])
    assert steady and lines[0].startswith("CORE-32: pooled 26%")
    lines, steady = s.judge([_run(40, CORE_32=10), _run(40, CORE_32=11), _run(40, CORE_32=30)])
    assert not steady and "OUTSIDE" in lines[0]
    assert s.judge([_run(10), _run(10)]) == (["no run broke a rule"], True)


def test_a_simulated_fault_at_one_restart_in_four_is_steady_over_three_runs(tmp_path, capsys):
    s = _script()
    code = s.main(["--runs", "3", "--out", str(tmp_path), "--", "--adapter", "simulated", "--faults",
                   "restart-sometimes-loses-persistent", "--schedules", "30", "--seed", "3", "--tries", "0"])
    out = capsys.readouterr().out
    assert code == 0 and "Every run lies within" in out, out
    assert s.main(["--runs", "1", "--", "--adapter", "simulated"]) == 2
