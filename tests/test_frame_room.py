"""A run's frames stay in one chunk of the interpreter's frame stack, however deep its caller
(conformance/runner/stack.py): a stack that goes up and down across the end of a chunk maps and unmaps one at
every call, which cost a run of the core area up to twice its CPU at some depths of its caller."""

import inspect
import resource
import threading

import pytest

from conformance import cli
from conformance.runner import concurrent, crash, engine, minimise, stack
from conformance.runner.stack import with_frame_room

#: Depths of the caller tried, in frames of :func:`_at_depth` (about 100 bytes each): more than a chunk of 16 KiB, so
#: that the end of one falls among them.
DEPTHS = range(0, 260)
ROUNDS = 1_000


def _page_faults() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


def _down(n: int) -> int:
    return 0 if n == 0 else _down(n - 1) + 1


def _up_and_down() -> None:
    """The stack going up and down by a few frames, many times over, as a run's steps make it."""
    for _ in range(ROUNDS):
        _down(5)


def _at_depth(depth: int, call) -> None:
    if depth == 0:
        call()
    else:
        _at_depth(depth - 1, call)


def _most_page_faults(call) -> int:
    """The most page faults ``call`` made, called from each of :data:`DEPTHS`."""
    most = 0
    for depth in DEPTHS:
        before = _page_faults()
        _at_depth(depth, call)
        most = max(most, _page_faults() - before)
    return most


def test_without_room_a_stack_going_up_and_down_at_the_end_of_a_chunk_faults_at_every_round():
    """The measure the next test relies on: on this interpreter, some depth of the caller puts the end of a chunk
    where the work goes up and down, and each round then maps a chunk and faults its page in."""
    assert _most_page_faults(_up_and_down) >= ROUNDS * 9 // 10


def test_with_room_the_same_work_faults_no_more_at_any_depth_of_its_caller():
    with_frame_room(lambda: None)()   # the room is made once in a process, on first use
    assert _most_page_faults(with_frame_room(_up_and_down)) < ROUNDS // 4


def test_a_call_inside_the_room_takes_the_room_it_is_in_and_the_room_is_left_after_an_error():
    seen = []

    @with_frame_room
    def inner():
        seen.append(stack._inside.room)
        return len(inspect.stack(0))

    @with_frame_room
    def outer():
        seen.append(stack._inside.room)
        return len(inspect.stack(0)), inner()

    here = len(inspect.stack(0))
    depth_outer, depth_inner = outer()
    assert seen == [True, True]
    # outer sits beneath the room's frame and its own wrapper; inner adds only its wrapper
    assert depth_outer == here + 4 and depth_inner == depth_outer + 2
    assert not stack._inside.room

    @with_frame_room
    def fails():
        raise KeyError("x")

    with pytest.raises(KeyError):
        fails()
    assert not stack._inside.room


def test_each_thread_has_a_room_of_its_own():
    seen = {}

    def in_thread():
        seen["before"] = getattr(stack._inside, "room", False)
        with_frame_room(lambda: seen.setdefault("inside", stack._inside.room))()

    @with_frame_room
    def run():
        t = threading.Thread(target=in_thread)
        t.start()
        t.join()

    run()
    assert seen == {"before": False, "inside": True}


#: Every function that runs cases, shrinks, minimises or campaigns, called by the CLI, the pytest plugin, Spark's
#: tasks, a run's worker processes and the benches.
ENTRY_POINTS = (cli.main, engine.run_machine, engine.search, engine.run_area, engine.run_areas, crash.campaign,
                concurrent.run_case, concurrent.search_races, concurrent.search, concurrent.rerun, concurrent.try_again,
                concurrent.shrink, minimise.minimise)


@pytest.mark.parametrize("function", ENTRY_POINTS, ids=lambda f: f"{f.__module__}.{f.__qualname__}")
def test_every_entry_point_that_runs_cases_runs_in_the_room(function):
    assert getattr(function, "frame_room", False), "decorate it with conformance.runner.stack.with_frame_room"
    assert not inspect.isgeneratorfunction(inspect.unwrap(function))
