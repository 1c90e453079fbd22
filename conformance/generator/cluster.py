"""The ``cluster`` machine: cluster changes interleaved with puts to a cluster queue.

A local queue manager and four remote ones host instances of one cluster queue;
channels change state, workload attributes (rank, priority, weight, network
priority, CLWLUSEQ, CLWLMRUC) are altered, queue managers are suspended and
resumed, instances are added, removed and PUT-disabled, and messages are put
locally, over a cluster channel or as cluster PCF messages.  Puts also name a
queue manager, directly or through queue-manager aliases the machine defines on
the remote queue managers, and outages leave only starting, retrying or stopped
channels, so the algorithm's fallbacks (steps 7 to 9) decide.  Every chosen
destination must be one the algorithm allows, and step 12's sequence makes the
shares follow the weights.
"""

from __future__ import annotations

from hypothesis import strategies as st
from hypothesis.stateful import initialize, precondition, rule


from conformance.generator.base import ConformanceMachine
from reference_model import language as L

LOCAL, REMOTES, QUEUE = "GW", ("QM1", "QM2", "QM3", "QM4"), "ORDERS"
#: The queue named by puts that name a queue manager (its own workload history).
QMGR_QUEUE = "PAYMENTS"
#: Queue-manager aliases: one a name of its own, one rerouting a real queue manager's name.
ALIASES = ("PAY.QM", "QM1")
CLUSTER = ("SALES",)
STATES = (0, 3, 3, 1, 2, 5, 6, 7, 8, 13)
#: Channel states an outage leaves, by the fallback step that admits them (7, 8, 9).
OUTAGE_STATES = ((1, 2, 4, 13), (5,), (6, 7, 8))
remotes = st.sampled_from(REMOTES)


