"""Rule sources a reader can follow: IBM's topic titles and items, never a file name of the kit's own notes."""

import json
import re
import subprocess
from pathlib import Path

import pytest

from conformance.tools import sourcedoc
from reference_model.rules import RULES
from reference_model.sources import CATALOGUE, Cite
from tests.clikit import run_cli

ROOT = Path(__file__).resolve().parent.parent

#: What must never reach a reader: paths outside the repository, the notes file, development file names.
FORBIDDEN = re.compile(r"\.\./shared|mq-facts|seeds/|\b\d{3}_[0-9a-f]{16}(\.txt)?\b")


def _forbidden(text: str) -> list[str]:
    return sorted({m.group(0) for m in FORBIDDEN.finditer(text)})


def test_every_rule_cites_a_catalogued_topic_with_a_title():
    for rule in RULES.all():
        assert rule.cites, rule.id
        for cite in rule.cites:
            doc = CATALOGUE[cite.source]
            assert doc.title.strip() and doc.part.strip() and doc.versions.strip(), (rule.id, cite.source)
            assert doc.title in rule.source
        assert not _forbidden(rule.source + rule.note), rule.id


def test_every_catalogue_entry_is_cited_and_addresses_are_https_or_absent():
    cited = {c.source for r in RULES.all() for c in r.cites}
    assert set(CATALOGUE) == cited, set(CATALOGUE) - cited
    for doc in CATALOGUE.values():
        assert doc.url == "" or doc.url.startswith(("https://", "http://")), doc.key
        assert doc.topic == "" or re.fullmatch(r"q\d{6}_", doc.topic), doc.key


def test_an_unknown_source_is_refused():
    with pytest.raises(ValueError, match="unknown source"):
        Cite("no-such-topic", "item 1")


def test_area_documents_are_cited_by_ibm_title_and_item():
    expected = {"trigger": "Conditions for a trigger event", "syncpoint": "Skipping backout",
                "cluster": "The cluster workload management algorithm", "expiry": "Expiry (MQLONG)",
                "dlq": "How the rules table is processed"}
    for area, title in expected.items():
        items = [c.item for r in RULES.all(area) for c in r.cites if c.doc.title == title]
        assert items and all(items), area   # the area document is cited, always with an item
    assert "“Conditions for a trigger event”, condition 3, note a" in RULES["TRIG-04"].source
    assert "“The cluster workload management algorithm”, step 4b" == RULES["CLWL-04b"].source


def test_rules_and_sources_commands_print_titles_and_no_file_names():
    code, out, _ = run_cli("rules")
    assert code == 0
    third = {line.split("\t")[2] for line in out.splitlines()}
    assert len(third) > 50 and not _forbidden(out)
    assert all(t.startswith("“") for t in third)
    code, out, _ = run_cli("rules", "--format", "json", "--area", "trigger")
    rows = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and rows[0]["cites"][0]["title"] == "Conditions for a trigger event"
    assert rows[0]["cites"][0]["url"].startswith("https://")
    for fmt in ("text", "json", "markdown"):
        code, out, _ = run_cli("sources", "--format", fmt)
        assert code == 0 and "Skipping backout" in out and not _forbidden(out), fmt


def test_docs_sources_page_is_current():
    page = (ROOT / "docs" / "sources.md").read_text(encoding="utf-8")
    assert page == sourcedoc.render("markdown"), "regenerate: mqconform sources --format markdown > docs/sources.md"
    for rule in RULES.all():
        assert rule.id in page


def test_nothing_shipped_names_the_development_notes():
    files = subprocess.run(["git", "ls-files", "conformance", "reference_model", "adapters", "reports", "docs",
                            "scripts", "examples", "README.md", "pyproject.toml"],
                           cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    assert len(files) > 30
    bad = {}
    for name in files:
        path = ROOT / name
        if not path.is_file():
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        found = _forbidden(text)
        if found:
            bad[name] = found
    assert not bad, bad


def test_a_failure_printed_in_the_terminal_cites_the_ibm_topic(tmp_path):
    code, out, _ = run_cli("run", "--adapter", "simulated", "--area", "core", "--seed", "7", "--examples", "20",
                           "--adapter-opt", "platform=distributed", "--faults", "priority-ignored",
                           "--keep-going", "0", "--results", tmp_path / "r")
    assert code == 1
    assert "“MsgDeliverySequence (MQLONG)”" in out or "“Message priorities”" in out, out
    assert not _forbidden(out)
