"""The cyclic collector while the kit computes: thresholds for a run's many short-lived objects over a large heap,
and what was alive before left out of its walks (:func:`collector_tuned`)."""

from __future__ import annotations

import contextlib
import gc
import os
import threading
from typing import Callable

#: The cyclic collector's thresholds while a machine runs (generation 0, 1, 2; Python's are 700, 10, 10).
#: A run allocates many small objects that reference counting frees (operations, observations,
#: model states, Hypothesis's choices) while keeping a large heap (the step memo, Hypothesis's tree
#: of cases tried): at Python's thresholds the collector walks that heap over and over for cycles
#: it rarely finds (5-15% of a run's time on these machines, more as the heap grows).  So the
#: middle generation, where what survived a young collection waits, is walked only every hundred
#: young collections.  The young generation is kept to 20,000 objects: each young collection walks
#: it once, and a larger one (50,000 were tried) costs more per object than it saves in
#: collections, as it no longer fits the processor's caches (side by side, a run 2.5-4% faster in
#: trigger, dlq and core).
COLLECTOR_THRESHOLDS = (20_000, 100, 100)


#: How deep :func:`collector_tuned` is entered (the outermost sets the thresholds and gives them back), and the lock
#: that keeps the count for threads that run at once (re-entrant: the collection at the end may run a finalizer or a
#: weak reference's callback that enters a tuned body on the same thread).
_TUNED = {"depth": 0, "thresholds": None}
_TUNED_LOCK = threading.RLock()


@contextlib.contextmanager
def collector_tuned(release: Callable[[], None] | None = None):
    """Run the body with :data:`COLLECTOR_THRESHOLDS`, the objects alive before it left out of the
    collector's walks; the thresholds and those objects are given back at the end, after one
    collection of what the body made (what it left in cycles is collected within its time).
    ``release``, called at the end, lets go of what the body kept and no longer needs (freed then
    without the collector walking it).  The MQCONFORM_GC environment variable set to ``default``
    leaves the collector as it is.  Usable as a decorator.

    It nests, and the outermost body is what is tuned: an area's whole work (its machine's runs,
    then minimising and blaming what they found, which replay histories and step the model as
    much) is one body; a machine's run within it releases what it kept at its end, and what the
    area made is collected once, at its end.  Outside a tuned body, Python's thresholds walk the whole
    heap, the step memo and the model's outcomes kept among it, each time it has grown by a
    quarter: 9% of the fault runs' CPU went on such walks while their departures were minimised."""
    tuned = os.environ.get("MQCONFORM_GC") != "default"
    outermost = False
    if tuned:
        with _TUNED_LOCK:
            outermost = _TUNED["depth"] == 0
            _TUNED["depth"] += 1
            if outermost:
                _TUNED["thresholds"] = gc.get_threshold()
                gc.set_threshold(*COLLECTOR_THRESHOLDS)
                # (by the outermost alone: what a body within it froze would leave its cycles out of the collection at
                # the end, and back among the process's objects uncollected, growing from one body to the next)
                gc.freeze()
    try:
        yield
    finally:
        if release is not None:
            release()
        if tuned:
            with _TUNED_LOCK:
                _TUNED["depth"] -= 1
                if outermost:
                    gc.collect()   # what the body left in cycles is its own to collect, not what runs next
                    gc.set_threshold(*_TUNED["thresholds"])
                    gc.unfreeze()
