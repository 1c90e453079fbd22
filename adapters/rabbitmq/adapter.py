"""The ``rabbitmq`` adapter: RabbitMQ 3.10 over AMQP 0-9-1 (pika), as an MQI-shaped client.

The mapping, op by op, is documented in docs/adapters/rabbitmq.md.  In short:
a queue is a durable classic queue (``x-max-priority`` 9 when MSGDLVSQ is
PRIORITY); each connection has a confirm-mode channel for work outside syncpoint
and a transactional channel for puts under syncpoint; gets pull with
``basic.get``; a get under syncpoint stays unacknowledged until MQCMIT acks it or
MQBACK rejects it with requeue; BackoutCount is 1 when the broker marks the
delivery redelivered; Expiry is the per-message TTL.

Options: host, port, user, password, vhost (or MQCONFORM_RABBITMQ_URL,
amqp://user:password@host:port/vhost; else the broker ``mqconform brokers up``
started, else a private broker for the run), restart (on, off or a number N: the Restart operation
restarts the broker, which the kit must have started; each takes about 10 s, so by
default 3 a run on a broker the kit started, none on one it was given), time-scale (ms per tenth of a
second, default 20), empty-wait (ms a no-wait get waits before answering "no
message", default 30).
"""

from __future__ import annotations

import collections
import contextlib
import logging
import socket
import time

import attrs

from adapters.base import AdapterOptionError, AdapterUnavailable, Dependency
from adapters.brokers.rabbitmq import RabbitMQServer
from adapters.broker_shim import MAX_REAL_WAIT_MS, BrokerShim, CommitBackedOut, Definition, Unanswered, _fail
from reference_model import language as L
from reference_model import mqconst as C
from reference_model.version import install_hint


def _pika():
    try:
        import pika
    except ImportError:   # installed without the kit's rabbitmq extra
        raise AdapterUnavailable(f"adapter 'rabbitmq' needs the Python package pika: {install_hint('rabbitmq')}") \
            from None
    # What a connection's loss means is reported as an observation; pika's own log of it is noise.
    logging.getLogger("pika").setLevel(logging.CRITICAL)
    return pika


@contextlib.contextmanager
def answered_within(connection, seconds: float):
    """Run the block's pika calls on ``connection`` under a deadline; raises :class:`Unanswered` after it.

    pika's blocking calls wait without limit for their reply (after an abrupt restart, a
    basic.get on a quorum queue left without a leader waits about 65 s). A timer in the
    connection's own I/O loop shuts the socket down at the deadline: the call then ends with
    the connection lost, which is what a client giving up looks like.
    """
    impl = connection._impl
    fired = []

    def give_up() -> None:
        transport = getattr(impl, "_transport", None)
        sock = getattr(transport, "_sock", None)
        if sock is not None:
            fired.append(True)
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    timer = impl._adapter_call_later(seconds, give_up)
    try:
        yield
    except Exception as exc:
        if fired:
            raise Unanswered(f"no answer within {seconds:g} s") from exc
        raise
    finally:
        if not fired:
            try:
                impl._adapter_remove_timeout(timer)
            except Exception:  # noqa: BLE001 - the connection and its loop are gone already
                pass

    if fired:   # the answer came as the deadline passed: the connection is gone all the same
        raise Unanswered(f"no answer within {seconds:g} s")


@attrs.define
class RabbitConnection:

    connection: object
    now: object            # confirm-mode channel: work outside syncpoint
    tx: object             # tx-mode channel: the unit of work's puts, and its gets with their acks
    pending: list = attrs.Factory(list)   # tags got with SYNCPOINT_IF_PERSISTENT (on ``now``)
    pending_tx: list = attrs.Factory(list)   # tags got under syncpoint (on ``tx``)
    tx_dirty: bool = False
    #: The queue each delivery in ``pending`` and ``pending_tx`` came from (one name per delivery held).
    held_from: list = attrs.Factory(list)