class ClusterMachine(ConformanceMachine):
    area = "cluster"

    @initialize(local_instance=st.booleans(), local_useq=st.sampled_from(("LOCAL", "ANY")),
                weights=st.lists(st.sampled_from((10, 25, 50, 75, 99)), min_size=4, max_size=4), equal=st.booleans())
    def set_up(self, local_instance, local_useq, weights, equal):
        # (equal: every channel of the default weight, a second channel's too, so that step 12 shares alike)
        weights = [50] * len(REMOTES) if equal else weights
        self.qmgrs = {LOCAL: dict(clusters=CLUSTER, local=True, clwluseq=local_useq)}
        self.execute(L.SetClusterQueueManager(name=LOCAL, **self.qmgrs[LOCAL]))
        self.channels = {}
        self.instances = {}
        for qm, weight in zip(REMOTES, weights):
            # Known through its cluster-receiver channel; defined on its own only to suspend it.
            self.qmgrs[qm] = dict(clusters=CLUSTER)
            self._channel(f"TO.{qm}", qmgr=qm, clusters=CLUSTER, state=3, clwlwght=weight)
            self._instance(qm, clusters=CLUSTER)
        if local_instance:
            self._instance(LOCAL, clusters=CLUSTER)

    def _channel(self, name, **fields):
        self.channels[name] = {**self.channels.get(name, {}), **fields}
        self.execute(L.SetClusterChannel(name=name, **self.channels[name]))

    def _instance(self, qm, **fields):
        self.instances[qm] = {**self.instances.get(qm, {}), **fields}
        self.execute(L.SetClusterInstance(qmgr=qm, queue=QUEUE, **self.instances[qm]))

    def _qmgr(self, qm, **fields):
        self.qmgrs[qm] = {**self.qmgrs[qm], **fields}
        self.execute(L.SetClusterQueueManager(name=qm, **self.qmgrs[qm]))

    @rule(count=st.integers(min_value=1, max_value=12))
    def put_locally(self, count):
        for _ in range(count):
            self.execute(L.ClusterPut(queue=QUEUE))

    @rule(kind=st.sampled_from(("channel", "pcf")), sent=st.sets(remotes, max_size=2))
    def put_other(self, kind, sent):
        if kind == "channel":
            self.execute(L.ClusterPut(queue=QUEUE, put_locally=False))
        else:
            self.execute(L.ClusterPut(queue=QUEUE, pcf=True, already_sent=tuple(sorted(sent))))

    @rule(qm=remotes, state=st.sampled_from(STATES))
    def channel_state(self, qm, state):
        self._channel(f"TO.{qm}", state=state)

    @rule(deepest=st.integers(0, 2), picks=st.lists(st.integers(0, 99), min_size=8, max_size=8),
          count=st.integers(1, 4), by_qmgr=st.booleans())
    def outage(self, deepest, picks, count, by_qmgr):
        """Every channel leaves RUNNING for a state step 7 + ``deepest`` or a later step admits, then puts."""
        allowed = [st_ for group in OUTAGE_STATES[deepest:] for st_ in group]
        for name, pick in zip(sorted(self.channels), picks * 2):
            self._channel(name, state=allowed[pick % len(allowed)])
        for _ in range(count):
            self.execute(L.ClusterPut(queue=QMGR_QUEUE, qmgr=REMOTES[0]) if by_qmgr else L.ClusterPut(queue=QUEUE))

    @rule(named=st.sampled_from(tuple(dict.fromkeys(REMOTES[:2] + ALIASES))), count=st.integers(1, 6))
    def put_to_qmgr(self, named, count):
        for _ in range(count):
            self.execute(L.ClusterPut(queue=QMGR_QUEUE, qmgr=named))

    @precondition(lambda self: self.can(L.SetClusterAlias))
    @rule(name=st.sampled_from(ALIASES), host=st.sampled_from(REMOTES[1:]), put_enabled=st.booleans(),
          clwlrank=st.integers(0, 1), clwlprty=st.integers(0, 3))
    def qmgr_alias(self, name, host, put_enabled, clwlrank, clwlprty):
        self.execute(L.SetClusterAlias(name=name, qmgr=host, clusters=CLUSTER, put_enabled=put_enabled,
                                       clwlrank=clwlrank, clwlprty=clwlprty))

    @rule(qm=remotes, clusters=st.sampled_from((("OTHER",), CLUSTER + ("OTHER",), CLUSTER)))
    def channel_clusters(self, qm, clusters):
        self._channel(f"TO.{qm}", clusters=clusters)

    @rule(qm=remotes, attr=st.sampled_from(("clwlrank", "clwlprty", "clwlwght", "netprty")),
          value=st.integers(min_value=1, max_value=9))
    def channel_workload(self, qm, attr, value):
        self._channel(f"TO.{qm}", **{attr: value * 10 if attr == "clwlwght" else value})

    @rule(qm=remotes, netprty=st.integers(min_value=0, max_value=9), local_sender=st.booleans(),
          alike=st.booleans(), above=st.booleans())
    def second_channel(self, qm, netprty, local_sender, alike, above):
        """A second channel to a queue manager, of the first's rank; ``alike``: of its network priority too, where
        only CLWLPRTY can choose between them when a put names the queue manager (step 11a): one apart from the
        first's (``above``) or the first's."""
        first = self.channels[f"TO.{qm}"]
        prty = first.get("clwlprty", 0)
        if above:
            prty = prty + 1 if prty < 9 else prty - 1   # CLWLPRTY is 0 to 9
        self._channel(f"TO.{qm}.B", qmgr=qm, clusters=CLUSTER, state=3, clwlrank=first.get("clwlrank", 0),
                      clwlprty=prty, netprty=first.get("netprty", 0) if alike else netprty, local_sender=local_sender)

    @rule(qm=st.sampled_from(REMOTES + (LOCAL,)), attr=st.sampled_from(("clwlrank", "clwlprty", "put_enabled")),
          value=st.integers(min_value=0, max_value=9))
    def instance_workload(self, qm, attr, value):
        if qm in self.instances:
            self._instance(qm, **{attr: bool(value % 2) if attr == "put_enabled" else value})

    @rule(useq=st.sampled_from(("QMGR", "LOCAL", "ANY")))
    def local_instance_useq(self, useq):
        """The local instance's own CLWLUSEQ, or QMGR: the queue manager's."""
        if LOCAL in self.instances:
            self._instance(LOCAL, clwluseq=useq)

    @rule(qm=st.sampled_from(REMOTES + (LOCAL,)))
    def add_or_remove_instance(self, qm):
        if qm in self.instances:
            del self.instances[qm]
            self.execute(L.RemoveClusterInstance(qmgr=qm, queue=QUEUE))
        else:
            self._instance(qm, clusters=CLUSTER)

    @rule(qm=remotes, suspended=st.booleans())
    def suspend_or_resume(self, qm, suspended):
        self._qmgr(qm, suspended=suspended)

    @rule(useq=st.sampled_from(("LOCAL", "ANY")), mruc=st.sampled_from((1, 2, 3, 999999999)))
    def local_workload(self, useq, mruc):
        self._qmgr(LOCAL, clwluseq=useq, clwlmruc=mruc)
