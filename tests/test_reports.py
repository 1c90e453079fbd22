"""Compliance reports: the formats agree, baselines mark changes, bad input is one line, hostile text is escaped."""

import json
import re
import shutil
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from conformance.checker.sequential import Mismatch
from conformance.records.history import Failure, Step, load_failure
from conformance.records.results import RunRecord
from reference_model import language as L
from reference_model import mqconst as C
from reports import inputs, make_report, render
from reports.matrix import VERDICTS
from tests.clikit import run_cli


#: On one worker: the two runs of the module's fixture (about 14 s) are made once, not once per worker.
pytestmark = pytest.mark.xdist_group("reports-results")


@pytest.fixture(scope="session")
def results(tmp_path_factory):
    """A conformant run and a faulty one of the simulated queue manager (core and dlq)."""
    base = tmp_path_factory.mktemp("results")
    ok, bad = base / "ok", base / "bad"
    assert run_cli("run", "--adapter", "simulated", "--area", "core,dlq", "--seed", "7", "--examples", "20",
                   "--adapter-opt", "platform=distributed", "--results", ok)[0] == 0
    assert run_cli("run", "--adapter", "simulated", "--area", "core,dlq", "--seed", "7", "--examples", "20",
                   "--adapter-opt", "platform=distributed", "--faults", "priority-ignored,dlq-header-stripped",
                   "--results", bad)[0] == 1
    return ok, bad


def test_formats_agree_on_every_count(results, tmp_path):
    ok, bad = results
    for fmt in ("md", "html", "json", "junit"):
        code, out, err = run_cli("report", ok, bad, "--format", fmt, "--out", tmp_path / f"r.{fmt}")
        assert code == 1, err   # a rule fails in the faulty column
    data = json.loads((tmp_path / "r.json").read_text())
    counts = {c["label"]: c["counts"] for c in data["columns"]}
    assert counts["simulated"]["fail"] == 0
    faulty = "simulated [faults: priority-ignored, dlq-header-stripped]"
    assert counts[faulty]["fail"] + counts[faulty]["one of"] >= 2
    # the same counts from the result directories themselves
    for label, directory in (("simulated", ok), (faulty, bad)):
        rows = [json.loads(l) for l in (directory / "rules.jsonl").read_text().splitlines()]
        for verdict, n in counts[label].items():
            assert n == sum(1 for r in rows if r["verdict"] == verdict)
    # JUnit: one test case per rule and system; failures, skips as in the JSON
    suites = ET.parse(tmp_path / "r.junit").getroot()
    for suite in suites.iter("testsuite"):
        c = counts[suite.get("name")]
        assert int(suite.get("tests")) == sum(c.values()) == len(suite.findall("testcase"))
        assert int(suite.get("failures")) == c["fail"] + c["one of"] == len(suite.findall("testcase/failure"))
        assert int(suite.get("skipped")) == (c["not applicable"] + c["not exercised"] + c["indeterminate"]
                                             + c["known deviation"] + c["partly exercised"])
    # Markdown and HTML summaries show the same numbers
    md = (tmp_path / "r.md").read_text()
    row = next(l for l in md.splitlines() if l.startswith(f"| {faulty.replace('[', chr(92) + '[').replace(']', chr(92) + ']')}"))
    assert [int(x) for x in re.findall(r"\|\s+(\d+)", row)] == [counts[faulty][v] for v in VERDICTS]
    page = (tmp_path / "r.html").read_text()
    assert f">{counts[faulty]['fail']}</td>" in page and 'id="matrix"' in page
    # The matrix, the same in JSON, HTML and Markdown: every failing cell of the JSON is a failing
    # cell in the HTML and a failing symbol in the Markdown, and the rules that stand out include them.
    failing = [(m["rule"], label) for m in data["matrix"] for label, v in m["shown"].items() if v == "fail"]
    assert len(failing) == counts[faulty]["fail"] and all(m["standing_out"] for m in data["matrix"]
                                                          if "fail" in m["shown"].values())
    assert page.count('<td class="c fail"') == len(failing)
    assert sum(l.count("❌ FAIL") for l in md.splitlines() if l.startswith("| ")) == len(failing)
    for area, totals in data["area_totals"].items():
        assert all(t == "not run" or sum(t.values()) == len([m for m in data["matrix"] if m["area"] == area
                                                             and m["shown"][label]])
                   for label, t in totals.items())


