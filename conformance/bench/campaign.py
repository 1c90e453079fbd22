"""The campaign figure of ``mqconform bench``: work per second on Spark local[N], local[1] and one plain process.

The same tasks (every area on each platform, each sized by time as a time-boxed
campaign's are, so that every area gets the same share of the time) are run three ways: one after another in this process, then by the campaign driver
on Spark ``local[1]`` and on ``local[N]`` (N the machine's cores).  Work is
counted in examples, so the figure is examples per second, and the ratios are
what matter.  While each runs, a sampler adds up the CPU time of this process
and everything it started, and of everything else on the machine: the first
says how many cores the campaign kept busy, the second whether the machine
gave it its cores at all (another job running makes a ratio meaningless, and
the report says so instead of printing one).
"""

from __future__ import annotations

import os
import tempfile
import threading
import time
from pathlib import Path

import attrs
import psutil

#: Seconds per task (time-boxed campaigns use a minute; a few seconds keep the figure quick) ...
TASK_SECONDS = 1.5
#: ... and tasks per area and platform: enough that the last task's wait for a free core is small.
TASKS_PER_PAIR = 3
#: Share of a core other processes may use while a figure is taken before it is called unreliable.
BUSY_ELSEWHERE = 0.25
#: Rounds of the three ways, interleaved; the fastest of each is kept (with two, one run in five
#: read local[2] 1.64x local[1] where the others read 1.81-2.09: the machine's speed drifts).
ROUNDS = 3
OPTIONS = {}


@attrs.frozen
class Measured:
    how: str
    seconds: float
    examples: int
    cores_busy: float      # CPU seconds of this process tree per wall second
    elsewhere: float       # CPU seconds of every other process per wall second
    startup: float = 0.0   # Spark's session start, not counted in ``seconds``

    @property
    def rate(self) -> float:
        return self.examples / self.seconds if self.seconds else 0.0


class Sampler:
    """CPU time used by this process tree and by the rest of the machine, between start() and stop()."""

    def __init__(self, interval: float = 0.2) -> None:
        self.interval = interval
        self.me = psutil.Process()
        self._seen: dict[int, float] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _tree(self) -> float:
        procs = [self.me]
        try:
            procs += self.me.children(recursive=True)
        except psutil.Error:
            pass
        for p in procs:
            try:
                t = p.cpu_times()   # its own time only: a reaped child's was counted while it ran
                self._seen[p.pid] = t.user + t.system
            except psutil.Error:
                continue
        return sum(self._seen.values())

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            self._tree()

    def start(self) -> "Sampler":
        self._tree0 = self._tree()
        t = psutil.cpu_times()
        self._all0 = t.user + t.system + getattr(t, "nice", 0)
        self._wall0 = time.monotonic()
        self._thread.start()
        return self

    def stop(self) -> tuple[float, float]:
        """(cores kept busy by this tree, cores used by everything else), both averaged over the wall time."""
        self._stop.set()
        self._thread.join()
        wall = max(time.monotonic() - self._wall0, 1e-9)
        tree = self._tree() - self._tree0
        t = psutil.cpu_times()
        total = t.user + t.system + getattr(t, "nice", 0) - self._all0
        return tree / wall, max(0.0, total - tree) / wall


def tasks(seed: int = 11, seconds: float = TASK_SECONDS, cores: int | None = None):
    """TASKS_PER_PAIR tasks per area and platform the conforming simulated queue manager shows,
    ``seconds`` long each; a few more (the next task of the first pairs) to make the count a
    multiple of ``cores`` (the machine's).  A list of equal tasks that does not divide by the
    cores ends with cores idle for a whole task, which no time-boxed campaign does (each core
    works until the deadline): the figure would measure the bench's own count."""
    from adapters.registry import create_adapter
    from conformance.campaign import spark as CP
    from conformance.runner.engine import area_platforms
    from reference_model.rules import AREAS

    caps = create_adapter("simulated", OPTIONS).capabilities()
    pairs = [(a, p) for a in AREAS for p in area_platforms(a, caps)]
    specs = CP.plan_tasks(seed, pairs, TASKS_PER_PAIR, 1)
    extra = -len(specs) % (cores or os.cpu_count() or 1)
    specs += [t for t in CP.plan_tasks(seed, pairs, TASKS_PER_PAIR + 1, 1) if t.index == TASKS_PER_PAIR][:extra]
    return [attrs.evolve(t, examples=CP.TASK_EXAMPLES_TIMED, seconds=seconds) for t in specs]


def plain_here(specs: list[dict]) -> int:
    """Runs the tasks (their JSON form) one after the other in this process; the examples they ran."""
    from conformance.campaign import spark as CP

    return sum(CP._run_machine(s, "simulated", OPTIONS, [], False)["examples"] for s in specs)


