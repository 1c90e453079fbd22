"""What every real-broker adapter shares: an MQI-shaped layer over a broker client.

The layer holds what an application's MQI library holds (connection and object
handles, the queue definitions it created, per-case queue names) and leaves every
message semantic (order, priority, persistence, expiry, units of work,
redelivery, depth) to the broker.  Where the broker has no equivalent at all for
an operation, option or attribute, :meth:`BrokerShim.express` removes it (or the
whole operation), so neither the broker nor the model sees it: that part of MQ is
"not expressible" on the broker, never a failure.  Everything else is run and
checked, and every difference is reported.

Time is real: the case's clock starts at ``start_case``; the virtual clock goes on
as MQ's would (by each clock advance, and by the interval of each waiting get that
found nothing); a clock advance waits until real time has caught up with the
virtual clock, and ``elapsed_tenths`` lets
the session feed the time that really passed to the model.  ``time-scale`` sets
the milliseconds one tenth of a second of model time lasts on the broker
(default 20, so expiry intervals and waits are short); expiry intervals sent to
the broker are scaled the same way.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import tempfile
import threading
import time
import uuid
from pathlib import Path
from urllib.parse import quote, unquote, urlsplit

import attrs

from adapters.base import (AdapterOptionError, AdapterUnavailable, Capabilities, Dependency, Refused,
                           RestartBudget, carry_out, check_options)
from adapters.brokers.nemesis import CuttingProxy
from adapters.brokers.server import LOOPBACK, BrokerControlError, BrokerServer
from reference_model import language as L
from reference_model import mqconst as C
from reference_model.rules import RULES

#: How an adapter maps MQ onto the broker (option ``mapping``): see :attr:`BrokerShim.mapping`.
MAPPINGS = ("faithful", "defaults")
#: Queue attributes a broker queue can carry (the others have no broker equivalent).
DEFINABLE = {"MSGDLVSQ", "DEFPRTY", "DEFPSIST", "BOTHRESH", "BOQNAME", "MAXDEPTH"}
#: MQGMO options with no broker equivalent: browse locks and the browse cursor.
UNSUPPORTED_GMO = C.MQGMO_LOCK | C.MQGMO_UNLOCK | C.MQGMO_MSG_UNDER_CURSOR | C.MQGMO_MARK_SKIP_BACKOUT
#: Longest real wait of a get with MQGMO_WAIT (an unlimited wait on an empty queue ends here).
MAX_REAL_WAIT_MS = 5_000
#: Areas a broker can express.
AREAS = ("core", "expiry")
#: Why a broker cannot express the other areas (every rule of them is "not applicable").
AREA_REASONS = {
    "syncpoint": "skipping backout (MQGMO_MARK_SKIP_BACKOUT) is a z/OS queue-manager facility with no broker equivalent",
    "trigger": "no triggering: no initiation queues, trigger conditions or trigger messages",
    "cluster": "no MQ clusters: no cluster queues, channels or workload-management attributes",
    "dlq": "no MQDLH dead-letter header and no DLQ handler rules table",
}
#: Rules that need a queue-manager feature no broker has, with the reason (verdict "not applicable").
#: Operations with no broker equivalent at all.
NO_EQUIVALENT = frozenset({"DefineRemoteQueue", "SetClusterAlias", "DefineQueueSharingGroup"})

#: What every broker adapter does itself, in its MQI layer, that the broker and its client do not: code an
#: application moving from MQ onto the broker writes (or its messaging library does).
SHIM_CODE = (
    Dependency(kind="adapter code", what="object handles and their open options kept by the adapter",
               why="a broker has no MQOPEN: the adapter itself answers a call through a handle not opened for it, "
                   "a handle or connection not open, and a queue name the application never defined",
               rules={"CORE-22", "CORE-33", "CORE-40"}, needed=True),
    Dependency(kind="adapter code", what="queue definitions kept by the adapter, which answers an inquiry of any "
                                         "attribute but CURDEPTH",
               why="a broker queue has no DEFPRTY, DEFPSIST, BOTHRESH or BOQNAME to inquire", rules={"CORE-41"},
               needed=True),
    Dependency(kind="adapter code", what="MQPRI_PRIORITY_AS_Q_DEF and MQPER_PERSISTENCE_AS_Q_DEF resolved at put "
                                         "time from the queue's DEFPRTY and DEFPSIST",
               why="a broker queue has no default priority or persistence: the client's own defaults apply",
               rules={"CORE-07", "CORE-10"}),
    Dependency(kind="adapter code", what="a blank MsgId replaced by a generated one at put time",
               why="the broker's own message identifier is not carried as the MQMD's MsgId",
               rules={"CORE-11"}),
    Dependency(kind="adapter code", what="MQDISC commits the unit of work before the connection closes",
               why="closing a broker connection rolls its open transaction back", rules={"CORE-30"}),
    Dependency(kind="adapter code", what="a get with MQGMO_WAIT polls the broker until its wait interval ends",
               why="a broker's pull answers at once", rules={"CORE-13"}, needed=True),
    Dependency(kind="adapter code", what="a get without wait polls the broker for empty-wait ms (30) before it "
                                         "answers no message",
               why="what a closing connection or a backout gives back reaches the queue a moment after the call "
                   "returns", rules={"CORE-01", "CORE-13", "CORE-31", "CORE-46"}),
)

NOT_APPLICABLE_COMMON = {
    "CORE-25": "no get inhibition on the broker (GET(DISABLED) has no equivalent)",
    "CORE-26": "no put inhibition on the broker (PUT(DISABLED) has no equivalent)",
    "CORE-43": "a single broker: no remote queue managers",
    "CORE-49": "a broker queue has no maximum message length (MAXMSGL): the broker's limit on a message's size "
               "is one for the whole broker, far above any the kit puts, so no put is too long for its queue",
    "CORE-50": "a broker queue has no maximum message length (MAXMSGL), so nothing is ever segmented",
    "EXP-07": "no remote queues or transmission queues",
    "EXP-09": "only a DLQ handler discards expired messages besides the queue manager, and a broker has none",
    "EXP-16": "the broker writes no MQDLH dead-letter messages",
    "EXP-17": "no triggering",
    "EXP-18": "no remote queues or transmission queues",
    "EXP-19": "no MQXMIT messages",
    "EXP-20": "no MQXMIT messages",
    "EXP-21": "no MQXMIT messages",
    "EXP-22": "no MQXMIT messages",
}



class CommitBackedOut(Exception):
    """A broker refused to commit a program connection's transaction (RabbitMQ: a transaction that could
    complete only in part) and the adapter made the connection usable again: the program sees what MQ
    answers for a commit that failed, MQRC_BACKED_OUT."""

class BrokerLost(AdapterUnavailable):
    """The broker went away during the case."""


class Unanswered(Exception):
    """The broker took a call but did not answer it within the adapter's deadline; the client gave up
    the connection (as an MQ client does when its heartbeat goes unanswered)."""


@attrs.define
class Handle:
    conn: str
    queue: str
    options: int


@attrs.define
class Cursor:
    """A handle's browse cursor: the message it is on and what was at or before it."""

    message_id: str
    priority: int
    passed: set
    known: set


