"""The rules-table language: syntax, validation with positions, and the documented examples."""

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reference_model import dlq_table as T
from reference_model import mqconst as C

ROOT = Path(__file__).resolve().parent.parent


def rules(text: str) -> list[T.DlqRule]:
    table, errors = T.parse(text)
    assert errors == [], [e.render("t") for e in errors]
    return list(table.rules)


def errors(text: str) -> list[tuple[int, int, str]]:
    table, errs = T.parse(text)
    assert table is None
    return [(e.line, e.column, e.message) for e in errs]


def test_documented_examples_parse():
    table, errs = T.parse((ROOT / "docs/dlq/ibm-examples.tbl").read_text())
    assert errs == [] and [r.fwdq for r in table.rules] == ["IGNORED.DEAD.QUEUE", "REALLY.DEAD.QUEUE"]
    table, errs = T.parse((ROOT / "docs/dlq/rules-example.tbl").read_text())
    assert errs == []
    assert table.control == T.ControlData(inputq="", inputqm="", retryint=30, wait="YES")
    assert [r.action for r in table.rules] == ["RETRY", "RETRY", "FWD", "DISCARD", "FWD", "IGNORE", "FWD"]
    reply = table.rules[2]
    assert (reply.fwdq, reply.fwdqm, reply.pattern("REPLYQ"), reply.pattern("REASON")) == (
        "&REPLYQ", "&REPLYQM", "?*", C.MQRC_UNKNOWN_OBJECT_NAME)


def test_defaults():
    (rule,) = rules("ACTION(FWD) FWDQ(Q)")
    assert (rule.header, rule.putaut, rule.retry, rule.fwdqm, rule.patterns) == (True, "DEF", 1, "", ())
    table, _ = T.parse("ACTION(DISCARD)")
    assert table.control == T.ControlData(inputq="", inputqm="", retryint=60, wait="YES")


def test_keywords_in_any_order_and_case_with_commas_and_blanks():
    a = rules("action(fwd),fwdq(Q)  header ( no ) , destq( 'A.B' )")[0]
    b = rules("DESTQ('A.B') HEADER(NO) FWDQ(Q) ACTION(FWD)")[0]
    assert (a.action, a.fwdq, a.header, a.pattern("DESTQ")) == (b.action, b.fwdq, b.header, b.pattern("DESTQ"))


def test_continuations_keep_or_drop_leading_blanks():
    assert rules("APPLNAME('AB+\n   C') ACTION(IGNORE)")[0].pattern("APPLNAME") == "ABC"
    assert rules("APPLNAME('AB-\n   C') ACTION(IGNORE)")[0].pattern("APPLNAME") == "AB   C"
    assert rules("DESTQ(X) ,+\n  ACTION(DISCARD)")[0].pattern("DESTQ") == "X"
    assert rules("ACT+\nION(DISCARD)")[0].action == "DISCARD"   # a keyword may be split


def test_comments_and_blank_lines_anywhere():
    text = "* first\n\nINPUTQ(DLQ)\n  * indented comment\nACTION(DISCARD)\n\n* last"
    table, errs = T.parse(text)
    assert errs == [] and table.control.inputq == "DLQ" and len(table.rules) == 1
    assert errors("# not a comment\nACTION(DISCARD)")[0][:2] == (1, 1)


def test_quoting_folding_and_doubled_quotes():
    (rule,) = rules("APPLIDAT('it''s') USERID(bob) ACTION(IGNORE)")
    assert (rule.pattern("APPLIDAT"), rule.pattern("USERID")) == ("it's", "BOB")
    assert errors("USERID(a b) ACTION(IGNORE)")[0][2] == "USERID: a value containing blanks must be quoted"


def test_values_need_a_significant_character():
    assert rules("FORMAT(' ') ACTION(DISCARD)")[0].pattern("FORMAT") == " "
    assert len(errors("FORMAT('') ACTION(DISCARD)\nFORMAT() ACTION(DISCARD)")) == 2


def test_numeric_keywords_take_numbers_symbols_or_a_lone_star():
    (rule,) = rules("REASON(2053) MSGTYPE(MQMT_REQUEST) PERSIST(*) FEEDBACK(MQFB_COA) APPLTYPE(-1) ACTION(DISCARD)")
    assert dict(rule.patterns) == {"REASON": 2053, "MSGTYPE": 1, "PERSIST": None, "FEEDBACK": 259, "APPLTYPE": -1}
    msgs = [m for _, _, m in errors("REASON(20*) ACTION(DISCARD)\nREASON(?) ACTION(DISCARD)\n"
                                   "MSGTYPE(MQRC_Q_FULL) ACTION(DISCARD)\nPERSIST(LOTS) ACTION(DISCARD)")]
    assert msgs == [
        "REASON: wildcards in a numeric keyword are allowed only as '*' on its own",
        "REASON: wildcards in a numeric keyword are allowed only as '*' on its own",
        "MSGTYPE: unknown symbolic value MQRC_Q_FULL",
        "PERSIST: 'LOTS' is not a number",
    ]


def test_string_field_lengths():
    rules("USERID('123456789012') ACTION(IGNORE)")
    rules("USERID('12345678901*') ACTION(IGNORE)")
    rules("USERID('123456789012*****') ACTION(IGNORE)")   # stars do not count
    assert errors("USERID('1234567890123') ACTION(IGNORE)")[0][2].startswith("USERID: value is longer")


