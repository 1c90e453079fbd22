"""What the kit costs against a real broker: the same operations through the adapter, checked against the
model, and through the broker's own client with no checking, side by side in one run.

The workload is a fixed round of six MQI operations on one queue and one
connection: a put and a get outside syncpoint, a put under syncpoint and its
commit, a get under syncpoint and its commit.  The kit runs it as a test case
does (a :class:`conformance.runner.session.Session`: the adapter's mapping, then the
model's allowed outcomes and the comparison); the raw client does what the
adapter does on the wire (the same channels or sessions, publishes, gets,
acknowledgements and commits) and nothing else.  The figure is the kit's
operations per second over the raw client's: how much of the broker's speed the
checking leaves.  Rounds alternate between the two, so a busy moment slows both.
"""

from __future__ import annotations

import time
import uuid

import attrs

from conformance.runner.collector import collector_tuned
from reference_model import language as L
from reference_model import mqconst as C

#: The adapters this figure measures, each with the raw client it is set against.
ADAPTERS = ("rabbitmq", "activemq")
OPS_PER_ROUND = 6


@attrs.frozen
class BrokerCost:
    adapter: str
    system: str
    rounds: int
    kit_ops_per_s: float
    raw_ops_per_s: float

    @property
    def ratio(self) -> float:
        return self.kit_ops_per_s / self.raw_ops_per_s if self.raw_ops_per_s else 0.0


def _kit_round(session, n: int) -> None:
    x = session.execute
    md = L.MessageDescriptor(priority=4, persistence=C.MQPER_NOT_PERSISTENT)
    for op in (L.Put(conn="a", handle="h", body=f"n{n}", md=md, options=C.MQPMO_NO_SYNCPOINT),
               L.Get(conn="a", handle="h", options=C.MQGMO_NO_SYNCPOINT),
               L.Put(conn="a", handle="h", body=f"s{n}", md=md, options=C.MQPMO_SYNCPOINT),
               L.Commit(conn="a"),
               L.Get(conn="a", handle="h", options=C.MQGMO_SYNCPOINT),
               L.Commit(conn="a")):
        x(op)


class _RawRabbit:
    """pika doing on the wire what the adapter does: a confirm channel for work outside syncpoint, a
    transaction channel for puts and gets under syncpoint (a get's ack goes in the transaction), and
    after each commit a round trip on the confirm channel (the adapter's, so that what it acknowledged
    is processed before the next call)."""

    def __init__(self, adapter) -> None:
        import pika

        self.pika = pika
        self.conn = pika.BlockingConnection(adapter._params())
        self.now = self.conn.channel()
        self.now.confirm_delivery()
        self.tx = self.conn.channel()
        self.tx.tx_select()
        self.queue = f"prio.mqc.bench-{uuid.uuid4().hex[:8]}.Q"
        self.now.queue_declare(self.queue, durable=True, arguments={"x-queue-type": "classic", "x-max-priority": 9})

    def round(self, n: int) -> None:
        props = self.pika.BasicProperties(priority=4, delivery_mode=1, message_id=uuid.uuid4().hex)
        self.now.basic_publish("", self.queue, f"n{n}".encode(), props, mandatory=True)   # put
        method, _, _ = self.now.basic_get(self.queue)                                      # get
        self.now.basic_ack(method.delivery_tag)
        self.tx.basic_publish("", self.queue, f"s{n}".encode(), props)                     # put, syncpoint
        self.tx.tx_commit()                                                                # commit
        self.now.basic_qos(prefetch_count=0)
        method, _, _ = self.tx.basic_get(self.queue)                                       # get, syncpoint
        self.tx.basic_ack(method.delivery_tag, multiple=True)                              # commit
        self.tx.tx_commit()
        self.now.basic_qos(prefetch_count=0)

    def close(self) -> None:
        try:
            self.now.queue_delete(self.queue)
        finally:
            self.conn.close()


