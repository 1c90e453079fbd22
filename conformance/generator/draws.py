"""Values of many fields drawn as one: cheap to generate, each field still shrinking on its own.

Hypothesis's cost per step follows the strategies it draws (each one a span it
records, mutates and shrinks over), far more than the choices inside them: a
dead letter drawn as ``st.builds`` over a dozen ``sampled_from`` costs a dozen
spans.  :func:`record` draws every field of a value from one bytes choice, a byte
per field, each byte picking that field's option (``byte * len(options) // 256``,
so the options are about equally likely, and a lower byte a lower option).  The
shrinker lowers each byte on its own, so every field still shrinks towards its
first option, which is to be its plainest.

A field may also be :class:`Some`: a few of a group of optional fields (often
none, half of them on average), each shrinking away on its own; a :class:`OneOf`
of several fields; or another :class:`Record`.  :func:`drawn_rule` gives a state machine's rule all its arguments
as one record.
"""

from __future__ import annotations

import functools
from typing import Any, Callable, Sequence

from hypothesis import strategies as st
from hypothesis.stateful import initialize, rule


def option(options: Sequence, byte: int) -> Any:
    """The option ``byte`` (0-255) picks: the first for 0, the last for 255, each about as often."""
    return options[byte * len(options) >> 8]


class Field:
    """What a record is built of: ``width`` bytes that :meth:`decode` makes a value of."""

    width: int

    def decode(self, raw: bytes) -> Any:
        raise NotImplementedError

    @functools.cached_property
    def strategy(self) -> st.SearchStrategy:
        """The field's values, drawn as one bytes choice."""
        return _Decoded(self)


class _Decoded(st.SearchStrategy):
    """A field's values: one bytes choice of its width, decoded.  (``st.binary(...).map(decode)``
    draws the same choice, but inside a span of its own and with a record of the call kept for
    Hypothesis's printing at every draw, held in reference cycles: a step draws one or two.)"""

    def __init__(self, field: "Field") -> None:
        super().__init__()
        self.field = field

    def __repr__(self) -> str:
        return f"{type(self.field).__name__}({self.field.width} bytes)"

    def do_draw(self, data) -> Any:
        width = self.field.width
        return self.field.decode(data.draw_bytes(width, width))


class Options(Field):
    """A field that is one of its options (a byte)."""

    width = 1

    def __init__(self, name: str, options: Sequence) -> None:
        self.options = tuple(options)
        if not 0 < len(self.options) <= 256:
            raise ValueError(f"field {name!r} needs 1 to 256 options, not {len(self.options)}")

    def decode(self, raw: bytes) -> Any:
        return option(self.options, raw[0])


def _field(name: str, values: Any) -> Any:
    return values if isinstance(values, Field) else Options(name, values)


class Some(Field):
    """A group of optional fields of which a drawn value has some: none in about one draw in n + 1
    (n fields), half of them on average, each field's value as :class:`Record` takes it.  Its value
    is a dict of the fields present, in the order given.

    A byte says how sparse the draw is, and each field has a byte of its own: the field is present
    when its byte is above the first.  So each field leaves a draw on its own when shrinking lowers
    its byte, and the plainest draw has none; the first fields' bytes come last, so that where some
    fields must stay the first ones do.
    """

    def __init__(self, **fields: Any) -> None:
        self.record = Record(**fields)
        self.n = len(fields)
        #: Bytes taken: how sparse, whether each is present, and the fields'.
        self.width = 1 + self.n + self.record.width

    def decode(self, raw: bytes) -> dict:
        sparse, n, at0 = raw[0], self.n, 1 + self.n
        return {name: field.decode(raw[at0 + at:at0 + at + field.width])
                for i, (name, field, at) in enumerate(self.record.parts) if raw[n - i] > sparse}


class OneOf(Field):
    """A field that is one of several fields (each as :class:`Record` takes it; repeat one to weigh
    it): a byte picks which, the first the plainest; only that one is decoded."""

    def __init__(self, *alternatives: Any) -> None:
        self.alternatives = tuple(_field(f"alternative {i}", a) for i, a in enumerate(alternatives))
        #: Bytes taken: which, and the widest alternative's.
        self.width = 1 + max(a.width for a in self.alternatives)

    def decode(self, raw: bytes) -> Any:
        chosen = option(self.alternatives, raw[0])
        return chosen.decode(raw[1:1 + chosen.width])


class Record(Field):
    """A value built of fields, each drawn from its own bytes of one bytes choice.

    A field is a sequence of options (a byte), a :class:`Some` group, a :class:`OneOf` or another
    :class:`Record` (their bytes); its value is the option picked, the dict of the group's fields
    present, the chosen alternative's value, or the value the record builds.  :attr:`strategy`
    draws ``build(**values)``.
    """

    def __init__(self, build: Callable[..., Any] = dict, **fields: Any) -> None:
        self.build = build
        self.parts: list[tuple[str, Any, int]] = []
        at = 0
        for name, values in fields.items():
            field = _field(name, values)
            self.parts.append((name, field, at))
            at += field.width
        #: Bytes taken.
        self.width = at

    def decode(self, raw: bytes) -> Any:
        return self.build(**{name: field.decode(raw[at:at + field.width]) for name, field, at in self.parts})


def record(build: Callable[..., Any] = dict, **fields: Any) -> st.SearchStrategy:
    """A strategy for ``build(**values)`` with each field's value drawn as :class:`Record` draws it
    (an option, the first the plainest; the fields of a :class:`Some` present; a nested record's value).

    An option may repeat, to weigh it; at most 256 options a field.
    """
    return Record(build, **fields).strategy


def _drawn(decorator: Callable, fields: dict) -> Callable:
    arguments = record(**fields)

    def decorate(function: Callable) -> Callable:
        def drawn(self, arguments: dict) -> Any:
            return function(self, **arguments)

        drawn.__name__, drawn.__qualname__, drawn.__doc__ = function.__name__, function.__qualname__, function.__doc__
        return decorator(arguments=arguments)(drawn)

    return decorate


def drawn_rule(**fields: Any) -> Callable:
    """Hypothesis's ``@rule`` with all the rule's arguments drawn as one :class:`Record` (fields as
    :func:`record` takes them): one strategy a step instead of one an argument.  The method is called
    with the arguments by name, as under ``@rule``; what Hypothesis keeps as the class's attribute is
    its rule, so another method calls a shared helper rather than the rule itself."""
    return _drawn(rule, fields)


def drawn_initialize(**fields: Any) -> Callable:
    """Hypothesis's ``@initialize`` with all the arguments drawn as one :class:`Record` (see :func:`drawn_rule`)."""
    return _drawn(initialize, fields)


def absent_or(*values: Any) -> tuple:
    """A field's options when it may be left out (None, first, so that it shrinks away): about half
    the draws leave it out."""
    return (None,) * len(values) + values

