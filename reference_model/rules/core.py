"""Rules of the ``core`` area: put, get, browse, delivery order, units of work, BackoutCount.

They follow the IBM MQ documentation topics cited on each rule: the MQI calls,
the message descriptor and option fields, queue attributes and reason codes
(see ``reference_model/sources.py``).
"""

from reference_model import mqconst as C
from reference_model import sources as S
from reference_model.rules import RULES, Rule
from reference_model.sources import Cite


def _core(n: int, cites, summary: str, **kw) -> Rule:
    return Rule(id=f"CORE-{n:02d}", area="core", cites=cites, summary=summary, **kw)


RULES.add(
    _core(1, Cite(S.MQPUT, "usage notes"), "A message put outside syncpoint is available to getters as soon as the put returns."),
    _core(2, Cite(S.UOW),
        "A message put under syncpoint is not available to other connections until its unit of work commits.",
        note="MQ documents visibility to other programs only; for the putting connection itself the "
        "model allows the message to be either available or not.",
    ),
    _core(3, (Cite(S.UOW), Cite(S.MQBACK)), "Backing out a unit of work deletes the messages it put."),
    _core(4, (Cite(S.MSGDLVSQ, "MQMDS_PRIORITY"), Cite(S.PRIORITIES)),
          "On a MSGDLVSQ(PRIORITY) queue a get returns the highest-priority available message first."),
    _core(5, Cite(S.PRIORITIES),
          "Messages of equal priority are returned in the order they arrived (FIFO within priority)."),
    _core(6, (Cite(S.PRIORITIES), Cite(S.MSGDLVSQ, "MQMDS_FIFO")),
          "On a MSGDLVSQ(FIFO) queue a message is queued as though its priority were the DefPriority in force when "
          "it arrived (in arrival order while DefPriority is unchanged), and the Priority field keeps the value put."),
    _core(7, Cite(S.MQMD_PRIORITY, "MQPRI_PRIORITY_AS_Q_DEF"), "Priority MQPRI_PRIORITY_AS_Q_DEF takes the queue's DEFPRTY at the time of the put."),
    _core(8, (Cite(S.MQMD_PRIORITY), Cite(S.MQRC_2049)),
          "A priority above MaxPriority is accepted with MQRC_PRIORITY_EXCEEDS_MAXIMUM, queued at MaxPriority, "
          "and the Priority field keeps the value put."),
    _core(9, (Cite(S.MQMD_PRIORITY), Cite(S.MQRC_2050)), "A negative priority other than MQPRI_PRIORITY_AS_Q_DEF fails with MQRC_PRIORITY_ERROR."),
    _core(10, (Cite(S.MQMD_PERSISTENCE), Cite(S.MQRC_2047)),
          "Persistence MQPER_PERSISTENCE_AS_Q_DEF takes the queue's DEFPSIST; an invalid value fails with MQRC_PERSISTENCE_ERROR."),
    _core(11, Cite(S.MQMD_FIELDS),
          "A get returns the body and descriptor fields as they were put; a blank MsgId is replaced by a generated one."),
    _core(12, Cite(S.MQMD_BACKOUT), "MQPUT ignores the BackoutCount field: a new message has BackoutCount 0."),
    _core(13, (Cite(S.MQGET), Cite(S.MQRC_2033)), "A get with no available message fails with MQRC_NO_MSG_AVAILABLE (after the wait interval)."),
    _core(14, Cite(S.UOW), "A message got under syncpoint is unavailable to everyone until the unit of work ends; commit deletes it."),
    _core(15, (Cite(S.MQBACK), Cite(S.MQMD_BACKOUT)), "Backing out reinstates the messages got in the unit of work, in their original place, BackoutCount + 1."),
    _core(16, Cite(S.GMO_OPTIONS, "MQGMO_NO_SYNCPOINT"), "A message got outside syncpoint is removed at once; no backout restores it."),
    _core(17, Cite(S.MQMD_BACKOUT), "BackoutCount counts backed-out non-browse gets only; a browse never changes it."),
    _core(18, (Cite(S.BROWSE), Cite(S.GMO_OPTIONS, "MQGMO_BROWSE_FIRST")), "A browse is non-destructive; BROWSE_FIRST returns the first available message in delivery order."),
    _core(19, (Cite(S.BROWSE), Cite(S.GMO_OPTIONS, "MQGMO_BROWSE_NEXT")),
          "BROWSE_NEXT returns the next available message after the browse cursor in delivery order; "
          "a newly opened handle's cursor is before the first message."),
    _core(20, (Cite(S.GMO_OPTIONS, "MQGMO_MSG_UNDER_CURSOR, MQGMO_BROWSE_MSG_UNDER_CURSOR"), Cite(S.MQRC_2034)),
          "MSG_UNDER_CURSOR and BROWSE_MSG_UNDER_CURSOR act on the message under the browse cursor, "
          "failing with MQRC_NO_MSG_UNDER_CURSOR when there is none or it has gone."),
    _core(21, (Cite(S.GMO_OPTIONS, "MQGMO_LOCK, MQGMO_UNLOCK"), Cite(S.MQRC_2209)),
          "A message browsed with LOCK is invisible to other handles until unlocked, got, or the handle is closed; "
          "UNLOCK with no locked message fails with MQRC_NO_MSG_LOCKED."),
    _core(22, (Cite(S.MQRC_2037), Cite(S.MQRC_2036), Cite(S.MQRC_2039)),
          "A get, browse or put through a handle not opened for it fails with the matching NOT_OPEN_FOR reason."),
    _core(23, (Cite(S.MQOO_OPTIONS, "MQOO_INPUT_EXCLUSIVE, MQOO_INPUT_AS_Q_DEF"), Cite(S.MQRC_2042)),
          "An exclusive input open fails with MQRC_OBJECT_IN_USE while the queue is open for input, and any input "
          "open fails while it is open exclusively; INPUT_AS_Q_DEF follows DEFSOPT."),
    _core(24, Cite(S.OPENCOUNTS),
          "IPPROCS and OPPROCS count the handles open for input and for output."),
    _core(25, (Cite(S.INHIBITGET), Cite(S.MQRC_2016)),
          "While GET(DISABLED) every get and browse fails with MQRC_GET_INHIBITED, on handles already open too."),
    _core(26, (Cite(S.INHIBITPUT), Cite(S.MQRC_2051)),
          "While PUT(DISABLED) every put and put1 fails with MQRC_PUT_INHIBITED."),
    _core(27, (Cite(S.MAXQDEPTH), Cite(S.MQRC_2053)), "A put fails with MQRC_Q_FULL when CURDEPTH has reached MAXDEPTH."),
    _core(28, Cite(S.CURDEPTH),
          "CURDEPTH counts uncommitted puts and excludes messages got under syncpoint, so a backout can take it past MAXDEPTH."),
    _core(29, Cite(S.MQCMIT), "Commit makes the unit of work's puts available and deletes its gets; with no unit of work it does nothing."),
    _core(30, (Cite(S.MQDISC, "usage notes"), Cite(S.LOCAL_UOW)), "A normal MQDISC commits the unit of work and closes the connection's handles.",
          platforms=(C.PLATFORM_DISTRIBUTED,)),
    _core(31, (Cite(S.MQDISC, "usage notes"), Cite(S.LOCAL_UOW)), "A program ending without MQDISC (abnormal end) backs out its unit of work."),
    _core(32, (Cite(S.PERSISTENCE), Cite(S.BACKOUT_ACCURACY)),
          "A restart keeps committed persistent messages, discards non-persistent ones, backs out units of work "
          "in flight and ends every connection."),
    _core(33, Cite(S.MQRC_2085), "Opening or put1 to a queue that does not exist fails with MQRC_UNKNOWN_OBJECT_NAME."),
    _core(34, (Cite(S.GMO_OPTIONS, "syncpoint options"), Cite(S.MQRC_2046)), "SYNCPOINT together with NO_SYNCPOINT fails with MQRC_OPTIONS_ERROR."),
    _core(35, Cite(S.GMO_OPTIONS, "MQGMO_SYNCPOINT and MQGMO_NO_SYNCPOINT, when neither is specified"),
          "With neither SYNCPOINT nor NO_SYNCPOINT, a get or put is outside a unit of work on distributed platforms.",
          platforms=(C.PLATFORM_DISTRIBUTED,)),
    _core(36, Cite(S.GMO_OPTIONS, "MQGMO_SYNCPOINT_IF_PERSISTENT"),
          "SYNCPOINT_IF_PERSISTENT gets a persistent message under syncpoint and a non-persistent one outside it."),
    _core(37, Cite(S.MQPUT1), "MQPUT1 obeys the same rules as an open, put and close."),
    _core(38, (Cite(S.MQGET), Cite(S.MQRC_2090)), "A wait interval below MQWI_UNLIMITED fails with MQRC_WAIT_INTERVAL_ERROR."),
    _core(39, Cite(S.MQCLOSE), "Closing a handle drops its browse cursor and lock but leaves the unit of work as it is."),
    _core(40, (Cite(S.MQRC_2019), Cite(S.MQRC_2018)),
          "A call on a handle or connection that is not open fails with MQRC_HOBJ_ERROR or MQRC_HCONN_ERROR."),
    _core(41, Cite(S.MQINQ), "An inquiry returns the attribute values as last defined or altered."),
    _core(42, (Cite(S.BOTHRESH), Cite(S.JMS_POISON)),
          "The queue manager itself never moves a message because its BackoutCount reached BOTHRESH."),
    _core(43, Cite(S.MQRC_2087),
          "A put naming a queue manager the local one has no route to fails with MQRC_UNKNOWN_REMOTE_Q_MGR.",
          note="The model has no remote definitions or transmission queues: every non-blank queue-manager "
               "name is unroutable."),
    _core(44, Cite(S.PMO_OPTIONS, "MQPMO_SET_ALL_CONTEXT, MQPMO_PASS_ALL_CONTEXT"),
          "A message put with all context set or passed keeps that identity and origin context (UserIdentifier, "
          "ApplIdentityData, PutApplType, PutApplName), and a get returns it unchanged."),
    _core(45, Cite(S.BACKOUT_ACCURACY),
          "On Multiplatforms BackoutCount survives a restart exactly, whatever HARDENBO says.",
          platforms=(C.PLATFORM_DISTRIBUTED,), note="z/OS: SYNC-19."),
    _core(46, (Cite(S.LOCAL_UOW), Cite(S.MQRC_2009, "programmer response")),
          "A connection broken from outside the program (a lost network connection) ends as an abnormal end "
          "does: its unit of work is backed out and its handles are closed."),
    _core(47, (Cite(S.MQRC_2009, "explanation"), Cite(S.MQRC_2018)),
          "After its connection breaks, every call the program makes on it fails (MQRC_CONNECTION_BROKEN, or "
          "MQRC_HCONN_ERROR for the handle now invalid).",
          note="MQ documents that the handles become invalid, not which of the two reason codes later calls "
               "get: the model allows both."),
    _core(48, Cite(S.MQRC_2009, "explanation: MQ MQI client applications"),
          "A call in flight when its connection breaks fails with MQRC_CONNECTION_BROKEN, and may or may not "
          "have been carried out: its outcome is indeterminate until later observations decide it.",
          note="Both outcomes are kept (then the connection's abnormal end); the call's own rules are reported "
               "indeterminate for that step, not passed."),
    _core(49, (Cite(S.MQRC_2030), Cite(S.MAXMSGLENGTH)),
          "A put of a message longer than the queue's MAXMSGL fails with MQRC_MSG_TOO_BIG_FOR_Q unless the queue "
          "manager may segment it; on z/OS MQMF_SEGMENTATION_ALLOWED is accepted but ignored."),
    _core(50, (Cite(S.MSGFLAGS, "segmentation flags"), Cite(S.MQRC_2030, "segments of at least 16 bytes"),
               Cite(S.SEGMENT_STATUS), Cite(S.OFFSET)),
          "With MQMF_SEGMENTATION_ALLOWED a message too long for the queue is placed as segments no longer than "
          "MAXMSGL and no shorter than 16 bytes, each a physical message of its own, got in order with its offset "
          "and the last marked as such.",
          platforms=(C.PLATFORM_DISTRIBUTED,),
          note="Where the segments fall is the queue manager's choice: the model allows every split into segments "
               "of 16 bytes or more. Whether a last, remaining segment may be shorter is not said: where no other "
               "split exists the model allows that split and also the put failing with MQRC_MSG_TOO_BIG_FOR_Q."),
    _core(51, (Cite(S.MATCH_OPTIONS, "MQMO_MATCH_MSG_ID, MQMO_MATCH_CORREL_ID"), Cite(S.PARTICULAR_MESSAGE, "table 1")),
          "With MQMO_MATCH_MSG_ID or MQMO_MATCH_CORREL_ID a get considers only messages whose MsgId or CorrelId "
          "equals the one given (both, with both options); MQMI_NONE or MQCI_NONE given matches any, and a "
          "field without its option is ignored.",
          note="On z/OS the criteria that can be used 'might be restricted by the type of index used for the "
               "queue'; the kit has no IndexType, so on z/OS the model also allows a selecting get to fail with "
               "MQRC_MATCH_OPTIONS_ERROR."),
    _core(52, (Cite(S.PARTICULAR_MESSAGE, "table 1 and the paragraph after it"), Cite(S.MATCH_OPTIONS)),
          "Of the messages that satisfy the selection criteria a get returns the first in delivery order (with "
          "MQGMO_BROWSE_NEXT the next after the cursor that does), passing over those that do not; if none does, "
          "MQRC_NO_MSG_AVAILABLE."),
    _core(53, Cite(S.MATCH_OPTIONS, "MQGMO_MSG_UNDER_CURSOR, MQGMO_BROWSE_MSG_UNDER_CURSOR"),
          "With MQGMO_MSG_UNDER_CURSOR or MQGMO_BROWSE_MSG_UNDER_CURSOR the match options are ignored: the message "
          "under the cursor is the one returned."),
    _core(54, (Cite(S.MQRC_2247, "explanation"), Cite(S.MATCH_OPTIONS)),
          "A get whose MatchOptions holds an option MQ does not define fails with MQRC_MATCH_OPTIONS_ERROR."),
)
