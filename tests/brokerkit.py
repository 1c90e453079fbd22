"""Helpers for the tests that run the kit against a real broker the test starts itself."""

from __future__ import annotations

import os
import subprocess
import sys
import time

from reference_model import language as L
from reference_model import mqconst as C
from reference_model.rules import RULES


def mqconform(*argv, env=None, timeout=300):
    """``mqconform ARGV`` as a separate process under a deadline: (exit code, stdout, stderr, seconds)."""
    started = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "conformance.cli", *map(str, argv)], capture_output=True,
                          text=True, timeout=timeout, stdin=subprocess.DEVNULL, env={**os.environ, **(env or {})})
    return proc.returncode, proc.stdout, proc.stderr, time.monotonic() - started


def assert_rules_reported(rows: list[dict], areas: list[str]) -> None:
    """Every rule of the areas run has a record; a rule of another area appears only as a failure
    (a case of one area may break another's rule, as a core put with an expiry may break expiry's),
    never as a verdict nobody asked for; every not-applicable verdict gives its reason."""
    wanted = {rule.id for area in areas for rule in RULES.all(area)}
    assert wanted <= {r["rule"] for r in rows}, wanted - {r["rule"] for r in rows}
    assert all(r["verdict"] in ("fail", "one of") for r in rows if r["rule"] not in wanted), \
        [r for r in rows if r["rule"] not in wanted]
    assert all(r.get("not_applicable") for r in rows if r["verdict"] == "not applicable")


def put(conn, handle, body, options=C.MQPMO_NO_SYNCPOINT, **md):
    return L.Put(conn=conn, handle=handle, body=body, options=options, md=L.MessageDescriptor(**md))


def get(conn, handle, options=C.MQGMO_NO_SYNCPOINT):
    return L.Get(conn=conn, handle=handle, options=options)


def two_programs_and_mqdisc(adapter, queue_attrs) -> None:
    """A queue of ``queue_attrs`` opened by programs ``a`` and ``b`` (handles named as their connections);
    ``a`` puts under syncpoint and disconnects normally: MQ's MQDISC commits, so ``b`` then gets "tx" (a
    system that rolls back gives ``b`` nothing: the caller says which it expects)."""
    x = adapter.execute
    assert x(L.DefineQueue(queue="Q", attrs=queue_attrs)) == L.OK
    for conn in ("a", "b"):
        assert x(L.Connect(conn=conn)) == L.OK
        assert x(L.Open(conn=conn, handle=conn, queue="Q", options=C.MQOO_OUTPUT | C.MQOO_INPUT_SHARED)) == L.OK
    assert x(put("a", "a", "tx", C.MQPMO_SYNCPOINT)) == L.OK
    assert x(L.Disconnect(conn="a")) == L.OK


def restart_history(session, persistence, abrupt=False):
    """Put one message of ``persistence`` on a FIFO queue, restart, and get (the get's observation)."""
    for op in (L.DefineQueue(queue="F", attrs=(("MSGDLVSQ", C.MQMDS_FIFO),)), L.Connect(conn="a"),
               L.Open(conn="a", handle="h", queue="F", options=C.MQOO_OUTPUT | C.MQOO_INPUT_SHARED),
               put("a", "h", "kept?", persistence=persistence), L.Restart(abrupt=abrupt), L.Connect(conn="a"),
               L.Open(conn="a", handle="h2", queue="F", options=C.MQOO_INPUT_SHARED)):
        assert session.execute(op) == L.OK, op
    return session.execute(get("a", "h2"))


def check_restart_matches_mq(adapter_class, broker, monkeypatch, abrupt=False) -> None:
    """With restart=on, a restart keeps persistent messages and drops the others (CORE-32), and the broker is back.

    ``abrupt``: the nemesis kills the broker (SIGKILL) instead of stopping it.
    """
    from conformance.runner.session import Session

    monkeypatch.setenv("MQCONFORM_RUN_DIR", str(broker.base))   # the broker is one the kit started
    adapter = adapter_class(restart="on", nemesis="on" if abrupt else "off")
    try:
        session = Session(adapter, "core", seed=0)
        for persistence, body in ((C.MQPER_PERSISTENT, "kept?"), (C.MQPER_NOT_PERSISTENT, None)):
            session.start_case()
            obs = restart_history(session, persistence, abrupt)
            assert (obs.message.body if obs.message else None) == body, obs
            session.end_case()
        assert session.coverage.checked["CORE-32"] >= 2
        assert broker.status().ready
    finally:
        adapter.close()


