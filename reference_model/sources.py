"""The source catalogue: the IBM MQ documentation every rule is drawn from.

Each :class:`Source` is one topic of IBM's documentation, named by the title
IBM publishes it under, with the product editions whose text the kit follows
and, where known, IBM's topic identifier and an address.  A rule cites one or
more sources with an item inside each (``condition 3 note a``, ``step 4b``,
``note 9 point 2``); see :class:`Cite`.

The catalogue is data only, with no I/O, like the rest of the reference model.
"""

from __future__ import annotations

from typing import Iterable

import attrs

KC = "https://www.ibm.com/support/knowledgecenter"
DOCS = "https://www.ibm.com/docs/en"

#: Editions of the fact pages (field, call and reason-code reference) the kit was checked against.
CURRENT = "IBM MQ 8.0 to 9.4"


@attrs.frozen(kw_only=True)
class Source:
    """One topic of IBM's MQ documentation."""

    key: str
    #: The topic title as IBM publishes it.
    title: str
    #: Where the topic sits in IBM's documentation (book or section).
    part: str
    #: The product versions or editions whose text the kit follows.
    versions: str
    #: IBM's topic identifier (``q026930_``), or "" where none is known.
    topic: str = ""
    url: str = ""
    #: What the kit takes from the topic, in the kit's words.
    covers: str = ""
    #: Where this source and another disagree, which the kit follows and why.
    conflicts: str = ""
    #: The structure or call a generic title belongs to ("Options (MQLONG)" of MQGMO).
    within: str = ""

    @property
    def label(self) -> str:
        """The quoted title, with the structure it belongs to where the title alone is ambiguous."""
        return f"\u201c{self.title}\u201d of {self.within}" if self.within else f"\u201c{self.title}\u201d"


@attrs.frozen
class Cite:
    """A reference to one item of a catalogued source."""

    source: str = attrs.field()
    item: str = ""

    @source.validator
    def _known(self, _attribute, value: str) -> None:
        if value not in CATALOGUE:
            raise ValueError(f"unknown source {value!r}")

    @property
    def doc(self) -> Source:
        return CATALOGUE[self.source]

    def text(self) -> str:
        """``'Conditions for a trigger event', condition 3 note a``: title and item."""
        label = self.doc.label
        return f"{label}, {self.item}" if self.item else label


def render(cites: Iterable[Cite]) -> str:
    """Several citations on one line, separated by semicolons."""
    return "; ".join(c.text() for c in cites)


CATALOGUE: dict[str, Source] = {}


def _add(**kw) -> str:
    source = Source(**kw)
    if source.key in CATALOGUE:
        raise ValueError(f"duplicate source {source.key}")
    CATALOGUE[source.key] = source
    return source.key


def _reason(code: int, name: str, topic: str = "", url: str = "", covers: str = "") -> str:
    """A reason-code topic, titled as IBM titles them: ``2033 (07F1) (RC2033): MQRC_NO_MSG_AVAILABLE``."""
    return _add(key=f"rc{code}", title=f"{code} ({code:04X}) (RC{code}): {name}",
                part="Reference > Messages and reason codes > API completion and reason codes",
                versions=CURRENT, topic=topic, url=url, covers=covers or f"When {name} is returned.")


