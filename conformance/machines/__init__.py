"""Hypothesis state machines, one per rule area."""

from conformance.machines.core import CoreMachine

#: The machine that exercises each area.
MACHINES = {
    "core": CoreMachine,
}
