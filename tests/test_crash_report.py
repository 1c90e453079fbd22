"""Crash campaigns in the compliance report: each rule by the share of schedules that broke it, with its interval,
its cut-down schedule's replay file, and a known deviation (citing the system's own tracker) beside it."""

from __future__ import annotations

import json

import pytest

from tests.clikit import run_cli


@pytest.fixture(scope="session")
def crash_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("crash") / "c"
    code, text, err = run_cli("crash", "--adapter", "simulated", "--faults", "restart-keeps-nonpersistent",
                              "--schedules", "10", "--seed", "3", "--results", out)
    assert code == 1, text + err
    return out


def test_a_report_shows_each_rule_a_crash_campaign_broke_by_frequency_in_every_format(crash_dir, tmp_path):
    saved = json.loads((crash_dir / "crash.json").read_text())["rules"]["CORE-32"]
    code, out, err = run_cli("report", crash_dir, "--out", tmp_path / "r.md")
    assert code == 1, out + err   # a rule broken, no known deviation: the report fails
    assert f"crash campaign: CORE-32 {saved['schedules']} of 10 schedules" in out
    md = (tmp_path / "r.md").read_text()
    low, high = saved["interval"]
    assert "## Crash campaigns" in md and f"{saved['schedules']} of 10 schedules ({saved['frequency']:.0%}, 95% " \
        f"interval {low:.0%}-{high:.0%})" in md and str(crash_dir / "schedules" / "CORE-32.json") in md
    assert run_cli("report", crash_dir, "--out", tmp_path / "r.json")[0] == 1
    data = json.loads((tmp_path / "r.json").read_text())["crash_campaigns"]
    assert [(c["system"], [r["rule"] for r in c["rules"]]) for c in data] == \
        [("simulated [faults: restart-keeps-nonpersistent]", ["CORE-32"])]
    assert data[0]["rules"][0]["schedules"] == saved["schedules"] and data[0]["schedules"] == 10
    assert run_cli("report", crash_dir, "--out", tmp_path / "r.html")[0] == 1
    assert "Crash campaigns" in (tmp_path / "r.html").read_text()
    assert run_cli("report", crash_dir, "--out", tmp_path / "r.xml")[0] == 1
    import xml.etree.ElementTree as ET

    suites = ET.parse(tmp_path / "r.xml").getroot()
    assert suites.get("failures") == "1" and suites.find(".//testcase/failure").get("message").startswith(
        "CORE-32 broken in ")


def test_a_known_deviation_citing_upstream_is_shown_beside_the_frequency_and_does_not_fail_the_report(
        crash_dir, tmp_path):
    known = tmp_path / "known.toml"
    known.write_text('''
[[deviation]]
rule = "CORE-32"
adapter = "simulated"
seen = "Non-persistent messages survive a restart."
reason = "The queue manager keeps every message across a restart."
upstream = ["example/broker#4563"]
affects = "before 3.11.0"
''')
    code, out, err = run_cli("report", crash_dir, "--known-deviations", known, "--out", tmp_path / "r.md")
    assert code == 0 and "(known deviation)" in out, out + err
    md = (tmp_path / "r.md").read_text()
    assert "known deviation: Non-persistent messages survive a restart. Upstream: example/broker\\#4563 (affects " \
           "before 3.11.0)." in md   # (markdown escapes the #)
    run_cli("report", crash_dir, "--known-deviations", known, "--out", tmp_path / "r.json")
    rule = json.loads((tmp_path / "r.json").read_text())["crash_campaigns"][0]["rules"][0]
    assert rule["deviation"]["upstream"] == ["example/broker#4563"]


@pytest.mark.parametrize("text, needle", [
    ('{"format": "mqconform-run"}', "not a crash campaign's results"),
    ('{"format": "mqconform-crash", "version": 1, "adapter": "x", "schedules": 2, "classes": {}, '
     '"rules": {"CORE-32": {"schedules": 3}}}', "at most those that ran"),
    ("{", "corrupt JSON"),
])
def test_a_crash_result_that_cannot_be_read_is_one_line_and_exit_2(text, needle, tmp_path):
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "crash.json").write_text(text)
    code, out, err = run_cli("report", bad, "--out", tmp_path / "r.md")
    assert code == 2 and needle in err and err.count("\n") == 1 and "Traceback" not in err, err
    assert not (tmp_path / "r.md").exists()


def test_a_report_names_the_cut_down_file_of_a_schedule_that_departed_before_its_drain(tmp_path):
    out = tmp_path / "c"
    code, text, err = run_cli("crash", "--adapter", "simulated", "--faults", "fifo-within-priority-broken",
                              "--schedules", "6", "--seed", "1", "--results", out)
    assert code == 1, text + err
    cut = str(out / "schedules" / "CORE-05.json")
    code, text, err = run_cli("report", out, "--out", tmp_path / "r.md")
    md = (tmp_path / "r.md").read_text().replace("\\_", "_")
    assert code == 1 and "CORE-05: " in md and f"cut down in {cut}" in md, text + err
    assert "no message out of place; CORE-05 " in text and "schedules before the drain" in text, text
    assert run_cli("report", out, "--out", tmp_path / "r.json")[0] == 1
    assert json.loads((tmp_path / "r.json").read_text())["crash_campaigns"][0]["departure_replays"] == {"CORE-05": cut}
    assert run_cli("report", out, "--out", tmp_path / "r.xml")[0] == 1
    import xml.etree.ElementTree as ET

    failure = next(f for f in ET.parse(tmp_path / "r.xml").getroot().iter("failure")
                   if f.get("message").startswith("CORE-05: "))
    assert cut in failure.text
