"""Hypothesis state machines, one per rule area."""

from conformance.generator.cluster import ClusterMachine
from conformance.generator.core import CoreMachine
from conformance.generator.dlq import DlqMachine
from conformance.generator.expiry import ExpiryMachine
from conformance.generator.syncpoint import SyncpointMachine
from conformance.generator.trigger import TriggerMachine

#: The machine that exercises each area.
MACHINES = {
    "core": CoreMachine,
    "syncpoint": SyncpointMachine,
    "expiry": ExpiryMachine,
    "trigger": TriggerMachine,
    "cluster": ClusterMachine,
    "dlq": DlqMachine,
}