# ---------------------------------------------------------------- the five area documents
TRIGGER_CONDITIONS = _add(
    key="trigger-conditions", title="Conditions for a trigger event",
    part="Developing applications > Starting IBM MQ applications using triggers",
    versions="WebSphere MQ 7.x and IBM MQ 8.0 to 9.4 (conditions numbered 1 to 14)",
    topic="q026930_", url=f"{KC}/en/SSFKSJ_9.1.0/com.ibm.mq.dev.doc/q026930_.html",
    covers="The fourteen conditions under which a queue manager writes a trigger message, their notes, the "
           "cases of condition 13 and the two closing notes.",
    conflicts="Condition 10 says a trigger message caused in a unit of work that is backed out becomes available "
              "for FIRST and DEPTH; 'Properties of trigger messages' says such trigger messages are always "
              "delivered. The kit follows this topic, the more specific one (rule TRIG-15).",
)
QSG_TRIGGERING = _add(
    key="qsg-triggering", title="Transmission queues and triggering for queue sharing groups",
    part="Configuring > Configuring queue managers on z/OS > Setting up communication for z/OS > Queue sharing "
         "groups",
    versions="IBM MQ for z/OS 9.0 to 9.4",
    url=f"{DOCS}/ibm-mq/10.0.x?topic=groups-transmission-queues-triggering-queue-sharing",
    covers="A triggered shared queue gives one trigger message for each initiation queue of that name on a queue "
           "manager of the group.",
)
SKIP_BACKOUT = _add(
    key="skip-backout", title="Skipping backout",
    part="Developing applications > Getting messages from a queue (WebSphere MQ for z/OS)",
    versions="WebSphere MQ for z/OS 6.0 and 7.x; IBM MQ for z/OS to 9.4 (Figure 12 steps 1 to 10)",
    url=f"{DOCS}/ibm-mq/10.0.x?topic=queue-skipping-backout",
    covers="MQGMO_MARK_SKIP_BACKOUT: how a marked get leaves an application-requested backout, the one-mark "
           "limit, and the ten steps of the figure showing the flow.",
)
CLWL_ALGORITHM = _add(
    key="clwl-algorithm", title="The cluster workload management algorithm",
    part="Configuring > Queue manager clusters > Workload balancing",
    versions="WebSphere MQ 6.0 and 7.0, whose steps are numbered 1 to 12 with 4a, 4b and 11a to 11c "
             "(later editions renumber them)",
    topic="q082390_", url=f"{KC}/SSFKSJ_8.0.0/com.ibm.mq.ref.con.doc/q082390_.htm",
    covers="The elimination steps that choose a destination among instances of a cluster queue: put enablement, "
           "CLWLUSEQ, rank, channel state, NETPRTY, CLWLPRTY, CLWLMRUC and the least-recently-used choice.",
    conflicts="The channel attribute topic 'Cluster workload balancing - channel attributes' also applies channel "
              "CLWLPRTY to the choice of queue; the kit follows this topic's step 11b (rule CLWL-11b).",
)
MQMD_EXPIRY = _add(
    key="mqmd-expiry", title="Expiry (MQLONG)",
    part="Reference > Developing applications reference > MQI > Data types > MQMD - Message descriptor",
    versions="WebSphere MQ 7.x and IBM MQ 8.0 to 9.4 (notes 1 to 9); paragraphs are counted as in the 7.x "
             "edition, before later editions added an example of setting one minute",
    topic="q097490_", url=f"{DOCS}/SSFKSJ_9.2.0/com.ibm.mq.ref.dev.doc/q097490_.html",
    covers="The message descriptor's Expiry field: units, decrement, discard on a get that would have returned "
           "the message, expiration reports, syncpoint, and the two Expiry fields of an MQXMIT message.",
    conflicts="Note 1 in later editions adds that MQRC_EXPIRY_ERROR for values above 999 999 999 needs "
              "AMQ_ENFORCE_MAX_EXPIRY_ERROR; the kit checks only zero and negative values (rule EXP-10).",
)
ZOS_EXPIRED = _add(
    key="zos-expired", title="Expired messages on z/OS",
    part="Developing applications > Getting messages from a queue (WebSphere MQ for z/OS)",
    versions="WebSphere MQ for z/OS 6.0 and 7.x; IBM MQ for z/OS to 9.4",
    covers="The periodic scan set by EXPRYINT, the explicit REFRESH QMGR TYPE(EXPIRY), and the scanning "
           "queue manager of a queue-sharing group.",
)
DLQ_PROCESSING = _add(
    key="dlq-processing", title="How the rules table is processed",
    part="System administration > The WebSphere MQ dead-letter queue handler (runmqdlq); titled "
         "'Processing the rules table' in IBM MQ 8.0 and later",
    versions="WebSphere MQ 6.0 and 7.x; IBM MQ 8.0 to 9.4 under the later title (notes 1 to 7)",
    url=f"{DOCS}/ibm-mq/8.0?topic=table-processing-rules",
    covers="How the DLQ handler searches its rules table, counts tries per rule, falls back to ACTION(IGNORE), "
           "and its seven notes.",
)
DLQ_ALL_PROCESSED = _add(
    key="dlq-all-processed", title="Ensuring that all DLQ messages are processed",
    part="System administration > The dead-letter queue handler (runmqdlq)",
    versions="WebSphere MQ 6.0 and 7.x; IBM MQ 8.0 to 9.4",
    url=f"{DOCS}/ibm-mq/9.3.x?topic=queue-ensuring-that-all-dlq-messages-are-processed",
    covers="What the handler remembers of messages it has seen but not removed, and its periodic rescans.",
)

