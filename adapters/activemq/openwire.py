"""The ``activemq`` adapter: ActiveMQ Classic 5.17 over OpenWire (JMS), as an MQI-shaped client.

The most faithful route into ActiveMQ: the JMS client's transacted sessions
give MQ's units of work (puts and gets together, committed or rolled back at
once), and its redelivery counter is BackoutCount.  The mapping, op by op, is in
docs/adapters/activemq.md.  In short: a connection is a JMS connection with a
transacted session (work under syncpoint) and an auto-acknowledge session (work
outside it); consumers pull (prefetch 0), so the broker never dispatches a
message nobody asked for; a get under syncpoint uses a consumer of its own that
lives until the unit of work ends, and MQBACK rolls the session back and closes
those consumers, so the broker puts the messages back where they were with
their redelivery counter raised by one, for any getter to have.

The JMS client runs in this process through JPype, from the jars Debian's
``activemq`` package installs (one JVM per process, started on first use).

Options: host, port, user, password (or MQCONFORM_ACTIVEMQ_URL,
tcp://user:password@host:port; else the broker ``mqconform brokers up`` started,
else a private broker for the run), restart, time-scale, empty-wait (as for the
other broker adapters).
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import attrs

from adapters.base import AdapterUnavailable, Dependency
from adapters.activemq.common import ActiveMQShim
from adapters.broker_shim import Definition, _fail, selected
from reference_model import language as L
from reference_model import mqconst as C
from reference_model.version import install_hint

#: The JMS client and what it needs, as Debian's activemq package installs them.
JARS = tuple(Path("/usr/share/java") / f"{name}.jar" for name in (
    "activemq-client", "geronimo-jms_1.1_spec", "hawtbuf", "slf4j-api", "slf4j-nop",
    "geronimo-j2ee-management-1.1-spec"))
#: Client settings: pulling consumers, every send and every acknowledgement synchronous (a get
#: outside syncpoint returns once the broker has removed the message, as MQGET does; an
#: asynchronous ack let a depth read straight after still count it), short deadlines on a dead broker.
FAITHFUL_OPTIONS = ("jms.prefetchPolicy.queuePrefetch=0", "jms.alwaysSyncSend=true", "jms.sendAcksAsync=false")
#: ... and those of the harness alone, under either mapping (deadlines; they change no message semantics).
HARNESS_OPTIONS = ("jms.closeTimeout=2000", "jms.connectResponseTimeout=5000", "connectionTimeout=3000", "soTimeout=0",
                   "wireFormat.maxInactivityDuration=0")
CLIENT_OPTIONS = FAITHFUL_OPTIONS + HARNESS_OPTIONS
#: MQMD fields carried as JMS string properties (JMS has no header of its own for them).
PROPERTY = {"mq-format": "mq_format", "mq-report": "mq_report", "mq-msgtype": "mq_msgtype",
            "mq-feedback": "mq_feedback", "mq-replytoqmgr": "mq_replytoqmgr", "mq-userid": "mq_userid",
            "mq-applidentity": "mq_applidentity", "mq-putappltype": "mq_putappltype",
            "mq-putapplname": "mq_putapplname"}

_JVM_LOCK = threading.Lock()


def _jms():
    """The JMS classes, starting this process's JVM on first use."""
    try:
        import jpype
        import jpype.imports  # noqa: F401 - enables ``import org...``
    except ImportError:   # installed without the kit's activemq extra
        raise AdapterUnavailable(f"adapter 'activemq' needs the Python package JPype1: {install_hint('activemq')}") \
            from None
    with _JVM_LOCK:
        if not jpype.isJVMStarted():
            missing = [str(j) for j in JARS if not j.exists()]
            if missing:
                raise AdapterUnavailable(f"adapter 'activemq': the ActiveMQ client jars are missing ({missing[0]}); "
                                         "run: bash scripts/system-packages.sh")
            try:
                jpype.startJVM(classpath=[str(j) for j in JARS], convertStrings=False)
            except (OSError, RuntimeError) as exc:
                raise AdapterUnavailable(f"adapter 'activemq': cannot start a Java VM ({exc})") from None
    from javax.jms import DeliveryMode, JMSException, Session
    from org.apache.activemq import ActiveMQConnectionFactory

    return ActiveMQConnectionFactory, Session, DeliveryMode, JMSException


