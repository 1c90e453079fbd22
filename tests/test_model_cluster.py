"""Hand-written cases for the cluster workload management algorithm (IBM's topic of that title), step by step."""

from collections import Counter

import pytest

from reference_model import cluster as W

CL = {"CL1"}


def cluster(*, queues=(), channels=(), qmgrs=None, local="LOCAL"):
    names = {q.qmgr for q in queues} | {c.qmgr for c in channels} | {local}
    qms = qmgrs or [W.QueueManager(name=n, clusters=CL) for n in sorted(names)]
    return W.Cluster(local=local, qmgrs=qms, queues=queues, channels=channels)


def q(qmgr, **kw):
    return W.QueueInstance(name="Q", qmgr=qmgr, clusters=kw.pop("clusters", CL), **kw)


def ch(qmgr, **kw):
    return W.Channel(name=kw.pop("name", f"TO.{qmgr}"), qmgr=qmgr, clusters=kw.pop("clusters", CL), **kw)


def allowed(c, msg=W.Message(queue="Q"), history=None):
    return set(W.choose(c, msg, history).allowed)


def test_step1_put_disabled_and_foreign_clusters_are_eliminated():
    c = cluster(queues=[q("A", put_enabled=False), q("B"), q("C", clusters={"OTHER"})],
                channels=[ch("A"), ch("B"), ch("C")])
    choice = W.choose(c, W.Message(queue="Q"))
    assert set(choice.allowed) == {"B/TO.B"}
    assert choice.eliminated["A/TO.A"] == "CLWL-01" and choice.eliminated["C/TO.C"] == "CLWL-01"


@pytest.mark.parametrize("queue_useq, qmgr_useq, put_locally, local_only", [
    ("LOCAL", "ANY", True, True), ("QMGR", "LOCAL", True, True), ("QMGR", "ANY", True, False),
    ("ANY", "LOCAL", True, False), ("ANY", "ANY", False, True),
])
def test_step3_local_instance_and_clwluseq(queue_useq, qmgr_useq, put_locally, local_only):
    c = cluster(queues=[q("LOCAL", clwluseq=queue_useq), q("B")], channels=[ch("B")],
                qmgrs=[W.QueueManager(name="LOCAL", clusters=CL, clwluseq=qmgr_useq),
                       W.QueueManager(name="B", clusters=CL)])
    result = allowed(c, W.Message(queue="Q", put_locally=put_locally))
    assert (result == {"LOCAL"}) == local_only


def test_step4_pcf_messages_skip_queue_managers_already_sent():
    c = cluster(queues=[q("A"), q("B")], channels=[ch("A"), ch("B")])
    assert allowed(c, W.Message(queue="Q", pcf=True, already_sent={"A"})) == {"B/TO.B"}


def test_step4a_channel_rank_before_channel_state():
    c = cluster(queues=[q("A"), q("B")], channels=[ch("A", clwlrank=5, state=W.MQCHS_STOPPED), ch("B")])
    assert allowed(c) == {"A/TO.A"}  # the higher rank wins even though its channel is stopped


def test_step4b_queue_rank():
    c = cluster(queues=[q("A", clwlrank=1), q("B", clwlrank=3)], channels=[ch("A"), ch("B")])
    assert allowed(c) == {"B/TO.B"}


def test_step5_resumed_before_suspended():
    c = cluster(queues=[q("A"), q("B")], channels=[ch("A"), ch("B")],
                qmgrs=[W.QueueManager(name="LOCAL", clusters=CL), W.QueueManager(name="A", clusters=CL, suspended=True),
                       W.QueueManager(name="B", clusters=CL)])
    assert allowed(c) == {"B/TO.B"}


def test_steps6_to_9_widen_channel_states_only_when_nothing_is_left():
    running = cluster(queues=[q("A"), q("B")], channels=[ch("A", state=W.MQCHS_RETRYING), ch("B", state=W.MQCHS_RUNNING)])
    assert allowed(running) == {"B/TO.B"}
    starting = cluster(queues=[q("A"), q("B")], channels=[ch("A", state=W.MQCHS_RETRYING), ch("B", state=W.MQCHS_STARTING)])
    assert allowed(starting) == {"B/TO.B"}  # step 7 before step 8
    stopped = cluster(queues=[q("A"), q("B")], channels=[ch("A", state=W.MQCHS_STOPPED), ch("B", state=W.MQCHS_PAUSED)])
    assert allowed(stopped) == {"A/TO.A", "B/TO.B"}  # step 9


