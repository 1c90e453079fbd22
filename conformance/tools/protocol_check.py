"""``mqconform protocol check``: a server of the JSON-lines protocol checked before a conformance run.

A server author's self-test: it speaks to the server as a run does (hello, cases,
every operation type the server declares, with ordinary and edge-case arguments,
``elapsed`` where time is real, shutdown) and checks the protocol alone: that each
answer is well formed, complete and consistent with what the server declared.  It
judges nothing of MQ's semantics (a get that returns the wrong message passes
here; a run reports it).  Each check passes or fails with the exact thing that was
wrong; a server that stops answering fails the check in flight, and the
checks after it are not run (the summary says so).

Pure orchestration over :class:`~adapters.subprocess.channel.JsonLinesChannel` and
the protocol's schemas: nothing here is shared with the adapter's run-time path
but the framing and the schemas, so a check fails where a run would stop.
"""

from __future__ import annotations

import shlex
import shutil
import tempfile
from pathlib import Path
from typing import Callable

import attrs

from adapters.base import Capabilities
from adapters.subprocess import capabilities_from, left_out, log_tail, schemas
from adapters.subprocess.channel import ChannelError, JsonLinesChannel
from reference_model import language as L
from reference_model import mqconst as C

PASS, FAIL, NOT_RUN = "pass", "fail", "not run"
STD = C.MQOO_INPUT_SHARED | C.MQOO_BROWSE | C.MQOO_OUTPUT | C.MQOO_INQUIRE


@attrs.frozen
class Check:
    name: str
    result: str
    detail: str = ""


class ServerGone(Exception):
    """The server stopped answering: the checks after this one are not run."""


def _core_case() -> list[tuple[str, L.Op]]:
    """One case of ordinary calls, each operation type of the core area at least once."""
    md = L.MessageDescriptor(correl_id="corr-1", format=C.MQFMT_STRING)
    return [
        ("define a queue", L.DefineQueue(queue="Q1")),
        ("define a queue with attributes", L.DefineQueue(queue="Q2", attrs={"MSGDLVSQ": C.MQMDS_FIFO, "MAXDEPTH": 3})),
        ("alter a queue", L.AlterQueue(queue="Q2", attrs={"DEFPRTY": 4})),
        ("connect", L.Connect(conn="c1")),
        ("connect a second time", L.Connect(conn="c2")),
        ("open", L.Open(conn="c1", handle="c1.Q1", queue="Q1", options=STD)),
        ("open on another connection", L.Open(conn="c2", handle="c2.Q1", queue="Q1", options=STD)),
        ("put", L.Put(conn="c1", handle="c1.Q1", body="m1", md=md, options=C.MQPMO_NO_SYNCPOINT)),
        ("put1", L.Put1(conn="c1", queue="Q1", body="m2", options=C.MQPMO_NO_SYNCPOINT)),
        ("put under syncpoint", L.Put(conn="c1", handle="c1.Q1", body="m3", options=C.MQPMO_SYNCPOINT)),
        ("inquire", L.InquireQueue(queue="Q1", names=("CURDEPTH", "IPPROCS", "OPPROCS", "MAXDEPTH"))),
        ("browse", L.Get(conn="c2", handle="c2.Q1", options=C.MQGMO_BROWSE_FIRST | C.MQGMO_NO_SYNCPOINT)),
        ("get", L.Get(conn="c2", handle="c2.Q1", options=C.MQGMO_NO_SYNCPOINT)),
        ("get that selects", L.GetMatching(conn="c2", handle="c2.Q1", options=C.MQGMO_NO_SYNCPOINT,
                                           match_options=C.MQMO_MATCH_CORREL_ID, correl_id="corr-1")),
        ("commit", L.Commit(conn="c1")),
        ("get under syncpoint", L.Get(conn="c2", handle="c2.Q1", options=C.MQGMO_SYNCPOINT)),
        ("back out", L.Backout(conn="c2")),
        ("get with a wait", L.Get(conn="c2", handle="c2.Q1", options=C.MQGMO_WAIT | C.MQGMO_NO_SYNCPOINT,
                                  wait_interval=100)),
        ("time passes", L.AdvanceClock(tenths=1)),
        ("close", L.Close(conn="c2", handle="c2.Q1")),
        ("disconnect", L.Disconnect(conn="c2")),
        ("end without a disconnect", L.Disconnect(conn="c1", abnormal=True)),
    ]