@attrs.define
class JmsConnection:
    connection: object
    tx: object                     # transacted session: the unit of work
    now: object                    # auto-acknowledge session: work outside syncpoint
    producers: dict = attrs.Factory(dict)      # (session kind, queue name) -> producer
    consumers: dict = attrs.Factory(dict)      # queue name -> consumer on ``now``
    pending: list = attrs.Factory(list)        # (place in the queue, consumer on ``tx``) per get of the unit of work
    held: set = attrs.Factory(set)             # JMS message ids got in the unit of work


class ActiveMQOpenWireAdapter(ActiveMQShim):
    """ActiveMQ Classic over OpenWire/JMS (options: host, port, user, password, restart, nemesis, time-scale, empty-wait)."""

    name = "activemq"
    port_key = "openwire"
    scheme = "tcp"
    default_port = 61616
    not_applicable = {
        "CORE-21": "no browse locks in JMS",
        "CORE-24": "an MQOPEN has no JMS counterpart the broker counts: the adapter makes a consumer only for a "
                   "get and a producer only for a put, so ActiveMQ's consumer and producer counts are not "
                   "counts of open handles",
        "CORE-27": "no per-destination message-count limit (ActiveMQ limits memory and store size)",
        "CORE-34": "JMS has no get or send options to combine wrongly",
        "CORE-36": "a JMS consumer's session (transacted or not) is chosen before the message, and so its "
                   "persistence, is seen: MQGMO_SYNCPOINT_IF_PERSISTENT cannot be expressed",
        "CORE-38": "JMS has no wait interval to give wrongly",
        "CORE-54": "a JMS message selector names the values a message must have: MatchOptions the MQI does not "
                   "define have no call to make",
        "EXP-15": "no browse locks in JMS",
    }

    #: MQGET's selection by MsgId and CorrelId: a JMS message selector (a browse's, applied by the adapter over its
    #: QueueBrowser snapshot).
    can_select = True

    def __init__(self, **options: str) -> None:
        self.admin = None
        #: The connection factories made so far, by whether theirs are the faithful client settings.
        self.factories: dict[bool, object] = {}
        super().__init__(**options)

    def client_defaults(self, md: L.MessageDescriptor) -> L.MessageDescriptor:
        # what a JMS producer sends when the application sets neither: Message.DEFAULT_PRIORITY and
        # DEFAULT_DELIVERY_MODE (persistent)
        return attrs.evolve(
            md, priority=4 if md.priority == C.MQPRI_PRIORITY_AS_Q_DEF else md.priority,
            persistence=C.MQPER_PERSISTENT if md.persistence == C.MQPER_PERSISTENCE_AS_Q_DEF else md.persistence)

    def dependencies(self) -> tuple[Dependency, ...]:
        return super().dependencies() + (
            Dependency(kind="client setting", what="jms.prefetchPolicy.queuePrefetch=0 (consumers pull)",
                       why="with the default prefetch a consumer is sent messages nobody asked for: other "
                           "connections find them gone, each consumer sees its own order, and a get under the browse "
                           "cursor finds its message already sent to the consumer of an earlier get",
                       rules={"CORE-01", "CORE-04", "CORE-05", "CORE-06", "CORE-13", "CORE-20"}),
            Dependency(kind="client setting", what="jms.alwaysSyncSend=true",
                       why="a non-persistent or transacted send otherwise returns before the broker has the message",
                       rules={"CORE-01"}),
            Dependency(kind="client setting", what="jms.sendAcksAsync=false",
                       why="the acknowledgement of a get outside syncpoint otherwise reaches the broker after the "
                           "get returns, and a depth read at once still counts the message",
                       rules={"CORE-16", "CORE-28"}),
            Dependency(kind="client setting", what="redelivery policy: no delay, no limit "
                                                   "(maximumRedeliveries=-1)",
                       why="by default a rolled-back message comes back after a delay and goes to ActiveMQ.DLQ after "
                           "six redeliveries; MQ makes it available at once and never moves it",
                       rules={"CORE-15", "CORE-42"}),
            Dependency(kind="adapter code", what="a get under syncpoint on a consumer of its own, closed when the "
                                                 "unit of work ends",
                       why="a rolled-back JMS session keeps its messages for its own consumers; closed, the broker "
                           "puts them back for any getter", rules={"CORE-14", "CORE-15"}, needed=True),
            Dependency(kind="adapter code", what="MQBACK closes those consumers in their messages' queue order",
                       why="the broker hands the messages back in the order the consumers close: in the order they "
                           "were got, a message got later goes back first", rules={"CORE-05", "CORE-06", "CORE-15"}),
            Dependency(kind="adapter code", what="the browse cursor of each handle kept by the adapter over "
                                                 "QueueBrowser snapshots; MSG_UNDER_CURSOR by a selector naming the "
                                                 "message",
                       why="a JMS browser keeps no cursor across calls", rules={"CORE-18", "CORE-19", "CORE-20",
                                                                               "CORE-39"}, needed=True),
            Dependency(kind="adapter code", what="CURDEPTH counted from a QueueBrowser, less the messages held in "
                                                 "units of work",
                       why="JMS has no call that reads a queue's depth", rules={"CORE-28", "EXP-11"}, needed=True),
            Dependency(kind="adapter code", what="MQGET's selection by MsgId and CorrelId made a JMS message "
                                                 "selector (the MsgId is the mq_msgid property); a browse's applied "
                                                 "by the adapter over the QueueBrowser snapshot",
                       why="JMS selects by selector, and a browser keeps no cursor across calls",
                       rules={"CORE-51", "CORE-52"}, needed=True),
        )

    # ----------------------------------------------------------- connections
    def _factory(self, harness: bool = False):
        """The program's connection factory (its client settings as the mapping says), or (``harness``) the one
        of the adapter's own connection, which reads depths and cleans up: always pulling and synchronous, under
        either mapping (with the default prefetch, a clean-up's consumer held messages the broker was removing
        the queue under, and the removal was never answered)."""
        factory_class, _, _, _ = _jms()
        faithful = self.faithful or harness
        if faithful not in self.factories:
            url = f"tcp://{self.host}:{self.port}?" + "&".join(CLIENT_OPTIONS if faithful else HARNESS_OPTIONS)
            factory = factory_class(url)
            factory.setUserName(self.user)
            factory.setPassword(self._password)
            if faithful:
                policy = factory.getRedeliveryPolicy()
                # MQ makes a backed-out message available again at once, and never moves it by itself.
                policy.setInitialRedeliveryDelay(0)
                policy.setRedeliveryDelay(0)
                policy.setMaximumRedeliveries(-1)
            self.factories[faithful] = factory
        return self.factories[faithful]

    def _open(self, harness: bool = False) -> JmsConnection:
        _, session, _, _ = _jms()
        connection = self._factory(harness).createConnection()
        try:
            connection.start()
            return JmsConnection(connection=connection, tx=connection.createSession(True, session.SESSION_TRANSACTED),
                                 now=connection.createSession(False, session.AUTO_ACKNOWLEDGE))
        except Exception:
            _quiet(connection.close)
            raise

    def _broker_version(self) -> str:
        if self.admin is not None:
            _quiet(self.admin.connection.close)
        self.admin = self._open(harness=True)
        meta = self.admin.connection.getMetaData()
        return f"ActiveMQ {meta.getProviderVersion()}"

    def _lost(self, exc: Exception) -> bool:
        _, _, _, jms_exception = _jms()
        return isinstance(exc, (jms_exception, ConnectionError, OSError))

    def _admin(self) -> JmsConnection:
        if self.admin is None or self.admin.connection.isClosed() or self.admin.connection.isTransportFailed():
            self._broker_version()
        return self.admin

    def _broker_connect(self, conn: str) -> JmsConnection:
        return self._open()

    def _broker_disconnect(self, c: JmsConnection, abnormal: bool) -> None:
        try:
            if not self.faithful:
                pass   # the connection closes as JMS closes one: its transacted session rolls back
            elif not abnormal:
                self._broker_commit(c)  # MQDISC commits; closing a JMS connection would roll back
            else:
                # An abnormal end backs out, as MQBACK does (closing the connection would roll back
                # too, but close the unit of work's consumers in the client's order, not the queue's).
                self._broker_backout(c)
        finally:
            c.connection.close()

    def _close_all(self) -> None:
        for c in list(self.conns.values()):
            _quiet(c.connection.close)
        self.conns.clear()

    def close(self) -> None:
        super().close()
        if self.admin is not None:
            _quiet(self.admin.connection.close)
            self.admin = None

    # ----------------------------------------------------------- units of work
    def _end_gets(self, c: JmsConnection) -> None:
        # The broker hands a closed consumer's rolled-back message back ahead of the queue's other
        # messages, in the order the consumers are closed: closing them in the order the messages
        # stood in the queue puts them back at their places relative to each other, as MQBACK does
        # (closing them in the order they were got put a message got later back first).
        for _, consumer in sorted(c.pending, key=lambda entry: entry[0]) if self.faithful else c.pending:
            consumer.close()
        if c.pending:
            # Closing a consumer is a one-way command: the broker hands its rolled-back messages
            # back to the queue when it reads it, which may be after another connection's get.
            # A synchronous request on the same connection (creating a producer) is answered only
            # once the broker has dealt with every command sent before it.
            c.now.createProducer(None).close()
        c.pending.clear()
        c.held.clear()

    def _broker_commit(self, c: JmsConnection) -> None:
        c.tx.commit()
        self._end_gets(c)

    def _broker_backout(self, c: JmsConnection) -> None:
        c.tx.rollback()
        # The JMS client would keep rolled-back messages for this session's consumers to
        # receive again; closing the consumers hands them back to the broker, at their place
        # in the queue, for any getter, as MQBACK does.
        self._end_gets(c)

    # ----------------------------------------------------------- queues
    def _queue(self, session, d: Definition):
        return session.createQueue(d.name)

    def _broker_declare(self, d: Definition) -> None:
        pass  # the broker creates a destination on first use

    def _held(self) -> set:
        # (each connection's set copied whole: in a concurrent case another client's get may add to it meanwhile)
        return set().union(*(list(c.held) for c in list(self.conns.values())))

    def _snapshot(self, d: Definition) -> list[tuple]:
        """The queue in the broker's delivery order, as ``(JMS message id, priority, message)`` (a QueueBrowser on
        the admin connection, one client at a time)."""
        with self.shared_lock:
            admin = self._admin()
            browser = admin.now.createBrowser(self._queue(admin.now, d))
            try:
                found = browser.getEnumeration()
                out = []
                while found.hasMoreElements():
                    m = found.nextElement()
                    if m is None:   # the enumeration ends with null when its last message expired meanwhile
                        continue
                    out.append((str(m.getJMSMessageID()), int(m.getJMSPriority()), m))
                return out
            finally:
                browser.close()

    def _broker_depth(self, d: Definition) -> int:
        """The queue's depth once the broker has settled.

        A browser shows delivered-but-unacknowledged messages too; those this application
        holds in units of work are not on the queue for MQ.  An expired message a get walked
        past is acknowledged to the broker asynchronously (the client drops it and goes on),
        so it may show for a few milliseconds after the get returned: when a browse shows an
        expired message, the depth is the count two browses taken ``SETTLE_MS`` apart agree on
        (at most ``SETTLE_TRIES`` browses).
        """
        held = self._held()
        last = None
        for _ in range(SETTLE_TRIES):
            snapshot = [m for mid, _, m in self._snapshot(d) if mid not in held]
            now_ms = time.time() * 1000
            if last == len(snapshot) or not any(0 < int(m.getJMSExpiration()) <= now_ms for m in snapshot):
                break   # nothing expired in sight (the common case: one browse), or settled
            last = len(snapshot)
            time.sleep(SETTLE_MS / 1000)
        return len(snapshot)

    def _broker_cleanup(self, names: list[str]) -> None:
        with self.shared_lock:
            self._cleanup(self._admin(), names)

    def _cleanup(self, admin, names: list[str]) -> None:
        for name in names:
            d = Definition(name=name, attrs={})
            consumer = admin.now.createConsumer(self._queue(admin.now, d))
            try:
                while consumer.receiveNoWait() is not None:
                    pass
            finally:
                consumer.close()
            _quiet(lambda d=d: admin.connection.destroyDestination(self._queue(admin.now, d)))

    # ----------------------------------------------------------- messages
    def _broker_put(self, c: JmsConnection, d: Definition, body: str, md: L.MessageDescriptor,
                    options: int) -> L.Observation:
        _, _, delivery, _ = _jms()
        syncpoint = bool(options & C.MQPMO_SYNCPOINT)
        session = c.tx if syncpoint else c.now
        key = ("tx" if syncpoint else "now", d.name)
        producer = c.producers.get(key)
        if producer is None:
            producer = c.producers[key] = session.createProducer(self._queue(session, d))
        message = session.createTextMessage(body)
        for name, value in self.properties(md).items():
            message.setStringProperty(PROPERTY[name], value)
        msg_id = self.message_id(md)
        if msg_id:
            message.setStringProperty("mq_msgid", msg_id)
        if md.correl_id:
            message.setJMSCorrelationID(md.correl_id)
        if md.reply_to_q:
            message.setStringProperty("mq_replytoq", md.reply_to_q)
        mode = delivery.PERSISTENT if md.persistence == C.MQPER_PERSISTENT else delivery.NON_PERSISTENT
        ttl = self.ttl_ms(md.expiry) or 0   # 0: never expires
        producer.send(message, mode, md.priority, ttl)
        return L.OK

    def _broker_get(self, c: JmsConnection, handle: str, d: Definition, options: int,
                    wait_ms: int, criteria: tuple[str, str] | None = None) -> L.Observation:
        if options & (C.MQGMO_MSG_UNDER_CURSOR | C.MQGMO_BROWSE_MSG_UNDER_CURSOR):
            return self._under_cursor(c, handle, d, options)
        if options & C.MQGMO_BROWSE_ANY:
            accept = None if criteria is None else (lambda m: selected(self._identity(m), criteria))
            deadline = time.monotonic() + max(wait_ms, self.empty_wait_ms) / 1000
            while True:
                message = self.browse_pick(handle, d, self._snapshot(d), self._held(), options, accept)
                if message is not None:
                    return L.Observation(message=self._returned(message))
                if time.monotonic() >= deadline:
                    return _fail(C.MQRC_NO_MSG_AVAILABLE)
                time.sleep(0.01)
        if criteria is None:
            return self._receive(c, d, options, wait_ms)
        # a selector consumer is made for this get: where the queue holds a message it selects, it is given a
        # generous deadline to receive it (on a loaded machine that can take longer than an empty queue's wait)
        held = self._held()
        there = any(selected(self._identity(m), criteria) for mid, _, m in self._snapshot(d) if mid not in held)
        return self._receive(c, d, options, max(wait_ms, TAKE_WAIT_MS) if there else wait_ms,
                             selector=self._selector(criteria))

    def _selector(self, criteria: tuple[str, str]) -> str:
        """The JMS message selector of an MQGET that selects by (MsgId, CorrelId) ("" for any): the MsgId is the
        ``mq_msgid`` property (under ``defaults``, where a blank one was sent as none, the JMS message id)."""
        msg_id, correl_id = criteria
        terms = []
        if msg_id:
            value = _literal(msg_id)
            terms.append(f"mq_msgid = {value}" if self.faithful else
                         f"(mq_msgid = {value} OR (mq_msgid IS NULL AND JMSMessageID = {value}))")
        if correl_id:
            terms.append(f"JMSCorrelationID = {_literal(correl_id)}")
        return " AND ".join(terms)

    def _identity(self, message) -> tuple[str, str]:
        """The (MsgId, CorrelId) a get returns ``message`` with (see :meth:`_returned`)."""
        msg_id = message.getStringProperty("mq_msgid")
        correl = message.getJMSCorrelationID()
        return (str(msg_id) if msg_id is not None else ("" if self.faithful else str(message.getJMSMessageID() or "")),
                str(correl) if correl is not None else "")

    def _under_cursor(self, c: JmsConnection, handle: str, d: Definition, options: int) -> L.Observation:
        """MQGMO_(BROWSE_)MSG_UNDER_CURSOR: the message the handle's cursor is on, if it is still there."""
        cursor = self.cursors.get(handle)
        if cursor is not None and cursor.message_id not in self._held():
            for mid, _, message in self._snapshot(d):
                if mid != cursor.message_id:
                    continue
                if options & C.MQGMO_BROWSE_MSG_UNDER_CURSOR:
                    return L.Observation(message=self._returned(message))
                # (the message is there: a consumer made for it alone is given a generous deadline to receive it,
                # which on a loaded machine can take longer than a get of an empty queue waits)
                got = self._receive(c, d, options, TAKE_WAIT_MS, selector=f"JMSMessageID = '{mid}'")
                if got.rc == C.MQRC_NONE:
                    return got
                break
        return _fail(C.MQRC_NO_MSG_UNDER_CURSOR)

    def _receive(self, c: JmsConnection, d: Definition, options: int, wait_ms: int,
                 selector: str | None = None) -> L.Observation:
        """A destructive get: the first message the broker dispatches (that ``selector`` picks, if given)."""
        syncpoint = bool(options & C.MQGMO_SYNCPOINT)
        if selector is not None:
            session = c.tx if syncpoint else c.now
            consumer = session.createConsumer(self._queue(session, d), selector)
        elif syncpoint:
            consumer = c.tx.createConsumer(self._queue(c.tx, d))
        else:
            consumer = c.consumers.get(d.name)
            if consumer is None:
                consumer = c.consumers[d.name] = c.now.createConsumer(self._queue(c.now, d))
        deadline = time.monotonic() + max(wait_ms, self.empty_wait_ms) / 1000
        message = None
        while True:
            message = consumer.receiveNoWait()
            if message is not None or time.monotonic() >= deadline:
                break
            time.sleep(0.005)
        if message is None:
            if syncpoint or selector is not None:
                consumer.close()
            return _fail(C.MQRC_NO_MSG_AVAILABLE)
        if syncpoint:
            c.pending.append((_place(d, message), consumer))
            c.held.add(str(message.getJMSMessageID()))
        elif selector is not None:
            consumer.close()
        return L.Observation(message=self._returned(message))

    def _returned(self, message) -> L.ReturnedMessage:
        _, _, delivery, _ = _jms()
        props = {}
        names = message.getPropertyNames()
        while names.hasMoreElements():
            name = str(names.nextElement())
            if name.startswith("mq_"):
                props[name.replace("_", "-")] = str(message.getStringProperty(name))
        expiry = self.expiry_left(int(message.getJMSExpiration()))
        correl = message.getJMSCorrelationID()
        return self.returned(
            body=str(message.getText()), props=props, priority=int(message.getJMSPriority()),
            persistent=int(message.getJMSDeliveryMode()) == int(delivery.PERSISTENT), expiry=expiry,
            msg_id=props.get("mq-msgid") or ("" if self.faithful else str(message.getJMSMessageID() or "")),
            correl_id=str(correl) if correl is not None else "",
            reply_to=props.get("mq-replytoq", ""), redelivered=int(message.getRedeliveryCounter()))

    def express(self, op: L.Op) -> L.Op | None:
        out = super().express(op)
        if isinstance(out, L.Get) and out.options & C.MQGMO_SYNCPOINT_IF_PERSISTENT:
            return None   # a JMS session is chosen before the message, and its persistence, is seen
        return out


def _literal(value: str) -> str:
    """``value`` as a string literal of a JMS message selector (SQL-92: a quote doubled)."""
    return "'" + value.replace("'", "''") + "'"


def _place(d: Definition, message) -> tuple:
    """Where ``message`` stands in queue ``d``: by the broker's arrival sequence, after priority on a
    MSGDLVSQ(PRIORITY) queue."""
    arrival = int(message.getMessageId().getBrokerSequenceId())
    priority = int(message.getJMSPriority()) if d.attrs.get("MSGDLVSQ") == C.MQMDS_PRIORITY else 0
    return (d.name, -priority, arrival)


#: How long a consumer made for a message known to be on the queue (one its selector names) may take to receive it.
TAKE_WAIT_MS = 2_000
#: How long apart, and at most how many times, the depth is browsed until it is settled.
SETTLE_MS = 20
SETTLE_TRIES = 5


def _quiet(action) -> None:
    try:
        action()
    except Exception:  # noqa: BLE001 - closing what may already be gone
        pass