def running_broker(name, directory):
    """A private broker in ``directory``, stopped by PID when the generator is closed (a fixture body)."""
    from adapters.brokers import server

    srv = server(name, directory)
    srv.owner = os.getpid()
    srv.up()
    try:
        yield _StartedOnUse(srv)
    finally:
        srv.down()


class _StartedOnUse:
    """A module's shared broker, started again if an earlier test left it down (one failure, not a cascade)."""

    def __init__(self, srv) -> None:
        self._srv = srv

    def address(self, port: str = "main"):
        if not self._srv.status().ready:
            self._srv.up()
        return self._srv.address(port)

    def __getattr__(self, name):
        return getattr(self._srv, name)


def check_priority_fifo_and_units_of_work(adapter, open_options=0) -> None:
    """The mapping every real-broker adapter must get right, on a fresh case of ``adapter``.

    Two queues, PRIORITY (highest first) and FIFO (arrival order whatever the
    priority); a put under syncpoint invisible to others until its commit; a get
    under syncpoint backed out comes back with BackoutCount 1.  Leaves the case
    open on connections ``a`` and ``b`` with handles ``aP aF bP bF``, FIFO queue empty.
    """
    x = adapter.execute
    assert x(L.DefineQueue(queue="P", attrs=(("MSGDLVSQ", C.MQMDS_PRIORITY),))) == L.OK
    assert x(L.DefineQueue(queue="F", attrs=(("MSGDLVSQ", C.MQMDS_FIFO),))) == L.OK
    for conn in ("a", "b"):
        assert x(L.Connect(conn=conn)) == L.OK
        for q in ("P", "F"):
            assert x(L.Open(conn=conn, handle=f"{conn}{q}", queue=q,
                            options=C.MQOO_OUTPUT | C.MQOO_INPUT_SHARED | open_options)) == L.OK
    for body, prio in (("low", 1), ("high", 7), ("mid", 4)):
        assert x(put("a", "aP", body, priority=prio)) == L.OK
        assert x(put("a", "aF", body, priority=prio)) == L.OK
    if open_options & C.MQOO_BROWSE:  # a browse does not remove the message
        assert x(get("b", "bP", C.MQGMO_BROWSE_FIRST)).message.body == "high"
    assert [x(get("b", "bP")).message.body for _ in range(3)] == ["high", "mid", "low"]
    assert [x(get("b", "bF")).message.body for _ in range(3)] == ["low", "high", "mid"]
    assert x(get("b", "bF")).rc == C.MQRC_NO_MSG_AVAILABLE
    assert x(put("a", "aF", "tx", options=C.MQPMO_SYNCPOINT)) == L.OK
    assert x(get("b", "bF")).rc == C.MQRC_NO_MSG_AVAILABLE
    assert x(L.Commit(conn="a")) == L.OK
    first = x(get("b", "bF", C.MQGMO_SYNCPOINT))
    assert first.message.body == "tx" and first.message.backout_count == 0
    assert x(L.Backout(conn="b")) == L.OK
    again = x(get("b", "bF", C.MQGMO_SYNCPOINT))
    assert again.message.body == "tx" and again.message.backout_count == 1


#: Values outside MQ's ranges that a broker client may still carry: each put with the rule that judges it.
OUT_OF_RANGE = (("CORE-08", {"priority": 42}), ("CORE-09", {"priority": -2}), ("EXP-10", {"expiry": 0}),
                ("EXP-10", {"expiry": -5}))


def check_out_of_range_values_reach_the_broker(adapter) -> list[L.Observation]:
    """Priorities above 9 or below -1 and an Expiry of zero or less are sent as they are (the client takes
    them), so their rules are run, not declared not applicable: every put is expressed and answered, and a
    get shows what the broker made of the first.  Returns the gets' observations, in put order."""
    x = adapter.execute
    assert x(L.DefineQueue(queue="R", attrs=(("MSGDLVSQ", C.MQMDS_PRIORITY),))) == L.OK
    assert x(L.Connect(conn="a")) == L.OK
    assert x(L.Open(conn="a", handle="h", queue="R", options=C.MQOO_OUTPUT | C.MQOO_INPUT_SHARED)) == L.OK
    for rule, md in OUT_OF_RANGE:
        assert rule not in adapter.not_applicable, rule
        op = put("a", "h", f"{rule}:{md}", **md)
        assert adapter.express(op) == op, (rule, md)
        assert x(op).cc != C.MQCC_FAILED, (rule, md)   # taken by client and broker alike
    got = []
    for _ in OUT_OF_RANGE:
        obs = x(get("a", "h"))
        if obs.message is None:
            break
        got.append(obs)
    return got


