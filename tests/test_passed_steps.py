"""A counterexample's steps that depart by rules its run had set aside, gone on past, are marked as such (``~``)
in the failure's text and in the reports: a reader sees there an answer MQ does not give that is not the
failure's own."""

import attrs
from pathlib import Path

from conformance.records.history import load_failure
from conformance.records.render import render_failure
from reports.common import failure_rows

HISTORY = Path(__file__).resolve().parent / "data" / "histories" / "rabbitmq-disconnect-backed-out-past-a-full-queue.json"


def test_a_put_accepted_past_a_full_queue_the_run_had_found_is_marked_and_named():
    """RabbitMQ: MQDISC backs out a put that other connections' puts, accepted past MAXDEPTH (CORE-28, found broken
    before), left without room.  Step 11 is that earlier departure: MQ refuses the put there."""
    failure = load_failure(HISTORY)
    passed = failure.passed(3)
    assert list(passed) == [10] and "CORE-28" in passed[10], passed
    text = render_failure(failure, 3)
    row = next(line for line in text.splitlines() if "'m11'" in line)
    assert row.startswith("~"), row
    assert "step 11: CORE-27, CORE-28" in text and "not this failure's departure" in text
    marks = [mark for mark, *_ in failure_rows(failure, passed)]
    assert marks.count("~") == 1 and marks[10] == "~" and marks[failure.mismatch.index] == ">>"


def test_a_history_with_nothing_set_aside_marks_no_step():
    failure = attrs.evolve(load_failure(HISTORY), set_aside=())
    assert failure.passed(3) == {}
    assert not any(line.startswith("~") for line in render_failure(failure, 3).splitlines())
