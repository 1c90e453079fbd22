"""The kit's DLQ handler reads rules tables with code of its own; it must agree with the model's
reader on every table: valid or not, and what a valid one holds."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from adapters.dlq_handler import rules_table as H
from conformance.generator.dlq import (FITS, MISSES, PATTERNS, RARE_PATTERNS, broken_tables, descriptors, fitted,
                                       headers, near_miss, render, table_rules, tables)
from reference_model import dlq as D
from reference_model import dlq_table as M
from reference_model import language as L
from reference_model import mqconst as C
from reference_model.state import ModelMessage


def same(text: str) -> None:
    model, errors = M.parse(text)
    mine = H.read(text)
    assert (mine is None) == bool(errors), (text, errors)
    if model is None:
        return
    c = model.control
    assert (mine.control.inputq, mine.control.inputqm, mine.control.retryint, mine.control.wait) == \
        (c.inputq, c.inputqm, c.retryint, c.wait), text
    assert [(r.patterns, r.action, r.fwdq, r.fwdqm, r.header, r.putaut, r.retry) for r in mine.rules] == \
        [(r.patterns, r.action, r.fwdq, r.fwdqm, r.header, r.putaut, r.retry) for r in model.rules], text


@settings(max_examples=300, deadline=None)
@given(st.one_of(tables(), broken_tables()))
def test_agrees_with_the_model_on_generated_tables(text):
    same(text)


PIECES = ["ACTION(FWD)", "action(fwd)", "FWDQ(B)", "FWDQ('b ')", "FWDQ(&DESTQ)", "FWDQ(&X)", "FWDQM(' ')",
          "HEADER(NO)", "HEADER(maybe)", "RETRY(0)", "RETRY(3)", "RETRY(?)", "ACTION(RETRY)", "ACTION(IGNORE)",
          "REASON(MQRC_Q_FULL)", "REASON(mqrc_q_full)", "REASON('MQRC_Q_FULL')", "REASON(*)", "REASON(2053)",
          "REASON(MQMT_REQUEST)", "DESTQ(A*)", "USERID('it''s')", "USERID('unclosed)", "USERID(ab'c)",
          "USERID(a b)", "USERID()", "USERID('')", "APPLNAME('" + "x" * 29 + "')", "FORMAT(MQSTR  )",
          "PUTAUT(CTX)", "WAIT(NO)", "WAIT(5)", "WAIT(' 5')", "RETRYINT(5)", "INPUTQ(DLQ)", "INPUTQ(D*)",
          "BOGUS(1)", ",", ",,", "(", ")", "+", "-", "*", "ACTION (DISCARD)", "ACTION( DISCARD )",
          "USERID('al-", "USERID('al+", "APPLIDAT(x -", "   ice')", "  y)"]


@settings(max_examples=1500, deadline=None)
@given(st.lists(st.lists(st.sampled_from(PIECES), max_size=5).map(" ".join), min_size=1, max_size=4)
       .map("\n".join))
def test_agrees_with_the_model_on_odd_tables(text):
    same(text)


def test_an_example_of_each():
    assert H.read("WAIT(NO)\nACTION(FWD) FWDQ(B) +\n    HEADER(NO)\n").rules[0].header is False
    assert H.read("ACTION(FWD)\n") is None   # no FWDQ
    same("* comment\nRETRYINT(5)\nREASON(MQRC_Q_FULL), ACTION(RETRY) RETRY(2)\n")
    # '-' keeps the next line's leading blanks, '+' drops them
    for mark, value in (("-", "al   ice"), ("+", "alice")):
        text = f"USERID('al{mark}\n   ice') ACTION(DISCARD)\n"
        same(text)
        assert H.read(text).rules[0].patterns == (("USERID", value),)


def test_the_syntax_edges_the_dlq_machine_draws_are_valid_and_one_step_past_them_broken():
    """Each valid edge line, in a table, gives a table both readers accept and read alike; each broken one
    a table both refuse (the split the machine draws from is the model's, not a guess)."""
    from conformance.generator.dlq import (ALL_BROKEN, BROKEN_CONTROLS, EDGE_CONTROLS, EDGE_LINES, broken,
                                           broken_at)
    entries = [{"RETRYINT": "10"}, {"DESTQ": "A", "ACTION": "IGNORE"}, {"ACTION": "DISCARD"}]
    assert len(EDGE_LINES) > 20 and len(EDGE_CONTROLS) > 4
    for line in EDGE_LINES:
        for style in (0, 7, 300):
            for place in (0, 1, 2):
                text = broken_at(entries, style, [line], (place,))
                assert M.parse(text)[0] is not None, text
                same(text)
    for control in EDGE_CONTROLS:
        text = f"{control}\n{render(entries[1:], 5)}"
        assert M.parse(text)[0] is not None, text
        same(text)
    for line in ALL_BROKEN:
        text = broken(entries, 3, line)
        assert M.parse(text)[0] is None, text
        same(text)
    # among them: keywords without a blank or comma between them, on a line and across a continuation
    assert {"ACTION(DISCARD)REPLYQ(X)", "DESTQ(A)+\n    ACTION(IGNORE)", "INPUTQ(DLQ)WAIT(NO)"} <= \
        set(ALL_BROKEN) and "INPUTQ(DLQ)WAIT(NO)" in BROKEN_CONTROLS


#: APPLNAME patterns no drawn name matches (one character more than any).
UNMATCHABLE_NAMES = ("'billing?'", "'payroll?'")


def unmatched_keywords(entry: dict, dlh: L.DeadLetterHeader, md: dict) -> set[str]:
    """The pattern keywords of the rules-table entry ``entry`` that a dead letter of ``dlh`` and ``md``
    does not match, by the model's reader and matcher."""
    table, errors = M.parse(render([{"RETRYINT": "10"}, entry], 0))
    assert not errors, errors
    message = ModelMessage(seq=1, body="b", md=L.MessageDescriptor(format=C.MQFMT_DEAD_LETTER_HEADER, **md),
                           order_priority=0, put_time=0, dlh=dlh)
    return {k for k, _ in D._unmatched(table.rules[0], D.message_fields(message))}


@settings(max_examples=300, deadline=None)
@given(entries=table_rules, which=st.integers(0, 7), dlh=headers, md=descriptors)
def test_a_dead_letter_fitted_to_a_rule_matches_it(entries, which, dlh, md):
    """The dlq machine makes dead letters for a table's rules: by the model's reader and matcher each
    matches the rule it was made for (but for APPLNAME patterns no drawn name can match)."""
    entry = entries[which % len(entries)]
    unmatched = unmatched_keywords(entry, *fitted(entry, dlh, md))
    if entry.get("APPLNAME") in UNMATCHABLE_NAMES:
        unmatched.discard("APPLNAME")
    assert not unmatched, entry


@settings(max_examples=300, deadline=None)
@given(entries=table_rules, which=st.integers(0, 7), miss=st.integers(0, 7), dlh=headers, md=descriptors)
def test_a_near_miss_misses_its_rule_by_one_keyword_alone(entries, which, miss, dlh, md):
    """A near miss (the dlq machine's dead letter for a rule but one keyword) misses the rule by the
    model's matcher in exactly that keyword, whenever the rule has a keyword that can miss."""
    entry = entries[which % len(entries)]
    missable = [(k, p) for k, p in entry.items() if (k, p) in MISSES]
    near = near_miss(entry, dlh, md, miss)
    if not missable:
        assert near == fitted(entry, dlh, md)
        return
    key = missable[miss % len(missable)][0]
    loose = {"APPLNAME"} if entry.get("APPLNAME") in UNMATCHABLE_NAMES and key != "APPLNAME" else set()
    assert unmatched_keywords(entry, *near) - loose == {key}, (entry, key)


def test_every_pattern_a_table_draws_can_be_fitted_and_all_but_blank_padded_ones_missed():
    for key, values in ((name, field.options) for name, field, _ in PATTERNS.record.parts):
        for value in values:
            assert (key, value) in FITS or value == "*"
            assert (key, value) in MISSES or value in ("*", "?*", "'billing?'"), (key, value)
    for key, value in RARE_PATTERNS:
        assert (key, value) in FITS and (key, value) in MISSES


@settings(max_examples=600, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(PIECES), st.sampled_from(["", " ", ",", "+\n", "-\n ", "+\n  ", "\n"])),
                min_size=1, max_size=5).map(lambda parts: "".join(p + sep for p, sep in parts)))
def test_agrees_with_the_model_where_keywords_touch_or_a_continuation_joins_them(text):
    """Keywords must be separated by a blank or a comma, also where a '+' continuation joins two lines (which
    drops the next line's leading blanks; '-' keeps them): both readers refuse a table that runs two together."""
    same(text + "\n")


@pytest.mark.parametrize("text, valid", [
    ("ACTION(DISCARD)REPLYQ(X)\n", False),
    ("ACTION(DISCARD),REPLYQ(X)\n", True),
    ("DESTQ(A) ACTION(DISCARD)+\nREPLYQ(X)\n", False),
    ("DESTQ(A) ACTION(DISCARD)+\n   REPLYQ(X)\n", False),   # '+' joins from the first non-blank character
    ("DESTQ(A) ACTION(DISCARD)-\n REPLYQ(X)\n", True),      # '-' keeps the blank
    ("DESTQ(A) ACTION(DISCARD) +\nREPLYQ(X)\n", True),
])
def test_keywords_need_a_blank_or_a_comma_between_them(text, valid):
    same(text)
    assert (H.read(text) is not None) is valid
    errors = M.parse(text)[1]
    assert bool(errors) is not valid
    if not valid:
        assert "no blank or comma" in errors[0].message
