"""Same seed, same cases, whatever code is loaded.

Hypothesis mixes into its choices constants it collects from every local source
module loaded in the process (version 6.131 and later).  For the kit that means
any edit of the kit, of a user's adapter or of a test file, and even which of
them happen to be imported, changes what a seed generates, so a counterexample
found yesterday is not found today.  The kit's generation draws on its own
strategies only: within :func:`stable_generation` (around every run of the kit's
machines) the collection of local constants is switched off, and given back as
it was after, so that nothing else in the process (a user's own Hypothesis tests
beside the pytest plugin, say) draws otherwise because the kit is installed.
Where Hypothesis has no such collection nothing is changed.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator


@contextlib.contextmanager
def stable_generation() -> Iterator[bool]:
    """Within the body Hypothesis collects no local constants (True: there was such a collection to switch off);
    after it, the collection is Hypothesis's own again."""
    try:
        from hypothesis.internal.conjecture import providers as P

        original = P._get_local_constants
        if not callable(original):
            raise AttributeError("_get_local_constants")
        empty = P.Constants(integers=P.SortedSet(), floats=P.SortedSet(key=P.float_to_int),
                            bytes=P.SortedSet(), strings=P.SortedSet())
        cache = P.CONSTANTS_CACHE.cache
    except Exception:  # noqa: BLE001 - another Hypothesis: generation is as it made it
        yield False
        return
    P._get_local_constants = lambda: empty
    cache.clear()
    try:
        yield True
    finally:
        P._get_local_constants = original
        cache.clear()


#: A machine class's digest by its module and name, for this process (its source does not change while it runs).
_DIGESTS: dict[tuple[str, str], bytes] = {}


@contextlib.contextmanager
def machine_digests_kept() -> Iterator[None]:
    """Within the body Hypothesis works out a machine class's digest (its example database key) once per class
    name, not once per run.

    The kit runs each round of an area on a fresh subclass of the area's machine (bound to its session), and
    Hypothesis finds the source of a class by parsing its whole module: about 50 ms a run, most of a small run's
    time.  The subclass's source is found as its machine's (same module, same name, no source of its own), so the
    digest kept is the digest Hypothesis would compute; any other object's is computed as before.
    """
    try:
        from hypothesis import stateful

        original = stateful.function_digest
    except (ImportError, AttributeError):  # another Hypothesis: nothing to keep
        yield
        return

    def digest(function):
        if not isinstance(function, type):
            return original(function)
        key = (function.__module__, function.__qualname__)
        if key not in _DIGESTS:
            _DIGESTS[key] = original(function)
        return _DIGESTS[key]

    stateful.function_digest = digest
    try:
        yield
    finally:
        stateful.function_digest = original
