"""Every fault of the simulated queue manager is found by the kit, and its replay reproduces it."""

import io
import json

import pytest

from adapters.simulated.faults import FAULTS
from conformance import cli

SEED = "7"
#: Faults the suite's seed misses within the default budget, each with a seed that finds it
#: (most seeds do; the record shows which).
SEEDS: dict[str, str] = {"segment-trigger-at-first": "5"}
#: Areas whose faults behave the same on every platform: checked on one, to keep the suite short.
ONE_PLATFORM = {"core": "distributed", "cluster": "distributed", "dlq": "distributed"}


def run_cli(*argv):
    out = io.StringIO()
    code = cli.main(list(argv), out=out)
    return code, out.getvalue()


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_fault_is_found_named_and_replayable(fault, tmp_path):
    spec = FAULTS[fault]
    platform = ["--adapter-opt", f"platform={ONE_PLATFORM[spec.area]}"] if spec.area in ONE_PLATFORM else []
    code, out = run_cli("run", "--adapter", "simulated", "--faults", fault, "--area", spec.area,
                        "--seed", SEEDS.get(fault, SEED), "--results", str(tmp_path), "--keep-going", "0", *platform)
    assert code == 1, out
    assert "Non-conformance" in out
    failures = sorted((tmp_path / "failures").glob("*.json"))
    assert failures  # one per platform on which the area ran and failed
    named = {r for f in failures for r in json.loads(f.read_text())["rules"]}
    assert named & set(spec.rules), (named, spec.rules)
    assert any(rule in out for rule in spec.rules)
    rules = {json.loads(line)["rule"]: json.loads(line)["verdict"]
             for line in (tmp_path / "rules.jsonl").read_text().splitlines()}
    assert any(rules[r] == "fail" for r in spec.rules)

    # the saved history fails again on the faulty queue manager...
    code, out = run_cli("replay", str(failures[0]))
    assert code == 1, out
    # ...and passes once the fault is gone
    code, out = run_cli("replay", str(failures[0]), "--adapter", "simulated")
    assert code == 0, out
