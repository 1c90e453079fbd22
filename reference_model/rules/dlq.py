"""Rules of the ``dlq`` area: how the DLQ handler processes its rules table.

Source: IBM's topic "How the rules table is processed" (its two paragraphs on
the search and notes 1-7) and "Ensuring that all DLQ messages are processed",
with the rules-table topics (control data, patterns and actions, conventions)
and the handler's sample source for processing details; see
``reference_model/sources.py``.
"""

from reference_model import sources as S
from reference_model.rules import RULES, Rule
from reference_model.sources import Cite


def _dlq(n: int, cites, summary: str, **kw) -> Rule:
    return Rule(id=f"DLQ-{n:02d}", area="dlq", cites=cites, summary=summary, **kw)


RULES.add(
    # ---- the search (paragraphs 1-2)
    _dlq(1, Cite(S.DLQ_PROCESSING, "paragraph 1"),
         "For each message the search starts at the first rule and goes down the table in order; the first matching "
         "rule with tries left is the one applied."),
    _dlq(2, Cite(S.DLQ_PROCESSING, "paragraph 1"),
         "The handler counts, per message, each application of a rule; the count is kept per message, not shared "
         "between messages."),
    _dlq(3, Cite(S.DLQ_PROCESSING, "paragraph 1"),
         "When an action fails, the same rule is tried again (at later scans) until it has been tried RETRY times.",
         note="Tries of one message happen one per scan: after a failure the browse moves on and the message is "
              "retried at the next rescan (the handler's sample source)."),
    _dlq(4, (Cite(S.DLQ_PROCESSING, "paragraph 1"), Cite(S.DLQ_SAMPLE, "rule selection: the cumulative RETRY budget")),
         "When a rule's tries are used up, the search goes on to the next matching rule, whose RETRY tries follow "
         "(a cumulative budget down the table)."),
    _dlq(5, Cite(S.DLQ_PROCESSING, "paragraph 2"),
         "When every matching rule has used its tries and failed, ACTION(IGNORE) is assumed: the message stays on "
         "the dead-letter queue."),
    _dlq(6, Cite(S.DLQ_PROCESSING, "paragraph 2"), "When no rule matches, ACTION(IGNORE) is assumed: the message stays on the "
         "dead-letter queue."),
    # ---- notes 1-7
    _dlq(7, Cite(S.DLQ_PROCESSING, "note 1"),
         "Only messages beginning with an MQDLH are matched against the rules; others are reported as in error "
         "and stay on the queue indefinitely.",
         note="The periodic error report is an operator message, outside what a queue manager can observe."),
    _dlq(8, Cite(S.DLQ_PROCESSING, "note 2"),
         "Every pattern keyword defaults to '*': a rule with an action only matches every message with an MQDLH "
         "that earlier rules did not deal with."),
    _dlq(9, Cite(S.DLQ_PROCESSING, "note 3"),
         "The rules table is validated when the handler starts; a table with errors is reported and the handler "
         "does not run.",
         note="Which errors are listed is not specified (see DLQ-13); the kit's own check lists every one it finds."),
    _dlq(10, Cite(S.DLQ_PROCESSING, "note 3"),
         "Changes to the rules table take effect only when the handler restarts; a running handler keeps the "
         "table it started with."),
    _dlq(11, Cite(S.DLQ_PROCESSING, "note 4"),
         "The handler never alters a message's content, its MQDLH or its descriptor: a message forwarded with "
         "HEADER(YES) arrives exactly as it was on the dead-letter queue.",
         note="Removing the MQDLH for RETRY and HEADER(NO) is what those actions mean (DLQ-21, DLQ-22); note 4's "
              "'never alters' is read as applying to everything else."),
    _dlq(12, Cite(S.DLQ_PROCESSING, "note 4"),
         "The handler puts messages with MQPMO_PASS_ALL_CONTEXT: the identity and origin context (UserIdentifier, "
         "ApplIdentityData, PutApplType, PutApplName) arrive unchanged."),
    _dlq(13, Cite(S.DLQ_PROCESSING, "note 5"),
         "Consecutive syntax errors in a table may not all be reported: a handler may list fewer errors than a "
         "table has, but never accepts a table with one.",
         note="Latitude: the model only requires that an invalid table is refused."),
    _dlq(14, Cite(S.DLQ_PROCESSING, "note 6"),
         "The handler opens the dead-letter queue with MQOO_INPUT_AS_Q_DEF.",
         note="Checked through what the open allows: with DEFSOPT(EXCL) a handler does not start while another "
         "handler (or an application) has the queue open for input, and then fails with MQRC_OBJECT_IN_USE."),
    _dlq(15, Cite(S.DLQ_PROCESSING, "note 7"),
         "Several handler instances may run against one dead-letter queue with the same table; each keeps its own "
         "record of tries."),
    # ---- "Ensuring that all DLQ messages are processed"
    _dlq(16, (Cite(S.DLQ_ALL_PROCESSED, "paragraph 1"), Cite(S.DLQ_SAMPLE, "messages ignored are remembered")),
         "The handler remembers the messages it has seen but not removed: a message it ignored (explicitly or "
         "assumed) is not acted on again while the handler runs."),
    _dlq(17, Cite(S.DLQ_ALL_PROCESSED, "paragraph 1"),
         "A message arriving while the handler runs is not guaranteed to be seen before the next rescan, even on a "
         "FIFO queue.",
         note="Latitude: between rescans the model allows the handler to reach any prefix of the messages beyond "
              "its browse cursor, in queue order."),
    _dlq(18, (Cite(S.DLQ_ALL_PROCESSED, "paragraph 1"), Cite(S.DLQ_SAMPLE, "rescan after RETRYINT")),
         "While the queue is not empty the handler rescans it from the start every RETRYINT seconds, so every "
         "message, including ones that arrived later, is considered again."),
    # ---- actions
    _dlq(19, Cite(S.DLQ_PATTERNS, "ACTION"), "ACTION(IGNORE) leaves the message on the dead-letter queue; tries do not "
         "apply to it."),
    _dlq(20, Cite(S.DLQ_PATTERNS, "ACTION"), "ACTION(DISCARD) deletes the message from the dead-letter queue."),
    _dlq(21, (Cite(S.DLQ_PATTERNS, "ACTION"), Cite(S.DLQ_SAMPLE, "RETRY and FWD with HEADER(NO): the MQDLH removed")),
         "ACTION(RETRY) puts the message again to DestQName at DestQMgrName from its MQDLH, without the MQDLH and "
         "with the Format the MQDLH saved."),
    _dlq(22, (Cite(S.DLQ_PATTERNS, "FWDQ, FWDQM, HEADER"), Cite(S.DLQ_SAMPLE, "RETRY and FWD with HEADER(NO): the MQDLH removed")),
         "ACTION(FWD) puts the message to FWDQ at FWDQM (blank: the local queue manager); HEADER(YES), the default, "
         "keeps the MQDLH, HEADER(NO) removes it and restores the saved Format."),
    _dlq(23, Cite(S.DLQ_PATTERNS, "FWDQ, FWDQM"),
         "In FWDQ and FWDQM, &DESTQ, &DESTQM, &REPLYQ and &REPLYQM stand for the message's DestQName, "
         "DestQMgrName, ReplyToQ and ReplyToQMgr."),
    _dlq(24, (Cite(S.DLQ_PROCESSING, "paragraph 1"), Cite(S.DLQ_SAMPLE, "each action in a unit of work")),
         "An action runs in a unit of work: when its put fails the get is backed out and the message stays on the "
         "dead-letter queue (its BackoutCount goes up by one), counting as a failed try."),
    _dlq(25, Cite(S.DLQ_PATTERNS, "RETRY"), "RETRY takes 1 to 999,999,999 tries and defaults to 1.",
         note="The range and default follow the handler's sample source."),
    _dlq(26, Cite(S.DLQ_PATTERNS, "PUTAUT"),
         "PUTAUT(DEF) puts with the handler's authority, PUTAUT(CTX) with the authority of the message's "
         "UserIdentifier.",
         note="The kit's queue managers have no authority checks, so both put the same way; only the keyword's "
              "validation is checked."),
    # ---- control data
    _dlq(27, (Cite(S.DLQ_CONTROL, "INPUTQ"), Cite(S.RUNMQDLQ)),
         "INPUTQ names the queue to process; blank or absent means the queue manager's dead-letter queue (DEADQ), "
         "and a handler with no queue to open does not start."),
    _dlq(28, Cite(S.DLQ_CONTROL, "RETRYINT"), "RETRYINT, in seconds and 60 by default, is the interval between rescans "
         "of the queue."),
    _dlq(29, Cite(S.DLQ_CONTROL, "WAIT"),
         "WAIT(YES), the default, keeps the handler waiting for new messages; WAIT(NO) ends it when nothing more can "
         "be processed; WAIT(n) ends it after n seconds with nothing to process.",
         note="'Nothing more can be processed' is read as: no message on the queue that a later rescan would act on."),
    _dlq(30, Cite(S.DLQ_SAMPLE, "try counts and ignored messages kept in memory"),
         "The handler's record of tries and of ignored messages lives in memory: a restarted handler starts every "
         "message from the first rule again."),
    # ---- syntax
    _dlq(31, Cite(S.DLQ_TABLE), "A table has at most one control-data entry, which must come first, and at least one rule."),
    _dlq(32, Cite(S.DLQ_CONVENTIONS, "keywords: order, case and separators"), "Keywords may come in any order and any case, separated by blanks or commas, each at most "
         "once per entry; blanks are allowed between a keyword and its parenthesis."),
    _dlq(33, Cite(S.DLQ_CONVENTIONS, "continuation"), "A '+' ending a line continues the entry from the next line's first non-blank character; "
         "a '-' continues it from the next line's column 1."),
    _dlq(34, Cite(S.DLQ_CONVENTIONS, "comments and blank lines"), "Lines starting with '*' are comments and blank lines are ignored, "
         "anywhere in the table."),
    _dlq(35, Cite(S.DLQ_CONVENTIONS, "values"), "Every value needs at least one significant character: FORMAT(' ') is valid, FORMAT('') "
         "and FORMAT() are not."),
    _dlq(36, Cite(S.DLQ_CONVENTIONS, "quoting and case"), "Values with blanks or lower-case letters are single-quoted; unquoted values are folded "
         "to upper case; a quote inside a quoted value is written twice.",
         note="The sources consulted do not settle the exact set of characters that need quoting: the kit "
              "requires quotes only around blanks."),
    _dlq(37, Cite(S.DLQ_CONVENTIONS, "field lengths"), "A string pattern longer than its field (not counting '*') is an error; shorter values "
         "are padded with blanks."),
    _dlq(38, Cite(S.DLQ_CONVENTIONS, "wildcards"), "In string patterns '?' matches one character that is not a trailing blank and '*' any "
         "run of characters; trailing blanks do not matter, leading and embedded blanks do."),
    _dlq(39, (Cite(S.DLQ_CONVENTIONS, "wildcards"), Cite(S.DLQ_PATTERNS, "numeric keywords")), "In numeric keywords '*' may only stand alone (any value); other wildcards are errors. "
         "Numeric keywords accept MQ's symbolic names (MQRC_Q_FULL, MQMT_REQUEST, ...)."),
    _dlq(40, (Cite(S.DLQ_PATTERNS, "action keywords"), Cite(S.DLQ_CONVENTIONS, "wildcards")), "ACTION is required and one of DISCARD, IGNORE, RETRY, FWD; FWD needs a non-blank "
         "FWDQ; FWDQ, FWDQM and HEADER are allowed only with FWD; wildcards are not allowed in action keywords."),
    _dlq(41, Cite(S.DLQ_PATTERNS, "pattern-matching keywords"),
         "Each pattern keyword is compared with its field: APPLIDAT, APPLNAME, APPLTYPE and USERID with the context, "
         "DESTQ, DESTQM, REASON and FORMAT with the MQDLH (FORMAT is the saved original format), FEEDBACK, MSGTYPE, "
         "PERSIST, REPLYQ and REPLYQM with the MQMD; a rule matches when all its keywords do."),
)
