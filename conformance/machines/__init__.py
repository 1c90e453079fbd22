"""Hypothesis state machines, one per rule area."""

from conformance.machines.cluster import ClusterMachine
from conformance.machines.core import CoreMachine
from conformance.machines.dlq import DlqMachine
from conformance.machines.expiry import ExpiryMachine
from conformance.machines.syncpoint import SyncpointMachine
from conformance.machines.trigger import TriggerMachine

#: The machine that exercises each area.
MACHINES = {
    "core": CoreMachine,
    "syncpoint": SyncpointMachine,
    "expiry": ExpiryMachine,
    "trigger": TriggerMachine,
    "cluster": ClusterMachine,
    "dlq": DlqMachine,
}
