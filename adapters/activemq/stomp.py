"""The ``activemq-stomp`` adapter: ActiveMQ Classic 5.17 over STOMP 1.2 (stomp.py), as an MQI-shaped client.

The mapping, op by op, is documented in docs/adapters/activemq-stomp.md.  In short: a
queue is a STOMP destination ``/queue/<fifo|prio>.mqc.<case>.<name>`` (the
broker orders ``prio.`` queues by priority); a put is a SEND with a receipt, a
put under syncpoint a SEND inside the connection's STOMP transaction; a get
browses the queue for the broker's delivery order, then takes the first message
it can with a subscription whose selector names that one message (so the
broker never dispatches a message nobody asked for); a get under syncpoint
keeps the message delivered but unacknowledged until MQCMIT acknowledges it in
the transaction, or MQBACK ends the subscription, which makes the broker
redeliver it (``redelivered:true``, BackoutCount 1); Expiry is the ``expires``
header (absolute), so the remaining time on a get is what is left of it.

Options: host, port, user, password (or MQCONFORM_ACTIVEMQ_STOMP_URL,
stomp://user:password@host:port; else the broker ``mqconform brokers up``
started, else a private broker for the run), time-scale (ms per tenth of a
second, default 20), empty-wait (ms a no-wait get waits before answering "no
message", default 30).
"""

from __future__ import annotations

import itertools
import logging
import socket
import threading
import time
import uuid

import attrs

from adapters.base import AdapterUnavailable, Dependency
from adapters.activemq.common import ActiveMQShim
from adapters.broker_shim import Definition, _fail, selected
from reference_model import language as L
from reference_model import mqconst as C
from reference_model.version import install_hint

#: How long a selector subscription may take to deliver the message the browse showed (seconds).
DISPATCH_WAIT = 0.5
#: How long any broker reply (receipt, browse end) may take (seconds).
REPLY_WAIT = 10.0
#: How long the broker may take to answer CONNECT (seconds).
CONNECT_WAIT = 10.0


def _stomp():
    try:
        import stomp
    except ImportError:   # installed without the kit's activemq extra
        raise AdapterUnavailable(f"adapter 'activemq-stomp' needs the Python package stomp.py: "
                                 f"{install_hint('activemq')}") from None
    # stomp.py logs connection failures itself; the adapter reports them in its own one line.
    logging.getLogger("stomp.py").setLevel(logging.CRITICAL)
    return stomp


class _Inbox:
    """Frames a STOMP connection received, waited on by the adapter's thread."""

    def __init__(self) -> None:
        self.server = ""
        self.frames: list[tuple[str, object]] = []
        self.cv = threading.Condition()
        self.lost = False

    # stomp.py listener interface
    def on_message(self, frame) -> None:
        self._add("MESSAGE", frame)

    def on_receipt(self, frame) -> None:
        self._add("RECEIPT", frame)

    def on_error(self, frame) -> None:
        self._add("ERROR", frame)

    def on_disconnected(self) -> None:
        with self.cv:
            self.lost = True
            self.cv.notify_all()

    def on_connected(self, frame) -> None:
        self.server = frame.headers.get("server", "")

    def __getattr__(self, name):  # other listener callbacks: nothing to do
        if name.startswith("on_"):
            return lambda *args, **kwargs: None
        raise AttributeError(name)

    def _add(self, kind: str, frame) -> None:
        with self.cv:
            self.frames.append((kind, frame))
            self.cv.notify_all()

    def take(self, kind: str, key: str, value: str, timeout: float):
        """The first frame of ``kind`` whose header ``key`` is ``value``, or None after ``timeout``."""
        end = time.monotonic() + timeout
        with self.cv:
            while True:
                for i, (k, f) in enumerate(self.frames):
                    if k == "ERROR":
                        del self.frames[i]
                        raise ConnectionError("broker error: " + f.headers.get("message", "") + " " + str(f.body)[:80])
                    if k == kind and f.headers.get(key) == value:
                        del self.frames[i]
                        return f
                if self.lost:
                    raise ConnectionError("connection lost")
                left = end - time.monotonic()
                if left <= 0:
                    return None
                self.cv.wait(left)

    def error(self) -> str:
        """The message of an ERROR frame received so far, or ""."""
        with self.cv:
            for kind, frame in self.frames:
                if kind == "ERROR":
                    return "broker error: " + frame.headers.get("message", "")
        return ""

    def drop(self, key: str, value: str) -> None:
        with self.cv:
            self.frames = [(k, f) for k, f in self.frames if f.headers.get(key) != value]