# ---------------------------------------------------------------- the DLQ handler's other topics
DLQ_TABLE = _add(
    key="dlq-table", title="The DLQ handler rules table",
    part="Administering > The dead-letter queue handler", versions=CURRENT, topic="q005660_",
    url=f"{KC}/en/SSFKSJ_7.5.0/com.ibm.mq.pla.doc/q005660_.htm",
    covers="A table has an optional control-data entry, first, and one or more rules.",
)
DLQ_CONTROL = _add(
    key="dlq-control", title="DLQ control data",
    part="Administering > The dead-letter queue handler > The DLQ handler rules table",
    versions=CURRENT, url=f"{DOCS}/ibm-mq/9.1.x?topic=table-dlq-control-data",
    covers="The control-data keywords INPUTQ, INPUTQM, RETRYINT and WAIT, their values and defaults.",
)
DLQ_PATTERNS = _add(
    key="dlq-patterns", title="DLQ rules (patterns and actions)",
    part="Administering > The dead-letter queue handler > The DLQ handler rules table",
    versions=CURRENT, url=f"{DOCS}/ibm-mq/10.0.x?topic=table-dlq-rules-patterns-actions",
    covers="The pattern-matching keywords and the message fields they are compared with; the action keywords "
           "ACTION, FWDQ, FWDQM, HEADER, PUTAUT and RETRY.",
)
DLQ_CONVENTIONS = _add(
    key="dlq-conventions", title="Rules table conventions",
    part="Administering > The dead-letter queue handler > The DLQ handler rules table",
    versions=CURRENT, topic="q005690_", url=f"{DOCS}/ibm-mq/10.0.x?topic=zos-rules-table-conventions",
    covers="The table's syntax: keyword order and case, separators, continuation with + and -, comment lines "
           "starting with *, quoting, wildcards and field lengths.",
)
RUNMQDLQ = _add(
    key="runmqdlq", title="runmqdlq (run dead-letter queue handler)",
    part="Reference > Administration reference > Control commands",
    versions=CURRENT, url=f"{DOCS}/ibm-mq/9.1.x?topic=reference-runmqdlq-run-dead-letter-queue-handler",
    covers="How the handler is invoked: the rules table on standard input, queue and queue-manager names given "
           "as parameters overriding INPUTQ and INPUTQM.",
)
DLQ_SAMPLE = _add(
    key="dlq-sample", title="The sample DLQ handler, amqsdlq",
    part="Developing applications > Sample procedural programs; the handler's C source shipped with the samples",
    versions="IBM MQ 9.4 samples",
    covers="The processing the handler's source carries out: per-message try counts, the cumulative RETRY budget "
           "down the table, each action in a unit of work, which header fields are restored, and rescans.",
)

# ---------------------------------------------------------------- triggering beyond the conditions
TRIGGER_TYPE = _add(
    key="triggertype", title="TriggerType (MQLONG)",
    part="Reference > Developing applications reference > MQI > Attributes of objects > Attributes for queues",
    versions=CURRENT, url=f"{DOCS}/ibm-mq/10.0.x?topic=queues-triggertype-mqlong",
    covers="The trigger types, and that writing a DEPTH trigger message sets TriggerControl off.",
)
TRIGGER_PROPERTIES = _add(
    key="trigger-properties", title="Properties of trigger messages",
    part="Developing applications > Starting IBM MQ applications using triggers",
    versions=CURRENT, topic="q027000_", url=f"{DOCS}/SSFKSJ_9.2.0/com.ibm.mq.dev.doc/q027000_.htm",
    covers="Trigger messages are non-persistent, never expire, and carry the MQTM built from the queue and "
           "process definitions.",
)
MQTM = _add(
    key="mqtm", title="MQTM - Trigger message",
    part="Reference > Developing applications reference > MQI > Data types",
    versions=CURRENT, url=f"{DOCS}/ibm-mq/10.0.x?topic=java-mqtm",
    covers="The fields of the trigger message structure: QName, ProcessName, TriggerData, ApplType, ApplId, "
           "EnvData, UserData.",
)