@attrs.define
class Definition:
    name: str          # the broker's queue name
    attrs: dict


#: Set by a job that keeps one broker for all its adapters (adapters.brokers.managed): never start another.
NO_PRIVATE_BROKER = "MQCONFORM_NO_PRIVATE_BROKER"
#: Rules only a nemesis (connections cut from outside the client) can exercise.
NEMESIS_RULES = ("CORE-46", "CORE-47", "CORE-48")
#: Rules only a restart of the queue manager reaches (not applicable where restarts are off).
RESTART_RULES = ("CORE-32", "CORE-45")


class BrokerShim:
    """Base of the real-broker adapters (subclasses implement the ``_broker_*`` methods).

    Where the broker is: the options ``host``, ``port``, ``user``, ``password``
    (and ``vhost`` where the protocol has one), else ``$MQCONFORM_<NAME>_URL``,
    else the broker ``mqconform brokers up`` recorded, else a private broker this
    adapter starts for the run and stops in :meth:`close`.
    """

    name = ""
    system = ""
    scheme = ""
    server_class: type[BrokerServer] = BrokerServer
    option_names = {"host", "port", "user", "password", "vhost", "time-scale", "empty-wait", "restart", "nemesis",
                    "mapping"}
    #: Tolerance (tenths) on expiry: scheduling latency plus the broker's own expiry behaviour.
    expiry_tolerance = 2
    default_user = "guest"
    default_password = "guest"
    default_port = 0
    #: Which of the kit-started broker's ports this adapter speaks to.
    port_key = "main"

    @property
    def env_name(self) -> str:
        """The part of the environment variable ``MQCONFORM_<NAME>_URL`` naming this adapter."""
        return self.name.upper().replace("-", "_")

    def __init__(self, **options: str) -> None:
        check_options(self.name, options, self.option_names)
        #: ``faithful`` (the default): every setting and piece of code that brings the broker closest to MQ;
        #: ``defaults``: the broker and client as they install, with only what is needed to express the calls
        #: (the :class:`~adapters.base.Dependency` entries marked ``needed``).
        self.mapping = options.get("mapping") or "faithful"
        if self.mapping not in MAPPINGS:
            raise AdapterOptionError(f"adapter {self.name!r}: mapping must be {' or '.join(MAPPINGS)}, "
                                     f"not {self.mapping!r}")
        self.faithful = self.mapping == "faithful"
        self.scale_ms = _int_option(self.name, "time-scale", options.get("time-scale"), 20)
        # a get without wait polls a moment for what a closing connection or a backout gives back (glue)
        self.empty_wait_ms = _int_option(self.name, "empty-wait", options.get("empty-wait"), 30 if self.faithful else 0)
        self.owned: BrokerServer | None = None
        #: The broker's lifecycle, when the kit started it (the run itself or ``mqconform brokers up``).
        self.server: BrokerServer | None = None
        self._locate(options)
        #: Restarts: off, on, or on for at most a number of them in this adapter's life (a run's), spent by
        #: searching cases only; by default a few on a broker the kit started (:data:`DEFAULT_RESTARTS`),
        #: none on one it was given.
        self.restart_given = options.get("restart") not in (None, "")
        self.restarts, limit = _restart_option(self.name, options.get("restart"))
        if not self.restart_given and self.server is not None:
            self.restarts, limit = True, DEFAULT_RESTARTS
        self.budget = RestartBudget(limit=limit)
        #: Faults from outside the client: connections cut by a proxy, abrupt restarts (adapters.brokers.nemesis).
        self.nemesis = _switch(self.name, "nemesis", options.get("nemesis"), False)
        self.proxy: CuttingProxy | None = None
        self.cut_next: set[str] = set()   # connections whose next call the proxy cuts in flight
        self.pause_next: dict[str, int] = {}   # ... with the broker paused meanwhile (tenths)
        self.broken: set[str] = set()     # connections cut, or given up unanswered, until the program ends them
        if self.nemesis:
            self.proxy = CuttingProxy(self.host, self.port)
            self.port = self.proxy.port
        if self.restarts and self.server is None:
            self._stop_owned()
            raise AdapterOptionError(
                f"adapter {self.name!r}: restart=on needs a broker the kit started (mqconform brokers up, "
                f"or no broker given so that the run starts its own), not the one at {self.address}")
        self.case = "c0"
        self.conns: dict[str, object] = {}
        self.handles: dict[str, Handle] = {}
        self.queues: dict[str, Definition] = {}
        #: Each handle's browse cursor (broker browsers keep none across calls).
        self.cursors: dict[str, Cursor] = {}
        self.started = time.monotonic()
        self.virtual = 0
        self.op_wall = time.time()
        self.concurrent = False
        #: Held while a call uses what the adapter shares between its program connections (see concurrent_calls).
        self.shared_lock = threading.RLock()
        try:
            self._probe()
        except BaseException:
            self._stop_owned()
            raise

    def _locate(self, options: dict) -> None:
        url = os.environ.get(f"MQCONFORM_{self.env_name}_URL", "")
        given = {k: options[k] for k in ("host", "port", "user", "password", "vhost") if options.get(k)}
        parsed = urlsplit(url) if url and not given else None
        if parsed is not None and parsed.scheme != self.scheme:
            raise AdapterOptionError(f"adapter {self.name!r}: MQCONFORM_{self.env_name}_URL must be a "
                                     f"{self.scheme}:// URL")
        self.host = given.get("host") or (parsed.hostname if parsed else None)
        port = given.get("port") or (str(parsed.port) if parsed and parsed.port else None)
        self.user = given.get("user") or (unquote(parsed.username) if parsed and parsed.username else self.default_user)
        self._password = given.get("password") or (
            unquote(parsed.password) if parsed and parsed.password else self.default_password)
        self.vhost = given.get("vhost") or (unquote(parsed.path[1:]) if parsed and len(parsed.path) > 1 else "/")
        recorded_server = self.server_class()
        recorded = recorded_server.address(self.port_key)
        if self.host or port:
            self.host = self.host or LOOPBACK
            self.port = _int_option(self.name, "port", port, self.default_port)
            if recorded == (self.host, self.port):
                self.server = recorded_server
            return
        if recorded is not None:
            self.host, self.port = recorded
            self.server = recorded_server
            return
        if os.environ.get(NO_PRIVATE_BROKER):
            # A job that runs its own broker for every task (a campaign): its broker is gone, and a
            # task must say so (and let the job start it again), not quietly start one of its own.
            raise AdapterUnavailable(f"adapter {self.name!r}: the {recorded_server.name} broker this job runs "
                                     f"is not running ({recorded_server.status().line()})")
        # Nothing configured and nothing running: a private broker for this run, configured as the mapping says.
        self.owned = self.server_class(Path(tempfile.mkdtemp(prefix=f"mqconform-{self.name}-")))
        self.owned.settings = self.mapping
        self.owned.owner = os.getpid()   # stopped when this process ends, even killed (adapters.brokers.reaper)
        try:
            self.owned.up()
        except BrokerControlError as exc:
            shutil.rmtree(self.owned.base, ignore_errors=True)
            raise AdapterUnavailable(str(exc)) from None
        atexit.register(self._stop_owned)
        self.server = self.owned
        self.host, self.port = self.owned.address(self.port_key)

    def _stop_owned(self) -> None:
        owned, self.owned = self.owned, None
        if owned is not None:
            owned.down()
            shutil.rmtree(owned.base, ignore_errors=True)

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"

    def _probe(self) -> None:
        """Fail at once, with one line naming the adapter and address, when the broker is not there."""
        try:
            self.version = self._broker_version()
        except AdapterUnavailable:
            raise
        except Exception as exc:  # noqa: BLE001 - any client failure means the broker is not usable
            raise AdapterUnavailable(
                f"adapter {self.name!r}: no usable broker at {self.address} ({_short(exc)})") from None

    # ----------------------------------------------------------- adapter protocol
    def capabilities(self) -> Capabilities:
        ops = [name for name, cls in L.types().items() if isinstance(cls, type) and issubclass(cls, L.Op)
               and (name != "Restart" or self.restarts) and (name != "CutConnection" or self.nemesis)
               and (name != "PauseQueueManager" or self.nemesis and self.server is not None)
               and name not in NO_EQUIVALENT and (name != "GetMatching" or self.can_select)]
        off = ("broker restarts are off (each takes seconds): --adapter-opt restart=on runs them "
               "on a broker the kit started" if self.restart_given else
               "broker restarts are off: the kit restarts only a broker it started (mqconform brokers up, or "
               "no broker given so that the run starts its own), not the one at " + self.address)
        # what a restart keeps, and the BackoutCount it keeps (both only ever shown across a restart)
        restart = {} if self.restarts else dict.fromkeys(RESTART_RULES, off)
        if not self.nemesis:
            restart.update({rule: "the nemesis is off: --adapter-opt nemesis=on cuts connections through a proxy "
                                  "(adapters/brokers/nemesis.py)" for rule in NEMESIS_RULES})
        not_applicable = {**{r.id: AREA_REASONS[r.area] for r in RULES.all() if r.area in AREA_REASONS},
                          **NOT_APPLICABLE_COMMON, **restart, **self.not_applicable}
        # each dependency in force with the rules it bears on here (a rule not applicable has no verdict it could make)
        depends_on = [attrs.evolve(d, rules=d.rules - set(not_applicable)) for d in SHIM_CODE + self.dependencies()
                      if self.in_force(d)]
        return Capabilities(
            areas=AREAS, platforms=(C.PLATFORM_DISTRIBUTED,), operations=ops, realtime=True,
            expiry_tolerance=self.expiry_tolerance, not_applicable=not_applicable,
            depends_on=[d for d in depends_on if d.rules],
        )

    not_applicable: dict[str, str] = {}

    def dependencies(self) -> tuple[Dependency, ...]:
        """The broker and client settings this adapter (or the broker the kit starts) relies on, and the code
        it has beyond :data:`SHIM_CODE`, whatever the mapping: stated in every report beside the verdicts they
        bear on (those in force, :meth:`in_force`)."""
        return ()

    #: The options :meth:`sibling_env` stands for (a worker of the run is given the broker by it, not by these).
    sibling_given = ("host", "port", "user", "password", "vhost")

    def sibling_env(self) -> dict[str, str]:
        """The environment that gives another process this adapter's broker (``MQCONFORM_<ADAPTER>_URL``): the
        workers of a run shared among jobs reach the same broker, never one of their own, and no password is on
        a command line.  (Restarts and the nemesis act on the whole broker: a run refuses them with jobs.)"""
        vhost = "/" + quote(self.vhost, safe="") if "vhost" in self.option_names else ""
        return {f"MQCONFORM_{self.env_name}_URL": f"{self.scheme}://{quote(self.user, safe='')}:"
                                                 f"{quote(self._password, safe='')}@{self.host}:{self.port}{vhost}"}

    def in_force(self, d: Dependency) -> bool:
        """Whether ``d`` is in force under this adapter's mapping: all are under ``faithful``; under ``defaults``
        those needed to express the calls, and the settings of a broker the kit did not configure for the
        defaults (the broker of ``mqconform brokers up``, or one given: its settings are its own)."""
        if self.faithful or d.needed:
            return True
        return d.kind == "broker setting" and d.what in self.broker_configured and (
            self.owned is None or self.owned.settings != "defaults")

    #: What of :meth:`dependencies` is the configuration of the broker the kit starts (not the adapter's doing):
    #: under ``mapping=defaults`` in force unless the run started its own broker with the defaults.
    broker_configured: frozenset[str] = frozenset()

    def resolved(self, md: L.MessageDescriptor, d: Definition) -> L.MessageDescriptor:
        """``md`` as the adapter sends it: MQ's queue defaults resolved (faithful), or as the application gave
        it, for the client's own defaults to apply (:meth:`client_defaults`)."""
        return resolve_defaults(md, d) if self.faithful else self.client_defaults(md)

    def client_defaults(self, md: L.MessageDescriptor) -> L.MessageDescriptor:
        """``md`` under ``mapping=defaults``: what the client sends for MQPRI_PRIORITY_AS_Q_DEF and
        MQPER_PERSISTENCE_AS_Q_DEF when an application leaves them to it (by default: left as they are, for the
        adapter's put to send no value)."""
        return md

    def message_id(self, md: L.MessageDescriptor) -> str:
        """The MsgId to send: the one given, or one generated for a blank (faithful; under ``defaults`` none)."""
        return md.msg_id or (uuid.uuid4().hex if self.faithful else "")
    #: Whether the nemesis may kill this broker for an abrupt restart (``Restart(abrupt=True)``).
    abrupt_restarts = True
    #: At most this many restarts in the adapter's life (None: no bound), and how many it made.
    restart_given = True

    def describe(self) -> dict:
        return {"system": self.system, "version": self.version, "address": self.address,
                "platform": C.PLATFORM_DISTRIBUTED, "platforms": [C.PLATFORM_DISTRIBUTED],
                "time_scale_ms_per_tenth": self.scale_ms,
                "broker": "private, started for this run" if self.owned else "given",
                "restarts": self.budget.describe() if self.restarts else "off", "nemesis": "on" if self.nemesis else "off",
                **({} if self.faithful else {"mapping": self.mapping})}

    #: Calls from several threads at once (``mqconform run --concurrency``): each client of a concurrent case has a
    #: broker connection of its own, the adapter's tables are only read while the clients run (their set-up made
    #: every queue, connection and handle), and what the adapter shares between connections (RabbitMQ's admin
    #: connection, ActiveMQ's) is used under :attr:`shared_lock`.
    concurrent_calls = True

    def start_case(self, case_id: str, platform: str | None = None, concurrent: bool = False) -> None:
        #: Whether this case's calls come from several threads at once.
        self.concurrent = concurrent
        self._close_all()
        self._reset_nemesis()
        self.case = f"{uuid.uuid4().hex[:8]}.{case_id}"
        self.budget.start_case()
        self.handles.clear()
        self.queues.clear()
        self.cursors.clear()
        self.started = time.monotonic()
        self.virtual = 0

    def phase(self, name: str) -> None:
        """``"search"``: the cases from now on search, and their restarts spend the run's bound; ``"replay"``:
        they replay what the latest searching case found, spending none of it (:class:`RestartBudget`)."""
        self.budget.phase(name)

    def end_case(self) -> None:
        self._close_all()
        self._reset_nemesis()
        self._broker_cleanup([d.name for d in self.queues.values()])
        self.queues.clear()

    def close(self) -> None:
        self._close_all()
        self._reset_nemesis()
        if self.proxy is not None:
            self.proxy.close()
        self._stop_owned()

    def elapsed_tenths(self) -> int:
        return int((time.monotonic() - self.started) * 1000 // self.scale_ms)

    def express(self, op: L.Op) -> L.Op | None:
        """``op`` as the broker can express it, or ``None`` when it cannot at all."""
        if type(op).__name__ in NO_EQUIVALENT:
            return None
        if getattr(op, "qmgr", "") and isinstance(op, (L.Connect, L.DefineQueue, L.InquireQueue, L.AlterQueueManager)):
            return None   # another queue manager of a queue-sharing group: a single broker has none

        if isinstance(op, L.DefineQueue):
            kept = {k: v for k, v in op.attrs if k in self.definable}
            if dict(op.attrs).get("USAGE", C.MQUS_NORMAL) != C.MQUS_NORMAL:
                return None  # transmission queues and MQXQH: no broker equivalent
            return attrs.evolve(op, attrs=kept)
        if isinstance(op, L.AlterQueue):
            kept = {k: v for k, v in op.attrs if k in self.definable - self.fixed_attributes}
            return attrs.evolve(op, attrs=kept) if kept else None
        if isinstance(op, L.InquireQueue):
            # CURDEPTH comes from the broker, the definable attributes from the definition.
            names = tuple(n for n in op.names if n == "CURDEPTH" or n in self.definable)
            return attrs.evolve(op, names=names) if names else None
        if isinstance(op, L.Open):
            if op.options & (C.MQOO_INPUT_EXCLUSIVE | C.MQOO_INPUT_AS_Q_DEF | C.MQOO_SET):
                return None  # exclusive input has no equivalent for a pulling consumer
            if op.options & C.MQOO_BROWSE and not self.can_browse:
                if op.options & ~(C.MQOO_BROWSE | C.MQOO_INQUIRE):
                    return attrs.evolve(op, options=op.options & ~C.MQOO_BROWSE)
                return None
            return op
        if isinstance(op, (L.Put, L.Put1)):
            md = op.md
            if op.xmit_header is not None or op.dlh is not None or md.format == C.MQFMT_XMIT_Q_HEADER:
                return None
            if not self.encodable(md):
                return None  # values this broker's client cannot even encode
            if op.options & C.MQPMO_SYNCPOINT and op.options & C.MQPMO_NO_SYNCPOINT:
                return None  # an invalid MQI call has no broker equivalent
            if isinstance(op, L.Put1) and op.qmgr:
                return None
            return op
        if isinstance(op, L.GetMatching) and (not self.can_select or op.match_options & ~C.MQMO_DEFINED):
            return None   # no selection, or MatchOptions the MQI refuses: no broker call to make
        if isinstance(op, L.Get):
            o = op.options
            if o & self.unsupported_gmo or (o & C.MQGMO_SYNCPOINT and o & C.MQGMO_NO_SYNCPOINT):
                return None
            if o & C.MQGMO_BROWSE_ANY and not self.can_browse:
                return None
            if o & C.MQGMO_WAIT and op.wait_interval < C.MQWI_UNLIMITED:
                return None
            return op
        if isinstance(op, L.Restart):
            if not self.restarts or op.abrupt and not (self.nemesis and self.abrupt_restarts):
                return None
            # once the run's restarts are spent, its cases go on without (replays: as the case they replay)
            return op if self.budget.allows() else None
        if isinstance(op, L.CutConnection):
            return op if self.nemesis else None
        if isinstance(op, L.PauseQueueManager):   # signals go to a broker the kit started
            return op if self.nemesis and self.server is not None else None
        if isinstance(op, (L.AlterQueueManager, L.RefreshExpiry)):
            return None
        if isinstance(op, (L.Connect, L.Disconnect, L.Close, L.Commit, L.Backout, L.AdvanceClock)):
            return op
        return None

    #: The priorities and the Expiry values the broker's client can carry, (lowest, highest), None where it has
    #: no bound: by default no priority below MQPRI_PRIORITY_AS_Q_DEF and no expiry below MQEI_UNLIMITED.
    priorities: tuple[int | None, int | None] = (C.MQPRI_PRIORITY_AS_Q_DEF, None)
    expiries: tuple[int | None, int | None] = (C.MQEI_UNLIMITED, None)

    def encodable(self, md: L.MessageDescriptor) -> bool:
        """Whether the broker's client can carry ``md``'s priority, expiry and persistence at all (a value it
        can carry is sent as it is, and what the broker makes of it is observed): within :attr:`priorities`
        and :attr:`expiries`, and one of MQ's persistence values."""
        def within(value: int, bounds: tuple[int | None, int | None]) -> bool:
            return (bounds[0] is None or value >= bounds[0]) and (bounds[1] is None or value <= bounds[1])

        return (within(md.priority, self.priorities) and within(md.expiry, self.expiries)
                and md.persistence in (C.MQPER_NOT_PERSISTENT, C.MQPER_PERSISTENT, C.MQPER_PERSISTENCE_AS_Q_DEF))

    #: Whether a get can select by MsgId and CorrelId (MQGET's MatchOptions): the adapter's ``_broker_get`` then
    #: takes ``criteria``, the (MsgId, CorrelId) a message must have ("" for any: :func:`selection`).
    can_select = False
    #: Attributes fixed when the broker queue is declared (cannot be altered afterwards).
    fixed_attributes: frozenset[str] = frozenset({"MSGDLVSQ", "MAXDEPTH"})
    #: Queue attributes this broker's queues can carry.
    definable: frozenset[str] = frozenset(DEFINABLE)
    can_browse = False
    #: MQGMO options this broker cannot express (a get using one is left out).
    unsupported_gmo = UNSUPPORTED_GMO

    def execute(self, op: L.Op) -> L.Observation:
        name = getattr(op, "conn", None)
        try:
            if not isinstance(op, L.Connect) and (name in self.broken or self.proxy is not None and (
                    name in self.cut_next or isinstance(op, (L.CutConnection, L.PauseQueueManager)))):
                return self._nemesis(op)
            return self._execute(op)
        except AdapterUnavailable:
            raise
        except Unanswered:
            # What the broker does then is the observation: the call fails as on a broken connection,
            # and so does every later call on it, until the program ends it.
            if name not in self.conns:
                raise BrokerLost(f"{self.name} broker at {self.address} did not answer "
                                 f"{type(op).__name__} within {self.call_deadline:g} s") from None
            self.broken.add(name)
            return L.Observation.of(C.MQRC_CONNECTION_BROKEN)
        except Exception as exc:  # noqa: BLE001
            if self._queue_gone(exc):
                # The broker has no such queue although the program defined it (RabbitMQ loses a
                # queue declared just before a kill): what MQ answers for a queue that does not
                # exist, an observation for the checker, not an error of the run.
                self._after_queue_gone(name)
                return L.Observation.of(C.MQRC_UNKNOWN_OBJECT_NAME)
            if self._lost(exc):
                raise BrokerLost(f"{self.name} broker at {self.address} went away during "
                                 f"{type(op).__name__}: {_short(exc)}") from None
            raise

    def _queue_gone(self, exc: Exception) -> bool:
        """Whether ``exc`` is the broker saying the queue the call named does not exist."""
        return False

    def _after_queue_gone(self, conn: str | None) -> None:
        """Make program connection ``conn`` usable again after the broker refused a call for a missing queue."""

    def _execute(self, op: L.Op) -> L.Observation:
        #: When this operation was issued (wall clock, as brokers stamp expiry times).
        self.op_wall = time.time()
        if isinstance(op, (L.Close, L.Open)) and op.handle:
            self.cursors.pop(op.handle, None)
        return carry_out(self, op)

    # Each operation's method (adapters.base.handler_for: ``_op_`` and its type's name).  A call on a connection
    # the program does not have, or a handle, is refused as MQ refuses it (_connection, _handle).

    def _connection(self, op: L.Op):
        """The broker connection of the program's connection ``op`` is made on (refused: MQRC_HCONN_ERROR)."""
        conn = self.conns.get(op.conn) if op.conn else None
        if conn is None:
            raise Refused(C.MQRC_HCONN_ERROR)
        return conn

    def _handle(self, op: L.Op) -> tuple:
        """The broker connection and the object handle ``op`` uses (refused: MQRC_HCONN_ERROR, then
        MQRC_HOBJ_ERROR for a handle the connection did not open)."""
        conn = self._connection(op)
        h = self.handles.get(op.handle)
        if h is None or h.conn != op.conn:
            raise Refused(C.MQRC_HOBJ_ERROR)
        return conn, h

    def _op_AdvanceClock(self, op: L.AdvanceClock) -> None:
        self.virtual += op.tenths
        delay = self.started + self.virtual * self.scale_ms / 1000 - time.monotonic()
        if delay > 0:
            time.sleep(delay)

    def _op_DefineQueue(self, op: L.DefineQueue) -> None:
        if op.queue in self.queues:
            raise Refused(C.MQRCCF_OBJECT_ALREADY_EXISTS)
        values = {name: default for name, (_, default) in L.QUEUE_ATTRIBUTES.items() if name in self.definable}
        values.update(dict(op.attrs))
        prefix = "prio." if values["MSGDLVSQ"] == C.MQMDS_PRIORITY else "fifo."
        d = Definition(name=f"{prefix}mqc.{self.case}.{op.queue}", attrs=values)
        self._broker_declare(d)
        self.queues[op.queue] = d

    def _op_AlterQueue(self, op: L.AlterQueue) -> None:
        d = self.queues.get(op.queue)
        if d is None:
            raise Refused(C.MQRC_UNKNOWN_OBJECT_NAME)
        d.attrs.update(dict(op.attrs))

    def _op_InquireQueue(self, op: L.InquireQueue) -> L.Observation:
        d = self.queues.get(op.queue)
        if d is None:
            raise Refused(C.MQRC_UNKNOWN_OBJECT_NAME)
        return L.Observation(attrs={n: (self._broker_depth(d) if n == "CURDEPTH" else d.attrs[n]) for n in op.names})

    def _op_Restart(self, op: L.Restart) -> None:
        self._restart(kill=op.abrupt)

    def _op_Connect(self, op: L.Connect) -> None:
        if op.conn in self.conns and op.conn not in self.broken:
            raise Refused(C.MQRC_HCONN_ERROR)
        self._end_broken(op.conn)
        with self.proxy.tagging(op.conn) if self.proxy else contextlib.nullcontext():
            self.conns[op.conn] = self._broker_connect(op.conn)

    def _op_Disconnect(self, op: L.Disconnect) -> L.Observation:
        conn = self._connection(op)
        answer = L.OK
        try:
            self._broker_disconnect(conn, abnormal=op.abnormal)
        except CommitBackedOut:
            # the commit MQDISC makes failed and the connection is closed: MQ's MQCC_WARNING and
            # MQRC_BACKED_OUT (what the broker kept of it is for later calls to show)
            answer = L.Observation.of(C.MQRC_BACKED_OUT)
        del self.conns[op.conn]
        for name in [n for n, h in self.handles.items() if h.conn == op.conn]:
            del self.handles[name]
        return answer

    def _op_Commit(self, op: L.Commit) -> L.Observation | None:
        try:
            self._broker_commit(self._connection(op))
        except CommitBackedOut:
            return L.Observation.of(C.MQRC_BACKED_OUT)
        return None

    def _op_Backout(self, op: L.Backout) -> None:
        self._broker_backout(self._connection(op))

    def _op_Open(self, op: L.Open) -> None:
        self._connection(op)
        if op.queue not in self.queues:
            raise Refused(C.MQRC_UNKNOWN_OBJECT_NAME)
        self.handles[op.handle] = Handle(conn=op.conn, queue=op.queue, options=op.options)

    def _op_Put1(self, op: L.Put1) -> L.Observation:
        conn = self._connection(op)
        if op.queue not in self.queues:
            raise Refused(C.MQRC_UNKNOWN_OBJECT_NAME)
        d = self.queues[op.queue]
        return self._broker_put(conn, d, op.body, self.resolved(op.md, d), op.options)

    def _op_Close(self, op: L.Close) -> None:
        self._handle(op)
        del self.handles[op.handle]

    def _op_Put(self, op: L.Put) -> L.Observation:
        conn, h = self._handle(op)
        if not h.options & C.MQOO_OUTPUT:
            raise Refused(C.MQRC_NOT_OPEN_FOR_OUTPUT)
        d = self.queues[h.queue]
        return self._broker_put(conn, d, op.body, self.resolved(op.md, d), op.options)

    def _op_Get(self, op: L.Get) -> L.Observation:
        conn, h = self._handle(op)
        browse = op.options & C.MQGMO_BROWSE_ANY
        if browse and not h.options & C.MQOO_BROWSE:
            raise Refused(C.MQRC_NOT_OPEN_FOR_BROWSE)
        if not browse and not h.options & C.MQOO_INPUT_ANY:
            raise Refused(C.MQRC_NOT_OPEN_FOR_INPUT)
        wait_ms = 0
        if op.options & C.MQGMO_WAIT:  # model time (ms, counted in whole tenths) on the broker's scale
            wait_ms = MAX_REAL_WAIT_MS if op.wait_interval == C.MQWI_UNLIMITED else min(
                MAX_REAL_WAIT_MS, op.wait_interval // 100 * self.scale_ms)
        criteria = selection(op)
        if criteria is not None:
            got = self._broker_get(conn, op.handle, self.queues[h.queue], op.options, wait_ms, criteria=criteria)
        else:
            got = self._broker_get(conn, op.handle, self.queues[h.queue], op.options, wait_ms)
        if got.rc == C.MQRC_NO_MSG_AVAILABLE and op.options & C.MQGMO_WAIT and op.wait_interval > 0:
            # MQ's get waited its whole interval, and so did the broker (up to MAX_REAL_WAIT_MS): the case's
            # clock stands that much later, or a later clock advance would not wait at all
            self.virtual += op.wait_interval // 100
        return got

    _op_GetMatching = _op_Get

    def browse_pick(self, handle: str, d: Definition, entries: list[tuple], held: set, options: int,
                    accept=None):
        """BROWSE_FIRST / BROWSE_NEXT over a snapshot of the queue, with the handle's cursor.

        ``entries`` are ``(message id, priority, payload)`` in the broker's browse
        order; messages held in units of work (``held``) are not on the queue for
        MQ.  Returns the payload browsed, or None, and moves the cursor.  On a
        priority queue, BROWSE_NEXT also returns a message that arrived since the
        last browse ahead of the cursor only if its priority is not higher (MQ's
        cursor stays where it is in priority order).  ``accept``: a browse that
        selects (MQGET's MatchOptions), the payloads it may return; the cursor
        passes the others on its way, as MQ's does.
        """
        visible = [e for e in entries if e[0] not in held and (accept is None or accept(e[2]))]
        cursor = self.cursors.get(handle)
        if options & C.MQGMO_BROWSE_FIRST or cursor is None:
            pick = visible[0] if visible else None
        else:
            pick = None
            prioritised = d.attrs["MSGDLVSQ"] == C.MQMDS_PRIORITY
            for e in visible:
                if e[0] in cursor.passed:
                    continue
                if e[0] in cursor.known or not prioritised or e[1] <= cursor.priority:
                    pick = e
                    break
        if pick is None:
            return None
        ids = [e[0] for e in entries]
        position = ids.index(pick[0])
        passed = set(ids[:position + 1])
        if cursor is not None and not options & C.MQGMO_BROWSE_FIRST:
            passed |= cursor.passed
        self.cursors[handle] = Cursor(message_id=pick[0], priority=pick[1], passed=passed, known=set(ids))
        return pick[2]

    def _restart(self, kill: bool = False) -> None:
        """The queue manager stops (``kill``: is killed) and starts: every connection ends with it, queues
        stay defined."""
        self._close_all()
        self._reset_nemesis()
        self.handles.clear()
        self.budget.ran()
        try:
            self.server.restart(kill=kill)
        except BrokerControlError as exc:
            raise BrokerLost(f"{self.name} broker at {self.address} did not come back from a restart: "
                             f"{exc}") from None
        self.host, self.port = self.server.address(self.port_key) or (self.host, self.port)
        if self.proxy is not None:   # same ports after a restart: the proxy still leads to the broker
            self.port = self.proxy.port
        self._probe()

    # ----------------------------------------------------------- the nemesis (adapters.brokers.nemesis)
    #: Seconds the broker is given to notice a cut connection and end it (backing out its unit of work) ...
    cut_settle = 0.3
    #: ... and after a pause, to catch up with what happened while it was stopped.
    resume_settle = 1.5
    #: Whether, after a cut, the case's queue depths are read until they stop changing (at most
    #: ``settle_limit`` seconds, reads ``settle_step`` apart): for brokers that requeue a cut
    #: connection's deliveries in their own time, which on a loaded machine is later than ``cut_settle``.
    settle_depths = False
    settle_step = 0.25
    settle_limit = 3.0
    #: Seconds a call may go unanswered before the client gives the connection up (adapters that can
    #: bound a call raise :class:`Unanswered`; others wait as their client does).
    call_deadline = 8.0

    def _nemesis(self, op: L.Op) -> L.Observation:
        name = op.conn
        if isinstance(op, L.PauseQueueManager):
            self.virtual += op.tenths   # the model's clock goes on by the pause
            if name in self.conns and name not in self.broken:
                self.cut_next.add(name)
                self.pause_next[name] = op.tenths
            else:   # no call to catch: the broker is only paused
                self._paused(op.tenths, lambda: None)
            return L.OK
        if isinstance(op, L.CutConnection):
            if name not in self.conns or name in self.broken:
                return L.OK   # nothing there to cut
            if op.in_flight:
                self.cut_next.add(name)
            else:
                self.proxy.cut(name)
                self.broken.add(name)
                self._settle_after_cut(self.cut_settle)
            return L.OK
        if isinstance(op, L.Disconnect) and (op.abnormal or name in self.broken):
            # The program ends (no call goes out), or calls MQDISC on a connection that is gone.
            self.cut_next.discard(name)
            was_broken = name in self.broken
            self._end_broken(name)
            if name in self.conns:
                self._execute(op)
            return L.OK if op.abnormal or not was_broken else L.Observation.of(C.MQRC_CONNECTION_BROKEN)
        if name in self.cut_next:
            # The call goes out and its connection breaks before the answer comes back.
            self.cut_next.discard(name)
            pause = self.pause_next.pop(name, None)
            self.proxy.arm(name)

            def call() -> L.Observation:
                try:
                    observed = self._execute(op)
                except Exception:  # noqa: BLE001 - the client finding its connection gone
                    observed = L.Observation.of(C.MQRC_CONNECTION_BROKEN)
                if not self.proxy.wait_cut(name, 5.0):
                    self.proxy.cut(name)   # the call needed no answer: the cut still follows it
                return observed

            # With a pause, the broker is stopped while the call waits, and the client (the proxy
            # standing in for its timeout) gives up before the broker answers again.
            observed = call() if pause is None else self._paused(pause, call)
            self.broken.add(name)
            # A broker just resumed first works through what piled up while it was stopped.
            self._settle_after_cut(self.cut_settle if pause is None else self.resume_settle)
            return observed

        handle = getattr(op, "handle", None)
        if handle and not isinstance(op, L.Open) and getattr(self.handles.get(handle), "conn", None) != name:
            # An MQ client checks the connection before the object handle: on a connection that is
            # gone, a call with a handle it does not hold fails for the connection, not the handle.
            return L.Observation.of(C.MQRC_CONNECTION_BROKEN)
        try:   # a call on a connection the proxy cut: whatever the client makes of it
            observed = self._execute(op)
        except Exception:  # noqa: BLE001 - the client finding its connection gone
            return L.Observation.of(C.MQRC_CONNECTION_BROKEN)
        if observed.rc in _HANDLE_CHECKS:
            # the adapter's own check of the handle's open options (MQ's queue manager makes it, the client never
            # reaches it on a connection that is gone): the client's answer is the broken connection
            return L.Observation.of(C.MQRC_CONNECTION_BROKEN)
        return observed

    def _settle_after_cut(self, seconds: float) -> None:
        """Give the broker ``seconds`` to end a cut connection, then (``settle_depths``) wait for stable depths."""
        time.sleep(seconds)
        if not self.settle_depths or not self.queues:
            return
        deadline = time.monotonic() + self.settle_limit
        last = None
        while time.monotonic() < deadline:
            try:
                depths = [self._broker_depth(d) for d in self.queues.values()]
            except Exception:  # noqa: BLE001 - the next call reports what the broker makes of it
                return
            if depths == last:
                return
            last = depths
            time.sleep(self.settle_step)

    def _paused(self, tenths: int, during):
        """Run ``during()`` with the broker stopped (SIGSTOP), for at least ``tenths`` of model time."""
        until = time.monotonic() + tenths * self.scale_ms / 1000
        try:
            self.server.pause()
        except BrokerControlError as exc:
            raise BrokerLost(f"{self.name} broker at {self.address} could not be paused: {exc}") from None
        try:
            result = during()
            time.sleep(max(0.0, until - time.monotonic()))
        finally:
            self.server.resume()
        return result

    def _end_broken(self, name: str) -> None:
        """Forget a connection the proxy cut: the client's objects are closed quietly."""
        if name not in self.broken:
            return
        self.broken.discard(name)
        conn = self.conns.pop(name, None)
        if conn is not None:
            try:
                self._broker_disconnect(conn, abnormal=True)
            except Exception:  # noqa: BLE001 - closing a dead connection
                pass
        for handle in [n for n, h in self.handles.items() if h.conn == name]:
            del self.handles[handle]
        if self.proxy is not None:
            self.proxy.forget(name)

    def _close_all(self) -> None:
        for conn in list(self.conns.values()):
            try:
                self._broker_disconnect(conn, abnormal=True)
            except Exception:  # noqa: BLE001 - closing a dead connection
                pass
        self.conns.clear()

    def _reset_nemesis(self) -> None:
        """Every connection has ended: nothing is cut or about to be any more."""
        if self.proxy is not None:
            for name in self.broken | self.cut_next:
                self.proxy.forget(name)
        self.broken.clear()
        self.cut_next.clear()
        self.pause_next.clear()

    # ----------------------------------------------------------- mapping helpers
    def expiry_ms(self, tenths: int) -> int | None:
        return None if tenths == C.MQEI_UNLIMITED else tenths * self.scale_ms

    def ttl_ms(self, tenths: int) -> int | None:
        """A put's time to live when sent now: its Expiry counts from when the put was issued.

        Sending can follow the call by a round trip or two (a producer or a destination
        created first); the model ages the message from the call, and so does the broker.
        """
        if tenths == C.MQEI_UNLIMITED:
            return None
        full = tenths * self.scale_ms
        if full <= 0:
            return full
        return max(1, full - int((time.time() - self.op_wall) * 1000))

    def expiry_left(self, expires_ms: int) -> int:
        """The Expiry a get returns for a broker expiry time (epoch ms, 0: never): what remained
        when the get was issued (the instant the model's clock stands for), in whole tenths rounded up."""
        if not expires_ms:
            return C.MQEI_UNLIMITED
        return -int(-(expires_ms - self.op_wall * 1000) // self.scale_ms)

    def tenths(self, ms: float) -> int:
        return int(ms // self.scale_ms)

    def properties(self, md: L.MessageDescriptor) -> dict[str, str]:
        """MQMD fields a broker has no own header for, carried as message properties."""
        props = {"mq-format": md.format, "mq-report": str(md.report), "mq-msgtype": str(md.msg_type),
                 "mq-feedback": str(md.feedback), "mq-replytoqmgr": md.reply_to_qmgr}
        if md.context is not None:
            c = md.context
            props.update({"mq-userid": c.user_id, "mq-applidentity": c.appl_identity_data,
                          "mq-putappltype": str(c.put_appl_type), "mq-putapplname": c.put_appl_name})
        return props

    @staticmethod
    def returned(body: str, props: dict, priority: int, persistent: bool, expiry: int, msg_id: str,
                 correl_id: str, reply_to: str, redelivered: int) -> L.ReturnedMessage:
        """The message as MQ returns it; ``redelivered`` is the broker's delivery count, or 0/1 for a flag."""
        context = None
        if "mq-userid" in props:
            context = L.MessageContext(user_id=props["mq-userid"], appl_identity_data=props.get("mq-applidentity", ""),
                                       put_appl_type=int(props.get("mq-putappltype", C.MQAT_UNKNOWN)),
                                       put_appl_name=props.get("mq-putapplname", ""))
        return L.ReturnedMessage(
            body=body, priority=priority,
            persistence=C.MQPER_PERSISTENT if persistent else C.MQPER_NOT_PERSISTENT,
            expiry=expiry, report=int(props.get("mq-report", C.MQRO_NONE)),
            msg_type=int(props.get("mq-msgtype", C.MQMT_DATAGRAM)),
            feedback=int(props.get("mq-feedback", C.MQFB_NONE)), format=props.get("mq-format", C.MQFMT_NONE),
            reply_to_q=reply_to, msg_id=msg_id, correl_id=correl_id,
            backout_count=int(redelivered), reply_to_qmgr=props.get("mq-replytoqmgr", ""),
            context=context,
        )


def resolve_defaults(md: L.MessageDescriptor, d: Definition) -> L.MessageDescriptor:
    """``md`` with MQPRI_PRIORITY_AS_Q_DEF and MQPER_PERSISTENCE_AS_Q_DEF replaced by the queue's defaults.

    MQ resolves both at put time from the queue definition (DEFPRTY, DEFPSIST); a broker queue has
    no such attributes, so the MQI layer resolves them from the definition it holds and the broker
    always receives explicit values.
    """
    changes = {}
    if md.priority == C.MQPRI_PRIORITY_AS_Q_DEF:
        changes["priority"] = d.attrs["DEFPRTY"]
    if md.persistence == C.MQPER_PERSISTENCE_AS_Q_DEF:
        changes["persistence"] = C.MQPER_PERSISTENT if d.attrs["DEFPSIST"] == C.MQPER_PERSISTENT \
            else C.MQPER_NOT_PERSISTENT
    return attrs.evolve(md, **changes) if changes else md


#: Reason codes of the adapter's own checks of a handle's open options (made before any call to the broker).
_HANDLE_CHECKS = frozenset({C.MQRC_NOT_OPEN_FOR_INPUT, C.MQRC_NOT_OPEN_FOR_OUTPUT, C.MQRC_NOT_OPEN_FOR_BROWSE})

def selection(op: L.Op) -> tuple[str, str] | None:
    """The (MsgId, CorrelId) a get ``op`` selects by ("" for any: MQMI_NONE and MQCI_NONE select every value), or
    None when it selects nothing: a plain get, MatchOptions naming no value, or a get of the message under the
    cursor (MQ ignores the selection there)."""
    if not isinstance(op, L.GetMatching) or op.options & (C.MQGMO_MSG_UNDER_CURSOR | C.MQGMO_BROWSE_MSG_UNDER_CURSOR):
        return None
    msg_id = op.msg_id if op.match_options & C.MQMO_MATCH_MSG_ID else ""
    correl_id = op.correl_id if op.match_options & C.MQMO_MATCH_CORREL_ID else ""
    return (msg_id, correl_id) if msg_id or correl_id else None


def selected(identity: tuple[str, str], criteria: tuple[str, str]) -> bool:
    """Whether a message of ``identity`` (MsgId, CorrelId) has each value ``criteria`` names ("" for any)."""
    return all(not want or have == want for have, want in zip(identity, criteria))


def _fail(rc: int) -> L.Observation:
    return L.Observation(cc=C.MQCC_FAILED, rc=rc)


def _int_option(adapter: str, key: str, text, default: int) -> int:
    if text in (None, ""):
        return default
    try:
        value = int(text)
    except (TypeError, ValueError):
        raise AdapterOptionError(f"adapter {adapter!r}: {key} must be a whole number, not {text!r}") from None
    if value < 1:
        raise AdapterOptionError(f"adapter {adapter!r}: {key} must be at least 1, not {text!r}")
    return value


#: Restarts a run makes by default on a broker the kit started (each takes seconds; replays spend none).
DEFAULT_RESTARTS = 3


def _restart_option(adapter: str, text) -> tuple[bool, int | None]:
    """``restart``: off, on, or a number N: on, for at most N restarts in the run (not given: off here, and
    :data:`DEFAULT_RESTARTS` on a broker the kit started)."""
    if isinstance(text, str) and text.isdigit() and int(text) > 0:
        return True, int(text)
    if text in (None, "", "on", "off"):
        return text == "on", None
    raise AdapterOptionError(f"adapter {adapter!r}: restart must be on, off or a number of restarts (at least 1), "
                             f"not {text!r}")


def _switch(adapter: str, key: str, text, default: bool) -> bool:
    if text in (None, ""):
        return default
    if text in ("on", "off"):
        return text == "on"
    raise AdapterOptionError(f"adapter {adapter!r}: {key} must be on or off, not {text!r}")


def _short(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text[:160]
