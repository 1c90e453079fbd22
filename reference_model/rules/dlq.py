"""Rules of the ``dlq`` area: how the DLQ handler processes its rules table.

Source: ``../shared/seeds/004_8a4333deaea33760.txt`` (its two paragraphs on the
search, notes 1-7 and the section "Ensuring that all DLQ messages are
processed"), with the rules-table syntax, keywords and the handler's processing
details from ``../shared/mq-facts.md`` section 4.
"""

from reference_model.rules import RULES, Rule

SEED = "004_8a4333deaea33760.txt"
FACTS = "mq-facts.md"


def _dlq(n: int, source: str, summary: str, **kw) -> Rule:
    return Rule(id=f"DLQ-{n:02d}", area="dlq", source=source, summary=summary, **kw)


RULES.add(
    # ---- the search (seed paragraphs 1-2)
    _dlq(1, f"{SEED} paragraph 1",
         "For each message the search starts at the first rule and goes down the table in order; the first matching "
         "rule with tries left is the one applied."),
    _dlq(2, f"{SEED} paragraph 1",
         "The handler counts, per message, each application of a rule; the count is kept per message, not shared "
         "between messages."),
    _dlq(3, f"{SEED} paragraph 1",
         "When an action fails, the same rule is tried again (at later scans) until it has been tried RETRY times.",
         note="Tries of one message happen one per scan: after a failure the browse moves on and the message is "
              "retried at the next rescan (mq-facts 4.6 step 6)."),
    _dlq(4, f"{SEED} paragraph 1; {FACTS} 4.6 step 3",
         "When a rule's tries are used up, the search goes on to the next matching rule, whose RETRY tries follow "
         "(a cumulative budget down the table)."),
    _dlq(5, f"{SEED} paragraph 2",
         "When every matching rule has used its tries and failed, ACTION(IGNORE) is assumed: the message stays on "
         "the dead-letter queue."),
    _dlq(6, f"{SEED} paragraph 2", "When no rule matches, ACTION(IGNORE) is assumed: the message stays on the "
         "dead-letter queue."),
    # ---- notes 1-7
    _dlq(7, f"{SEED} note 1",
         "Only messages beginning with an MQDLH are matched against the rules; others are reported as in error "
         "and stay on the queue indefinitely.",
         note="The periodic error report is an operator message, outside what a queue manager can observe."),
    _dlq(8, f"{SEED} note 2",
         "Every pattern keyword defaults to '*': a rule with an action only matches every message with an MQDLH "
         "that earlier rules did not deal with."),
    _dlq(9, f"{SEED} note 3",
         "The rules table is validated when the handler starts; a table with errors is reported and the handler "
         "does not run.",
         note="Which errors are listed is not specified (see DLQ-13); the kit's own check lists every one it finds."),
    _dlq(10, f"{SEED} note 3",
         "Changes to the rules table take effect only when the handler restarts; a running handler keeps the "
         "table it started with."),
    _dlq(11, f"{SEED} note 4",
         "The handler never alters a message's content, its MQDLH or its descriptor: a message forwarded with "
         "HEADER(YES) arrives exactly as it was on the dead-letter queue.",
         note="Removing the MQDLH for RETRY and HEADER(NO) is what those actions mean (DLQ-21, DLQ-22); the seed's "
              "'never alters' is read as applying to everything else."),
    _dlq(12, f"{SEED} note 4",
         "The handler puts messages with MQPMO_PASS_ALL_CONTEXT: the identity and origin context (UserIdentifier, "
         "ApplIdentityData, PutApplType, PutApplName) arrive unchanged."),
    _dlq(13, f"{SEED} note 5",
         "Consecutive syntax errors in a table may not all be reported: a handler may list fewer errors than a "
         "table has, but never accepts a table with one.",
         note="Latitude: the model only requires that an invalid table is refused."),
    _dlq(14, f"{SEED} note 6",
         "The handler opens the dead-letter queue with MQOO_INPUT_AS_Q_DEF.",
         note="Not exercised: the machines keep the dead-letter queue shareable (DEFSOPT(SHARED))."),
    _dlq(15, f"{SEED} note 7",
         "Several handler instances may run against one dead-letter queue with the same table; each keeps its own "
         "record of tries."),
    # ---- "Ensuring that all DLQ messages are processed"
    _dlq(16, f"{SEED} 'Ensuring that all DLQ messages are processed' paragraph 1; {FACTS} 4.6 step 5",
         "The handler remembers the messages it has seen but not removed: a message it ignored (explicitly or "
         "assumed) is not acted on again while the handler runs."),
    _dlq(17, f"{SEED} 'Ensuring that all DLQ messages are processed' paragraph 1",
         "A message arriving while the handler runs is not guaranteed to be seen before the next rescan, even on a "
         "FIFO queue.",
         note="Latitude: between rescans the model allows the handler to reach any prefix of the messages beyond "
              "its browse cursor, in queue order."),
    _dlq(18, f"{SEED} 'Ensuring that all DLQ messages are processed' paragraph 1; {FACTS} 4.6 step 6",
         "While the queue is not empty the handler rescans it from the start every RETRYINT seconds, so every "
         "message, including ones that arrived later, is considered again."),
    # ---- actions (mq-facts 4.4, 4.6)
    _dlq(19, f"{FACTS} 4.4 ACTION", "ACTION(IGNORE) leaves the message on the dead-letter queue; tries do not "
         "apply to it."),
    _dlq(20, f"{FACTS} 4.4 ACTION", "ACTION(DISCARD) deletes the message from the dead-letter queue."),
    _dlq(21, f"{FACTS} 4.4 ACTION, 4.6 step 4",
         "ACTION(RETRY) puts the message again to DestQName at DestQMgrName from its MQDLH, without the MQDLH and "
         "with the Format the MQDLH saved."),
    _dlq(22, f"{FACTS} 4.4 FWDQ, HEADER, 4.6 step 4",
         "ACTION(FWD) puts the message to FWDQ at FWDQM (blank: the local queue manager); HEADER(YES), the default, "
         "keeps the MQDLH, HEADER(NO) removes it and restores the saved Format."),
    _dlq(23, f"{FACTS} 4.4 FWDQ, FWDQM",
         "In FWDQ and FWDQM, &DESTQ, &DESTQM, &REPLYQ and &REPLYQM stand for the message's DestQName, "
         "DestQMgrName, ReplyToQ and ReplyToQMgr."),
    _dlq(24, f"{SEED} paragraph 1; {FACTS} 4.6 step 4",
         "An action runs in a unit of work: when its put fails the get is backed out and the message stays on the "
         "dead-letter queue (its BackoutCount goes up by one), counting as a failed try."),
    _dlq(25, f"{FACTS} 4.4 RETRY", "RETRY takes 1 to 999,999,999 tries and defaults to 1.",
         note="Range and default are recorded in mq-facts as from memory, consistent with the handler's source."),
    _dlq(26, f"{FACTS} 4.4 PUTAUT",
         "PUTAUT(DEF) puts with the handler's authority, PUTAUT(CTX) with the authority of the message's "
         "UserIdentifier.",
         note="The kit's queue managers have no authority checks, so both put the same way; only the keyword's "
              "validation is checked."),
    # ---- control data (mq-facts 4.1, 4.2)
    _dlq(27, f"{FACTS} 4.2 INPUTQ, 4.1",
         "INPUTQ names the queue to process; blank or absent means the queue manager's dead-letter queue (DEADQ), "
         "and a handler with no queue to open does not start."),
    _dlq(28, f"{FACTS} 4.2 RETRYINT", "RETRYINT, in seconds and 60 by default, is the interval between rescans "
         "of the queue."),
    _dlq(29, f"{FACTS} 4.2 WAIT",
         "WAIT(YES), the default, keeps the handler waiting for new messages; WAIT(NO) ends it when nothing more can "
         "be processed; WAIT(n) ends it after n seconds with nothing to process.",
         note="'Nothing more can be processed' is read as: no message on the queue that a later rescan would act on."),
    _dlq(30, f"{FACTS} 4.6 steps 1, 5",
         "The handler's record of tries and of ignored messages lives in memory: a restarted handler starts every "
         "message from the first rule again."),
    # ---- syntax (mq-facts 4.1, 4.5)
    _dlq(31, f"{FACTS} 4.1", "A table has at most one control-data entry, which must come first, and at least one rule."),
    _dlq(32, f"{FACTS} 4.5", "Keywords may come in any order and any case, separated by blanks or commas, each at most "
         "once per entry; blanks are allowed between a keyword and its parenthesis."),
    _dlq(33, f"{FACTS} 4.5", "A '+' ending a line continues the entry from the next line's first non-blank character; "
         "a '-' continues it from the next line's column 1."),
    _dlq(34, f"{FACTS} 4.5; {FACTS} 0.1", "Lines starting with '*' are comments and blank lines are ignored, "
         "anywhere in the table."),
    _dlq(35, f"{FACTS} 4.5", "Every value needs at least one significant character: FORMAT(' ') is valid, FORMAT('') "
         "and FORMAT() are not."),
    _dlq(36, f"{FACTS} 4.5", "Values with blanks or lower-case letters are single-quoted; unquoted values are folded "
         "to upper case; a quote inside a quoted value is written twice.",
         note="mq-facts marks the exact list of characters that need quoting as from memory: the kit requires "
              "quotes only around blanks."),
    _dlq(37, f"{FACTS} 4.5", "A string pattern longer than its field (not counting '*') is an error; shorter values "
         "are padded with blanks."),
    _dlq(38, f"{FACTS} 4.5", "In string patterns '?' matches one character that is not a trailing blank and '*' any "
         "run of characters; trailing blanks do not matter, leading and embedded blanks do."),
    _dlq(39, f"{FACTS} 4.5", "In numeric keywords '*' may only stand alone (any value); other wildcards are errors. "
         "Numeric keywords accept MQ's symbolic names (MQRC_Q_FULL, MQMT_REQUEST, ...)."),
    _dlq(40, f"{FACTS} 4.4, 4.5", "ACTION is required and one of DISCARD, IGNORE, RETRY, FWD; FWD needs a non-blank "
         "FWDQ; FWDQ, FWDQM and HEADER are allowed only with FWD; wildcards are not allowed in action keywords."),
    _dlq(41, f"{FACTS} 4.3",
         "Each pattern keyword is compared with its field: APPLIDAT, APPLNAME, APPLTYPE and USERID with the context, "
         "DESTQ, DESTQM, REASON and FORMAT with the MQDLH (FORMAT is the saved original format), FEEDBACK, MSGTYPE, "
         "PERSIST, REPLYQ and REPLYQM with the MQMD; a rule matches when all its keywords do."),
)
