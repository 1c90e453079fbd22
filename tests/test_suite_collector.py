"""The suite runs each test with the cyclic collector tuned as the kit tunes it for its own work (conftest.py)."""

import gc

from conformance.runner.collector import COLLECTOR_THRESHOLDS


def test_a_test_runs_with_the_collector_tuned_and_what_the_process_held_frozen():
    assert gc.get_threshold() == COLLECTOR_THRESHOLDS
    assert gc.get_freeze_count() > 0