def test_one_adapter_report_has_claim_rules_failures_and_replay(results, tmp_path):
    _, bad = results
    code, _, _ = run_cli("report", bad, "--format", "md", "--out", tmp_path / "r.md")
    assert code == 1
    md = (tmp_path / "r.md").read_text()
    for expected in ("What this report covers", "system version", "capabilities: platforms", "seeds", "| 7 ",
                     "example budget per area", "CORE-04", "“Message priorities”", "### Failures",
                     "mqconform replay ", "&gt;&gt;"):  # the step marker, escaped as all cell text is
        assert expected in md, expected
    failure_file = re.search(r"mqconform replay (\S+)", md).group(1)
    assert Path(failure_file).exists()
    assert "## Rules by system" in md and "| CORE-04 " in md   # one system: a matrix of one column


def test_report_only_exits_0(results, tmp_path):
    _, bad = results
    assert run_cli("report", bad, "--out", tmp_path / "r.md", "--report-only")[0] == 0


def test_baseline_marks_new_fail_fixed_and_still_failing(results, tmp_path):
    ok, bad = results
    run_cli("report", bad, "--format", "json", "--baseline", ok, "--out", tmp_path / "new.json", "--report-only")
    cells = json.loads((tmp_path / "new.json").read_text())["columns"][0]["cells"]
    assert {c["change"] for c in cells.values() if c["verdict"] == "fail"} == {"new-fail"}
    run_cli("report", ok, "--format", "json", "--baseline", bad, "--out", tmp_path / "fixed.json")
    cells = json.loads((tmp_path / "fixed.json").read_text())["columns"][0]["cells"]
    assert {c["change"] for c in cells.values() if c["change"]} == {"fixed"}
    run_cli("report", bad, "--format", "json", "--baseline", bad, "--out", tmp_path / "same.json", "--report-only")
    cells = json.loads((tmp_path / "same.json").read_text())["columns"][0]["cells"]
    assert {c["change"] for c in cells.values() if c["verdict"] == "fail"} == {"still-failing"}


def _broken(tmp_path, results, how):
    ok, _ = results
    d = tmp_path / "broken"
    d.mkdir()
    meta = json.loads((ok / "run.json").read_text())
    rules = (ok / "rules.jsonl").read_text()
    if how == "empty dir":
        return d, "run.json: missing"
    if how == "empty run.json":
        (d / "run.json").write_text("")
        return d, "run.json: empty"
    if how == "corrupt run.json":
        (d / "run.json").write_text("{not json")
        return d, "run.json: corrupt JSON"
    (d / "rules.jsonl").write_text(rules)
    if how == "newer format":
        meta["version"] = 99
        (d / "run.json").write_text(json.dumps(meta))
        return d, "results format version 99"
    if how == "corrupt rules.jsonl":
        (d / "run.json").write_text(json.dumps(meta))
        (d / "rules.jsonl").write_text(rules + "{oops\n")
        return d, f"rules.jsonl:{len(rules.splitlines()) + 1}: corrupt JSON"
    if how == "missing failure file":
        meta["failures"] = ["failures/gone.json"]
        (d / "run.json").write_text(json.dumps(meta))
        return d, "gone.json: cannot read"
    if how == "mixed versions":
        meta["kit_version"] = "0.0.1"
        (d / "run.json").write_text(json.dumps(meta))
        return d, "different kit versions"
    raise AssertionError(how)


@pytest.mark.parametrize("how", ["empty dir", "empty run.json", "corrupt run.json", "newer format",
                                 "corrupt rules.jsonl", "missing failure file", "mixed versions"])
def test_bad_result_directories_are_one_line_errors_and_nothing_is_written(results, tmp_path, how):
    d, message = _broken(tmp_path, results, how)
    out = tmp_path / "report.html"
    code, _, err = run_cli("report", results[0], d, "--format", "html", "--out", out)
    assert code == 2 and message in err and err.count("\n") == 1, err
    assert not out.exists() and not list(tmp_path.glob(".report.html.*"))