def plain(specs) -> Measured:
    """The tasks in one plain Python process, started afresh (spawned) with the engine imported
    before the clock starts, as a Spark worker is: not in the bench's own process, whose heap and
    caches from the figures before would slow it and flatter the Spark ways against it."""
    from conformance.bench.suite import _Worker

    with _Worker("plain") as worker:
        worker.call("import", "conformance.campaign.spark", "conformance.runner.engine", "adapters.registry")
        sampler = Sampler().start()
        started = time.monotonic()
        examples = worker.call("plain", [s.to_json() for s in specs])
        took = time.monotonic() - started
        busy, elsewhere = sampler.stop()
    return Measured("one plain process", took, examples, busy, elsewhere)


def on_spark(specs, cores: int, workdir: Path) -> Measured:
    from conformance.campaign import spark as CP

    t0 = time.monotonic()
    session = CP.spark_session(f"local[{cores}]", workdir, 1)
    session.sparkContext.parallelize(range(cores), cores).map(lambda x: x).collect()  # the Python workers
    startup = time.monotonic() - t0
    state = CP.CampaignState(out=workdir)
    (workdir / "tasks").mkdir(parents=True, exist_ok=True)
    sampler = Sampler().start()
    started = time.monotonic()
    try:
        CP.run_campaign(spark=session, specs=iter(specs), adapter_name="simulated", options=OPTIONS,
                        out=workdir, state=state, deadline=None, parallelism=cores, timeout=900, attempts=1,
                        crash_tasks={}, progress=lambda line: None)
    finally:
        took = time.monotonic() - started
        busy, elsewhere = sampler.stop()
        CP.stop_session(session)
    examples = sum(r["examples"] for r in state.results.values())
    errors = [r["error"] for r in state.results.values() if r["error"]]
    if errors:
        raise RuntimeError(f"campaign task failed: {errors[0]}")
    return Measured(f"Spark local[{cores}]", took, examples, busy, elsewhere, startup)


def measure(seconds: float = TASK_SECONDS, rounds: int = ROUNDS, specs: list | None = None) -> list[Measured]:
    """Each way (one plain process, local[1], local[N]) run ``rounds`` times over ``specs`` (by
    default :func:`tasks`), the order reversed every other round, the fastest of each kept: a drift
    of the machine's speed over the minutes the figure takes falls on every way alike, not on
    whichever ran last."""
    cores = os.cpu_count() or 1
    if specs is None:
        specs = tasks(seconds=seconds, cores=cores)
    ways = [("plain", lambda _: plain(specs)), ("one", lambda d: on_spark(specs, 1, d))]
    if cores > 1:
        ways.append(("all", lambda d: on_spark(specs, cores, d)))
    best: dict[str, Measured] = {}
    with tempfile.TemporaryDirectory(prefix="mqconform-bench-") as tmp:
        tmp = Path(tmp)
        os.environ.setdefault("HYPOTHESIS_STORAGE_DIRECTORY", str(tmp / "hypothesis"))
        for r in range(rounds):
            for name, run in (ways if r % 2 == 0 else ways[::-1]):
                got = run(tmp / f"{name}-{r}")
                if name not in best or got.rate > best[name].rate:
                    best[name] = got
    return [best[name] for name, _ in ways]


def report(out, seconds: float = TASK_SECONDS) -> list[Measured]:
    from conformance.bench.suite import _mark, _table

    specs = tasks(seconds=seconds, cores=os.cpu_count() or 1)
    out.write(f"Campaign: the same {len(specs)} tasks ({TASKS_PER_PAIR} per area and platform, and as many more as "
              f"make a multiple of the cores; {seconds:g} s each, sized by time as a time-boxed campaign sizes "
              f"them) in one plain process, on Spark local[1] and local[N]; each the fastest of {ROUNDS}, "
              "interleaved\n")
    out.flush()
    got = measure(seconds, specs=specs)
    base, one = got[0], got[1]
    rows = [(m.how, m.examples, m.seconds, m.rate, m.rate / base.rate, m.rate / one.rate, m.cores_busy,
             m.elsewhere, f"{m.startup:.2f}" if m.startup else "-") for m in got]
    out.write(_table(rows, ("how", "examples", "seconds", "examples/s", "vs plain", "vs local[1]",
                            "cores busy", "cores used elsewhere", "Spark start s")) + "\n")
    noisy = [m.how for m in got if m.elsewhere > BUSY_ELSEWHERE]
    if noisy:
        out.write(f"not reliable: other processes used more than {BUSY_ELSEWHERE} of a core during "
                  f"{', '.join(noisy)}; the machine did not give the campaign its cores\n\n")
        return got
    if len(got) > 2:
        many = got[2]
        out.write(f"{many.how}: {many.rate / one.rate:.2f}x local[1] (goal >= 1.8: "
                  f"{_mark(many.rate / one.rate >= 1.8)}), {many.rate / base.rate:.2f}x one plain process "
                  f"(goal >= 1.7: {_mark(many.rate / base.rate >= 1.7)})\n\n")
    return got
