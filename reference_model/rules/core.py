"""Rules of the ``core`` area: put, get, browse, delivery order, units of work, BackoutCount.

The seeds do not describe these; they follow the MQ documentation pages cited on
each rule (collected in ``../shared/mq-facts.md``).
"""

from reference_model import mqconst as C
from reference_model.rules import RULES, Rule

DOC = "https://www.ibm.com/docs/en/ibm-mq/9.3.x"
MQPUT = "MQ doc: MQPUT usage notes"
MQGET = "MQ doc: MQGET usage notes"
MQMD_PRIORITY = "MQ doc: MQMD Priority field (q097610_)"
UOW = "MQ doc: Committing and backing out units of work (q026790_)"
CURDEPTH = "MQ doc: CurrentQDepth (q103130_)"
BROWSE = "MQ doc: The browse cursor"
MQDISC = "MQ doc: MQDISC usage notes (mq-facts 3.3)"
BACKOUT_COUNT = "MQ doc: MQMD BackoutCount (q097450_)"


def _core(n: int, source: str, summary: str, **kw) -> Rule:
    return Rule(id=f"CORE-{n:02d}", area="core", source=source, summary=summary, **kw)


RULES.add(
    _core(1, MQPUT, "A message put outside syncpoint is available to getters as soon as the put returns."),
    _core(
        2, UOW,
        "A message put under syncpoint is not available to other connections until its unit of work commits.",
        note="MQ documents visibility to other programs only; for the putting connection itself the "
        "model allows the message to be either available or not.",
    ),
    _core(3, UOW, "Backing out a unit of work deletes the messages it put."),
    _core(4, "MQ doc: MsgDeliverySequence / Message priorities (q022910_)",
          "On a MSGDLVSQ(PRIORITY) queue a get returns the highest-priority available message first."),
    _core(5, "MQ doc: Message priorities (q022910_)",
          "Messages of equal priority are returned in the order they arrived (FIFO within priority)."),
    _core(6, "MQ doc: Message priorities (q022910_); mq-facts 0.7",
          "On a MSGDLVSQ(FIFO) queue messages are returned in arrival order whatever their priority, "
          "and the Priority field keeps the value put."),
    _core(7, MQMD_PRIORITY, "Priority MQPRI_PRIORITY_AS_Q_DEF takes the queue's DEFPRTY at the time of the put."),
    _core(8, MQMD_PRIORITY,
          "A priority above MaxPriority is accepted with MQRC_PRIORITY_EXCEEDS_MAXIMUM, queued at MaxPriority, "
          "and the Priority field keeps the value put."),
    _core(9, "MQ doc: MQRC_PRIORITY_ERROR (2050)", "A negative priority other than MQPRI_PRIORITY_AS_Q_DEF fails with MQRC_PRIORITY_ERROR."),
    _core(10, "MQ doc: MQMD Persistence field",
          "Persistence MQPER_PERSISTENCE_AS_Q_DEF takes the queue's DEFPSIST; an invalid value fails with MQRC_PERSISTENCE_ERROR."),
    _core(11, "MQ doc: MQMD fields (MsgId, CorrelId, Format, ReplyToQ, Report, MsgType, Feedback)",
          "A get returns the body and descriptor fields as they were put; a blank MsgId is replaced by a generated one."),
    _core(12, BACKOUT_COUNT, "MQPUT ignores the BackoutCount field: a new message has BackoutCount 0."),
    _core(13, "MQ doc: MQRC_NO_MSG_AVAILABLE (2033)", "A get with no available message fails with MQRC_NO_MSG_AVAILABLE (after the wait interval)."),
    _core(14, UOW, "A message got under syncpoint is unavailable to everyone until the unit of work ends; commit deletes it."),
    _core(15, UOW, "Backing out reinstates the messages got in the unit of work, in their original place, BackoutCount + 1."),
    _core(16, "MQ doc: MQGMO_NO_SYNCPOINT", "A message got outside syncpoint is removed at once; no backout restores it."),
    _core(17, BACKOUT_COUNT, "BackoutCount counts backed-out non-browse gets only; a browse never changes it."),
    _core(18, BROWSE, "A browse is non-destructive; BROWSE_FIRST returns the first available message in delivery order."),
    _core(19, BROWSE,
          "BROWSE_NEXT returns the next available message after the browse cursor in delivery order; "
          "a newly opened handle's cursor is before the first message."),
    _core(20, "MQ doc: MQRC_NO_MSG_UNDER_CURSOR (2034)",
          "MSG_UNDER_CURSOR and BROWSE_MSG_UNDER_CURSOR act on the message under the browse cursor, "
          "failing with MQRC_NO_MSG_UNDER_CURSOR when there is none or it has gone."),
    _core(21, "MQ doc: MQGMO_LOCK / MQGMO_UNLOCK",
          "A message browsed with LOCK is invisible to other handles until unlocked, got, or the handle is closed; "
          "UNLOCK with no locked message fails with MQRC_NO_MSG_LOCKED."),
    _core(22, "MQ doc: MQRC_NOT_OPEN_FOR_INPUT/BROWSE/OUTPUT (2037/2036/2039)",
          "A get, browse or put through a handle not opened for it fails with the matching NOT_OPEN_FOR reason."),
    _core(23, "MQ doc: MQOO_INPUT_EXCLUSIVE / MQRC_OBJECT_IN_USE (2042)",
          "An exclusive input open fails with MQRC_OBJECT_IN_USE while the queue is open for input, and any input "
          "open fails while it is open exclusively; INPUT_AS_Q_DEF follows DEFSOPT."),
    _core(24, "MQ doc: OpenInputCount / OpenOutputCount",
          "IPPROCS and OPPROCS count the handles open for input and for output."),
    _core(25, "MQ doc: InhibitGet / MQRC_GET_INHIBITED (2016)",
          "While GET(DISABLED) every get and browse fails with MQRC_GET_INHIBITED, on handles already open too."),
    _core(26, "MQ doc: InhibitPut / MQRC_PUT_INHIBITED (2051)",
          "While PUT(DISABLED) every put and put1 fails with MQRC_PUT_INHIBITED."),
    _core(27, "MQ doc: MaxQDepth / MQRC_Q_FULL (2053)", "A put fails with MQRC_Q_FULL when CURDEPTH has reached MAXDEPTH."),
    _core(28, CURDEPTH,
          "CURDEPTH counts uncommitted puts and excludes messages got under syncpoint, so a backout can take it past MAXDEPTH."),
    _core(29, "MQ doc: MQCMIT (q101750_)", "Commit makes the unit of work's puts available and deletes its gets; with no unit of work it does nothing."),
    _core(30, MQDISC, "A normal MQDISC commits the unit of work and closes the connection's handles.",
          platforms=(C.PLATFORM_DISTRIBUTED,)),
    _core(31, MQDISC, "A program ending without MQDISC (abnormal end) backs out its unit of work."),
    _core(32, "MQ doc: Message persistence; mq-facts 3.4",
          "A restart keeps committed persistent messages, discards non-persistent ones, backs out units of work "
          "in flight and ends every connection."),
    _core(33, "MQ doc: MQRC_UNKNOWN_OBJECT_NAME (2085)", "Opening or put1 to a queue that does not exist fails with MQRC_UNKNOWN_OBJECT_NAME."),
    _core(34, "MQ doc: MQGMO/MQPMO options", "SYNCPOINT together with NO_SYNCPOINT fails with MQRC_OPTIONS_ERROR."),
    _core(35, "MQ doc: MQGMO Options, syncpoint default (mq-facts 3.1)",
          "With neither SYNCPOINT nor NO_SYNCPOINT, a get or put is outside a unit of work on distributed platforms.",
          platforms=(C.PLATFORM_DISTRIBUTED,)),
    _core(36, "MQ doc: MQGMO_SYNCPOINT_IF_PERSISTENT",
          "SYNCPOINT_IF_PERSISTENT gets a persistent message under syncpoint and a non-persistent one outside it."),
    _core(37, "MQ doc: MQPUT1", "MQPUT1 obeys the same rules as an open, put and close."),
    _core(38, "MQ doc: MQRC_WAIT_INTERVAL_ERROR (2090)", "A wait interval below MQWI_UNLIMITED fails with MQRC_WAIT_INTERVAL_ERROR."),
    _core(39, "MQ doc: MQCLOSE", "Closing a handle drops its browse cursor and lock but leaves the unit of work as it is."),
    _core(40, "MQ doc: MQRC_HOBJ_ERROR / MQRC_HCONN_ERROR (2019/2018)",
          "A call on a handle or connection that is not open fails with MQRC_HOBJ_ERROR or MQRC_HCONN_ERROR."),
    _core(41, "MQ doc: MQINQ / DISPLAY QLOCAL", "An inquiry returns the attribute values as last defined or altered."),
    _core(42, "MQ doc: BackoutThreshold / BackoutRequeueQName (mq-facts 3.5)",
          "The queue manager itself never moves a message because its BackoutCount reached BOTHRESH."),
    _core(43, "MQ doc: MQRC_UNKNOWN_REMOTE_Q_MGR (2087)",
          "A put naming a queue manager the local one has no route to fails with MQRC_UNKNOWN_REMOTE_Q_MGR.",
          note="The model has no remote definitions or transmission queues: every non-blank queue-manager "
               "name is unroutable."),
    _core(44, "MQ doc: MQPMO_SET_ALL_CONTEXT / MQPMO_PASS_ALL_CONTEXT; mq-facts 1.3",
          "A message put with all context set or passed keeps that identity and origin context (UserIdentifier, "
          "ApplIdentityData, PutApplType, PutApplName), and a get returns it unchanged."),
)