def test_missing_directory_named(tmp_path):
    code, _, err = run_cli("report", tmp_path / "nope", "--out", tmp_path / "r.md")
    assert code == 2 and "nope: no such result directory" in err


HOSTILE = "<script>alert('x')</script>&amp;\x00\x07|`pipe`" + "\u202e" + "A" * 3000


def one_failure_results(directory, body: str, queue: str, system: str):
    """A result directory holding one failure: a put1 of ``body`` to ``queue`` whose answer came back with that
    body, on a system called ``system``; returns the failure."""
    op = L.Put1(conn="c1", queue=queue, body=body)
    observed = L.Observation(message=L.ReturnedMessage(body=body, priority=0, persistence=0))
    allowed = L.Observation(rc=C.MQRC_UNKNOWN_OBJECT_NAME, cc=C.MQCC_FAILED)
    failure = Failure(area="core", adapter="simulated", platform="distributed", seed=1,
                      steps=(Step(op=op, observed=observed),),
                      mismatch=Mismatch(index=0, op=op, observed=observed, allowed=(allowed,),
                                        fields=("rc", "message"), rules=("CORE-33",)))
    record = RunRecord(adapter="simulated", describe={"system": system, "version": "1"},
                       capabilities={"areas": ["core"], "platforms": ["distributed"]}, areas=["core"], seed=1,
                       examples=1)
    record.add_failure(failure)
    record.coverage.examples = 1
    record.write(directory)
    return failure


@pytest.fixture
def hostile_results(tmp_path):
    """A result directory whose failure carries hostile bodies and queue names."""
    one_failure_results(tmp_path / "hostile", HOSTILE, "<img src=x onerror=alert(1)>", "<b>bold</b>")
    return tmp_path / "hostile"


def test_hostile_text_is_escaped_in_every_format(hostile_results, tmp_path):
    report = make_report([hostile_results])
    page = render(report, "html")
    assert "<script>" not in page and "<img src=x" not in page and "<b>bold</b>" not in page
    assert "&lt;script&gt;" in page and "\x00" not in page and "\\x00" in page
    assert "\x07" not in render(report, "md")
    ET.fromstring(render(report, "junit").split("\n", 1)[1])   # well-formed despite control characters
    assert json.loads(render(report, "json"))["columns"][0]["counts"]["fail"] == 1
    md = render(report, "md")
    row = next(l for l in md.splitlines() if "Put1" in l)
    assert row.count(" | ") == 3 and "\\|" in row   # the body's pipe cannot break the table


def test_plugin_results_are_reportable(tmp_path):
    """The pytest plugin writes the same result directories."""
    import subprocess

    results = tmp_path / "plugin"
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--pyargs", "conformance",
                           "--mq-adapter", "reference", "--mq-area", "dlq", "--mq-seed", "1", "--mq-results",
                           str(results), "--hypothesis-profile", "mqconform-dev"], capture_output=True, text=True,
                          cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout[-2000:]
    code, out, err = run_cli("report", results, "--format", "json", "--out", tmp_path / "r.json")
    assert code == 0, err
    assert json.loads((tmp_path / "r.json").read_text())["columns"][0]["label"] == "reference"


def test_inputs_api_names_the_file(tmp_path):
    with pytest.raises(inputs.ReportInputError, match="no result directories"):
        inputs.load_runs([])


def test_cluster_shares_recorded_and_plotted(tmp_path):
    results = tmp_path / "cluster"
    assert run_cli("run", "--adapter", "simulated", "--area", "cluster", "--seed", "3", "--examples", "10",
                   "--adapter-opt", "platform=distributed", "--results", results)[0] == 0
    shares = json.loads((results / "run.json").read_text())["cluster_shares"]
    # every checked put to a cluster queue counts once on each side
    assert sum(shares["observed"].values()) == round(sum(shares["expected"].values())) > 0
    assert set(shares["observed"]) <= set(shares["expected"])
    page = render(make_report([results]), "html")
    assert 'alt="Cluster destination shares for simulated"' in page


