"""Values drawn as one (conformance.generator.draws): every option reachable, each field shrinking alone."""

from __future__ import annotations

import collections
import random

import pytest
from hypothesis import HealthCheck, find, given, settings
from hypothesis import strategies as st

from conformance.generator.draws import OneOf, Record, Some, absent_or, option, record

QUIET = settings(database=None, suppress_health_check=list(HealthCheck), max_examples=2000)


def test_each_byte_picks_an_option_in_order_each_about_as_often():
    options = ("a", "b", "c")
    picked = [option(options, byte) for byte in range(256)]
    assert picked[0] == "a" and picked[-1] == "c"
    assert picked == sorted(picked), "a lower byte never picks a later option"
    counts = collections.Counter(picked)
    assert max(counts.values()) - min(counts.values()) <= 1
    assert [option(range(256), byte) for byte in range(256)] == list(range(256))


def test_every_option_of_every_field_is_drawn():
    seen = collections.defaultdict(set)

    @QUIET
    @given(record(colour=("red", "green", "blue"), size=range(10), kind=absent_or("x", "y")))
    def draw(value):
        for name, v in value.items():
            seen[name].add(v)

    draw()
    assert seen == {"colour": {"red", "green", "blue"}, "size": set(range(10)), "kind": {None, "x", "y"}}


def test_a_field_left_out_half_the_time():
    drawn = collections.Counter()

    @QUIET
    @given(record(kind=absent_or("x", "y", "z")))
    def draw(value):
        drawn[value["kind"] is None] += 1

    draw()
    assert 0.35 < drawn[True] / sum(drawn.values()) < 0.65


@pytest.mark.parametrize("n", [1, 2, 3, 8])
def test_some_of_n_fields_none_once_in_n_plus_one_half_of_them_on_average(n):
    group = Some(**{f"f{i}": ("v",) for i in range(n)})
    rnd = random.Random(0)
    draws = [group.decode(bytes(rnd.randrange(256) for _ in range(group.width))) for _ in range(20_000)]
    sizes = collections.Counter(len(d) for d in draws)
    assert set(sizes) == set(range(n + 1))
    assert abs(sizes[0] / len(draws) - 1 / (n + 1)) < 0.02
    assert abs(sum(len(d) for d in draws) / len(draws) - n / 2) < 0.05 * n
    # each field is present about as often as any other
    present = collections.Counter(name for d in draws for name in d)
    assert max(present.values()) - min(present.values()) < 0.05 * len(draws)


def test_some_fields_drawn_in_every_combination_and_shrinking_to_none():
    group = Some(a=("x", "y"), b=range(3), c=("z",))
    seen = set()

    @QUIET
    @given(record(group=group))
    def draw(value):
        fields = value["group"]
        assert set(fields) <= {"a", "b", "c"} and list(fields) == sorted(fields)
        seen.add(tuple(fields.items()))

    draw()
    keys = {tuple(k for k, _ in fields) for fields in seen}
    assert keys == {(), ("a",), ("b",), ("c",), ("a", "b"), ("a", "c"), ("b", "c"), ("a", "b", "c")}
    assert {v for fields in seen for k, v in fields if k == "b"} == {0, 1, 2}
    assert find(record(group=group), lambda v: True) == {"group": {}}
    assert find(record(group=group), lambda v: "c" in v["group"]) == {"group": {"c": "z"}}
    assert find(record(group=group, d=range(4)), lambda v: len(v["group"]) == 2 and v["d"] == 3) == \
        {"group": {"a": "x", "b": 0}, "d": 3}


def test_the_plainest_value_is_every_field_first():
    assert find(record(colour=("red", "blue"), size=range(3, 9)), lambda v: True) == {"colour": "red", "size": 3}


def test_each_field_shrinks_on_its_own():
    # A value needing one field late keeps every other field at its first option.
    found = find(record(a=range(10), b=range(10), c=range(10)), lambda v: v["b"] >= 7)
    assert found == {"a": 0, "b": 7, "c": 0}
    found = find(record(a=range(10), b=range(10), c=range(10)), lambda v: v["a"] + v["c"] >= 12)
    assert found["b"] == 0 and found["a"] + found["c"] == 12


def test_values_are_built_by_the_given_callable():
    assert find(record(lambda x, y: (y, x), x=(1, 2), y=("p", "q")), lambda v: v[0] == "q") == ("q", 1)


@pytest.mark.parametrize("options", [(), tuple(range(257))])
def test_a_field_needs_one_to_256_options(options):
    with pytest.raises(ValueError, match="field 'f' needs 1 to 256 options"):
        record(f=options)


def test_a_drawn_value_is_the_same_for_the_same_choices():
    strategy = record(a=range(5), b=("x", "y"))
    values = [find(strategy, lambda v: v["a"] == 3 and v["b"] == "y") for _ in range(2)]
    assert values[0] == values[1] == {"a": 3, "b": "y"}
    assert isinstance(strategy, st.SearchStrategy)


def test_one_of_several_fields_each_drawn_only_the_chosen_one_decoded():
    decoded = collections.Counter()

    def built(kind):
        def build(**values):
            decoded[kind] += 1
            return (kind, values)
        return build

    either = OneOf(Record(built("small"), n=range(3)), Record(built("pair"), a=("x", "y"), b=("p", "q")), ("plain",))
    assert either.width == 3
    seen = set()

    @QUIET
    @given(record(value=either))
    def draw(value):
        seen.add(value["value"] if value["value"] == "plain" else value["value"][0])

    draw()
    assert seen == {"small", "pair", "plain"}
    drawn = sum(decoded.values())
    assert drawn and decoded["small"] < drawn and decoded["pair"] < drawn, "only the chosen alternative is decoded"
    assert find(record(value=either), lambda v: True) == {"value": ("small", {"n": 0})}
    assert find(record(value=either), lambda v: v["value"][0] == "pair") == {"value": ("pair", {"a": "x", "b": "p"})}


def test_records_nest_and_take_their_fields_bytes_in_order():
    outer = Record(a=("p", "q"), inner=Record(lambda x, y: (x, y), x=range(4), y=range(4)), some=Some(s=("t",)))
    assert (Record(x=range(4)).width, outer.width) == (1, 1 + 2 + 3)
    assert outer.decode(bytes([255, 64, 128, 0, 1, 0])) == {"a": "q", "inner": (1, 2), "some": {"s": "t"}}
    assert outer.decode(bytes(6)) == {"a": "p", "inner": (0, 0), "some": {}}
