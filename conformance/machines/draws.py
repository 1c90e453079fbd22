"""Values of many fields drawn as one: cheap to generate, each field still shrinking on its own.

Hypothesis's cost per step follows the strategies it draws (each one a span it
records, mutates and shrinks over), far more than the choices inside them: a
dead letter drawn as ``st.builds`` over a dozen ``sampled_from`` costs a dozen
spans.  :func:`record` draws every field of a value from one bytes choice, a byte
per field, each byte picking that field's option (``byte * len(options) // 256``,
so the options are about equally likely, and a lower byte a lower option).  The
shrinker lowers each byte on its own, so every field still shrinks towards its
first option, which is to be its plainest.

A field may also be :class:`Some`: a few of a group of optional fields, as many
as ``st.fixed_dictionaries(optional=...)`` would draw (often none, half of them on
average), shrinking towards none.
"""

from __future__ import annotations

import itertools
from typing import Any, Callable, Sequence

from hypothesis import strategies as st


def option(options: Sequence, byte: int) -> Any:
    """The option ``byte`` (0-255) picks: the first for 0, the last for 255, each about as often."""
    return options[byte * len(options) >> 8]


def _check(name: str, options: Sequence) -> tuple:
    options = tuple(options)
    if not 0 < len(options) <= 256:
        raise ValueError(f"field {name!r} needs 1 to 256 options, not {len(options)}")
    return options


def _size_weights(n: int, more: float) -> list[float]:
    """How likely each size 0..n is when each further field comes with probability ``more``."""
    return [(1 - more) * more ** k for k in range(n)] + [more ** n]


def _counts(n: int) -> tuple[int, ...]:
    """How many of ``n`` optional fields each byte keeps (none for the lowest bytes): sizes as
    Hypothesis draws a collection's of at most ``n`` with an average of ``n / 2`` (each further field
    with a fixed probability, found here so that the average is ``n / 2``; the rest at ``n``)."""
    low, high = 0.0, 1.0
    for _ in range(50):
        more = (low + high) / 2
        mean = sum(k * w for k, w in enumerate(_size_weights(n, more)))
        low, high = (more, high) if mean < n / 2 else (low, more)
    bounds = list(itertools.accumulate(_size_weights(n, low)))
    return tuple(next((k for k, bound in enumerate(bounds) if (byte + 0.5) / 256 <= bound), n)
                 for byte in range(256))


class Some:
    """A group of optional fields (name: options) of which a drawn value has some: how many (none
    most often, half of them on average) and which are drawn, then each one's option.  Its value
    is a dict of the fields present, in the order given."""

    def __init__(self, **fields: Sequence) -> None:
        self.names = tuple(fields)
        self.options = tuple(_check(name, values) for name, values in fields.items())
        self.counts = _counts(len(self.names))
        self.subsets = [list(itertools.combinations(range(len(self.names)), k)) for k in range(len(self.names) + 1)]

    @property
    def width(self) -> int:
        """Bytes taken: how many, which, and one per field."""
        return 2 + len(self.names)

    def decode(self, raw: bytes) -> dict:
        chosen = option(self.subsets[self.counts[raw[0]]], raw[1])
        return {self.names[i]: option(self.options[i], raw[2 + i]) for i in chosen}


def record(build: Callable[..., Any] = dict, **fields: Sequence | Some) -> st.SearchStrategy:
    """``build(**values)`` with each field's value one of its options (the first the plainest), or
    for a :class:`Some` field the dict of those of its fields present.

    An option may repeat, to weigh it; at most 256 options a field.
    """
    parts = []
    at = 0
    for name, values in fields.items():
        if isinstance(values, Some):
            parts.append((name, values, at))
            at += values.width
        else:
            parts.append((name, _check(name, values), at))
            at += 1

    def decode(raw: bytes) -> Any:
        return build(**{name: values.decode(raw[i:i + values.width]) if isinstance(values, Some)
                        else option(values, raw[i]) for name, values, i in parts})

    return st.binary(min_size=at, max_size=at).map(decode)


def absent_or(*values: Any) -> tuple:
    """A field's options when it may be left out (None, first, so that it shrinks away): about half
    the draws leave it out."""
    return (None,) * len(values) + values

