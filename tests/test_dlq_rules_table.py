"""The kit's DLQ handler reads rules tables with code of its own; it must agree with the model's
reader on every table: valid or not, and what a valid one holds."""

from hypothesis import given, settings
from hypothesis import strategies as st

from adapters.dlq_handler import rules_table as H
from conformance.machines.dlq import broken_tables, tables
from reference_model import dlq_table as M


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
