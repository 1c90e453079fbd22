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
from hypothesis.stateful import rule


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
    """A group of optional fields of which a drawn value has some: how many (none most often, half
    of them on average) and which are drawn, then each one's value (a field as :class:`Record` takes
    it).  Its value is a dict of the fields present, in the order given."""

    def __init__(self, **fields: Sequence | Some | Record) -> None:
        self.record = Record(**fields)
        self.counts = _counts(len(fields))
        self.subsets = [list(itertools.combinations(range(len(fields)), k)) for k in range(len(fields) + 1)]
        #: Bytes taken: how many, which, and the fields'.
        self.width = 2 + self.record.width

    def decode(self, raw: bytes) -> dict:
        chosen = option(self.subsets[self.counts[raw[0]]], raw[1])
        values = self.record.values(raw[2:])
        return {name: values[name] for name in (self.record.parts[i][0] for i in chosen)}


class Record:
    """A value built of fields, each drawn from its own bytes of one bytes choice.

    A field is a sequence of options (a byte), a :class:`Some` group or another :class:`Record`
    (their bytes); its value is the option picked, the dict of the group's fields present, or the
    value the record builds.  :attr:`strategy` draws ``build(**values)``.
    """

    def __init__(self, build: Callable[..., Any] = dict, **fields: Sequence | Some | Record) -> None:
        self.build = build
        self.parts: list[tuple[str, Any, int]] = []
        at = 0
        for name, values in fields.items():
            if not isinstance(values, (Some, Record)):
                values = _check(name, values)
            self.parts.append((name, values, at))
            at += values.width if isinstance(values, (Some, Record)) else 1
        #: Bytes taken.
        self.width = at
        self.strategy = st.binary(min_size=at, max_size=at).map(self.decode)

    def values(self, raw: bytes) -> dict:
        """Each field's value in ``raw`` (the record's bytes), by name."""
        return {name: option(values, raw[i]) if isinstance(values, tuple) else values.decode(raw[i:i + values.width])
                for name, values, i in self.parts}

    def decode(self, raw: bytes) -> Any:
        return self.build(**self.values(raw))


def record(build: Callable[..., Any] = dict, **fields: Sequence | Some | Record) -> st.SearchStrategy:
    """A strategy for ``build(**values)`` with each field's value drawn as :class:`Record` draws it
    (an option, the first the plainest; the fields of a :class:`Some` present; a nested record's value).

    An option may repeat, to weigh it; at most 256 options a field.
    """
    return Record(build, **fields).strategy


def drawn_rule(**fields: Sequence | Some | Record) -> Callable:
    """Hypothesis's ``@rule`` with all the rule's arguments drawn as one :class:`Record` (fields as
    :func:`record` takes them): one strategy a step instead of one an argument.  The method is called
    with the arguments by name, as under ``@rule``; what Hypothesis keeps as the class's attribute is
    its rule, so another method calls a shared helper rather than the rule itself."""
    arguments = record(**fields)

    def decorate(function: Callable) -> Callable:
        def drawn(self, arguments: dict) -> Any:
            return function(self, **arguments)

        drawn.__name__, drawn.__qualname__, drawn.__doc__ = function.__name__, function.__qualname__, function.__doc__
        return rule(arguments=arguments)(drawn)

    return decorate


def absent_or(*values: Any) -> tuple:
    """A field's options when it may be left out (None, first, so that it shrinks away): about half
    the draws leave it out."""
    return (None,) * len(values) + values

