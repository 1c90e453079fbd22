"""Named faults the simulated queue manager can be broken with, on purpose.

Each fault is a departure from MQ's documented behaviour that the kit must
detect: ``mqconform run --adapter simulated --faults NAME --area AREA`` exits 1.
"""

from __future__ import annotations

import attrs


@attrs.frozen(kw_only=True)
class Fault:
    name: str
    area: str
    description: str
    #: The rules a run should report broken.
    rules: tuple[str, ...]


FAULTS: dict[str, Fault] = {}


def _fault(name: str, area: str, rules: tuple[str, ...], description: str, catalogue: dict | None = None) -> None:
    (FAULTS if catalogue is None else catalogue)[name] = Fault(name=name, area=area, description=description,
                                                               rules=rules)


_fault("fifo-within-priority-broken", "core", ("CORE-05", "CORE-06"),
       "messages of equal delivery priority come out newest first (on a MSGDLVSQ(FIFO) queue: all of them)")
_fault("commit-keeps-gets", "core", ("CORE-14",),
       "a commit (MQCMIT, or a normal MQDISC's) makes its puts available and leaves the messages its unit of work "
       "got on their queues, available again, their BackoutCount unchanged")
_fault("lock-kept-after-close", "core", ("CORE-21",),
       "closing a handle (or its connection) leaves the message it browsed with MQGMO_LOCK locked: no other handle "
       "gets or browses it")
_fault("priority-ignored", "core", ("CORE-04",),
       "a MSGDLVSQ(PRIORITY) queue delivers in arrival order")
_fault("backout-count-not-incremented", "core", ("CORE-15", "CORE-17"),
       "a backed-out get leaves BackoutCount unchanged")
_fault("backout-loses-get", "core", ("CORE-15",),
       "a message got under syncpoint is lost when the unit of work is backed out")
_fault("get-inhibit-ignored", "core", ("CORE-25",),
       "gets and browses succeed on a GET(DISABLED) queue")
_fault("uncommitted-put-visible", "core", ("CORE-02",),
       "a message put under syncpoint is available to other connections before commit")
_fault("match-correl-ignored", "core", ("CORE-51",),
       "a get that selects by CorrelId (MQMO_MATCH_CORREL_ID) returns the first message whatever its CorrelId")
_fault("match-none-is-literal", "core", ("CORE-51",),
       "MQMI_NONE or MQCI_NONE given with its match option matches only messages whose identifier is blank")
_fault("match-in-arrival-order", "core", ("CORE-52",),
       "of the messages a selecting get may return, the first to arrive comes first, whatever its priority")
_fault("match-browse-next-restarts", "core", ("CORE-52",),
       "a selecting BROWSE_NEXT starts again from the head of the queue instead of after the cursor")
_fault("match-under-cursor-honoured", "core", ("CORE-53",),
       "under the cursor a get's match options still apply: a message there that does not match is not returned")
_fault("browse-next-skips", "core", ("CORE-19",),
       "BROWSE_NEXT skips a message when two or more follow the cursor")
_fault("disconnect-backs-out", "core", ("CORE-30",),
       "a normal MQDISC backs the unit of work out instead of committing it")
_fault("restart-keeps-nonpersistent", "core", ("CORE-32",),
       "non-persistent messages survive a queue-manager restart")
_fault("cut-commits-uow", "core", ("CORE-46",),
       "a connection the network cuts has its unit of work committed, as if the program had called MQDISC")
_fault("cut-reconnects-silently", "core", ("CORE-47",),
       "after the network cuts a connection (its unit of work backed out) the program's calls on it go on "
       "working, as if a client had reconnected without telling it")
_fault("in-flight-commit-half-done", "core", ("CORE-48",),
       "a commit cut in flight makes the unit of work's puts permanent but backs out its gets: "
       "neither committed nor backed out")
_fault("q-full-ignored", "core", ("CORE-27",),
       "puts succeed beyond MAXDEPTH")
_fault("defprty-ignored", "core", ("CORE-07",),
       "a put with MQPRI_PRIORITY_AS_Q_DEF gets priority 4 (a JMS client's default), not the queue's DEFPRTY")
_fault("defpsist-ignored", "core", ("CORE-10",),
       "a put with MQPER_PERSISTENCE_AS_Q_DEF is made persistent, not as the queue's DEFPSIST says")
_fault("msgid-not-generated", "core", ("CORE-11",),
       "a message put with a blank MsgId keeps it blank: no identifier is generated")