# ---------------------------------------------------------------- core: calls, fields, attributes
MQPUT = _add(
    key="mqput", title="MQPUT - Put message",
    part="Reference > Developing applications reference > MQI > Function calls", versions=CURRENT,
    covers="The put call and its usage notes: when a message becomes available, descriptor fields on output.",
)
MQPUT1 = _add(
    key="mqput1", title="MQPUT1 - Put one message",
    part="Reference > Developing applications reference > MQI > Function calls", versions=CURRENT,
    covers="MQPUT1 as the combination of an open, a put and a close.",
)
MQGET = _add(
    key="mqget", title="MQGET - Get message",
    part="Reference > Developing applications reference > MQI > Function calls", versions=CURRENT,
    covers="The get call: waiting, the wait interval, and what is returned.",
)
MQCMIT = _add(
    key="mqcmit", title="MQCMIT - Commit changes",
    part="Reference > Developing applications reference > MQI > Function calls", versions=CURRENT,
    topic="q101750_", url=f"{DOCS}/SSFKSJ_latest/refdev/q101750_.html",
    covers="Commit makes the unit of work's puts available and deletes its gets.",
)
MQBACK = _add(
    key="mqback", title="MQBACK - Back out changes",
    part="Reference > Developing applications reference > MQI > Function calls", versions=CURRENT,
    topic="q101690_", url="https://ibm.com/docs/SSFKSJ_9.3.0/refdev/q101690_.html",
    covers="Backout deletes the messages the unit of work put and reinstates those it got.",
)
MQDISC = _add(
    key="mqdisc", title="MQDISC - Disconnect queue manager",
    part="Reference > Developing applications reference > MQI > Function calls (usage notes)", versions=CURRENT,
    covers="A normal disconnect commits the unit of work and closes the connection's handles; ending without "
           "MQDISC backs it out.",
)
MQCLOSE = _add(
    key="mqclose", title="MQCLOSE - Close object",
    part="Reference > Developing applications reference > MQI > Function calls", versions=CURRENT,
    covers="Closing a handle releases its browse cursor and lock; the unit of work is unaffected.",
)
MQINQ = _add(
    key="mqinq", title="MQINQ - Inquire object attributes",
    part="Reference > Developing applications reference > MQI > Function calls", versions=CURRENT,
    covers="Inquiring returns the current attribute values.",
)
LOCAL_UOW = _add(
    key="local-uow", title="Local units of work on Multiplatforms",
    part="Developing applications > Committing and backing out units of work", versions=CURRENT,
    url=f"{DOCS}/ibm-mq/9.2?topic=multiplatforms-local-units-work",
    covers="What happens to a unit of work when a program disconnects or ends without disconnecting.",
)
UOW = _add(
    key="uow", title="Committing and backing out units of work",
    part="Developing applications > Committing and backing out units of work", versions=CURRENT,
    topic="q026790_",
    covers="Visibility of messages put and got in a unit of work before and after commit and backout.",
)
GMO_OPTIONS = _add(
    key="mqgmo-options", title="Options (MQLONG)", within="MQGMO",
    part="Reference > Developing applications reference > MQI > Data types > MQGMO - Get-message options",
    versions=CURRENT, topic="q096780_",
    covers="The get-message options: syncpoint control and its default per platform, SYNCPOINT_IF_PERSISTENT, "
           "browse options, LOCK and UNLOCK, MSG_UNDER_CURSOR.",
)
MATCH_OPTIONS = _add(
    key="mqgmo-matchoptions", title="MatchOptions (MQLONG)", within="MQGMO",
    part="Reference > Developing applications reference > MQI > Data types > MQGMO - Get-message options",
    versions=CURRENT, topic="q096750_",
    covers="Which MQMD fields select the message a get returns: MQMO_MATCH_MSG_ID and MQMO_MATCH_CORREL_ID, "
           "MQMI_NONE and MQCI_NONE matching any value, fields without their option ignored, the options "
           "ignored under the cursor, and on z/OS criteria the queue's index type may restrict.",
)
PARTICULAR_MESSAGE = _add(
    key="getting-particular-message", title="Getting a particular message",
    part="Developing applications > Getting messages from a queue", versions=CURRENT,
    url=f"{DOCS}/ibm-mq/10.0.x?topic=queue-getting-particular-message",
    covers="Which message a get returns for each setting of MsgId and CorrelId: the first that satisfies the "
           "selection criteria, or with MQGMO_BROWSE_NEXT the next in the sequence that does.",
)
PMO_OPTIONS = _add(
    key="mqpmo-options", title="Options (MQLONG)", within="MQPMO",
    part="Reference > Developing applications reference > MQI > Data types > MQPMO - Put-message options",
    versions=CURRENT,
    covers="The put-message options: syncpoint control, SET_ALL_CONTEXT and PASS_ALL_CONTEXT.",
)
MQOO_OPTIONS = _add(
    key="mqoo-options", title="Options (MQLONG)", within="MQOPEN",
    part="Reference > Developing applications reference > MQI > Function calls > MQOPEN", versions=CURRENT,
    covers="Open options: INPUT_SHARED, INPUT_EXCLUSIVE, INPUT_AS_Q_DEF, BROWSE, OUTPUT.",
)
BROWSE = _add(
    key="browse", title="Browsing messages on a queue",
    part="Developing applications > Getting messages from a queue", versions=CURRENT,
    covers="The browse cursor: BROWSE_FIRST, BROWSE_NEXT, browsing the message under the cursor.",
)
PRIORITIES = _add(
    key="priorities", title="Message priorities",
    part="Developing applications > Message descriptor", versions=CURRENT, topic="q022910_",
    url=f"{KC}/en/SSFKSJ_8.0.0/com.ibm.mq.dev.doc/q022910_.htm",
    covers="Delivery order on priority and FIFO queues; under FIFO the Priority field keeps the value put.",
)
MSGDLVSQ = _add(
    key="msgdlvsq", title="MsgDeliverySequence (MQLONG)",
    part="Reference > Developing applications reference > MQI > Attributes of objects > Attributes for queues",
    versions=CURRENT, topic="q103190_",
    covers="MQMDS_PRIORITY and MQMDS_FIFO delivery sequences.",
)
MQMD_PRIORITY = _add(
    key="mqmd-priority", title="Priority (MQLONG)",
    part="Reference > Developing applications reference > MQI > Data types > MQMD - Message descriptor",
    versions=CURRENT, topic="q097610_",
    covers="MQPRI_PRIORITY_AS_Q_DEF, priorities above MaxPriority, and negative priorities.",
)
MQMD_PERSISTENCE = _add(
    key="mqmd-persistence", title="Persistence (MQLONG)",
    part="Reference > Developing applications reference > MQI > Data types > MQMD - Message descriptor",
    versions=CURRENT,
    covers="MQPER_PERSISTENCE_AS_Q_DEF and the valid persistence values.",
)
MQMD_BACKOUT = _add(
    key="mqmd-backoutcount", title="BackoutCount (MQLONG)",
    part="Reference > Developing applications reference > MQI > Data types > MQMD - Message descriptor",
    versions=CURRENT, topic="q097450_", url=f"{DOCS}/SSFKSJ_9.2.0/com.ibm.mq.ref.dev.doc/q097450_.html",
    covers="What BackoutCount counts, that MQPUT ignores it, and its 255 limit on z/OS.",
)
MQMD_FIELDS = _add(
    key="mqmd-fields", title="Field details for MQMD",
    part="Reference > Developing applications reference > MQI > Data types > MQMD - Message descriptor",
    versions=CURRENT, url="https://ibm.com/docs/SSFKSJ_9.4.0/refdev/q097395_.html",
    covers="The descriptor fields returned as put (MsgId, CorrelId, Format, ReplyToQ, Report, MsgType, Feedback, "
           "context fields) and MsgId generation.",
)
JMS_POISON = _add(
    key="jms-poison", title="Handling poison messages in IBM MQ classes for JMS",
    part="Developing applications > IBM MQ classes for JMS", versions=CURRENT, topic="q032280_",
    url="https://www.ibm.com/docs/SSFKSJ_9.4.0/develop/q032280_.html",
    covers="BackoutThreshold and BackoutRequeueQName are acted on by JMS consumers, never by the queue manager.",
)
BOTHRESH = _add(
    key="backoutthreshold", title="BackoutThreshold (MQLONG)",
    part="Reference > Developing applications reference > MQI > Attributes of objects > Attributes for queues",
    versions=CURRENT, topic="q103010_", url=f"{DOCS}/SSFKSJ_9.2.0/com.ibm.mq.ref.dev.doc/q103010_.htm",
    covers="The queue manager only records BOTHRESH and BOQNAME; applications act on them.",
)
PERSISTENCE = _add(
    key="persistence", title="Message persistence",
    part="Developing applications > Messages", versions=CURRENT,
    covers="Persistent messages survive a restart; non-persistent ones are discarded.",
)
BACKOUT_ACCURACY = _add(
    key="backout-accuracy", title="Messages that are backed out",
    part="Developing applications > Committing and backing out units of work", versions=CURRENT, topic="q023090_",
    url=f"{DOCS}/SSFKSJ_9.3.0/develop/q023090_.html",
    covers="On Multiplatforms BackoutCount survives a restart; on z/OS only where HARDENBO is set; units of "
           "work in flight are backed out.",
)
CURDEPTH = _add(
    key="curdepth", title="CurrentQDepth (MQLONG)",
    part="Reference > Developing applications reference > MQI > Attributes of objects > Attributes for queues",
    versions=CURRENT, topic="q103130_",
    covers="CURDEPTH counts uncommitted puts and excludes messages got under syncpoint.",
)
OPENCOUNTS = _add(
    key="openinputcount", title="OpenInputCount (MQLONG)",
    part="Reference > Developing applications reference > MQI > Attributes of objects > Attributes for queues",
    versions=CURRENT,
    covers="IPPROCS and OPPROCS (OpenInputCount, OpenOutputCount) count open handles.",
)
INHIBITGET = _add(
    key="inhibitget", title="InhibitGet (MQLONG)",
    part="Reference > Developing applications reference > MQI > Attributes of objects > Attributes for queues",
    versions=CURRENT, covers="GET(DISABLED) fails every get and browse, on handles already open too.",
)
INHIBITPUT = _add(
    key="inhibitput", title="InhibitPut (MQLONG)",
    part="Reference > Developing applications reference > MQI > Attributes of objects > Attributes for queues",
    versions=CURRENT, covers="PUT(DISABLED) fails every put and put1.",
)
MAXQDEPTH = _add(
    key="maxqdepth", title="MaxQDepth (MQLONG)",
    part="Reference > Developing applications reference > MQI > Attributes of objects > Attributes for queues",
    versions=CURRENT, covers="A put to a queue at MAXDEPTH fails.",
)
MAXMSGLENGTH = _add(
    key="maxmsglength", title="MaxMsgLength (MQLONG)",
    part="Reference > Developing applications reference > MQI > Attributes of objects > Attributes for queues",
    versions=CURRENT, covers="The longest physical message the queue takes (MAXMSGL).",
)
MSGFLAGS = _add(
    key="msgflags", title="MsgFlags (MQLONG)", within="MQMD",
    part="Reference > Developing applications reference > MQI > Data types > MQMD - Message descriptor",
    versions=CURRENT, topic="q097540_", url=f"{DOCS}/SSFKSJ_9.2.0/com.ibm.mq.ref.dev.doc/q097540_.html",
    covers="MQMF_SEGMENTATION_ALLOWED: the queue manager may split a message too long for the queue into "
           "segments, each placed on the queue as a physical message of its own.",
)
SEGMENT_STATUS = _add(
    key="segmentstatus", title="SegmentStatus (MQCHAR)", within="MQGMO",
    part="Reference > Developing applications reference > MQI > Data types > MQGMO - Get-message options",
    versions=CURRENT, url=f"{DOCS}/ibm-mq/9.0.x?topic=options-segmentstatus-mqchar",
    covers="Whether the message a get returns is a segment of a logical message, and the last one; always "
           "not a segment on z/OS.",
)
OFFSET = _add(
    key="mqmd-offset", title="Offset (MQLONG)", within="MQMD",
    part="Reference > Developing applications reference > MQI > Data types > MQMD - Message descriptor",
    versions=CURRENT, topic="q097580_", url=f"{DOCS}/SSFKSJ_9.1.0/com.ibm.mq.ref.dev.doc/q097580_.html",
    covers="A segment's offset from the start of its logical message; zero for a message that is not a segment.",
)
MQRC_2030 = _reason(2030, "MQRC_MSG_TOO_BIG_FOR_Q", topic="q041020_",
                    url=f"{DOCS}/SSFKSJ_latest/reference/q041020_.html",
                    covers="A put of a message longer than the queue's MaxMsgLength without segmentation allowed, "
                           "or one the queue manager cannot split into segments of at least 16 bytes; on z/OS "
                           "segmentation is accepted but ignored.")
