"""A system with many departures at once (#64 item 5): twelve faults of every area injected together, one
default run, in process and through the JSON-lines protocol.  Every fault is found: one departure does not
hide the others, rounds spent on departures the recorded ones explain do not use up the search, and none of
their consequences is blamed on a rule none of them breaks."""

from __future__ import annotations

import json
import sys

import pytest

from adapters.simulated.faults import FAULTS
from tests.clikit import run_cli

#: Twelve faults, two or more an area, each of which a run on its own blames on its own rules alone.
MANY = ("priority-ignored", "get-inhibit-ignored", "backout-count-not-incremented", "q-full-ignored",
        "second-mark-accepted", "rrs-mark-allowed", "expired-message-returned", "expiry-zero-accepted",
        "trigmpri-ignored", "clwlprty-ignored", "rank-ignored", "dlq-context-not-passed")


def _blamed(results) -> set[str]:
    out = set()
    for path in (results / "failures").glob("*.json"):
        out.update(json.loads(path.read_text())["mismatch"]["blamed"])
    return out


@pytest.mark.parametrize("how", ["in process", "protocol"])
def test_one_default_run_finds_each_of_twelve_faults(how, tmp_path):
    assert len({FAULTS[f].area for f in MANY}) == 6 and len(MANY) == 12
    faults = ",".join(MANY)
    if how == "in process":
        system = ["--adapter", "simulated", "--faults", faults]
    else:
        system = ["--adapter", "subprocess", "--adapter-opt",
                  f"command={sys.executable} -m adapters.simulated.serve --faults {faults}"]
    code, out, err = run_cli("run", *system, "--seed", "7", "--results", tmp_path / "r")
    assert code == 1, out[-3000:] + err
    blamed = _blamed(tmp_path / "r")
    missed = {f: FAULTS[f].rules for f in MANY if not set(FAULTS[f].rules) & blamed}
    assert missed == {}, (missed, sorted(blamed))
    # and no departure is blamed on a rule none of them breaks: each consequence is read as the fault it comes of
    # (a DLQ handler's expired message kept, or its backout left uncounted, not a browse that skipped; an
    # ALTER's trigger message not the one a restart had removed).  A queue manager that never finds a message
    # expired (expired-message-returned) also leaves them at a z/OS expiry refresh: EXP-24 is broken too.
    own = {r for f in MANY for r in FAULTS[f].rules} | {"EXP-24"}
    assert blamed <= own, sorted(blamed - own)