_fault("msgid-generated-once", "core", ("CORE-11",),
       "every message put with a blank MsgId is given the same generated one")
_fault("define-replaces-queue", "core", ("CORE-41",),
       "defining a queue that exists replaces its attributes instead of failing with MQRCCF_OBJECT_ALREADY_EXISTS")
_fault("disconnected-connection-works", "core", ("CORE-40",),
       "after MQDISC the connection handle stays valid: calls on it succeed instead of failing with MQRC_HCONN_ERROR")
_fault("open-options-unchecked", "core", ("CORE-23",),
       "MQOPEN accepts two input options at once (shared and exclusive) instead of MQRC_OPTIONS_ERROR")
_fault("put-without-output-open", "core", ("CORE-22",),
       "MQPUT on a handle opened without MQOO_OUTPUT puts the message instead of MQRC_NOT_OPEN_FOR_OUTPUT")
_fault("syncpoint-puts-queued-at-commit", "core", ("CORE-05", "CORE-06"),
       "a message put under syncpoint takes its place in the queue when its unit of work commits, "
       "behind messages put after it")
_fault("backout-requeues-at-tail", "core", ("CORE-15", "CORE-05", "CORE-06"),
       "a backed-out message goes back behind the messages of its priority instead of to its original place")
_fault("full-counts-own-uncommitted-only", "core", ("CORE-27",),
       "the MAXDEPTH check at a put counts the putter's own uncommitted puts, not other programs'")
_fault("uncommitted-put-not-counted", "core", ("CORE-28",),
       "CURDEPTH leaves out messages put under syncpoint until their unit of work commits")

_fault("mark-reinstated-on-backout", "syncpoint", ("SYNC-03", "SYNC-14", "SYNC-16"),
       "MQBACK reinstates the message of a get marked to skip backout")
_fault("skipped-lost-on-backout", "syncpoint", ("SYNC-05", "SYNC-17"),
       "backing out the new unit of work loses the skipped message instead of reinstating it")
_fault("second-mark-accepted", "syncpoint", ("SYNC-06",),
       "a second marked get in one unit of work is accepted")
_fault("mark-honoured-without-syncpoint", "syncpoint", ("SYNC-10",),
       "a marked get without MQGMO_SYNCPOINT is done under syncpoint with the mark")
_fault("abend-skips-mark", "syncpoint", ("SYNC-07",),
       "an abnormal end or restart treats the mark as skipped and removes the marked message")
_fault("backout-keeps-puts-with-mark", "syncpoint", ("SYNC-13",),
       "puts of a unit of work backed out with a marked get survive the backout")
_fault("rrs-mark-allowed", "syncpoint", ("SYNC-08",),
       "the mark is accepted in the RRS / Db2 stored-procedure environment")
_fault("hardenbo-ignored", "syncpoint", ("SYNC-19",),
       "on z/OS a queue with HARDENBO loses the backouts since the last restart, as one without it may")
_fault("backout-count-lost-at-restart", "core", ("CORE-45", "SYNC-19"),
       "a restart sets every BackoutCount back to zero, on Multiplatforms too (and on z/OS for a queue with HARDENBO)")

_fault("expired-message-returned", "expiry", ("EXP-06", "EXP-04"),
       "gets and browses return messages whose expiry has passed")
_fault("expiry-not-decremented", "expiry", ("EXP-03", "EXP-02"),
       "a get returns the original Expiry instead of the time remaining")
_fault("expiry-zero-accepted", "expiry", ("EXP-10",),
       "a put with Expiry zero is accepted")
_fault("expired-not-counted", "expiry", ("EXP-11",),
       "expired messages not yet discarded are left out of CURDEPTH and MAXDEPTH")
_fault("expired-room-at-put", "expiry", ("EXP-11", "CORE-27"),
       "a put to a queue at MAXDEPTH succeeds when some of its messages have expired (CURDEPTH still counts them)")
_fault("priority-discards-lower", "expiry", ("EXP-05", "EXP-04", "EXP-08", "EXP-12", "CORE-02"),
       "a get that meets an expired message discards every expired message on the queue (other connections' "
       "puts not yet committed among them: discarded as if they were available)")
_fault("report-at-eligibility", "expiry", ("EXP-12", "EXP-08"),
       "the expiration report is sent when the message expires, not when it is discarded")
_fault("discard-rolled-back", "expiry", ("EXP-13", "EXP-11", "EXP-08"),
       "messages discarded by a get under syncpoint come back when its unit of work is backed out "
       "(and are discarded again, with a second expiration report)")