def _edge_case() -> list[tuple[str, L.Op]]:
    """Arguments a system may have no way to carry: each is answered (an observation, or declined)."""
    get = lambda options, **kw: L.Get(conn="c1", handle="c1.Q1", options=options, **kw)  # noqa: E731
    return [
        ("a second case starts from nothing", L.DefineQueue(queue="Q1")),
        ("connect", L.Connect(conn="c1")),
        ("open", L.Open(conn="c1", handle="c1.Q1", queue="Q1", options=STD)),
        ("a put of priority -2", L.Put(conn="c1", handle="c1.Q1", body="e1", md=L.MessageDescriptor(priority=-2))),
        ("a put of priority 12", L.Put(conn="c1", handle="c1.Q1", body="e2", md=L.MessageDescriptor(priority=12))),
        ("a put of persistence 3", L.Put(conn="c1", handle="c1.Q1", body="e3", md=L.MessageDescriptor(persistence=3))),
        ("a put with an expiry", L.Put(conn="c1", handle="c1.Q1", body="e4", md=L.MessageDescriptor(expiry=600))),
        ("a browse with a lock", get(C.MQGMO_BROWSE_FIRST | C.MQGMO_LOCK | C.MQGMO_NO_SYNCPOINT)),
        ("an unlock", get(C.MQGMO_UNLOCK | C.MQGMO_NO_SYNCPOINT)),
        ("a get under the cursor", get(C.MQGMO_MSG_UNDER_CURSOR | C.MQGMO_NO_SYNCPOINT)),
        ("a get under syncpoint if persistent", get(C.MQGMO_SYNCPOINT_IF_PERSISTENT)),
        ("a wait interval of -5", get(C.MQGMO_WAIT | C.MQGMO_NO_SYNCPOINT, wait_interval=-5)),
        ("a get with unknown match options", L.GetMatching(conn="c1", handle="c1.Q1", options=C.MQGMO_NO_SYNCPOINT,
                                                           match_options=256)),
        ("a put1 to an unknown queue", L.Put1(conn="c1", queue="NO.SUCH.QUEUE", body="e5")),
        ("an open of an unknown queue", L.Open(conn="c1", handle="c1.none", queue="NO.SUCH.QUEUE", options=STD)),
        ("a get on a handle never opened", L.Get(conn="c1", handle="c1.never", options=C.MQGMO_NO_SYNCPOINT)),
        ("a call on a connection never made", L.Put1(conn="c9", queue="Q1", body="e6")),
    ]


def _other_areas() -> list[tuple[str, Callable[[], L.Op]]]:
    """Operations of the other areas, one each (built lazily: a server that does not declare them is not sent them)."""
    return [
        ("define a process", lambda: L.DefineProcess(process="P1", appl_id="/bin/true")),
        ("alter the queue manager", lambda: L.AlterQueueManager(attrs={"TRIGINT": 1000})),
        ("define a remote queue", lambda: L.DefineRemoteQueue(queue="R1", rname="ORDERS", rqmname="FAR")),
        ("refresh expiry", lambda: L.RefreshExpiry(queues="*")),
        ("start a DLQ handler", lambda: L.StartDlqHandler(handler="H1", table="ACTION(KEEP)\n")),
        ("change its table", lambda: L.ChangeDlqTable(handler="H1", table="ACTION(DISCARD)\n")),
        ("run it", lambda: L.RunDlqHandler(handler="H1")),
        ("restart it", lambda: L.RestartDlqHandler(handler="H1")),
        ("describe a cluster queue manager", lambda: L.SetClusterQueueManager(name="QM1", clusters=("CL1",),
                                                                               local=True)),
        ("describe a cluster queue", lambda: L.SetClusterInstance(qmgr="QM1", queue="CQ", clusters=("CL1",))),
        ("describe a cluster channel", lambda: L.SetClusterChannel(name="TO.QM1", qmgr="QM1", clusters=("CL1",))),
        ("put to a cluster queue", lambda: L.ClusterPut(queue="CQ")),
    ]


def _faults() -> list[tuple[str, L.Op]]:
    """The nemesis's operations, last: each may end the case's connections or the queue manager itself."""
    return [
        ("connect", L.Connect(conn="c1")),
        ("cut a connection", L.CutConnection(conn="c1")),
        ("pause the queue manager", L.PauseQueueManager(conn="c1", tenths=1)),
        ("restart the queue manager", L.Restart()),
    ]


