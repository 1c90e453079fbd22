"""The published compliance reports (docs/compliance): each is exactly the report of its committed results,
explains every departure, and still agrees with a fresh run against a broker this module starts itself."""

from __future__ import annotations

import json
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from adapters.brokers import server
from reports import make_report, render
from reference_model.rules import RULES
from reports.deviations import MATCHED, STALE, UNMATCHED, load_deviations
from tests.brokerkit import mqconform, running_broker

ROOT = Path(__file__).resolve().parent.parent
COMPLIANCE = Path("docs/compliance")   # relative to ROOT, as scripts/compliance.sh writes it
BROKERS = ("rabbitmq", "activemq")
#: A fresh run's budget per area: small, so the suite stays short; the committed runs used more.
FRESH_EXAMPLES = "2"
REPLAY_TRIES = "30"
#: Seconds a replay that restarts, pauses or cuts the broker may take (its tries included).
REPLAY_ALONE_SECONDS = 1200
#: Published counterexamples whose departure the broker shows at some restarts and not others, by file name,
#: with where that is measured.  Each is replayed with INTERMITTENT_TRIES tries (about 90 s each) and must run
#: through every step as recorded; whether the last departs too is the broker's chance, not the kit's.
INTERMITTENT = {
    "core-distributed-CORE-32_CORE-15-677bbfe582.json":
        "RabbitMQ 3.10.8 losing a durable queue at a restart: on an idle machine at the second try of every "
        "replay measured, in a loaded suite run at none of 30 tries once (docs/nemesis.md)",
}
INTERMITTENT_TRIES = "2"
#: Published counterexamples replayed at once on the test's broker.
REPLAYS_AT_ONCE = 3
#: The rules about faults from outside the program, which only the nemesis run reaches.
FAULT_RULES = ("CORE-32", "CORE-45", "CORE-46", "CORE-47", "CORE-48")


def _verdicts(directory: Path) -> dict[str, str]:
    return {row["rule"]: row["verdict"]
            for row in map(json.loads, (directory / "rules.jsonl").read_text().splitlines())}


#: Steps that act on the broker itself, and so on every client of it (a cut connection is the client's own,
#: through the run's proxy: it acts on that connection alone).
ON_THE_BROKER = ("Restart", "PauseQueueManager")


def _acts_on_the_broker(failure: dict) -> bool:
    """Whether replaying ``failure`` restarts or pauses the broker.  (A history from a run with the nemesis on
    but none of its steps acts on nothing but its own queues, and is replayed with the others.)"""
    return any(step["op"]["type"] in ON_THE_BROKER for step in failure["steps"])


def _published(broker: str) -> list[Path]:
    """A published report's result directories: every area, and the core area under the nemesis."""
    return [COMPLIANCE / "results" / broker, COMPLIANCE / "results" / f"{broker}-nemesis"]


def _without_date(text: str) -> list[str]:
    return [line for line in text.splitlines() if not line.startswith("Generated ")]


def _concurrent(broker: str) -> Path:
    """A published report's run of concurrent cases (its races matched against the known deviations too)."""
    return COMPLIANCE / "results" / f"{broker}-concurrent"