_fault("expiry-counts-from-commit", "expiry", ("EXP-02", "EXP-03", "EXP-06"),
       "a message put under syncpoint has its expiry counted from the commit, not from the put")
_fault("backout-resets-expiry", "expiry", ("EXP-14", "EXP-03"),
       "a message reinstated by a backout starts its expiry time again")
_fault("remote-put-inner-expiry-unlimited", "expiry", ("EXP-18",),
       "a put to a remote queue embeds MQEI_UNLIMITED in the MQXQH instead of the application's Expiry")
_fault("transmission-queue-never-expires", "expiry", ("EXP-07", "EXP-06"),
       "messages on a transmission queue do not expire")
_fault("xmit-inner-expiry-unchecked", "expiry", ("EXP-19",),
       "a put of an MQXMIT message is accepted whatever its embedded Expiry, zero and negative values included")
_fault("xmit-inner-not-zeroed", "expiry",
 ("EXP-22", "EXP-20"),
       "the MQXQH's elapsed embedded Expiry is returned negative instead of zero")
_fault("lock-expired-returned", "expiry", ("EXP-15",),
       "a get under the cursor returns a locked message that has expired")

_fault("first-fires-on-nonempty", "trigger", ("TRIG-03", "TRIG-16"),
       "TRIGTYPE(FIRST) fires on every suitable put, not only when the queue was empty")
_fault("trigmpri-ignored", "trigger", ("TRIG-02", "TRIG-25"),
       "messages below TriggerMsgPriority count toward triggering")
_fault("depth-off-by-one", "trigger", ("TRIG-03",),
       "TRIGTYPE(DEPTH) fires at TriggerDepth + 1 messages")
_fault("trigger-before-commit", "trigger", ("TRIG-15",),
       "a trigger message caused by a put in a unit of work is available before the unit of work ends")
_fault("no-trigger-at-close", "trigger", ("TRIG-18", "TRIG-19"),
       "closing the queue as its only server with messages left creates no trigger message")
_fault("trigint-ignored", "trigger", ("TRIG-16",),
       "FIRST on a non-empty queue fires without waiting for TriggerInterval")
_fault("first-while-open-for-input", "trigger", ("TRIG-06",),
       "FIRST and DEPTH fire while the application queue is open for input")
_fault("every-twice-on-alter", "trigger", ("TRIG-26", "TRIG-20"),
       "switching triggering on for an EVERY queue with messages writes two trigger messages")
_fault("fifo-uses-message-priority", "trigger", ("TRIG-24",),
       "a MSGDLVSQ(FIFO) queue compares each message's priority with TriggerMsgPriority")
_fault("no-trigger-on-monitor-open", "trigger", ("TRIG-23",),
       "a trigger monitor opening the initiation queue does not trigger queues with waiting messages")
_fault("trigger-message-expires", "trigger", ("TRIG-30",),
       "trigger messages are written with an expiry instead of MQEI_UNLIMITED")
_fault("depth-keeps-trigger-on", "trigger", ("TRIG-28",),
       "TriggerControl stays on after a DEPTH trigger message")
_fault("msg-too-big-accepted", "trigger", ("CORE-49", "CORE-50"),
       "a message longer than the queue's MAXMSGL is put whole instead of failing with MQRC_MSG_TOO_BIG_FOR_Q "
       "(or being segmented)")
_fault("segmentation-ignored", "trigger", ("CORE-50",),
       "a message too long for the queue is refused with MQRC_MSG_TOO_BIG_FOR_Q although MQMF_SEGMENTATION_ALLOWED "
       "lets the queue manager segment it (as z/OS does)")
_fault("last-segment-unmarked", "trigger", ("CORE-50",),
       "a get of the last segment of a segmented message says MQSS_SEGMENT instead of MQSS_LAST_SEGMENT")
_fault("segment-triggers-each", "trigger", ("TRIG-27",),
       "each segment of a message segmented at put is a trigger event of its own (EVERY writes one trigger message "
       "per segment)")
_fault("segment-trigger-at-first", "trigger", ("TRIG-27",),
       "a segmented put's trigger event is judged when its first segment is on the queue, not after the last")
_fault("member-scans-all-queues", "expiry", ("EXP-25",),
       "another queue manager of the queue-sharing group, scanning for expired messages at its EXPRYINT, removes "
       "them from the private queues of the queue manager under test too")
_fault("shared-counts-uncommitted", "trigger", ("TRIG-05",),
       "a shared queue of a queue-sharing group counts uncommitted messages for triggering, as a private one does")