def check_a_fruitless_wait_counts_on_the_clock(adapter) -> None:
    """A waiting get that finds nothing took its whole interval on MQ's clock: a message put after it with a
    short Expiry, then a clock advance longer than that Expiry, is gone (or shows no time left) when got.
    Run as a run runs it (the session feeds the time that really passed to the model, and checks each step):
    a departure raises."""
    from conformance.runner.session import Session

    session = Session(adapter, "expiry", seed=0)
    session.start_case()
    x = session.execute
    assert x(L.DefineQueue(queue="W")) == L.OK
    assert x(L.Connect(conn="a")) == L.OK
    assert x(L.Open(conn="a", handle="a", queue="W", options=C.MQOO_OUTPUT | C.MQOO_INPUT_SHARED)) == L.OK
    waited = x(L.Get(conn="a", handle="a", options=C.MQGMO_WAIT | C.MQGMO_NO_SYNCPOINT, wait_interval=1500))
    assert waited.rc == C.MQRC_NO_MSG_AVAILABLE
    assert x(put("a", "a", "short", expiry=3)) == L.OK
    assert x(L.AdvanceClock(tenths=5)) == L.OK
    got = x(L.Get(conn="a", handle="a", options=C.MQGMO_NO_SYNCPOINT))
    assert got.rc == C.MQRC_NO_MSG_AVAILABLE or got.message.expiry <= 1, got
    session.end_case()


def check_crash_campaign(adapter: str, tmp_path) -> None:
    """``mqconform crash`` on a private broker of its own: orderly restarts and kills (the nemesis), the broker's
    start counted in the budget; every message of every schedule classed, and nothing left running."""
    import json

    import psutil

    env = {"MQCONFORM_RUN_DIR": str(tmp_path / "empty-run-dir"), "TMPDIR": str(tmp_path)}
    budget = 0.75 * 60
    code, out, err, seconds = mqconform("crash", "--adapter", adapter, "--adapter-opt", "nemesis=on", "--minutes",
                                        "0.75", "--seed", "2", "--results", tmp_path / "c", env=env, timeout=240)
    assert code in (0, 1), out + err
    assert seconds <= budget * 1.1 + 5, (seconds, out)   # (+5: the interpreter's start and the broker's stop)
    data = json.loads((tmp_path / "c" / "crash.json").read_text())
    assert data["schedules"] >= 1 and sum(data["classes"].values()) >= data["schedules"] - data["departed"]
    assert data["system"]["broker"].startswith("private")
    left = [p for p in psutil.process_iter(["cmdline", "environ"])
            if str(tmp_path) in " ".join(p.info.get("cmdline") or [])
            or str(tmp_path) in json.dumps(p.info.get("environ") or {})]
    assert not left, [p.info["cmdline"] for p in left]


def check_selection(adapter) -> None:
    """Gets and browses that select by MsgId and CorrelId (MQGET's MatchOptions) return what MQ's do, checked
    against the model: MQMI_NONE selects any MsgId; a selection that matches nothing finds nothing; MatchOptions
    the MQI does not define have no broker call (CORE-54 not applicable, said)."""
    from conformance.checker.sequential import check_history

    def md(msg_id="", correl_id=""):
        return L.MessageDescriptor(msg_id=msg_id, correl_id=correl_id)

    def matching(options, msg_id="", correl_id="", match=C.MQMO_MATCH_MSG_ID | C.MQMO_MATCH_CORREL_ID):
        return L.GetMatching(conn="a", handle="a1", options=options | C.MQGMO_NO_SYNCPOINT, msg_id=msg_id,
                             correl_id=correl_id, match_options=match)

    browse_first, browse_next = C.MQGMO_BROWSE_FIRST, C.MQGMO_BROWSE_NEXT
    ops = [L.DefineQueue(queue="S"), L.Connect(conn="a"),
           L.Open(conn="a", handle="a1", queue="S", options=C.MQOO_OUTPUT | C.MQOO_INPUT_SHARED | C.MQOO_BROWSE),
           *[L.Put(conn="a", handle="a1", body=f"m{i}", md=md(f"ID{i}", correl), options=C.MQPMO_NO_SYNCPOINT)
             for i, correl in enumerate(["A", "B", "A", "B"], start=1)],
           matching(browse_first, correl_id="B"), matching(browse_next, correl_id="B"),
           matching(browse_next, correl_id="B"),
           matching(0, correl_id="A"), matching(0, msg_id="ID4", correl_id="B"),
           matching(0, msg_id="ID4"), matching(0, correl_id="A", match=C.MQMO_MATCH_CORREL_ID),
           matching(0, msg_id="", correl_id="B")]
    adapter.start_case("select")
    history = [(op, adapter.execute(op)) for op in ops]
    adapter.end_case()
    bodies = [o.message.body if o.message is not None else o.rc for _, o in history[7:]]
    assert bodies == ["m2", "m4", C.MQRC_NO_MSG_AVAILABLE, "m1", "m4", C.MQRC_NO_MSG_AVAILABLE, "m3", "m2"], bodies
    checks = check_history(C.PLATFORM_DISTRIBUTED, history)
    assert all(c.mismatch is None for c in checks), [c.mismatch for c in checks if c.mismatch]
    assert {"CORE-51", "CORE-52"} <= {r for c in checks for r in c.rules}
    # MatchOptions the MQI does not define: no broker call to make, and CORE-54 says so
    assert adapter.express(matching(0, msg_id="ID1", match=C.MQMO_MATCH_MSG_ID | 1 << 10)) is None
    assert "CORE-54" in adapter.capabilities().not_applicable