def test_step10_pcf_prefers_local_cluster_senders():
    c = cluster(queues=[q("A"), q("B")], channels=[ch("A", local_sender=True), ch("B")])
    assert allowed(c, W.Message(queue="Q", pcf=True)) == {"A/TO.A"}


def test_step11_highest_netprty_per_queue_manager():
    c = cluster(queues=[q("A")], channels=[ch("A", name="A1", netprty=1), ch("A", name="A2", netprty=4)])
    assert allowed(c) == {"A/A2"}


def test_step11b_highest_queue_priority():
    c = cluster(queues=[q("A", clwlprty=2), q("B", clwlprty=7)], channels=[ch("A"), ch("B")])
    assert allowed(c) == {"B/TO.B"}


def test_step11c_most_recently_used_limit():
    qms = [W.QueueManager(name="LOCAL", clusters=CL, clwlmruc=2)] + [W.QueueManager(name=n, clusters=CL) for n in "ABC"]
    c = cluster(queues=[q(n) for n in "ABC"], channels=[ch(n) for n in "ABC"], qmgrs=qms)
    h = W.WorkloadHistory(numbers={"A/TO.A": 3, "B/TO.B": 1, "C/TO.C": 2}, last_number=3)
    choice = W.choose(c, W.Message(queue="Q"), h)
    assert choice.eliminated.get("B/TO.B") == "CLWL-11c"


def test_step12_least_recently_used_follows_the_weights():
    c = cluster(queues=[q("A"), q("B")], channels=[ch("A", clwlwght=75), ch("B", clwlwght=25)])
    msg, h, counts = W.Message(queue="Q"), W.WorkloadHistory(), Counter()
    for _ in range(400):
        choice = W.choose(c, msg, h)
        pick = sorted(choice.allowed)[0]
        counts[pick] += 1
        h = W.advance(c, msg, h, pick)
    assert counts["A/TO.A"] / 400 == pytest.approx(0.75, abs=0.02)
    assert W.expected_shares(c, msg) == {"A/TO.A": 0.75, "B/TO.B": 0.25}


def test_step12_factors_reset_when_workload_attributes_change_or_destinations_appear():
    c = cluster(queues=[q("A"), q("B")], channels=[ch("A", clwlwght=99), ch("B", clwlwght=1)])
    msg, h = W.Message(queue="Q"), W.WorkloadHistory()
    for pick in ("A/TO.A", "B/TO.B", "A/TO.A"):
        assert pick in allowed(c, msg, h)
        h = W.advance(c, msg, h, pick)
    assert allowed(c, msg, h) == {"A/TO.A"}  # factors A=20, B=1000: A is least used
    altered = cluster(queues=[q("A"), q("B", clwlprty=0)], channels=[ch("A", clwlwght=99), ch("B", clwlwght=2)])
    # reset: every factor is zero, so the lowest DestSeqNumber (B's 2 against A's 3) decides
    assert allowed(altered, msg, h) == {"B/TO.B"}
    grown = cluster(queues=[q("A"), q("B"), q("C")],
                    channels=[ch("A", clwlwght=99), ch("B", clwlwght=1), ch("C")])
    assert allowed(grown, msg, h) == {"C/TO.C"}  # new destination, never used: DestSeqNumber 0


def test_advance_rejects_a_destination_the_algorithm_does_not_allow():
    c = cluster(queues=[q("A"), q("B", put_enabled=False)], channels=[ch("A"), ch("B")])
    with pytest.raises(ValueError):
        W.advance(c, W.Message(queue="Q"), W.WorkloadHistory(), "B/TO.B")


def test_cluster_put_operation_allows_every_tie_and_names_the_eliminating_step():
    from conformance.checker.sequential import ModelTracker
    from reference_model import language as L

    t = ModelTracker("distributed")
    setup = [L.SetClusterQueueManager(name="GW", clusters=["C"], local=True)]
    for qm in ("A", "B"):
        setup += [L.SetClusterQueueManager(name=qm, clusters=["C"]),
                  L.SetClusterInstance(qmgr=qm, queue="Q", clusters=["C"], put_enabled=qm == "A"),
                  L.SetClusterChannel(name=f"TO.{qm}", qmgr=qm, clusters=["C"], state=3)]
    for op in setup:
        assert t.advance(op, L.OK).mismatch is None
    wrong = t.advance(L.ClusterPut(queue="Q"), L.Observation(attrs={"DESTINATION": "B/TO.B"}))
    assert wrong.mismatch is not None and wrong.mismatch.rules[0] == "CLWL-01"


