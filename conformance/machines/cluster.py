"""The ``cluster`` machine: cluster changes interleaved with puts to a cluster queue.

A local queue manager and four remote ones host instances of one cluster queue;
channels change state, workload attributes (rank, priority, weight, network
priority, CLWLUSEQ, CLWLMRUC) are altered, queue managers are suspended and
resumed, instances are added, removed and PUT-disabled, and messages are put
locally, over a cluster channel or as cluster PCF messages.  Every chosen
destination must be one the algorithm allows, and step 12's sequence makes the
shares follow the weights.
"""

from __future__ import annotations

from hypothesis import strategies as st
from hypothesis.stateful import initialize, rule

from conformance.machines.base import ConformanceMachine
from reference_model import language as L

LOCAL, REMOTES, QUEUE = "GW", ("QM1", "QM2", "QM3", "QM4"), "ORDERS"
CLUSTER = ("SALES",)
STATES = (0, 3, 3, 1, 2, 5, 6, 7, 8, 13)
remotes = st.sampled_from(REMOTES)


class ClusterMachine(ConformanceMachine):
    area = "cluster"

    @initialize(local_instance=st.booleans(), local_useq=st.sampled_from(("LOCAL", "ANY")),
                weights=st.lists(st.sampled_from((10, 25, 50, 75, 99)), min_size=4, max_size=4))
    def set_up(self, local_instance, local_useq, weights):
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

    @rule(qm=remotes, attr=st.sampled_from(("clwlrank", "clwlprty", "clwlwght", "netprty")),
          value=st.integers(min_value=1, max_value=9))
    def channel_workload(self, qm, attr, value):
        self._channel(f"TO.{qm}", **{attr: value * 10 if attr == "clwlwght" else value})

    @rule(qm=remotes, netprty=st.integers(min_value=0, max_value=9), local_sender=st.booleans())
    def second_channel(self, qm, netprty, local_sender):
        self._channel(f"TO.{qm}.B", qmgr=qm, clusters=CLUSTER, state=3, netprty=netprty, local_sender=local_sender)

    @rule(qm=st.sampled_from(REMOTES + (LOCAL,)), attr=st.sampled_from(("clwlrank", "clwlprty", "put_enabled")),
          value=st.integers(min_value=0, max_value=9))
    def instance_workload(self, qm, attr, value):
        if qm in self.instances:
            self._instance(qm, **{attr: bool(value % 2) if attr == "put_enabled" else value})

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