@attrs.define
class Held:
    """A message got under syncpoint: delivered to its own subscription, not yet acknowledged."""

    sub: str
    ack: str
    message_id: str
    queue: str


@attrs.define
class StompConnection:
    client: object
    inbox: _Inbox
    tx: str | None = None
    held: list[Held] = attrs.Factory(list)


class ActiveMQAdapter(ActiveMQShim):
    """ActiveMQ Classic over STOMP 1.2 (options: host, port, user, password, time-scale, empty-wait, nemesis)."""

    name = "activemq-stomp"
    env_name = "ACTIVEMQ_STOMP"
    scheme = "stomp"
    default_port = 61613
    not_applicable = {
        "CORE-21": "no browse locks in STOMP",
        "CORE-27": "no per-destination message-count limit (ActiveMQ limits memory and store size)",
        "CORE-24": "an MQOPEN has no STOMP counterpart the broker counts: the adapter subscribes only for a "
                   "get, so ActiveMQ's consumer counts are not counts of open handles",
        "CORE-34": "STOMP has no get or send options to combine wrongly",
        "CORE-38": "STOMP has no wait interval to give wrongly",
        "CORE-54": "the adapter picks the message a get selects from its browse of the queue: MatchOptions the MQI "
                   "does not define have no call to make",
        "EXP-15": "no browse locks in STOMP",
    }
    #: MQGET's selection by MsgId and CorrelId: the adapter picks from its browse of the queue the first message the
    #: selection matches (the mq_msgid and correlation-id headers), then takes it as any get does.
    can_select = True

    _ids = itertools.count(1)
    admin: StompConnection | None = None

    def dependencies(self) -> tuple[Dependency, ...]:
        return super().dependencies() + (
            Dependency(kind="adapter code", what="a get browses the queue for the broker's delivery order, then "
                                                 "takes that message with a subscription whose selector names it "
                                                 "alone (client-individual ack, prefetch 1)",
                       why="a plain STOMP subscription is sent messages nobody asked for",
                       rules={"CORE-01", "CORE-04", "CORE-05", "CORE-06", "CORE-13"}, needed=True),
            Dependency(kind="adapter code", what="MQGET's selection by MsgId and CorrelId applied by the adapter to its "
                                                 "browse of the queue (the mq_msgid and correlation-id headers)",
                       why="the adapter chooses the message a get takes from its browse; a STOMP selector would "
                           "express the selection, but not the delivery order among the messages it selects",
                       rules={"CORE-51", "CORE-52"}, needed=True),
            Dependency(kind="adapter code", what="a get under syncpoint left unacknowledged until MQCMIT acknowledges "
                                                 "it in the transaction; MQBACK ends its subscription",
                       why="STOMP transactions cover sends and acknowledgements only; an ended subscription makes "
                           "the broker redeliver what it held", rules={"CORE-14", "CORE-15", "CORE-29"}, needed=True),
            Dependency(kind="adapter code", what="the browse cursor of each handle kept by the adapter over browser "
                                                 "subscriptions", why="a STOMP browser keeps no cursor across calls",
                       rules={"CORE-18", "CORE-19", "CORE-20", "CORE-39"}, needed=True),
            Dependency(kind="adapter code", what="CURDEPTH counted from a browser subscription, less the messages "
                                                 "held in units of work",
                       why="STOMP has no frame that reads a queue's depth", rules={"CORE-28", "EXP-11"}, needed=True),
        )

    # ----------------------------------------------------------- connections
    def _open(self) -> StompConnection:
        stomp = _stomp()
        client = stomp.Connection12([(self.host, self.port)], heartbeats=(0, 0), reconnect_attempts_max=1,
                                    timeout=5)
        inbox = _Inbox()
        client.set_listener("mqconform", inbox)
        # connect(wait=True) has no deadline when a peer accepts TCP but never answers
        # CONNECTED: wait for it against a deadline of our own.
        client.connect(self.user, self._password, wait=False,
                       headers={"client-id": f"mqc-{uuid.uuid4().hex[:12]}"})
        deadline = time.monotonic() + CONNECT_WAIT
        while not client.is_connected():
            error = inbox.error()
            if error or inbox.lost or time.monotonic() > deadline:
                try:
                    client.transport.disconnect_socket()
                except Exception:  # noqa: BLE001 - giving up on it anyway
                    pass
                raise ConnectionError(error or f"no CONNECTED frame within {CONNECT_WAIT:.0f} s")
            time.sleep(0.01)
        # Frames are small and each waits for the previous one: without TCP_NODELAY every
        # exchange waits out a delayed acknowledgement (about 40 ms).
        client.transport.socket.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return StompConnection(client=client, inbox=inbox)

    def _broker_version(self) -> str:
        if self.admin is not None:
            self._quiet_close(self.admin)
        self.admin = self._open()
        return self.admin.inbox.server.replace("/", " ") or "ActiveMQ"

    def _lost(self, exc: Exception) -> bool:
        stomp = _stomp()
        return isinstance(exc, (stomp.exception.StompException, ConnectionError, OSError))

    def _admin(self) -> StompConnection:
        if self.admin is None or not self.admin.client.is_connected() or self.admin.inbox.lost:
            self._broker_version()
        return self.admin

    def _id(self, kind: str) -> str:
        return f"{kind}{next(self._ids)}"

    def _receipt(self, c: StompConnection, send, *args, **kwargs) -> None:
        """Send a frame with a receipt and wait for it: the broker has processed it (and all before it)."""
        rid = self._id("r")
        if getattr(send, "__name__", "") == "ack":  # stomp.py's ack takes the receipt as an argument
            send(*args, receipt=rid, **kwargs)
        else:
            headers = dict(kwargs.pop("headers", {}) or {})
            headers["receipt"] = rid
            send(*args, headers=headers, **kwargs)
        if c.inbox.take("RECEIPT", "receipt-id", rid, REPLY_WAIT) is None:
            raise ConnectionError(f"no receipt from the broker within {REPLY_WAIT:.0f} s")

    def _broker_connect(self, conn: str) -> StompConnection:
        return self._open()

    def _broker_disconnect(self, c: StompConnection, abnormal: bool) -> None:
        if abnormal:
            # The program ends without MQDISC: the socket goes, nothing is committed.
            held = list(c.held)
            try:
                c.client.transport.disconnect_socket()
            except Exception:  # noqa: BLE001 - already gone
                pass
            if held:
                self._settle(held)
            return
        if self.faithful:
            self._broker_commit(c)  # MQDISC commits; a STOMP DISCONNECT would abort the transaction
        rid = self._id("d")
        c.client.disconnect(receipt=rid)

    def _settle(self, held: list[Held]) -> None:
        """Wait until the broker has put back the messages a lost connection held.

        The broker notices an abruptly closed socket asynchronously, so a receipt on another
        connection proves nothing: poll the queues concerned until every held message that has
        not expired in the meantime is visible again (at most two seconds).
        """
        deadline = time.monotonic() + 2.0
        wanted = {}
        for h in held:
            wanted.setdefault(h.queue, set()).add(h.message_id)
        while wanted and time.monotonic() < deadline:
            for name in list(wanted):
                seen = {f.headers["message-id"] for f in self._browse(Definition(name=name, attrs={}))}
                if wanted[name] <= seen:
                    del wanted[name]
            if wanted:
                time.sleep(0.02)

    def _close_all(self) -> None:
        # At the end of a case nothing needs the abrupt form: back out what each connection
        # holds (synchronously, with receipts) and let the socket go.
        for c in list(self.conns.values()):
            try:
                self._broker_backout(c)
            except Exception:  # noqa: BLE001 - closing a dead connection
                pass
            try:
                c.client.transport.disconnect_socket()
            except Exception:  # noqa: BLE001
                pass
        self.conns.clear()

    def _quiet_close(self, c: StompConnection) -> None:
        try:
            c.client.disconnect()
        except Exception:  # noqa: BLE001
            pass

    def close(self) -> None:
        super().close()
        if self.admin is not None:
            self._quiet_close(self.admin)
            self.admin = None

    # ----------------------------------------------------------- units of work
    def _begin(self, c: StompConnection) -> str:
        if c.tx is None:
            c.tx = self._id("t")
            c.client.begin(c.tx)
        return c.tx

    def _broker_commit(self, c: StompConnection) -> None:
        if c.held:
            tx = self._begin(c)
            for h in c.held:
                c.client.ack(h.ack, transaction=tx)
        if c.tx is not None:
            tx, c.tx = c.tx, None
            self._receipt(c, c.client.commit, tx)
        for h in c.held:
            self._receipt(c, c.client.unsubscribe, h.sub)
            c.inbox.drop("subscription", h.sub)
        c.held.clear()

    def _broker_backout(self, c: StompConnection) -> None:
        if c.tx is not None:
            tx, c.tx = c.tx, None
            self._receipt(c, c.client.abort, tx)
        for h in c.held:  # ending the subscription makes the broker redeliver the message
            self._receipt(c, c.client.unsubscribe, h.sub)
            c.inbox.drop("subscription", h.sub)
        c.held.clear()

    # ----------------------------------------------------------- queues
    def _destination(self, d: Definition) -> str:
        return "/queue/" + d.name

    def _broker_declare(self, d: Definition) -> None:
        pass  # the broker creates a destination on first use

    def _browse(self, d: Definition) -> list:
        """The queue's messages in the broker's delivery order (a STOMP browser subscription on the admin
        connection, one client at a time)."""
        with self.shared_lock:
            admin = self._admin()
            sub = self._id("b")
            admin.client.subscribe(self._destination(d), sub, ack="auto", headers={"browser": "true"})
            out = []
            try:
                while True:
                    f = admin.inbox.take("MESSAGE", "subscription", sub, REPLY_WAIT)
                    if f is None:
                        raise ConnectionError(f"browse of {d.name} did not end within {REPLY_WAIT:.0f} s")
                    if f.headers.get("browser") == "end":
                        return out
                    out.append(f)
            finally:
                admin.client.unsubscribe(sub)

    def _held_ids(self) -> set:
        # (each connection's list copied whole: in a concurrent case another client's get may add to it meanwhile)
        return {h.message_id for c in list(self.conns.values()) for h in list(c.held)}

    def _broker_depth(self, d: Definition) -> int:
        # The broker's browser shows delivered-but-unacknowledged messages too; those this
        # application holds in units of work are not on the queue for MQ.
        held = self._held_ids()
        return sum(1 for f in self._browse(d) if f.headers["message-id"] not in held)

    def _broker_cleanup(self, names: list[str]) -> None:
        # STOMP cannot delete a destination: consume what is left, so the broker drops the queue
        # when it is idle (gcInactiveDestinations) and its store stays small.
        with self.shared_lock:
            self._cleanup(self._admin(), names)

    def _cleanup(self, admin: StompConnection, names: list[str]) -> None:
        for name in names:
            d = Definition(name=name, attrs={})
            if not self._browse(d):
                continue
            sub = self._id("z")
            admin.client.subscribe("/queue/" + name, sub, ack="auto")
            deadline = time.monotonic() + 2.0
            while self._browse(d) and time.monotonic() < deadline:
                time.sleep(0.01)
            self._receipt(admin, admin.client.unsubscribe, sub)
            admin.inbox.drop("subscription", sub)

    # ----------------------------------------------------------- messages
    def _broker_put(self, c: StompConnection, d: Definition, body: str, md: L.MessageDescriptor,
                    options: int) -> L.Observation:
        headers = {k.replace("-", "_"): v for k, v in self.properties(md).items()}
        msg_id = self.message_id(md)
        if msg_id:
            headers["mq_msgid"] = msg_id
        if md.priority != C.MQPRI_PRIORITY_AS_Q_DEF:
            headers["priority"] = str(md.priority)
        if md.persistence != C.MQPER_PERSISTENCE_AS_Q_DEF:
            headers["persistent"] = "true" if md.persistence == C.MQPER_PERSISTENT else "false"
        expiry = self.expiry_ms(md.expiry)
        if expiry is not None:
            headers["expires"] = str(int(self.op_wall * 1000) + expiry)   # counted from the put's issue
        if md.correl_id:
            headers["correlation-id"] = md.correl_id
        if md.reply_to_q:
            headers["mq_replytoq"] = md.reply_to_q
        data = body.encode("utf-8", "surrogatepass")
        if options & C.MQPMO_SYNCPOINT:
            headers["transaction"] = self._begin(c)
            c.client.send(self._destination(d), data, headers=headers)
            return L.OK
        self._receipt(c, c.client.send, self._destination(d), data, headers=headers)
        return L.OK

    def _broker_get(self, c: StompConnection, handle: str, d: Definition, options: int,
                    wait_ms: int, criteria: tuple[str, str] | None = None) -> L.Observation:
        if options & (C.MQGMO_MSG_UNDER_CURSOR | C.MQGMO_BROWSE_MSG_UNDER_CURSOR):
            return self._under_cursor(c, handle, d, options)
        deadline = time.monotonic() + max(wait_ms, self.empty_wait_ms) / 1000
        browse = options & C.MQGMO_BROWSE_ANY
        accept = None if criteria is None else (lambda f: selected(self._identity(f), criteria))
        while True:
            snapshot = self._browse(d)
            if browse:
                frame = self._browse_pick(handle, d, snapshot, options, accept)
                if frame is not None:
                    return self._observation(frame)
            else:
                held = self._held_ids()
                for f in snapshot:
                    if f.headers["message-id"] in held or accept is not None and not accept(f):
                        continue
                    got = self._take(c, d, f.headers["message-id"], options)
                    if got is not None:
                        return got
            if time.monotonic() >= deadline:
                return _fail(C.MQRC_NO_MSG_AVAILABLE)
            time.sleep(0.01)

    def _under_cursor(self, c: StompConnection, handle: str, d: Definition, options: int) -> L.Observation:
        """MQGMO_(BROWSE_)MSG_UNDER_CURSOR: the message the handle's cursor is on, if it is still there."""
        cursor = self.cursors.get(handle)
        if cursor is not None:
            held = self._held_ids()
            for f in self._browse(d):
                if f.headers["message-id"] == cursor.message_id and cursor.message_id not in held:
                    if options & C.MQGMO_BROWSE_MSG_UNDER_CURSOR:
                        return self._observation(f)
                    got = self._take(c, d, cursor.message_id, options)
                    if got is not None:
                        return got
                    break
        return _fail(C.MQRC_NO_MSG_UNDER_CURSOR)

    def _take(self, c: StompConnection, d: Definition, message_id: str, options: int) -> L.Observation | None:
        """Get the message ``message_id`` with a subscription that selects it alone, or None if it is gone."""
        sub = self._id("g")
        c.client.subscribe(self._destination(d), sub, ack="client-individual",
                           headers={"selector": f"JMSMessageID = '{message_id}'", "activemq.prefetchSize": "1"})
        frame = c.inbox.take("MESSAGE", "subscription", sub, DISPATCH_WAIT)
        if frame is None:  # expired or taken in the meantime
            self._receipt(c, c.client.unsubscribe, sub)
            frame = c.inbox.take("MESSAGE", "subscription", sub, 0)
            if frame is None:
                return None
            # Delivered after all, just before the subscription ended: it is back on the queue.
            return None
        persistent = frame.headers.get("persistent") == "true"
        syncpoint = bool(options & C.MQGMO_SYNCPOINT) or (
            bool(options & C.MQGMO_SYNCPOINT_IF_PERSISTENT) and persistent)
        if syncpoint:
            c.held.append(Held(sub=sub, ack=frame.headers["ack"], message_id=message_id, queue=d.name))
        else:
            self._receipt(c, c.client.ack, frame.headers["ack"])
            self._receipt(c, c.client.unsubscribe, sub)
        return self._observation(frame)

    def _browse_pick(self, handle: str, d: Definition, snapshot: list, options: int, accept=None):
        """BROWSE_FIRST / BROWSE_NEXT on the broker's browse order, with the handle's cursor (``accept``: the
        frames a selecting browse may return)."""
        return self.browse_pick(handle, d, [(f.headers["message-id"], _priority(f), f) for f in snapshot],
                                self._held_ids(), options, accept)

    def _identity(self, frame) -> tuple[str, str]:
        """The (MsgId, CorrelId) a get returns ``frame`` with (see :meth:`_observation`)."""
        h = frame.headers
        return (h.get("mq_msgid") or ("" if self.faithful else h.get("message-id", "")), h.get("correlation-id", ""))

    def _observation(self, frame) -> L.Observation:
        h = frame.headers
        props = {k.replace("_", "-"): v for k, v in h.items() if k.startswith("mq_")}
        expiry = self.expiry_left(int(h.get("expires", "0") or 0))
        body = frame.body
        if isinstance(body, bytes):
            body = body.decode("utf-8", "surrogatepass")
        return L.Observation(message=self.returned(
            body=body, props=props, priority=int(h.get("priority", "0")),
            persistent=h.get("persistent") == "true", expiry=expiry, msg_id=h.get("mq_msgid") or ("" if self.faithful else h.get("message-id", "")),
            correl_id=h.get("correlation-id", ""), reply_to=h.get("mq_replytoq", ""),
            redelivered=int(h.get("redelivered") == "true")))


def _priority(frame) -> int:
    return int(frame.headers.get("priority", "0"))