def test_reports_say_why_a_rule_is_not_applicable(tmp_path):
    from adapters.base import Capabilities

    caps = Capabilities(areas={"core"}, not_applicable={"CORE-25": "no <b>GET(DISABLED)</b> on this broker"})
    record = RunRecord(adapter="broker", describe={"version": "1", "platform": "distributed"},
                       capabilities=caps.to_json(), areas=["core"], seed=1, examples=1)
    record.coverage.examples = 1
    record.write(tmp_path / "run")
    report = make_report([tmp_path / "run"])
    md, html = render(report, "md"), render(report, "html")
    assert "not applicable: no <b>GET(DISABLED)</b> on this broker" not in md  # escaped
    assert "not applicable: no &lt;b&gt;GET(DISABLED)&lt;/b&gt; on this broker" in md
    assert "no &lt;b&gt;GET(DISABLED)&lt;/b&gt; on this broker" in html


def _failing(directory) -> list[str]:
    return [r["rule"] for r in map(json.loads, (directory / "rules.jsonl").read_text().splitlines())
            if r["verdict"] in ("fail", "one of")]


def _deviations_file(path, entries) -> Path:
    path.write_text("".join(f'[[deviation]]\nrule = "{rule}"\nadapter = "{adapter}"\n'
                            f'seen = "{rule} seen on {adapter}."\nreason = """Why {rule} departs."""\n\n'
                            for rule, adapter in entries))
    return path


def test_known_deviations_matched_stale_and_not_reached_in_every_format(results, tmp_path):
    ok, bad = results
    failing = _failing(bad)
    assert len(failing) >= 2
    waived, unexplained = failing[0], failing[1:]
    deviations = _deviations_file(tmp_path / "known.toml", [(waived, "simulated"), ("TRIG-01", "simulated"),
                                                             ("CORE-01", "rabbitmq")])
    for fmt in ("md", "html", "json", "junit"):
        code, out, err = run_cli("report", ok, bad, "--format", fmt, "--known-deviations", deviations,
                                 "--out", tmp_path / f"r.{fmt}")
        assert code == 1, err   # the faulty column's other failures are not explained
        assert f"stale known deviation: {waived} on simulated now pass" in out
    data = json.loads((tmp_path / "r.json").read_text())
    faulty = next(c for c in data["columns"] if "faults" in c["label"])
    clean = next(c for c in data["columns"] if c is not faulty)
    assert faulty["cells"][waived]["verdict"] == "known deviation"
    assert faulty["cells"][waived]["deviation"]["reason"] == f"Why {waived} departs."
    assert all(faulty["cells"][r]["verdict"] in ("fail", "one of") for r in unexplained)
    assert faulty["counts"]["known deviation"] == 1
    assert faulty["counts"]["fail"] + faulty["counts"]["one of"] == len(unexplained)
    assert clean["cells"][waived]["verdict"] == "pass"
    statuses = {(d["rule"], d["system"]): d["status"] for d in data["deviations"]}
    assert statuses == {(waived, faulty["label"]): "matched", (waived, "simulated"): "stale",
                        ("TRIG-01", faulty["label"]): "not reached", ("TRIG-01", "simulated"): "not reached"}
    md = (tmp_path / "r.md").read_text()
    assert "## Known deviations" in md and f"### {waived} on simulated: stale" in md
    assert f"Why {waived} departs." in md and f"(known deviation: {waived}" in md and "CORE-01 seen on rabbitmq" not in md
    page = (tmp_path / "r.html").read_text()
    # The matrix comes first; above it, a line says there are known deviations and leads to them.
    assert page.index('href="#deviations"') < page.index('id="matrix"') < page.index('id="deviations"')
    assert "Known deviations: 1 matched, 1 stale, 2 not reached" in page and 'class="known-deviation"' in page
    suite = next(s for s in ET.parse(tmp_path / "r.junit").getroot().iter("testsuite") if "faults" in s.get("name"))
    skipped = [c.find("skipped").get("message") for c in suite.findall("testcase") if c.find("skipped") is not None]
    assert f"known deviation: {waived} seen on simulated." in skipped
    # Every failure explained: the report no longer fails.
    everything = _deviations_file(tmp_path / "all.toml", [(r, "simulated") for r in failing])
    assert run_cli("report", bad, "--known-deviations", everything, "--out", tmp_path / "all.md")[0] == 0