@pytest.mark.parametrize("suspend_b", [False, True])
def test_a_queue_manager_known_only_through_its_channel(suspend_b):
    """MQ knows a remote cluster queue manager through its cluster-receiver channel: no
    separate definition is needed, and it is not suspended unless one says so."""
    from adapters.registry import create_adapter
    from conformance.checker.sequential import ModelTracker
    from reference_model import language as L

    setup = [L.SetClusterQueueManager(name="GW", clusters=["C"], local=True)]
    for qm in ("A", "B"):
        setup += [L.SetClusterChannel(name=f"TO.{qm}", qmgr=qm, clusters=["C"], state=3),
                  L.SetClusterInstance(qmgr=qm, queue="Q", clusters=["C"])]
    if suspend_b:
        setup.append(L.SetClusterQueueManager(name="B", clusters=["C"], suspended=True))
    t = ModelTracker("distributed")
    sim = create_adapter("simulated", {})
    for op in setup:
        assert t.advance(op, sim.execute(op)).mismatch is None
    seen = set()
    for _ in range(4):
        op = L.ClusterPut(queue="Q")
        observed = sim.execute(op)
        assert t.advance(op, observed).mismatch is None
        seen.add(dict(observed.attrs)["DESTINATION"])
    assert seen == ({"A/TO.A"} if suspend_b else {"A/TO.A", "B/TO.B"})
    sim.close()


def test_an_instance_on_a_queue_manager_nobody_defined_is_a_bad_history():
    from conformance.checker.sequential import ModelTracker
    from reference_model import language as L
    from reference_model.model import HistoryError

    t = ModelTracker("distributed")
    for op in (L.SetClusterQueueManager(name="GW", clusters=["C"], local=True),
               L.SetClusterInstance(qmgr="X", queue="Q", clusters=["C"])):
        t.advance(op, L.OK)
    with pytest.raises(HistoryError):
        t.advance(L.ClusterPut(queue="Q"), L.Observation(attrs={"DESTINATION": "X"}))


# ---------------------------------------------------------------- puts naming a queue manager

def alias(name, host, **kw):
    return W.QmgrAlias(name=name, qmgr=host, clusters=kw.pop("clusters", CL), **kw)


def qmgr_put(target):
    return W.Message(queue="Q", qmgr=target)


def test_step2_put_disabled_aliases_and_channels_outside_the_local_clusters_are_eliminated():
    c = cluster(channels=[ch("X"), ch("X", name="TO.X.OTHER", clusters={"OTHER"}), ch("H1"), ch("H2")])
    c = attrs_evolve(c, aliases=[alias("X", "H1"), alias("X", "H2", put_enabled=False)])
    choice = W.choose(c, qmgr_put("X"))
    assert choice.eliminated["X/TO.X.OTHER"] == "CLWL-02"
    assert choice.eliminated["H2/TO.H2"] == "CLWL-02"
    assert set(choice.allowed) == {"X/TO.X", "H1/TO.H1"}


def test_step4a_ranks_aliases_and_channels_together():
    c = cluster(channels=[ch("X", clwlrank=3), ch("H1", clwlrank=9)])
    c = attrs_evolve(c, aliases=[alias("X", "H1", clwlrank=5)])
    # The alias's rank, not its host channel's, is compared with the direct channel's.
    assert allowed(c, qmgr_put("X")) == {"H1/TO.H1"}
    c = attrs_evolve(c, aliases=[alias("X", "H1", clwlrank=1)])
    assert allowed(c, qmgr_put("X")) == {"X/TO.X"}


def test_step11a_keeps_the_highest_clwlprty_of_channels_and_aliases():
    c = cluster(channels=[ch("X", clwlprty=2), ch("X", name="TO.X.B", clwlprty=7), ch("H1", clwlprty=0)])
    c = attrs_evolve(c, aliases=[alias("X", "H1", clwlprty=7)])
    choice = W.choose(c, qmgr_put("X"))
    assert choice.eliminated["X/TO.X"] == "CLWL-11a"
    assert set(choice.finalists) == {"X/TO.X.B", "H1/TO.H1"}
    # Step 11b (queue priority) does not apply when a queue manager is being chosen.
    assert "CLWL-11b" not in dict(choice.trace)