class _Session:
    def __init__(self, timeout: float, start_timeout: float, log: Path) -> None:
        self.timeout, self.start_timeout = timeout, start_timeout
        self.chan: JsonLinesChannel | None = None
        self.log = log
        self.ids = 0
        self.checks: list[Check] = []
        self.caps: Capabilities | None = None
        self.gone: str | None = None

    def record(self, name: str, ok: bool, detail: str = "") -> None:
        self.checks.append(Check(name, PASS if ok else FAIL, detail))

    def call(self, method: str, params: dict | None, timeout: float | None = None) -> dict:
        """The answer to one request (its schema not yet checked); ServerGone when the server stops answering."""
        if self.gone is not None:
            raise ServerGone(self.gone)
        self.ids += 1
        request = {"id": self.ids, "method": method}
        if params is not None:
            request["params"] = params
        try:
            self.chan.send(request)
            return self.chan.receive(self.timeout if timeout is None else timeout)
        except ChannelError as exc:
            tail = log_tail(self.log)
            self.gone = f"{exc}" + (f"; its last log line: {tail!r}" if tail and not self.chan.alive() else "")
            raise ServerGone(self.gone) from None

    def answer(self, name: str, method: str, params: dict | None, timeout: float | None = None) -> dict | None:
        """The result of a request that must be answered as the protocol says; the check failed (None) if not."""
        try:
            answer = self.call(method, params, timeout)
        except ServerGone as exc:
            self.record(name, False, str(exc))
            return None
        if answer.get("id") != self.ids:
            # every later answer would be taken for another request's: nothing after this can be checked
            self.gone = f"answered request {self.ids} with id {answer.get('id')!r}"
            self.record(name, False, self.gone)
            return None
        if "error" in answer and not schemas.problem("error", answer):
            self.record(name, False, f"the server reported an error: {' '.join(str(answer['error']['message']).split())[:200]}")
            return None
        why = schemas.problem(f"{method}.response", answer)
        if why:
            self.record(name, False, f"invalid answer to {method}: {why}")
            return None
        return answer["result"]


def check_server(command: str, timeout: float = 10.0, start_timeout: float = 30.0) -> list[Check]:
    """Every check of the protocol against the server ``command`` starts (ValueError: the command is empty or
    unparsable; OSError-like start failures are the first check's failure)."""
    argv = shlex.split(command)
    if not argv:
        raise ValueError("the server command is empty")
    workdir = Path(tempfile.mkdtemp(prefix="mqconform-check-"))
    s = _Session(timeout, start_timeout, workdir / "server.log")
    try:
        try:
            s.chan = JsonLinesChannel(argv, f"server {' '.join(argv)[:80]!r}", log=s.log)
        except ChannelError as exc:
            s.record("the server starts", False, str(exc))
            return s.checks
        _hello(s)
        if s.caps is not None:
            _case(s, "core calls", [(n, op) for n, op in _core_case() if s.caps.can(type(op))])
            _case(s, "edge-case arguments", [(n, op) for n, op in _edge_case() if s.caps.can(type(op))])
            # the other areas' calls: those declared, or (every operation declared) those of the areas declared
            others = [(n, op) for n, op in ((n, build()) for n, build in _other_areas())
                      if (s.caps.can(type(op)) if s.caps.operations is not None else _area_of(op) & set(s.caps.areas))]
            if others:
                _case(s, "calls of the other areas", others)
            faults = [(n, op) for n, op in _faults() if s.caps.can(type(op))]
            if any(not isinstance(op, L.Connect) for _, op in faults):
                _case(s, "the nemesis", faults)
            if s.gone is None:
                if s.caps.realtime:
                    _elapsed(s)
                _unknown_method(s)
            if s.gone is None:
                _shutdown(s)
        if s.gone is not None:
            s.checks.append(Check("the checks after it", NOT_RUN, "the server stopped answering"))
        return s.checks
    finally:
        if s.chan is not None:
            s.chan.close()
        shutil.rmtree(workdir, ignore_errors=True)


#: The operation types only a server declaring an area (or every operation) is sent, by area.
_AREAS = {"trigger": {"DefineProcess"}, "expiry": {"AlterQueueManager", "DefineRemoteQueue", "RefreshExpiry"},
          "dlq": {"StartDlqHandler", "ChangeDlqTable", "RunDlqHandler", "RestartDlqHandler"},
          "cluster": {"SetClusterQueueManager", "SetClusterInstance", "SetClusterChannel", "ClusterPut"}}


def _area_of(op: L.Op) -> set[str]:
    return {area for area, names in _AREAS.items() if type(op).__name__ in names}