def test_a_history_each_of_two_rules_explains_fails_one_of_them_until_another_shows_which(results, tmp_path):
    """A forward that strips the MQDLH is explained by DLQ-11 relaxed alone and by DLQ-22 relaxed alone: the run
    says *one of* for both (not two failures), each naming the other, and what its own evidence says otherwise;
    merged with a run of the same system that shows DLQ-22 broken, DLQ-11 takes that evidence's verdict."""
    _, bad = results
    rows = {r["rule"]: r for r in map(json.loads, (bad / "rules.jsonl").read_text().splitlines())}
    assert rows["DLQ-11"]["verdict"] == rows["DLQ-22"]["verdict"] == "one of", (rows["DLQ-11"], rows["DLQ-22"])
    assert rows["DLQ-11"]["one_of"] == [["DLQ-22"]] and rows["DLQ-22"]["one_of"] == [["DLQ-11"]]
    assert rows["DLQ-11"]["failed"] == 0 and rows["DLQ-11"]["otherwise"] in ("pass", "partly exercised")
    failure = load_failure(next((bad / "failures").glob("dlq-*.json")))
    assert failure.one_of and set(failure.blamed) == {"DLQ-11", "DLQ-22"}
    code, out, err = run_cli("replay", next((bad / "failures").glob("dlq-*.json")))
    assert "Rules broken, one of them" in out, out
    code, _, err = run_cli("report", bad, "--format", "json", "--out", tmp_path / "one.json")
    cells = json.loads((tmp_path / "one.json").read_text())["columns"][0]["cells"]
    assert cells["DLQ-11"]["verdict"] == "one of" and cells["DLQ-11"]["one_of"] == [["DLQ-22"]]
    # another run of the same system, whose own history shows DLQ-22 broken
    other = tmp_path / "other"
    shutil.copytree(bad, other)
    meta = json.loads((other / "run.json").read_text())
    for name in [f for f in meta["failures"] if "DLQ" in f]:
        (other / name).unlink()
        meta["failures"].remove(name)
    (other / "run.json").write_text(json.dumps(meta))
    edited = []
    for row in map(json.loads, (other / "rules.jsonl").read_text().splitlines()):
        if row["rule"] in ("DLQ-11", "DLQ-22"):
            row = {k: v for k, v in row.items() if k not in ("one_of", "otherwise")}
            row["verdict"], row["failed"] = ("fail", 1) if row["rule"] == "DLQ-22" else (rows["DLQ-11"]["otherwise"], 0)
        edited.append(json.dumps(row))
    (other / "rules.jsonl").write_text("\n".join(edited) + "\n")
    code, _, err = run_cli("report", bad, other, "--format", "json", "--out", tmp_path / "two.json")
    cells = json.loads((tmp_path / "two.json").read_text())["columns"][0]["cells"]
    assert cells["DLQ-22"]["verdict"] == "fail"
    assert cells["DLQ-11"]["verdict"] == rows["DLQ-11"]["otherwise"] and not cells["DLQ-11"]["failures"], cells["DLQ-11"]
    # a known deviation of DLQ-22 explains the history as well: DLQ-11 is not failed by it
    known = _deviations_file(tmp_path / "known.toml", [("DLQ-22", "simulated")])
    run_cli("report", bad, "--format", "json", "--known-deviations", known, "--out", tmp_path / "known.json")
    cells = json.loads((tmp_path / "known.json").read_text())["columns"][0]["cells"]
    assert cells["DLQ-22"]["verdict"] == "known deviation"
    assert cells["DLQ-11"]["verdict"] == rows["DLQ-11"]["otherwise"], cells["DLQ-11"]