@pytest.mark.parametrize("broker", BROKERS)
def test_published_report_is_the_report_of_its_committed_results(broker, monkeypatch):
    monkeypatch.chdir(ROOT)
    directories = _published(broker) + [_concurrent(broker)]
    deviations = COMPLIANCE / "known-deviations.toml"
    report = make_report(directories, known_deviations=[deviations])
    published = (COMPLIANCE / f"{broker}.md").read_text(encoding="utf-8")
    assert _without_date(render(report, "md")) == _without_date(published), \
        f"docs/compliance/{broker}.md is stale: regenerate it with bash scripts/compliance.sh {broker}"
    # every rule of the kit has a verdict in it: a rule added since (or one left out) makes the report stale
    assert {r.id for r in report.rules} == {r.id for r in RULES.all()}, \
        f"docs/compliance/{broker}.md does not list the kit's rules: regenerate it with bash scripts/compliance.sh"
    for results in directories:
        meta = json.loads((results / "run.json").read_text())
        assert meta["adapter"] == broker and meta["system"]["version"] and meta["kit_version"]
    nemesis = json.loads((directories[1] / "run.json").read_text())
    assert nemesis["areas"] == ["core"] and "CutConnection" in nemesis["capabilities"]["operations"]
    concurrent = json.loads((directories[2] / "run.json").read_text())
    assert concurrent["areas"] == ["core"] and concurrent["concurrency"] == 3 and concurrent["examples_run"] >= 10
    # The rules about faults have verdicts: the nemesis run reached them.
    faults = _verdicts(directories[1])
    assert {r: faults[r] for r in FAULT_RULES if faults[r] not in ("pass", "fail", "one of", "indeterminate")} == {}
    # Every departure in a published report is explained, and no explanation is stale.
    # (as the merged column has them: a rule one run leaves "one of" and another shows broken is not failed)
    failing = {rule for rule, c in report.columns[0].cells.items() if c.verdict in ("fail", "one of", "known deviation")}
    assert failing <= {rule for results in directories for rule, verdict in _verdicts(results).items()
                       if verdict in ("fail", "one of")}
    assert failing, "a published report with no departure: is the run right?"
    matched = {d.deviation.rule for d in report.deviations if d.status == MATCHED}
    assert failing - matched == set()
    assert {rule: c.verdict for rule, c in report.columns[0].cells.items() if rule in failing
            and c.verdict != "known deviation"} == {}
    assert [d.deviation.rule for d in report.deviations if d.status in (STALE, UNMATCHED)] == []
    for d in load_deviations(deviations):
        assert len(d.reason.split()) >= 25, f"{d.rule} on {d.adapter}: the reason is not a paragraph"


@pytest.mark.parametrize("broker", BROKERS)
def test_published_migration_page_is_the_migration_report_of_its_committed_results(broker, monkeypatch):
    """docs/compliance/BROKER-migration.md is what `mqconform report --format migration` makes of the faithful runs
    and the run with the broker's defaults, all committed; the defaults run is every area of the faithful run."""
    monkeypatch.chdir(ROOT)
    defaults = COMPLIANCE / "results" / f"{broker}-defaults"
    report = make_report(_published(broker) + [defaults], known_deviations=[COMPLIANCE / "known-deviations.toml"])
    page = (COMPLIANCE / f"{broker}-migration.md").read_text(encoding="utf-8")
    assert _without_date(render(report, "migration")) == _without_date(page), \
        f"docs/compliance/{broker}-migration.md is stale: regenerate it with bash scripts/compliance.sh {broker}"
    meta = json.loads((defaults / "run.json").read_text())
    faithful = json.loads((COMPLIANCE / "results" / broker / "run.json").read_text())
    assert meta["system"]["mapping"] == "defaults" and meta["areas"] == faithful["areas"]
    assert meta["seed"] == faithful["seed"] and meta["examples"] == faithful["examples"]
    # what the faithful mapping relies on and the defaults leave out is stated, each with the rules it bears on
    kept = {d["what"] for d in meta["capabilities"].get("depends_on", [])}
    dropped = [d for d in faithful["capabilities"]["depends_on"] if d["what"] not in kept]
    assert dropped and page.count("\n### D") == len(dropped)