def check_concurrent_clients(adapter, address_opts: list[str], tmp_path) -> None:
    """Concurrent cases on a broker: three clients on connections of their own overlap (the adapter takes their
    calls from threads at once); only the kind of case the broker can express is drawn (no exclusive input opens,
    no triggering); ``mqconform run --concurrency 3 --area core`` ends with a verdict for every core rule, the
    not-applicable ones with their reason, every race's rules failed.  Each race's shrink is bounded at 30 s (the
    verdicts are this test's; what shrinking finds is test_concurrent's): shrinking a rare race of
    ActiveMQ over STOMP in 600 cases, with no bound in time, once took the run past 400 s."""
    import json

    from conformance.checker.linearizable import INDETERMINATE, check
    from conformance.runner.concurrent import after_ops, run_case, runnable_kinds, setup_ops

    names = ["a", "b", "c"]
    assert runnable_kinds(adapter, names, 2) == ("queue",)
    setup = setup_ops(names, 2)
    scripts = {n: [put(n, f"{n}1", f"{n}{k}") for k in range(3)] + [get(n, f"{n}1") for _ in range(3)] for n in names}
    case = run_case(adapter, "concurrent-broker", C.PLATFORM_DISTRIBUTED, setup, scripts,
                    after=after_ops("queue", setup, scripts))
    assert len(case.events) == 18 and all(e.observed is not None for e in case.events)
    overlapping = sum(1 for e in case.events for f in case.events
                      if e.client < f.client and e.invoked < f.returned and f.invoked < e.returned)
    assert overlapping > 0, "the clients' calls never overlapped"
    result = check(C.PLATFORM_DISTRIBUTED, case.setup, case.events, case.after,
                   expiry_tolerance=adapter.capabilities().expiry_tolerance)
    assert result.verdict != INDETERMINATE
    code, out, err, _ = mqconform("run", "--adapter", adapter.name, *address_opts, "--concurrency", "3", "--area",
                                  "core", "--examples", "8", "--seed", "1", "--shrink-seconds", "30",
                                  "--results", tmp_path / "r", timeout=400)
    assert code in (0, 1), out + err
    rows = [json.loads(line) for line in (tmp_path / "r" / "rules.jsonl").read_text().splitlines()]
    assert_rules_reported(rows, ["core"])
    verdicts = {r["rule"]: r["verdict"] for r in rows}
    assert verdicts["CORE-21"] == "not applicable"   # no browse locks: said, never failed
    run = json.loads((tmp_path / "r" / "run.json").read_text())
    assert run["concurrency"] == 3 and (code == 1) == bool(run["races"]), out
    for path in run["races"]:
        race = json.loads((tmp_path / "r" / path).read_text())
        assert race["rules"] and race_counted(race, verdicts), (race["rules"], race.get("one_of"))
        assert not any(step["op"]["type"] == "DefineProcess" for step in race["setup"])


def race_counted(race: dict, verdicts: dict) -> bool:
    """Whether a run's verdicts (rule: verdict) count a race file's rules: each failed; for a race that breaks one
    of several rules (two orders of its calls, each breaking its own), each *one of*, or one of them failed by a
    race of its own (which then explains this one)."""
    if not race.get("one_of"):
        return all(verdicts[r] == "fail" for r in race["rules"])
    return any(verdicts[r] == "fail" for r in race["rules"]) or all(verdicts[r] == "one of" for r in race["rules"])