MQRC_2033 = _reason(2033, "MQRC_NO_MSG_AVAILABLE")
MQRC_2034 = _reason(2034, "MQRC_NO_MSG_UNDER_CURSOR")
MQRC_2016 = _reason(2016, "MQRC_GET_INHIBITED")
MQRC_2051 = _reason(2051, "MQRC_PUT_INHIBITED")
MQRC_2053 = _reason(2053, "MQRC_Q_FULL")
MQRC_2050 = _reason(2050, "MQRC_PRIORITY_ERROR")
MQRC_2049 = _reason(2049, "MQRC_PRIORITY_EXCEEDS_MAXIMUM")
MQRC_2047 = _reason(2047, "MQRC_PERSISTENCE_ERROR")
MQRC_2085 = _reason(2085, "MQRC_UNKNOWN_OBJECT_NAME")
MQRC_2087 = _reason(2087, "MQRC_UNKNOWN_REMOTE_Q_MGR")
MQRC_2090 = _reason(2090, "MQRC_WAIT_INTERVAL_ERROR")
MQRC_2046 = _reason(2046, "MQRC_OPTIONS_ERROR")
MQRC_2247 = _reason(2247, "MQRC_MATCH_OPTIONS_ERROR", topic="q042800_",
                    covers="An MQGET whose MatchOptions holds an undefined option (or criteria the queue cannot "
                           "select by).")