@pytest.mark.broker
@pytest.mark.parametrize("broker", BROKERS)
def test_a_fresh_run_agrees_with_the_published_verdicts(broker, tmp_path, monkeypatch):
    """The committed seed with a small budget, the core area twice: the same verdicts both times, and every
    rule they find broken is broken in the published report; every published counterexample the broker
    showed steadily, and every counterexample a known deviation records, still fails on a fresh broker."""
    if server(broker).installed() is not None:
        pytest.skip(f"{broker} not installed (bash scripts/system-packages.sh)")
    committed, nemesis = (ROOT / d for d in _published(broker))
    published = _verdicts(committed)
    for rule, verdict in _verdicts(nemesis).items():
        published[rule] = "fail" if {"fail", "one of"} & {verdict, published.get(rule)} else published.get(rule, verdict)
    meta = json.loads((committed / "run.json").read_text())
    gen = running_broker(broker, tmp_path / "broker")
    srv = next(gen)
    try:
        env = {"MQCONFORM_RUN_DIR": str(srv.base)}
        # The core area, whose departures the brokers show steadily, twice, both runs at once on the one broker
        # (each case on queues of its own): the same seed gives the same verdicts.  (Expiry departures on a real
        # broker depend on timing, and a run stops an area at its first departure, so which comes first can
        # vary: the published expiry departures are checked by replaying their counterexamples below.)
        def fresh_run(n):
            # (restarts off, as in the published run: scripts/compliance.sh gives restart=off)
            code, out, err, _ = mqconform("run", "--adapter", broker, "--adapter-opt", "restart=off",
                                          "--seed", meta["seed"], "--area", "core", "--examples", FRESH_EXAMPLES,
                                          "--keep-going", "0", "--results", tmp_path / f"run{n}", env=env,
                                          timeout=900)
            assert code in (0, 1), out[-3000:] + err
            return _verdicts(tmp_path / f"run{n}")

        with ThreadPoolExecutor(2) as pool:
            first, second = pool.map(fresh_run, (1, 2))
        runs = [first, second]
        assert first == second, {r: (first.get(r), second.get(r)) for r in set(first) | set(second)
                                 if first.get(r) != second.get(r)}
        assert {r for r, v in first.items() if v == "pass"} & {r.id for r in RULES.all("core")}
        fresh = runs[0]
        newly_broken = {r for r, v in fresh.items() if v in ("fail", "one of") and published.get(r) not in ("fail", "one of")}
        assert newly_broken == set(), f"{broker} now breaks rules its published report passes: regenerate it"
        # The published runs' counterexamples, and those the known deviations record as their evidence
        # (a deviation these runs did not show is "not shown", and its counterexample must still fail).
        published_failures = [f for d in _published(broker) for f in (ROOT / d / "failures").glob("*.json")]
        recorded = [path for d in load_deviations(ROOT / COMPLIANCE / "known-deviations.toml")
                    if d.adapter == broker for path in d.counterexample_paths]
        distinct = {f.read_bytes(): f for f in sorted(published_failures) + sorted(recorded)}
        # (the broker showed one marked not reproduced once and not again: published as such, not replayed here)
        steady = [f for f in distinct.values() if json.loads(f.read_text()).get("reproduced") is not False]

        def replay(chunk, on=env, seconds_each=600):
            # A departure on a real broker may depend on timing: which message ActiveMQ redelivers first
            # after a cut connection varies (7 replays of 20 showed it on an idle machine), so up to
            # REPLAY_TRIES fresh cases, one process (at one in three, all conformant about once in 10^5).
            # A chunk of files in one process, one after another: one start of the kit and its client library
            # (a JVM for ActiveMQ's OpenWire client) for the chunk, not for each file.
            tries = INTERMITTENT_TRIES if chunk[0].name in INTERMITTENT else REPLAY_TRIES
            code, out, err, _ = mqconform("replay", *chunk, "--tries", tries, env=on,
                                          timeout=seconds_each * len(chunk))
            return shown_by_each(chunk, code, out, err)

        def replay_alone(chunk):
            # on a broker of its own, one after another: a restart acts on every client of the broker
            alone_gen = running_broker(broker, Path(tempfile.mkdtemp(dir=tmp_path)))
            own = next(alone_gen)
            try:
                return replay(chunk, {"MQCONFORM_RUN_DIR": str(own.base)}, REPLAY_ALONE_SECONDS)
            finally:
                alone_gen.close()

        # a few processes at once on the broker, each replaying its chunk of files on queues of their own (a
        # replay mostly waits on the broker); one that restarts or pauses the broker acts on every client of it,
        # and is replayed on a broker of its own (a few such brokers at once, each with its chunk: a restart's
        # replay mostly waits for the broker to stop and start, or for the clock)
        alone = [f for f in steady if _acts_on_the_broker(json.loads(f.read_text()))]
        with ThreadPoolExecutor(REPLAYS_AT_ONCE) as pool:
            together = [shown for got in pool.map(replay, chunks([f for f in steady if f not in alone]))
                        for shown in got]
            # (a try that restarts the broker takes half a minute: a 114-step nemesis history that showed its lost
            # message at one try in three took 95 s for three; such a replay may take longer before it shows)
            together += [shown for got in pool.map(replay_alone, chunks(alone)) for shown in got]
        assert sorted(name for name, _, _ in together) == sorted(f.name for f in steady)
        for name, outcome, text in together:
            # its own departure: the same step, rules and fields, not another met on the way; one the broker
            # shows by chance may also be absent from every try, but never replaced by another departure
            assert outcome == "still failing" or (name in INTERMITTENT and outcome == "conformant"
                                                  and "conformant every time" in text), (name, outcome, text)
    finally:
        gen.close()
    assert srv.status().ready is False


