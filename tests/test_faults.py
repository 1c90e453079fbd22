"""Every fault of the simulated queue manager is found by the kit, and its replay reproduces it."""

import io
import json

import pytest

from adapters.simulated.faults import FAULTS
from conformance import cli
from tests.faultkit import FAULT_SEEDS, fault_run_args, seed_of

#: Faults whose counterexample breaks the fault's own rules and no other: relaxing any other rule the checker
#: mentions (conformance/checker/blame.py) leaves the history failing.  The other faults' counterexamples blame
#: further rules as well: some inherently (one observation two rules' relaxations both explain, as a
#: BackoutCount lost at a restart and a backout that never counted it), some because the model does not yet
#: name the rules per value there (expiry's discards and reports, trigger events, the DLQ handler's choices).
EXACT = frozenset({
    "backout-requeues-at-tail", "discard-rolled-back", "dlq-header-stripped", "dlq-table-change-applied", "expiry-not-decremented",
    "match-browse-next-restarts", "match-none-is-literal", "match-under-cursor-honoured", "no-trigger-on-monitor-open",
    "open-input-counted-group-wide", "skipped-lost-on-backout", "trigger-before-commit",
    "alias-put-disabled-chosen", "backout-count-lost-at-restart", "defprty-ignored", "defpsist-ignored", "msgid-not-generated", "msgid-generated-once", "backout-keeps-puts-with-mark", "backout-count-not-incremented",
    "backout-loses-get", "channel-state-ignored", "clwlprty-ignored", "cut-reconnects-silently", "define-replaces-queue", "depth-off-by-one",
    "disconnect-backs-out", "disconnected-connection-works", "every-twice-on-alter", "dlq-context-not-passed", "dlq-failure-not-backed-out", "dlq-no-dlh-processed",
    "every-delivered-at-backout", "exclusive-blocks-own-qmgr-only", "expired-message-returned",
    "expiry-counts-from-commit", "expiry-zero-accepted", "fifo-uses-message-priority",
    "fifo-within-priority-broken", "first-fires-on-nonempty", "first-while-open-for-input", "foreign-channel-to-qmgr", "get-inhibit-ignored",
    "hardenbo-ignored", "last-segment-unmarked", "local-not-preferred", "lock-kept-after-close", "mark-honoured-without-syncpoint",
    "match-correl-ignored", "mruc-ignored", "msg-too-big-accepted", "netprty-ignored", "no-reset-on-change",
    "no-trigger-at-close", "open-options-unchecked", "priority-discards-lower", "priority-ignored", "put-disabled-chosen",
    "put-without-output-open", "q-full-ignored", "qmgr-clwlprty-ignored", "rank-ignored", "report-at-eligibility",
    "restart-keeps-nonpersistent", "rrs-mark-allowed", "second-mark-accepted", "segmentation-ignored", "segment-trigger-at-first",
    "segment-triggers-each", "suspended-preferred", "syncpoint-puts-queued-at-commit", "trigint-ignored",
    "trigmpri-ignored", "uncommitted-put-not-counted", "uncommitted-put-visible", "weights-ignored",
    "xmit-inner-expiry-unchecked", "xmit-inner-not-zeroed",
})


def test_the_exact_faults_are_faults():
    assert EXACT <= set(FAULTS)


def run_cli(*argv):
    out = io.StringIO()
    code = cli.main(list(argv), out=out)
    return code, out.getvalue()


def test_every_fault_has_a_measured_seed():
    assert sorted(FAULT_SEEDS) == sorted(FAULTS), "run scripts/fault_seeds.py --faults NEW --write"


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_fault_is_found_named_and_replayable(fault, tmp_path):
    spec = FAULTS[fault]
    code, out = run_cli(*fault_run_args(fault, seed_of(fault), str(tmp_path)))
    assert code == 1, out
    assert "Non-conformance" in out
    failures = sorted((tmp_path / "failures").glob("*.json"))
    assert failures  # one per platform on which the area ran and failed
    named = {r for f in failures for r in json.loads(f.read_text())["rules"]}
    assert named & set(spec.rules), (named, spec.rules)
    if fault in EXACT:   # failed for its own rules only: every other rule mentioned is not broken by it
        assert named <= set(spec.rules), f"{fault} blames {sorted(named - set(spec.rules))} besides {spec.rules}"
    assert any(rule in out for rule in spec.rules)
    rules = {json.loads(line)["rule"]: json.loads(line)["verdict"]
             for line in (tmp_path / "rules.jsonl").read_text().splitlines()}
    assert any(rules[r] in ("fail", "one of") for r in spec.rules)

    # the saved history fails again on the faulty queue manager...
    code, out = run_cli("replay", str(failures[0]))
    assert code == 1, out
    # ...and passes once the fault is gone
    code, out = run_cli("replay", str(failures[0]), "--adapter", "simulated")
    assert code == 0, out


def test_a_lock_kept_past_its_handle_is_failed_under_its_own_rule_alone_in_a_run_that_keeps_going(tmp_path):
    """A queue manager that keeps a browse lock after its handle closes: once the run has found CORE-21 broken,
    the message missing from other handles' gets later, or a lower-priority one returned in its place, is that
    same departure, not one of CORE-01 or CORE-04 (the model notes that the message owes its being available
    again to the lock's release).  And the counterexample is the one that leaves no doubt: "one of CORE-04 /
    CORE-21" narrowed, while minimising, to the queue holding the locked message alone.

    30 cases, not the default 200: the run still keeps going past CORE-21 and meets the fault's later departures
    (a model whose released lock leaves the message's provenance alone fails them under CORE-01, CORE-04, CORE-05
    and CORE-29 at 20 cases already), and a minimiser that keeps no departure blamed on fewer rules leaves "one
    of CORE-04 / CORE-21" (also at 20): both fail this test, as at the default budget."""
    code, out = run_cli("run", "--adapter", "simulated", "--adapter-opt", "faults=lock-kept-after-close", "--area",
                        "core", "--seed", "1", "--examples", "30", "--results", str(tmp_path))
    assert code == 1, out
    rows = [json.loads(line) for line in (tmp_path / "rules.jsonl").read_text().splitlines()]
    assert {r["rule"] for r in rows if r["verdict"] in ("fail", "one of")} == {"CORE-21"}, out
    for path in (tmp_path / "failures").glob("*.json"):
        failure = json.loads(path.read_text())
        assert failure["rules"] == ["CORE-21"] and len(failure["steps"]) <= 9, (path.name, len(failure["steps"]))