def test_a_passing_rule_with_a_recorded_counterexample_is_not_shown_rather_than_stale(results, tmp_path):
    """A real system's run samples cases: where the entry carries the evidence (a replay file), a pass
    says only that these cases did not show the departure; replaying the file says whether it is gone."""
    ok, bad = results
    failure = next((bad / "failures").glob("*.json"))
    waived = json.loads(failure.read_text())["rules"][0]   # a rule the evidence is blamed on
    (tmp_path / "evidence.json").write_text(failure.read_text())
    known = tmp_path / "known.toml"
    known.write_text(f'[[deviation]]\nrule = "{waived}"\nadapter = "simulated"\nseen = "s."\n'
                     f'reason = """Why."""\ncounterexample = "evidence.json"\n')
    code, out, err = run_cli("report", ok, "--known-deviations", known, "--format", "md", "--out", tmp_path / "r.md")
    assert code == 0 and "stale" not in out, out + err
    md = (tmp_path / "r.md").read_text()
    assert f"### {waived} on simulated: not shown" in md and "Recorded counterexample: `evidence.json`" in md
    report = make_report([ok], known_deviations=[known])
    assert [d.status for d in report.deviations] == ["not shown"] and report.stale == []


@pytest.mark.parametrize("text, message", [
    ('[[deviation]]\nrule = "CORE-99"\nadapter = "x"\nseen = "s"\nreason = "r"\n', "unknown rule CORE-99"),
    ('[[deviation]]\nrule = "CORE-01"\nadapter = "x"\nseen = "s"\n', "'reason' is a required property"),
    ('[[deviation]]\nrule = "CORE-01"\nadapter = "x"\nseen = "s"\nreason = "r"\nwhy = 1\n',
     "Additional properties"),
    ("[[deviation]\n", "not TOML"),
    ('[[deviation]]\nrule = "CORE-01"\nadapter = "x"\nseen = "s"\nreason = "r"\n' * 2,
     "deviation 2: CORE-01 on x is already deviation 1"),
    (None, "no such known-deviations file"),
    ('[[deviation]]\nrule = "CORE-01"\nadapter = "x"\nseen = "s"\nreason = "r"\ncounterexample = "gone.json"\n',
     "deviation 1: counterexample gone.json: no such file"),
])
def test_bad_known_deviations_file_is_one_line_and_nothing_is_written(results, tmp_path, text, message):
    path = tmp_path / "known.toml"
    if text is not None:
        path.write_text(text)
    out = tmp_path / "r.md"
    code, _, err = run_cli("report", results[0], "--known-deviations", path, "--out", out)
    assert code == 2 and message in err and err.count("\n") == 1, err
    assert not out.exists()


def test_markdown_shows_each_operation_and_outcome_exactly_as_recorded(tmp_path):
    """Parsed as Markdown (tables on), every operation and observation of a counterexample reads back exactly
    as the kit renders it, whatever backticks, stars, underscores, pipes or tags its body holds; running text
    shows such characters as themselves, never as markup."""
    from markdown_it import MarkdownIt

    from reports.common import failure_rows

    body = "a`b``c*d*_e_|f<b>g</b>\\h [x](y) ~~z~~"
    failure = one_failure_results(tmp_path / "r", body, "Q*1_", "sys*tem_`x`")
    text = render(make_report([tmp_path / "r"]), "md")
    tokens = MarkdownIt("commonmark").enable("table").parse(text)
    codes = [child.content for t in tokens if t.type == "inline" for child in t.children or () if child.type == "code_inline"]
    _, _, op_shown, obs_shown = failure_rows(failure)[0]
    assert op_shown in codes and obs_shown in codes, codes
    assert body.replace("\\", "\\\\") in op_shown   # the body itself, as the kit writes it
    # the system's own text in running text: its characters, never markup
    plain = "".join(child.content for t in tokens if t.type == "inline" for child in t.children or ()
                    if child.type == "text")
    assert "sys*tem_`x`" in plain


def test_every_verdict_has_a_colour_in_the_plots():
    """A verdict with no colour would be left out of the stacked bars, which then no longer add up to the rules."""
    from reports.plots import COLOURS

    assert set(COLOURS) == set(VERDICTS)
