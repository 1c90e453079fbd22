"""Same seed, same cases, whatever code is loaded.

Hypothesis mixes into its choices constants it collects from every local source
module loaded in the process (version 6.131 and later).  For the kit that means
any edit of the kit, of a user's adapter or of a test file, and even which of
them happen to be imported, changes what a seed generates, so a counterexample
found yesterday is not found today.  The kit's generation draws on its own
strategies only: the collection of local constants is switched off here, once,
before any case is generated.  Where Hypothesis has no such collection nothing
is changed.
"""

from __future__ import annotations


def stable_generation() -> bool:
    """Switch off local-constant collection; True when it was there to switch off."""
    try:
        from hypothesis.internal.conjecture import providers as P

        empty = P.Constants(integers=P.SortedSet(), floats=P.SortedSet(key=P.float_to_int),
                            bytes=P.SortedSet(), strings=P.SortedSet())
        if not callable(getattr(P, "_get_local_constants", None)):
            return False
        P._get_local_constants = lambda: empty
        P.CONSTANTS_CACHE.cache.clear()
        return True
    except Exception:  # noqa: BLE001 - another Hypothesis: generation is as it made it
        return False


STABLE = stable_generation()