_fault("open-input-counted-group-wide", "trigger", ("TRIG-08",),
       "a queue manager of a queue-sharing group counts the other members' input handles on a shared queue as "
       "its own OpenInputCount, so a server on one stops FIRST and DEPTH triggers on all")
_fault("exclusive-blocks-own-qmgr-only", "trigger", ("TRIG-08",),
       "a shared queue open for exclusive input on one queue manager is still triggered by the others")
_fault("no-first-override", "trigger", ("TRIG-07",),
       "while one queue manager has a shared queue open for shared input, the others keep its own trigger type "
       "and TriggerMsgPriority instead of FIRST and 0")
_fault("one-trigger-per-group", "trigger", ("TRIG-08",),
       "a trigger event on a shared queue gives one trigger message in the whole group (the queue manager "
       "under test's) instead of one on each member's initiation queue")
_fault("every-delivered-at-backout", "trigger", ("TRIG-15",),
       "an EVERY trigger message of a backed-out unit of work is delivered")

_fault("rank-ignored", "cluster", ("CLWL-04a", "CLWL-04b"),
       "channel and queue CLWLRANK do not eliminate lower-ranked destinations")
_fault("clwlprty-ignored", "cluster", ("CLWL-11b",),
       "queue CLWLPRTY does not eliminate lower-priority destinations")
_fault("netprty-ignored", "cluster", ("CLWL-11",),
       "every channel to a queue manager competes, whatever its NETPRTY")
_fault("suspended-preferred", "cluster", ("CLWL-05",),
       "suspended queue managers are preferred to resumed ones")
_fault("channel-state-ignored", "cluster", ("CLWL-06", "CLWL-07", "CLWL-08", "CLWL-09"),
       "stopped or retrying channels compete with running ones")
_fault("weights-ignored", "cluster", ("CLWL-12",),
       "every destination's DestSeqFactor advances as if CLWLWGHT were 50")
_fault("mruc-ignored", "cluster", ("CLWL-11c",),
       "CLWLMRUC does not limit the destinations to the most recently used")
_fault("no-reset-on-change", "cluster", ("CLWL-12",),
       "DestSeqFactors are not reset when workload attributes change or destinations appear")
_fault("local-not-preferred", "cluster", ("CLWL-03",),
       "the local instance is not chosen under CLWLUSEQ(LOCAL)")
_fault("put-disabled-chosen", "cluster", ("CLWL-01",),
       "a PUT-disabled queue instance can be chosen")

_fault("alias-put-disabled-chosen", "cluster", ("CLWL-02",),
       "a put naming a queue manager may go through a PUT-disabled queue-manager alias")
_fault("foreign-channel-to-qmgr", "cluster", ("CLWL-02",),
       "a put naming a queue manager may use a channel in none of the local queue manager's clusters")
_fault("qmgr-clwlprty-ignored", "cluster", ("CLWL-11a",),
       "channel and alias CLWLPRTY do not eliminate routes when a queue manager is chosen")

# The DLQ handler the simulated queue manager runs (the kit's own, adapters/dlq_handler).
_fault("dlq-rules-out-of-order", "dlq", ("DLQ-01",),
       "the handler searches the rules table from the last rule up")
_fault("dlq-retry-ignored", "dlq", ("DLQ-03",),
       "each matching rule is tried once, whatever its RETRY count")
_fault("dlq-no-fall-through", "dlq", ("DLQ-04", "DLQ-05"),
       "when a rule's tries are used up the handler gives up instead of trying the next matching rule")
_fault("dlq-ignore-not-assumed", "dlq", ("DLQ-05", "DLQ-06"),
       "a message no rule deals with is discarded instead of left on the queue")
_fault("dlq-no-dlh-processed", "dlq", ("DLQ-07",),
       "messages without an MQDLH are matched against the rules like the others")
_fault("dlq-header-stripped", "dlq", ("DLQ-22", "DLQ-11"),
       "ACTION(FWD) HEADER(YES) forwards the message without its MQDLH")
_fault("dlq-format-not-restored", "dlq", ("DLQ-21", "DLQ-22"),
       "when the MQDLH is removed the message keeps Format MQDEAD instead of the saved format")
_fault("dlq-opens-shared", "dlq", ("DLQ-14",),
       "the handler opens its input queue MQOO_INPUT_SHARED whatever the queue's DEFSOPT")
_fault("dlq-forward-drops-expiry", "dlq", ("EXP-16", "DLQ-11"),
       "forwarded and retried messages are put with MQEI_UNLIMITED instead of what is left of their expiry")