class _RawActiveMQ:
    """The JMS client as the adapter drives it: a transacted and an auto-acknowledge session, pulling
    consumers, synchronous sends and acknowledgements."""

    def __init__(self, adapter) -> None:
        from adapters.activemq.openwire import _jms

        _, _, delivery, _ = _jms()
        self.delivery = delivery
        self.jms = adapter._open()
        name = f"prio.mqc.bench-{uuid.uuid4().hex[:8]}.Q"
        self.q_now = self.jms.now.createQueue(name)
        self.q_tx = self.jms.tx.createQueue(name)
        self.send_now = self.jms.now.createProducer(self.q_now)
        self.send_tx = self.jms.tx.createProducer(self.q_tx)

    def round(self, n: int) -> None:
        now, tx = self.jms.now, self.jms.tx
        self.send_now.send(now.createTextMessage(f"n{n}"), self.delivery.NON_PERSISTENT, 4, 0)
        consumer = now.createConsumer(self.q_now)
        consumer.receive(2000)
        consumer.close()
        self.send_tx.send(tx.createTextMessage(f"s{n}"), self.delivery.NON_PERSISTENT, 4, 0)
        tx.commit()
        consumer = tx.createConsumer(self.q_tx)
        consumer.receive(2000)
        tx.commit()
        consumer.close()

    def close(self) -> None:
        self.jms.connection.close()


RAW = {"rabbitmq": _RawRabbit, "activemq": _RawActiveMQ}


def measure(adapter_name: str, rounds: int = 100, options: dict | None = None) -> BrokerCost:
    """The kit's and the raw client's operations per second for ``rounds`` rounds each, interleaved."""
    from adapters.registry import create_adapter
    from conformance.runner.session import Session

    adapter = create_adapter(adapter_name, dict(options or {}))
    raw = None
    try:
        session = Session(adapter, "core", seed=0)
        session.start_case()
        for op in (L.DefineQueue(queue="Q", attrs=(("MSGDLVSQ", C.MQMDS_PRIORITY),)), L.Connect(conn="a"),
                   L.Open(conn="a", handle="h", queue="Q", options=C.MQOO_OUTPUT | C.MQOO_INPUT_SHARED)):
            session.execute(op)
        raw = RAW[adapter_name](adapter)
        kit = plain = 0.0
        # both sides as the kit's runs go: what earlier figures left alive is not walked by the collector
        with collector_tuned():
            for n in range(rounds):   # interleaved, a round each way
                began = time.perf_counter()
                _kit_round(session, n)
                kit += time.perf_counter() - began
                began = time.perf_counter()
                raw.round(n)
                plain += time.perf_counter() - began
        session.end_case()
        ops = rounds * OPS_PER_ROUND
        return BrokerCost(adapter=adapter_name, system=str(adapter.describe().get("version", "?")), rounds=rounds,
                          kit_ops_per_s=ops / kit, raw_ops_per_s=ops / plain)
    finally:
        if raw is not None:
            raw.close()
        adapter.close()


#: The kit's operations per second over the raw client's, at least.
GOAL_BROKER_COST = 0.5


def report(out, rounds: int = 100) -> list[BrokerCost]:
    """Print the figure for each broker that is installed (a private broker is started for it)."""
    from adapters.base import AdapterError

    out.write(f"Cost against the raw client: {OPS_PER_ROUND}-operation rounds (put and get outside syncpoint, put, "
              f"commit, get, commit) through the adapter with the model checking each step, over the same "
              f"operations through the broker's own client with no checking ({rounds} rounds each, interleaved)\n")
    return _table_of(out, lambda name: measure(name, rounds), (AdapterError,), lambda cost: (
        cost.adapter, cost.system, f"{cost.kit_ops_per_s:.0f}", f"{cost.raw_ops_per_s:.0f}", f"{cost.ratio:.2f}",
        "met" if cost.ratio >= GOAL_BROKER_COST else "NOT met"),
        ("adapter", "broker", "kit ops/s", "raw ops/s", "ratio", f"goal >= {GOAL_BROKER_COST}"))


def _table_of(out, measure_one, errors: tuple, row, headers) -> list:
    """Measure each installed broker (``measure_one(name)``; one that is not installed, or whose measuring raises
    one of ``errors``, is a line saying why it was not measured), print the rows as a table, return the figures."""
    from tabulate import tabulate

    from adapters.brokers import server

    rows, got = [], []
    for name in ADAPTERS:
        missing = server(name).installed()
        if missing:
            out.write(f"{name}: not measured ({missing})\n")
            continue
        try:
            figure = measure_one(name)
        except errors as exc:
            out.write(f"{name}: not measured ({exc})\n")
            continue
        got.append(figure)
        rows.append(row(figure))
    if rows:
        out.write(tabulate(rows, headers=headers, tablefmt="simple", disable_numparse=True) + "\n\n")
    return got


