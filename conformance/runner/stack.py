"""Room on the interpreter's frame stack for a whole run, wherever it is called from.

CPython (3.11 on) keeps the frames of Python calls on a stack of its own made of chunks: the first of 16 KiB, each
further one mapped from the system when a call does not fit in the chunk in use, and given back to the system as
soon as the call that needed it returns.  A run steps through the same calls hundreds of thousands of times, its
stack going up and down by a few frames around where it began; where that happens to be near the end of a chunk,
every call that crosses it maps a chunk, touches its pages, and unmaps it: measured here, one run of the core area
cost 1.3 to 2 times its CPU at some depths of its caller (up to 950,000 page faults where 29,000 are its own), and a
run under pytest, Hypothesis or Spark is called from a depth nobody chooses.

:func:`with_frame_room` runs a function beneath a frame large enough that the interpreter gives it a chunk of 256 KiB
of its own, more than half of it free above it: the run's frames stay in that chunk however deep its caller was.
Nested calls of functions with room take the room they are already in.
"""

from __future__ import annotations

import functools
import threading
from typing import Callable, TypeVar

_F = TypeVar("_F", bound=Callable)

#: Local variables of the frame that makes the room.  CPython gives a call that does not fit in the chunk in use a
#: chunk of the smallest power of two from 16 KiB that holds its frame and 1,000 more words: a frame of 15,400
#: words (123,200 bytes) gets one of 256 KiB, in which about 135 KiB are left above it: some 700 frames of a
#: run's typical size.
ROOM_WORDS = 15_400

_inside = threading.local()


@functools.cache
def _room() -> Callable[[Callable[[], object]], object]:
    """The function whose frame makes the room: a call of its argument, with :data:`ROOM_WORDS` local variables (its
    code given more names than it uses, which is cheaper to make than compiling a function that assigns them all)."""

    def room(call):
        return call()

    names = ("call",) + tuple(f"_{i}" for i in range(1, ROOM_WORDS))
    room.__code__ = room.__code__.replace(co_varnames=names, co_nlocals=len(names))
    return room


def with_frame_room(function: _F) -> _F:
    """``function``, run beneath the frame room of this thread (see the module): its calls' frames stay in one chunk
    of the interpreter's stack, never mapped and unmapped call by call."""

    @functools.wraps(function)
    def wrapped(*args, **kwargs):
        if getattr(_inside, "room", False):
            return function(*args, **kwargs)
        _inside.room = True
        try:
            return _room()(lambda: function(*args, **kwargs))
        finally:
            _inside.room = False

    wrapped.frame_room = True   # type: ignore[attr-defined]
    return wrapped  # type: ignore[return-value]