def test_action_rules():
    msgs = [m for _, _, m in errors(
        "DESTQ(A)\nACTION(BOUNCE)\nACTION(FWD)\nACTION(FWD) FWDQ(' ')\nACTION(DISCARD) FWDQ(X)\n"
        "ACTION(RETRY) FWDQM(X)\nACTION(FWD) FWDQ(A*)\nACTION(RETRY) RETRY(1000000000)\nACTION(RETRY) RETRY(*)\n"
        "ACTION(FWD) FWDQ(Q) HEADER(MAYBE)\nACTION(FWD) FWDQ(Q) PUTAUT(ME)\nACTION(FWD) FWDQ(Q) FWDQM(&ELSE)")]
    assert msgs == [
        "the rule has no ACTION",
        "ACTION: 'BOUNCE' must be one of DISCARD, IGNORE, RETRY, FWD",
        "ACTION(FWD) needs FWDQ",
        "FWDQ: a blank queue name is not allowed",
        "FWDQ is allowed only with ACTION(FWD)",
        "FWDQM is allowed only with ACTION(FWD)",
        "FWDQ: wildcards are not allowed",
        "RETRY: '1000000000' is out of range (1-999999999)",
        "RETRY: wildcards are not allowed",
        "HEADER: 'MAYBE' must be YES or NO",
        "PUTAUT: 'ME' must be DEF or CTX",
        "FWDQM: unknown replacement variable &ELSE (use &DESTQM or &REPLYQM)",
    ]
    assert rules("ACTION(RETRY) RETRY(999999999)")[0].retry == 999_999_999


def test_control_data_first_and_at_most_once_and_rules_required():
    assert errors("ACTION(DISCARD)\nWAIT(NO)")[0][2] == "control data must be the first entry of the table"
    assert errors("WAIT(NO)")[0][2] == "the table has no rules"
    assert errors("WAIT(SOMETIMES)\nACTION(DISCARD)")[0][2] == "WAIT: 'SOMETIMES' must be YES, NO or a number of seconds"
    assert errors("RETRYINT(30) ACTION(DISCARD)")[0][2].startswith("RETRYINT is control data")
    table, _ = T.parse("WAIT(120) RETRYINT(5) INPUTQ(MY.DLQ) INPUTQM(QM1)\nACTION(DISCARD)")
    assert table.control == T.ControlData(inputq="MY.DLQ", inputqm="QM1", retryint=5, wait=120)


def test_seeded_errors_each_reported_with_line_and_column():
    text = (ROOT / "tests/data/dlq-seeded-errors.tbl").read_text()
    found = errors(text)
    assert [line for line, _, _ in found] == list(range(3, 13))
    assert found[0] == (3, 48, "RETRY: '0' is out of range (1-999999999)")
    assert found[2] == (5, 18, "keyword DESTQ appears more than once")


def test_errors_on_continued_lines_name_the_source_line_and_column():
    # "+" drops the continuation's leading blanks, "-" keeps them: positions are the source's either way
    assert errors("DESTQ(A) +\n   REASON(MQRC_NOPE) ACTION(DISCARD)") == [
        (2, 11, "REASON: unknown symbolic value MQRC_NOPE")]
    assert errors("DESTQ('A-\n  B') RETRY(0) -\n    ACTION(RETRY)") == [(2, 13, "RETRY: '0' is out of range (1-999999999)")]
    assert errors("ACTION(DISCARD)\n* c\nDESTQ(X) +\n  FWDQ(Y) ACTION(RETRY)") == [
        (4, 3, "FWDQ is allowed only with ACTION(FWD)")]


def test_error_render_format():
    (err,) = T.parse("ACTION(FWD)")[1]
    assert err.render("rules.tbl") == "rules.tbl:1:1: ACTION(FWD) needs FWDQ"


@pytest.mark.parametrize("pattern,field,hit", [
    ("A.*", "A.B", True), ("A.*", "A", False), ("A*", "A", True), ("?*", "", False), ("?*", " X", True),
    ("A?C", "A C", True), ("ABC", "ABC     ", True), ("ABC  ", "ABC", True), (" ", "", True), (" ", "X", False),
])
def test_string_matching(pattern, field, hit):
    assert T.string_matches(pattern, field) is hit


names = st.text(alphabet="ABCXYZ.0123_", min_size=1, max_size=12)


@given(names, st.integers(1, 999), st.sampled_from(["+", "-"]), st.integers(0, 6))
def test_continuation_anywhere_in_a_value_is_lossless(name, retry, mark, indent):
    cut = len(name) // 2
    if mark == "+":
        text = f"DESTQ({name[:cut]}{mark}\n{' ' * indent}{name[cut:]}) ACTION(RETRY) RETRY({retry})"
        want = name
    else:
        text = f"DESTQ('{name[:cut]}{mark}\n{' ' * indent}{name[cut:]}') ACTION(RETRY) RETRY({retry})"
        want = name[:cut] + " " * indent + name[cut:]
    table, errs = T.parse(text)
    if len(want.rstrip().replace("*", "")) > 48:
        return
    assert errs == []
    assert (table.rules[0].pattern("DESTQ"), table.rules[0].retry) == (want, retry)