def chunks(files: list[Path]) -> list[list[Path]]:
    """``files`` in at most :data:`REPLAYS_AT_ONCE` chunks to replay in a process each, an intermittent one in a chunk
    of its own (it is replayed with fewer tries)."""
    odd = [[f] for f in files if f.name in INTERMITTENT]
    rest = [f for f in files if f.name not in INTERMITTENT]
    n = max(1, REPLAYS_AT_ONCE - len(odd))
    return odd + [c for c in (rest[i::n] for i in range(n)) if c]


def shown_by_each(chunk: list[Path], code: int, out: str, err: str) -> list[tuple[str, str, str]]:
    """What ``mqconform replay CHUNK...`` showed of each file: (name, outcome, its part of the output)."""
    if len(chunk) == 1:
        outcome = ("still failing" if code == 1 and "Still failing" in out else
                   "conformant" if code == 0 else f"exit {code}")
        return [(chunk[0].name, outcome, out[-2000:] + err)]
    listed = {}
    for line in out.splitlines()[-len(chunk):]:
        outcome, _, path = line.partition(": ")
        listed[path] = outcome
    parts = dict(zip(map(str, chunk), ("\n" + out).split("\n== ")[1:]))
    return [(f.name, listed.get(str(f), f"exit {code}"), (parts.get(str(f), out)[-2000:] + err)) for f in chunk]


def test_replay_chunks_put_every_file_in_one_chunk_and_an_intermittent_one_alone():
    files = [Path(f"f{i}.json") for i in range(7)] + [Path(next(iter(INTERMITTENT)))]
    got = chunks(files)
    assert sorted(f for c in got for f in c) == sorted(files) and len(got) <= REPLAYS_AT_ONCE
    assert [Path(next(iter(INTERMITTENT)))] in got
    assert chunks([]) == []


def test_intermittent_counterexamples_are_published_restart_histories_of_a_known_deviation():
    """A counterexample the fresh-run test lets pass unshown is one of the published ones, restarts the broker
    (where the broker's chance is what decides), and departs under a rule a known deviation records."""
    published = {f.name: f for broker in BROKERS for d in _published(broker) for f in (ROOT / d / "failures").glob("*.json")}
    deviations = load_deviations(ROOT / COMPLIANCE / "known-deviations.toml")
    for name in INTERMITTENT:
        assert name in published, name
        failure = json.loads(published[name].read_text())
        assert any(step["op"]["type"] == "Restart" for step in failure["steps"]), name
        covered = {d.rule for d in deviations if d.adapter == failure["adapter"]}
        assert set(failure["mismatch"]["blamed"]) <= covered, (name, failure["mismatch"]["blamed"])


def test_what_a_chunk_showed_is_read_file_by_file(tmp_path):
    """The reading of ``mqconform replay A B``'s output the fresh-run test relies on, on a real one."""
    from tests.clikit import faulty_run, run_cli

    failing = faulty_run(tmp_path / "r")
    data = json.loads(failing.read_text())
    fixed = tmp_path / "fixed.json"
    fixed.write_text(json.dumps(dict(data, adapter_options={"platform": "distributed"})))
    code, out, err = run_cli("replay", failing, fixed)
    got = shown_by_each([failing, fixed], code, out, err)
    assert [(name, outcome) for name, outcome, _ in got] == [(failing.name, "still failing"),
                                                              ("fixed.json", "conformant")], out
    assert "Still failing" in got[0][2] and "conformant (fixed)" in got[1][2] and "Still failing" not in got[1][2]
    code, out, err = run_cli("replay", fixed)
    assert shown_by_each([fixed], code, out, err)[0][1] == "conformant"