def test_a_put_naming_the_local_queue_manager_or_an_unknown_one_has_no_cluster_destination():
    c = cluster(channels=[ch("X")])
    assert allowed(c, qmgr_put("LOCAL")) == set() and allowed(c, qmgr_put("NOWHERE")) == set()


@pytest.mark.parametrize("states, step, finalists", [
    ((5, 6), "CLWL-08", {"A/TO.A"}), ((7, 8), "CLWL-09", {"A/TO.A", "B/TO.B"}), ((1, 6), "CLWL-07", {"A/TO.A"}),
    ((6, 13), "CLWL-07", {"B/TO.B"})])
def test_channel_fallbacks_when_nothing_better_remains(states, step, finalists):
    c = cluster(queues=[q("A"), q("B")], channels=[ch("A", state=states[0]), ch("B", state=states[1])])
    choice = W.choose(c, W.Message(queue="Q"))
    assert dict(choice.trace)[step] and set(choice.finalists) == finalists


def attrs_evolve(c, **kw):
    import attrs
    return attrs.evolve(c, **kw)


def test_ignoring_a_step_is_worked_out_through_the_steps_after_it():
    """A step that a queue manager ignores changes what the later steps choose among: here step 7 (channel states
    when no INACTIVE or RUNNING channel is left) would drop A's RETRYING channel; ignored, step 11c's two most
    recently used channels are A's and B's, and step 12 then picks B, which MQ's step 12 eliminated."""
    qms = [W.QueueManager(name="LOCAL", clusters=CL, clwlmruc=2)] + [W.QueueManager(name=n, clusters=CL) for n in "ABC"]
    c = cluster(queues=[q(n) for n in "ABC"], qmgrs=qms,
                channels=[ch("A", state=W.MQCHS_RETRYING), ch("B", state=W.MQCHS_BINDING),
                          ch("C", state=W.MQCHS_BINDING)])
    h = W.WorkloadHistory(numbers={"A/TO.A": 2, "B/TO.B": 1}, last_number=2)
    msg = W.Message(queue="Q")
    assert set(W.choose(c, msg, h).allowed) == {"C/TO.C"}
    assert W.choose(c, msg, h).eliminated["B/TO.B"] == "CLWL-12"
    assert set(W.choose(c, msg, h, skip="CLWL-07").allowed) == {"B/TO.B"}
    assert set(W.choose(c, msg, h, skip="CLWL-11").allowed) == {"C/TO.C"}   # a step that eliminated nothing


def test_a_destination_a_later_step_eliminated_is_also_the_rule_of_an_earlier_step_ignored():
    """The checker names, for a destination MQ's step 12 eliminated, step 12 and every earlier step whose being
    ignored leads to it: each alone explains the put, and the history does not say which the system broke."""
    from conformance.checker.sequential import ModelTracker
    from reference_model import language as L

    t = ModelTracker("distributed")
    setup = [L.SetClusterQueueManager(name="GW", clusters=["C"], local=True, clwlmruc=2)]
    for qm in "ABC":
        setup += [L.SetClusterQueueManager(name=qm, clusters=["C"]),
                  L.SetClusterInstance(qmgr=qm, queue="Q", clusters=["C"]),
                  L.SetClusterChannel(name=f"TO.{qm}", qmgr=qm, clusters=["C"], state=W.MQCHS_RUNNING)]
    for op in setup:
        assert t.advance(op, L.OK).mismatch is None
    for dest in ("B/TO.B", "A/TO.A"):   # B and A used once each, A last (C never: its factor is the lowest)
        assert t.advance(L.ClusterPut(queue="Q"), L.Observation(attrs={"DESTINATION": dest})).mismatch is None, dest
    for qm, state in (("A", W.MQCHS_RETRYING), ("B", W.MQCHS_BINDING), ("C", W.MQCHS_BINDING)):
        assert t.advance(L.SetClusterChannel(name=f"TO.{qm}", qmgr=qm, clusters=["C"], state=state), L.OK).mismatch \
            is None
    # MQ: step 7 keeps B and C, step 12 the one never used, C.  Step 7 ignored: 11c keeps A and B, 12 picks B.
    wrong = t.advance(L.ClusterPut(queue="Q"), L.Observation(attrs={"DESTINATION": "B/TO.B"}))
    assert wrong.mismatch is not None and wrong.mismatch.rules[:2] == ("CLWL-12", "CLWL-07"), wrong.mismatch.rules