MQRC_2042 = _reason(2042, "MQRC_OBJECT_IN_USE")
MQRC_2036 = _reason(2036, "MQRC_NOT_OPEN_FOR_BROWSE")
MQRC_2037 = _reason(2037, "MQRC_NOT_OPEN_FOR_INPUT")
MQRC_2039 = _reason(2039, "MQRC_NOT_OPEN_FOR_OUTPUT")
MQRC_2018 = _reason(2018, "MQRC_HCONN_ERROR")
MQRC_2009 = _reason(2009, "MQRC_CONNECTION_BROKEN", topic="q040830_",
                    url=f"{DOCS}/SSFKSJ_latest/reference/q040830_.html",
                    covers="The connection to the queue manager is lost: its handles become invalid, a unit of work "
                           "the queue manager coordinates is backed out, and for a client the call may still have "
                           "completed.")
MQRC_2019 = _reason(2019, "MQRC_HOBJ_ERROR")
MQRC_2209 = _reason(2209, "MQRC_NO_MSG_LOCKED")
MQRC_2013 = _reason(2013, "MQRC_EXPIRY_ERROR", topic="q040870_", url=f"{DOCS}/SSFKSJ_latest/reference/q040870_.html")
MQRC_2062 = _reason(2062, "MQRC_SECOND_MARK_NOT_ALLOWED", topic="q041310_",
                    url=f"{DOCS}/SSFKSJ_latest/reference/q041310_.html")

# ---------------------------------------------------------------- expiry beyond the MQMD field
EXPIRY_REPORT = _add(
    key="mqro-expiration", title="Report (MQLONG)",
    part="Reference > Developing applications reference > MQI > Data types > MQMD - Message descriptor",
    versions=CURRENT, topic="q097680_",
    covers="The MQRO_EXPIRATION_* report options and what an expiration report carries.",
)
EXPIRY_INTERVAL = _add(
    key="expiryinterval", title="ExpiryInterval (MQLONG)",
    part="Reference > Developing applications reference > MQI > Attributes of objects > Attributes for the queue "
         "manager", versions=CURRENT, url=f"{DOCS}/ibm-mq/9.0.x?topic=manager-expiryinterval-mqlong",
    covers="EXPRYINT is supported only on z/OS; elsewhere expired messages are discarded when a get reaches "
           "them or at the queue manager's own discretion.",
)


def sources_of(cites: Iterable[Cite]) -> list[Source]:
    seen: dict[str, Source] = {}
    for c in cites:
        seen.setdefault(c.source, c.doc)
    return list(seen.values())