# ----------------------------------------------------------------------------------------------------------------
# Cases at once on one broker

@attrs.frozen
class BrokerJobs:
    """One run of ``area`` on a broker with one worker, one with ``jobs`` workers, the same budget each."""

    adapter: str
    jobs: int
    examples: int
    one_cases: int
    one_seconds: float
    many_cases: int
    many_seconds: float

    @property
    def one_rate(self) -> float:
        return self.one_cases / self.one_seconds

    @property
    def many_rate(self) -> float:
        return self.many_cases / self.many_seconds

    @property
    def ratio(self) -> float:
        """Cases per second with ``jobs`` workers over one worker's."""
        return self.many_rate / self.one_rate


def _timed_run(adapter_name: str, area: str, examples: int, seed: int, jobs: int, directory,
               options: tuple[str, ...] = ("restart=off",)) -> tuple[int, float]:
    """Cases run and seconds of one ``mqconform run`` (a private broker of its own, started before the clock)."""
    import json
    import subprocess
    import sys

    results = directory / f"{adapter_name}-{jobs}"
    argv = [sys.executable, "-m", "conformance.cli", "run", "--adapter", adapter_name, "--area", area,
            "--examples", str(examples), "--seed", str(seed), "--jobs", str(jobs),
            *(x for o in options for x in ("--adapter-opt", o)), "--results", str(results)]
    with open(directory / f"{adapter_name}-{jobs}.log", "w", encoding="utf-8") as log:
        code = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                              timeout=JOBS_RUN_LIMIT).returncode
    if code not in (0, 1):
        raise RuntimeError(f"mqconform run --jobs {jobs} ended with exit {code} (its output: {log.name})")
    record = json.loads((results / "run.json").read_text(encoding="utf-8"))
    return record["examples_run"], record["ended"] - record["started"]


#: Seconds one run of the figure may take before it is stopped.
JOBS_RUN_LIMIT = 1800
#: Workers of the concurrent side: twice the cores of this machine, since a broker run waits more than it computes.
BROKER_JOBS = 4


def measure_jobs(adapter_name: str, directory, jobs: int = BROKER_JOBS, area: str = "core", examples: int = 40,
                 seed: int = 1, options: tuple[str, ...] = ("restart=off",)) -> BrokerJobs:
    """``area`` on ``adapter_name``'s broker with one worker, then with ``jobs`` (each run its own private broker;
    ``options`` given to both as ``--adapter-opt``)."""
    directory.mkdir(parents=True, exist_ok=True)
    one = _timed_run(adapter_name, area, examples, seed, 1, directory, options)
    many = _timed_run(adapter_name, area, examples, seed, jobs, directory, options)
    return BrokerJobs(adapter=adapter_name, jobs=jobs, examples=examples, one_cases=one[0], one_seconds=one[1],
                      many_cases=many[0], many_seconds=many[1])


#: Cases per second with BROKER_JOBS workers over one worker's, at least.
GOAL_BROKER_JOBS = 2.0


def report_jobs(out, examples: int = 40) -> list[BrokerJobs]:
    """Print the figure for each broker that is installed."""
    import tempfile
    from pathlib import Path

    out.write(f"Cases at once on one broker: the core area ({examples} cases, seed 1, no restarts) run by one worker "
              f"and by {BROKER_JOBS} (mqconform run --jobs {BROKER_JOBS}: each worker its own connections and "
              f"queues on the same broker), cases run (searching and shrinking) per second each way\n")
    with tempfile.TemporaryDirectory(prefix="mqconform-bench-") as tmp:
        return _table_of(out, lambda name: measure_jobs(name, Path(tmp), examples=examples),
                         (RuntimeError, OSError, ValueError, KeyError), lambda figure: (
            figure.adapter, f"{figure.one_cases} in {figure.one_seconds:.0f} s",
            f"{figure.many_cases} in {figure.many_seconds:.0f} s", f"{figure.one_rate:.2f}", f"{figure.many_rate:.2f}",
            f"{figure.ratio:.2f}", "met" if figure.ratio >= GOAL_BROKER_JOBS else "NOT met"),
            ("adapter", "one worker", f"{BROKER_JOBS} workers", "cases/s (1)", f"cases/s ({BROKER_JOBS})", "ratio",
             f"goal >= {GOAL_BROKER_JOBS:g}"))