def _hello(s: _Session) -> None:
    from conformance import __version__

    result = s.answer("hello", "hello", {"protocol": schemas.PROTOCOL, "kit": f"mqconform {__version__}"},
                      s.start_timeout)
    if result is None:
        return
    if result["protocol"] != schemas.PROTOCOL:
        s.record("hello", False, f"speaks protocol {result['protocol']}; the kit speaks {schemas.PROTOCOL}")
        return
    try:
        s.caps = capabilities_from(result["capabilities"])
    except (ValueError, KeyError) as exc:
        s.record("hello", False, f"declared impossible capabilities: {exc}")
        return
    unknown = sorted(set(s.caps.operations or ()) - {c.__name__ for c in L.OPERATIONS})
    if unknown:
        s.caps = None
        s.record("hello", False, f"declared operations the language does not have: {', '.join(unknown)}")
        return
    s.record("hello", True, f"{result['server']['name']} {result['server']['version']}: areas "
                            f"{', '.join(sorted(s.caps.areas))}, {len(s.caps.operations or L.OPERATIONS)} operation types")


def _case(s: _Session, title: str, steps: list[tuple[str, L.Op]]) -> None:
    if s.gone is not None:
        return
    platform = s.caps.platform
    if s.answer(f"{title}: start_case", "start_case", {"case": f"check{s.ids + 1}", "platform": platform}) is None:
        return
    s.record(f"{title}: start_case", True)
    for name, op in steps:
        result = s.answer(f"{title}: {name}", "execute", {"op": L.to_json(op)})
        if result is None:
            if s.gone is not None:
                return
            continue
        ok, detail = _judge(name, op, result, s)
        s.record(f"{title}: {name}", ok, detail)
    if s.answer(f"{title}: end_case", "end_case", None) is not None:
        s.record(f"{title}: end_case", True)


def _judge(name: str, op: L.Op, result: dict, s: _Session) -> tuple[bool, str]:
    """Whether an answer to ``op`` says what the protocol asks (never whether MQ would have said it)."""
    if "not_expressible" in result:
        reason = result["not_expressible"]
        return True, f"declined: {reason}"
    raw = result["observation"]
    try:
        obs = L.from_json(raw)
    except L.LanguageError as exc:
        return False, f"an invalid observation: {exc}"
    if name == "a second case starts from nothing" and obs.rc == C.MQRCCF_OBJECT_ALREADY_EXISTS:
        return False, "Q1 still existed: a case must start from nothing (no queues, connections or messages)"
    if obs.cc != C.MQCC_FAILED and C.completion_for(obs.rc) != obs.cc and obs.rc:
        return False, f"cc {obs.cc} with rc {obs.rc}: MQ completes that reason code with cc {C.completion_for(obs.rc)}"
    if obs.cc == C.MQCC_OK and obs.rc:
        return False, f"cc 0 (OK) with a reason code {obs.rc}"
    if isinstance(raw.get("message"), dict) and not isinstance(op, (L.Get, L.GetMatching)):
        return False, f"a message returned by {type(op).__name__}, which returns none"
    why = left_out(op, raw, s.caps.lacks)
    if why:
        return False, f"answered {why}"
    detail = f"cc {obs.cc} rc {obs.rc}" + (f", message {obs.message.body!r}" if obs.message is not None else "")
    return True, detail


def _elapsed(s: _Session) -> None:
    result = s.answer("elapsed", "elapsed", None)
    if result is not None:
        s.record("elapsed", True, f"{result['tenths']} tenths since start_case")


def _unknown_method(s: _Session) -> None:
    """A method a later protocol may add is answered with an error, never ignored or fatal."""
    name = "an unknown method is answered with an error"
    try:
        answer = s.call("no_such_method", None)
    except ServerGone as exc:
        s.record(name, False, str(exc))
        return
    if answer.get("id") != s.ids or schemas.problem("error", answer):
        s.record(name, False, f"answered {str(answer)[:120]}")
        return
    s.record(name, True, " ".join(str(answer["error"]["message"]).split())[:120])


def _shutdown(s: _Session) -> None:
    if s.answer("shutdown", "shutdown", None) is None:
        return
    try:
        code = s.chan.proc.wait(timeout=5)
    except Exception:  # noqa: BLE001 - subprocess.TimeoutExpired
        s.record("shutdown", False, "answered, but did not exit within 5 s")
        return
    s.record("shutdown", code == 0, "exit status 0" if code == 0 else f"exit status {code}")


def passed(checks: list[Check]) -> bool:
    return bool(checks) and all(c.result == PASS for c in checks)