class RabbitMQAdapter(BrokerShim):
    """RabbitMQ over AMQP 0-9-1 (options: host, port, user, password, vhost, restart, nemesis, time-scale, empty-wait)."""

    name = "rabbitmq"
    system = "RabbitMQ"
    server_class = RabbitMQServer
    #: RabbitMQ requeues a cut connection's unacknowledged deliveries only once it has noticed the
    #: reset and closed the channel; on a loaded machine 0.3 s was too short for the depth read after
    #: a cut to show them, and two runs of one seed diverged there.
    cut_settle = 1.0
    settle_depths = True
    #: Seconds a backout waits at most for the broker to show the messages it requeued (see _await_requeued).
    backout_settle = 3.0
    scheme = "amqp"
    default_port = 5672
    expiry_tolerance = 3
    can_browse = False
    # AMQP's priority is an unsigned octet: pika refuses to encode one below 0 or above 255 (-1, the queue's
    # default, is resolved by the adapter before it is sent).
    priorities = (C.MQPRI_PRIORITY_AS_Q_DEF, 255)

    not_applicable = {
        "CORE-09": "a negative priority cannot be encoded in AMQP (priority is an unsigned octet)",
        "CORE-17": "no browse in AMQP 0-9-1 (a basic.get with requeue marks the message redelivered)",
        "CORE-18": "no browse in AMQP 0-9-1",
        "CORE-19": "no browse in AMQP 0-9-1",
        "CORE-20": "no browse cursor in AMQP 0-9-1",
        "CORE-21": "no browse locks in AMQP 0-9-1",
        "CORE-24": "no open-handle counts for pulling clients (consumer counts cover subscriptions only)",
        "CORE-34": "AMQP has no get or publish options to combine wrongly",
        **{rule: "AMQP 0-9-1's basic.get takes the head of the queue: no get selecting by message or correlation "
                 "identifier (MatchOptions)" for rule in ("CORE-51", "CORE-52", "CORE-53", "CORE-54")},
        "CORE-38": "AMQP has no wait interval to give wrongly",
        "EXP-15": "no browse locks in AMQP 0-9-1",
    }

    option_names = BrokerShim.option_names | {"queue-type"}

    def __init__(self, **options: str) -> None:
        self.queue_type = options.get("queue-type", "quorum")
        if self.queue_type not in ("quorum", "classic"):
            raise AdapterOptionError(f"adapter 'rabbitmq': queue-type must be quorum or classic, "
                                     f"not {self.queue_type!r}")
        super().__init__(**options)

    def dependencies(self) -> tuple[Dependency, ...]:
        fifo = (Dependency(
            kind="broker setting", what="MSGDLVSQ(FIFO) queues declared as quorum queues (queue-type=quorum)",
            why="only a quorum queue counts deliveries (x-delivery-count, read as BackoutCount); a classic queue, "
                "RabbitMQ's default, flags a redelivery and counts nothing", rules={"CORE-06", "CORE-15", "CORE-17"}),) \
            if self.queue_type == "quorum" else ()
        return fifo + (
            Dependency(kind="broker setting",
                       what="MSGDLVSQ(PRIORITY) queues declared as classic queues with x-max-priority 9",
                       why="a RabbitMQ queue declared without x-max-priority ignores message priority",
                       rules={"CORE-04", "CORE-05", "CORE-08"}),
            Dependency(kind="broker setting", what="MAXDEPTH declared as x-max-length with x-overflow reject-publish",
                       why="with RabbitMQ's default overflow a full queue drops its oldest message instead of "
                           "refusing the put", rules={"CORE-27"}),
            Dependency(kind="client setting", what="publisher confirms, publishes mandatory, on the channel for "
                                                   "work outside syncpoint",
                       why="without them a publish returns before the broker has the message, and one to no "
                           "queue is dropped silently", rules={"CORE-01", "CORE-37"}),
            Dependency(kind="client setting", what="puts under syncpoint on a transactional channel (tx.select)",
                       why="AMQP 0-9-1 has no unit of work but a channel transaction",
                       rules={"CORE-02", "CORE-03", "CORE-29"}, needed=True),
            Dependency(kind="adapter code",
                       what="a get under syncpoint left unacknowledged until MQCMIT, then acknowledged in the same "
                            "AMQP transaction as the unit of work's puts",
                       why="basic.get with auto-ack removes the message at once; acknowledged apart from the puts, "
                           "a commit cut in flight can apply half", rules={"CORE-14", "CORE-29", "CORE-48"},
                       needed=True),
            Dependency(kind="adapter code", what="MQBACK rolls the transaction back and rejects each message got "
                                                 "under syncpoint with requeue",
                       why="a channel rollback leaves the gets unacknowledged, held until the connection closes",
                       rules={"CORE-03", "CORE-15"}, needed=True),
            Dependency(kind="adapter code", what="MQBACK returns once each queue's ready count shows the messages "
                                                 "the backout requeued (read until it does, at most 3 s)",
                       why="a quorum queue applies a reject through its Raft log after the channel has answered: "
                           "a depth read at once missed a reinstated message 4 times in 30 under load",
                       rules={"CORE-15"}),
            Dependency(kind="adapter code", what="MQGMO_SYNCPOINT_IF_PERSISTENT decided once the message is got, "
                                                 "from its delivery mode",
                       why="AMQP has no such option", rules={"CORE-36"}, needed=True),
            Dependency(kind="adapter code", what="a commit the broker applied in part (PRECONDITION_FAILED, "
                                                 "partial tx completion) answered MQRC_BACKED_OUT",
                       why="the broker closes the channel; the adapter opens it again so the connection goes on",
                       rules={"CORE-29", "CORE-30"}, needed=True),
        )

    def _params(self):
        pika = _pika()
        return pika.ConnectionParameters(
            host=self.host, port=self.port, virtual_host=self.vhost,
            credentials=pika.PlainCredentials(self.user, self._password),
            connection_attempts=1, socket_timeout=5, stack_timeout=10, blocked_connection_timeout=30, heartbeat=0)

    def _broker_version(self) -> str:
        pika = _pika()
        old = getattr(self, "admin", None)
        if old is not None:  # after a restart: the old admin connection died with the broker
            try:
                old.close()
            except Exception:  # noqa: BLE001 - it is gone already
                pass
        conn = pika.BlockingConnection(self._params())
        try:
            props = conn._impl.server_properties or {}
            version = props.get("version", b"?")
            self.admin = conn
            self.admin_channel = conn.channel()
            return f"RabbitMQ {version.decode() if isinstance(version, bytes) else version}"
        except Exception:
            conn.close()
            raise

    def _lost(self, exc: Exception) -> bool:
        pika = _pika()
        return isinstance(exc, (pika.exceptions.AMQPConnectionError, pika.exceptions.StreamLostError,
                                pika.exceptions.ConnectionWrongStateError, ConnectionError, OSError))

    def _queue_gone(self, exc: Exception) -> bool:
        pika = _pika()
        return isinstance(exc, pika.exceptions.ChannelClosedByBroker) and exc.reply_code == 404

    def _after_queue_gone(self, conn: str | None) -> None:
        # A 404 closes the channel the call went on; the broker has requeued what it held (and
        # dropped the transaction's uncommitted puts, if it was the unit of work's channel).
        c = self.conns.get(conn)
        if c is None or not c.connection.is_open:
            return
        if not c.now.is_open:
            c.now = c.connection.channel()
            if self.faithful:
                c.now.confirm_delivery()
            c.pending.clear()
            c.held_from.clear()   # the broker requeued what the channel held
        if not c.tx.is_open:
            c.tx = c.connection.channel()
            c.tx.tx_select()
            c.pending_tx.clear()
            c.tx_dirty = False

    def _admin(self):
        if not self.admin.is_open or not self.admin_channel.is_open:
            self._broker_version()
        return self.admin_channel

    @contextlib.contextmanager
    def _admin_use(self):
        """The admin channel, for one use at a time: in a concurrent case, several clients' calls read depths
        through it, each under the lock and a deadline of its own (a sequential call's covers it already)."""
        with self.shared_lock:
            channel = self._admin()
            if not self.concurrent:
                yield channel
                return
            with answered_within(self.admin, self.call_deadline):
                yield channel

    # ----------------------------------------------------------- queues
    def _broker_declare(self, d: Definition) -> None:
        # MAXDEPTH: a length limit that refuses publishes beyond it (the publisher gets a nack).
        args = {"x-max-length": d.attrs["MAXDEPTH"]}
        if not self.faithful:
            # as RabbitMQ installs: a classic queue (no priorities, no delivery count), a full one dropping its
            # oldest message
            with self._admin_use() as admin:
                admin.queue_declare(d.name, durable=True, arguments=args)
            return
        args["x-overflow"] = "reject-publish"
        if d.attrs["MSGDLVSQ"] == C.MQMDS_PRIORITY or self.queue_type == "classic":
            # Only classic queues order by priority; they count no deliveries (BackoutCount 0 or 1).
            args["x-queue-type"] = "classic"
            if d.attrs["MSGDLVSQ"] == C.MQMDS_PRIORITY:
                args["x-max-priority"] = C.MAX_PRIORITY
        else:
            # A FIFO queue is a quorum queue: x-delivery-count counts every earlier delivery
            # that went back to the queue, which is what BackoutCount counts.
            args["x-queue-type"] = "quorum"
        with self._admin_use() as admin:
            admin.queue_declare(d.name, durable=True, arguments=args)

    def _settle_after_cut(self, seconds: float) -> None:
        # The depth reads go through the admin connection, under the same deadline as a call (a
        # quorum queue left without a leader by a restart would hold a read for about 65 s).
        admin = getattr(self, "admin", None)
        try:
            with contextlib.ExitStack() as stack:
                if admin is not None and admin.is_open:
                    stack.enter_context(answered_within(admin, self.call_deadline))
                super()._settle_after_cut(seconds)
        except Unanswered:
            pass   # the admin connection is given up; the next call reopens it

    def _execute(self, op: L.Op) -> L.Observation:
        """Every call the program makes runs under :attr:`call_deadline` (its get's wait added)."""
        if isinstance(op, (L.Connect, L.Restart, L.AdvanceClock)):
            return super()._execute(op)
        seconds = self.call_deadline + (MAX_REAL_WAIT_MS / 1000 if isinstance(op, L.Get) else 0)
        c = self.conns.get(getattr(op, "conn", None))
        # (in a concurrent case the admin connection is armed by each use of it instead: _admin_use)
        admin = None if self.concurrent else getattr(self, "admin", None)
        with contextlib.ExitStack() as stack:
            for connection in {id(x): x for x in (c.connection if c else None, admin) if x is not None}.values():
                if connection.is_open:
                    stack.enter_context(answered_within(connection, seconds))
            return super()._execute(op)

    def _broker_depth(self, d: Definition) -> int:

        with self._admin_use() as admin:
            return admin.queue_declare(d.name, passive=True).method.message_count

    def _broker_cleanup(self, names: list[str]) -> None:
        with self._admin_use() as admin:
            for name in names:
                admin.queue_delete(name)

    # ----------------------------------------------------------- connections
    def _broker_connect(self, conn: str) -> RabbitConnection:
        pika = _pika()
        connection = pika.BlockingConnection(self._params())
        now = connection.channel()
        if self.faithful:
            now.confirm_delivery()
        tx = connection.channel()
        tx.tx_select()
        return RabbitConnection(connection=connection, now=now, tx=tx)

    def _broker_disconnect(self, c: RabbitConnection, abnormal: bool) -> None:
        if not abnormal and self.faithful:  # MQDISC commits; closing an AMQP connection would roll back instead
            try:
                self._broker_commit(c)
            except CommitBackedOut:
                c.connection.close()
                self._settle()
                raise
        if abnormal:
            # The program ends without MQDISC: the socket goes, nothing is committed.
            c.connection._impl._transport.abort() if _has_transport(c) else None
            try:
                c.connection.close()
            except Exception:  # noqa: BLE001 - the socket is already gone
                pass
        else:
            c.connection.close()
        self._settle()

    def _settle(self) -> None:
        """A round trip through the admin channel, so the broker has processed what was sent before."""
        with self._admin_use() as admin:
            admin.basic_qos(prefetch_count=0)

    def _broker_commit(self, c: RabbitConnection) -> None:
        pika = _pika()
        try:
            self._commit(c)
        except pika.exceptions.ChannelClosedByBroker as exc:
            if exc.reply_code != 406:
                raise
            # PRECONDITION_FAILED "partial tx completion": a publish of the transaction was refused at the
            # commit (a full quorum queue, say) and the rest of it applied; the broker closed the channel
            self._after_queue_gone(next((n for n, x in self.conns.items() if x is c), None))
            raise CommitBackedOut(str(exc)) from None

    def _commit(self, c: RabbitConnection) -> None:
        # The gets' acks and the puts go in one AMQP transaction: the broker applies both or neither,
        # even when the connection breaks with the commit in flight (CORE-48).
        if c.pending_tx:
            c.tx.basic_ack(delivery_tag=c.pending_tx[-1], multiple=True)
            c.pending_tx.clear()
            c.tx_dirty = True
        if c.tx_dirty:
            c.tx.tx_commit()
            c.tx_dirty = False
        if c.pending:
            c.now.basic_ack(delivery_tag=c.pending[-1], multiple=True)
            c.pending.clear()
        c.held_from.clear()
        c.now.basic_qos(prefetch_count=0)  # round trip: the acks are processed

    def _broker_backout(self, c: RabbitConnection) -> None:
        # What each queue holds ready before the rejects, so that the backout returns once it holds them too.
        returning = collections.Counter(c.held_from) if self.faithful else collections.Counter()
        before = self._ready_counts(returning)
        c.held_from.clear()
        if c.tx_dirty:
            c.tx.tx_rollback()   # drops the puts; the gets stay unacknowledged until rejected
            c.tx_dirty = False
        if c.pending_tx:
            for tag in c.pending_tx:
                c.tx.basic_reject(delivery_tag=tag, requeue=True)
            c.pending_tx.clear()
            c.tx.tx_commit()   # a reject on a transactional channel takes effect at its commit
        for tag in c.pending:
            c.now.basic_reject(delivery_tag=tag, requeue=True)
        c.pending.clear()
        c.now.basic_qos(prefetch_count=0)
        self._await_requeued(before, returning)

    def _ready_counts(self, names) -> dict[str, int]:
        counts = {}
        for name in names:
            try:
                with self._admin_use() as admin:
                    counts[name] = admin.queue_declare(name, passive=True).method.message_count
            except Exception:  # noqa: BLE001 - a queue gone (or a broker not answering) is not waited for
                pass
        return counts

    def _await_requeued(self, before: dict[str, int], returning: collections.Counter) -> None:
        """Read each queue's ready count until it shows the messages the backout gave back (at most
        ``backout_settle`` seconds): a quorum queue applies a reject through its log after the channel has
        answered, so a depth read at once can miss a message MQBACK reinstated."""
        deadline = time.monotonic() + self.backout_settle
        waiting = dict(before)
        while waiting and time.monotonic() < deadline:
            now = self._ready_counts(waiting)
            waiting = {n: k for n, k in waiting.items() if n in now and now[n] < k + returning[n]}
            if waiting:
                time.sleep(self.settle_step / 25)

    # ----------------------------------------------------------- messages
    def _broker_put(self, c: RabbitConnection, d: Definition, body: str, md: L.MessageDescriptor,
                    options: int) -> L.Observation:
        pika = _pika()
        expiry = self.ttl_ms(md.expiry)
        props = pika.BasicProperties(
            priority=None if md.priority == C.MQPRI_PRIORITY_AS_Q_DEF else md.priority,
            delivery_mode=None if md.persistence == C.MQPER_PERSISTENCE_AS_Q_DEF
            else (2 if md.persistence == C.MQPER_PERSISTENT else 1),
            expiration=None if expiry is None else str(expiry),
            message_id=self.message_id(md) or None, correlation_id=md.correl_id or None,
            reply_to=md.reply_to_q or None, headers=self.properties(md),
        )
        data = body.encode("utf-8", "surrogatepass")
        if options & C.MQPMO_SYNCPOINT:
            c.tx.basic_publish(exchange="", routing_key=d.name, body=data, properties=props)
            c.tx_dirty = True
            return L.OK
        try:
            c.now.basic_publish(exchange="", routing_key=d.name, body=data, properties=props, mandatory=self.faithful)
        except pika.exceptions.UnroutableError:
            return _fail(C.MQRC_UNKNOWN_OBJECT_NAME)
        except pika.exceptions.NackError:
            return _fail(C.MQRC_Q_FULL)
        return L.OK

    def _broker_get(self, c: RabbitConnection, handle: str, d: Definition, options: int,
                    wait_ms: int) -> L.Observation:
        deadline = time.monotonic() + max(wait_ms, self.empty_wait_ms) / 1000
        # A get under syncpoint is made on the transactional channel, so that its ack commits with the puts.
        channel = c.tx if options & C.MQGMO_SYNCPOINT else c.now
        while True:
            method, props, body = channel.basic_get(d.name, auto_ack=False)
            if method is not None or time.monotonic() >= deadline:
                break
            time.sleep(0.005)
        if method is None:
            return _fail(C.MQRC_NO_MSG_AVAILABLE)
        persistent = props.delivery_mode == 2
        syncpoint = bool(options & C.MQGMO_SYNCPOINT) or (
            bool(options & C.MQGMO_SYNCPOINT_IF_PERSISTENT) and persistent)
        if syncpoint:
            (c.pending_tx if channel is c.tx else c.pending).append(method.delivery_tag)
            c.held_from.append(d.name)
        else:
            c.now.basic_ack(delivery_tag=method.delivery_tag)
        raw = props.headers or {}
        delivery_count = raw.get("x-delivery-count")
        headers = {k: (v.decode() if isinstance(v, bytes) else str(v)) for k, v in raw.items()}
        expiry = C.MQEI_UNLIMITED if props.expiration is None else self.tenths(int(props.expiration))
        return L.Observation(message=self.returned(
            body=body.decode("utf-8", "surrogatepass"), props=headers, priority=props.priority or 0,
            persistent=persistent, expiry=expiry, msg_id=props.message_id or "",
            correl_id=props.correlation_id or "", reply_to=props.reply_to or "",
            redelivered=int(delivery_count) if isinstance(delivery_count, int) else int(method.redelivered)))


def _has_transport(c: RabbitConnection) -> bool:
    return getattr(getattr(c.connection, "_impl", None), "_transport", None) is not None
