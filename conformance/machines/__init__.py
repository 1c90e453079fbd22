"""Hypothesis state machines, one per rule area."""

from conformance.machines.core import CoreMachine
from conformance.machines.expiry import ExpiryMachine
from conformance.machines.syncpoint import SyncpointMachine

#: The machine that exercises each area.
MACHINES = {
    "core": CoreMachine,
    "syncpoint": SyncpointMachine,
    "expiry": ExpiryMachine,
}