_fault("dead-letter-expired-no-report", "dlq", ("EXP-09", "EXP-08"),
       "an expired message discarded from the dead-letter queue gets no expiration report")
_fault("dlq-context-not-passed", "dlq", ("DLQ-12",),
       "forwarded and retried messages get the handler's default context instead of their own")
_fault("dlq-table-change-applied", "dlq", ("DLQ-10",),
       "a running handler picks up a changed rules table without a restart")
_fault("dlq-new-messages-never-seen", "dlq", ("DLQ-18",),
       "messages that arrive after the handler's first scan are never processed, not even at a rescan")
_fault("dlq-retry-count-per-rule", "dlq", ("DLQ-02",),
       "tries are counted per rule for all messages together instead of per message")
_fault("dlq-question-matches-trailing-blank", "dlq", ("DLQ-38",),
       "'?' in a pattern matches a trailing blank, so REPLYQ(?*) matches a blank ReplyToQ")
_fault("dlq-destqm-is-replyqm", "dlq", ("DLQ-41",),
       "the handler compares a DESTQM pattern with the message's ReplyToQMgr instead of the MQDLH's DestQMgrName")
_fault("dlq-appltype-ignored", "dlq", ("DLQ-41",),
       "the handler takes an APPLTYPE pattern to match every message")
_fault("dlq-feedback-is-reason", "dlq", ("DLQ-41",),
       "the handler compares a FEEDBACK pattern with the MQDLH's Reason instead of the descriptor's Feedback")
_fault("dlq-failure-not-backed-out", "dlq", ("DLQ-24",),
       "when an action's put fails the handler commits its get, losing the message")
_fault("dlq-restart-keeps-tries", "dlq", ("DLQ-30",),
       "a restarted handler remembers the tries and ignored messages of its previous run")


#: Faults only overlapping operations show (a concurrent case, conformance/runner/concurrent.py): a call that is not atomic.
#: Kept apart from :data:`FAULTS`, each of which a sequential run finds.
RACES: dict[str, Fault] = {}
_fault("get-not-atomic", "core", ("CORE-16", "CORE-14", "CORE-21"),
       "a get outside syncpoint picks its message, lets other calls run, then takes it: two overlapping gets "
       "can both return the one message (CORE-14 where the other get was under syncpoint, CORE-21 where the "
       "other call was a browse that locked it)", RACES)
_fault("commit-not-atomic", "core", ("CORE-29",),
       "a commit makes its unit of work's puts available one at a time, letting other calls run in between: "
       "a getter can see part of a committed unit of work", RACES)
_fault("depth-not-atomic", "core", ("CORE-28",),
       "CURDEPTH is a count a get outside syncpoint reads, then, after other calls ran, writes back less one: of "
       "two overlapping gets one update is lost, and CURDEPTH stays one too high though the drain after the "
       "clients finds every message gone", RACES)
_fault("exclusive-open-not-atomic", "core", ("CORE-23",),
       "an input open checks that no other handle has the queue open for input, lets other calls run, then "
       "opens: two overlapping exclusive opens can both succeed", RACES)
_fault("browse-lock-not-atomic", "core", ("CORE-21", "CORE-16", "CORE-14"),
       "a browse with MQGMO_LOCK picks its message, lets other calls run, then locks it: a get meanwhile and "
       "the browse can both return the one message (CORE-14 where the get was under syncpoint)", RACES)
_fault("first-trigger-not-atomic", "core", ("TRIG-03", "TRIG-16"),
       "a put to a FIRST-triggered queue reads how many messages were there, lets other calls run, then puts and "
       "judges the trigger event by that count: two overlapping puts to an empty queue give two trigger "
       "messages", RACES)


#: Faults that show at some calls only, at random (seeded by the case): judged by their frequency over many
#: cases (a crash campaign, conformance/runner/crash.py), not by one run's verdict.  Kept apart from :data:`FAULTS`.
SOMETIMES: dict[str, Fault] = {}
_fault("restart-sometimes-loses-persistent", "core", ("CORE-32",),
       "one restart in four loses a committed persistent message", SOMETIMES)


def parse_faults(text: str | None) -> tuple[str, ...]:
    """``"a,b"`` to a tuple of known fault names; raises ValueError naming an unknown one."""
    if not text:
        return ()
    names = tuple(n.strip() for n in text.split(",") if n.strip())
    for n in names:
        if n not in FAULTS and n not in RACES and n not in SOMETIMES:
            raise ValueError(f"unknown fault {n!r} (see 'mqconform faults')")
    return names
