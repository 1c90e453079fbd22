"""The HTML report as a person sees it: rendered by headless Chromium (installed by scripts/setup.sh)."""

import html
import io
import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from conformance import cli

pytestmark = pytest.mark.browser

CHROMIUM = shutil.which("chromium")


def chromium(*args, cwd):
    if CHROMIUM is None:
        pytest.fail("chromium is not installed: run 'bash scripts/setup.sh --install'")
    proc = subprocess.run([CHROMIUM, "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                           "--enable-logging=stderr", "--v=0", *args], capture_output=True, text=True, timeout=120,
                          cwd=cwd)
    console = [line for line in proc.stderr.splitlines() if ":CONSOLE" in line]
    return proc, console


#: The published results of the real brokers: systems whose runs nobody on the team wrote.
BROKER_RESULTS = [Path(__file__).resolve().parent.parent / "docs" / "compliance" / "results" / name
                  for name in ("rabbitmq", "activemq")]

#: Layout facts, measured by the page itself in the browser and written into the DOM for --dump-dom.
LAYOUT_PROBE = """<script>
(() => {
  const facts = {};
  const cells = [...document.querySelectorAll('table.m td, table.m th')];
  facts.cells = cells.length;
  facts.overflowing = cells.filter(c => c.scrollWidth > c.clientWidth + 1).map(c => c.textContent.slice(0, 60));
  facts.viewport = window.innerWidth;
  facts.pageWidth = document.documentElement.scrollWidth;
  facts.viewportHeight = window.innerHeight;
  const top = id => document.getElementById(id).getBoundingClientRect().top + window.scrollY;
  facts.legendTop = top('legend');
  facts.summaryTop = top('summary');
  facts.matrixTop = top('matrix');
  facts.firstMatrixRowTop = document.querySelector('table.m tbody tr:not(.src)').getBoundingClientRect().top;
  const bad = [...document.querySelectorAll('table.m td.c.fail a, table.m td.c.known-deviation a')];
  facts.failingCells = bad.length;
  facts.failingTargets = bad.map(a => a.getAttribute('href'));
  facts.missingTargets = facts.failingTargets.filter(h => !document.getElementById(h.slice(1)));
  const rows = () => [...document.querySelectorAll('table.m tbody tr:not(.src)')].filter(r => r.getClientRects().length);
  facts.rowsAll = rows().length;
  document.getElementById('only-standing-out').checked = true;
  facts.rowsFiltered = rows().length;
  facts.filteredVerdicts = rows().map(r => [...r.querySelectorAll('td.c')].map(c => c.className.replace('c ', '')));
  const pre = document.createElement('pre');
  pre.id = 'layout-facts';
  pre.textContent = JSON.stringify(facts);
  document.body.appendChild(pre);
})();
</script>"""


@pytest.fixture(scope="session")
def page(tmp_path_factory):
    """A report of six systems (the most it must fit at 1280 px): the simulated queue manager clean and with
    three faults, RabbitMQ and ActiveMQ."""
    base = tmp_path_factory.mktemp("browser")
    runs = (("ok", []), ("bad", ["--faults", "get-inhibit-ignored"]), ("prio", ["--faults", "priority-ignored"]),
            ("cut", ["--faults", "cut-commits-uow"]))
    for name, faults in runs:
        code = cli.main(["run", "--adapter", "simulated", "--area", "core,syncpoint", "--seed", "7", "--examples",
                         "10", "--adapter-opt", "platform=distributed", "--results", str(base / name), *faults],
                        out=io.StringIO())
        assert code in (0, 1)
    out = base / "report.html"
    assert cli.main(["report", *(str(base / name) for name, _ in runs), *map(str, BROKER_RESULTS), "--format", "html",
                     "--out", str(out), "--report-only"], out=io.StringIO()) == 0
    return out


def layout_facts(page, tmp_path, width=1280, height=1000) -> dict:
    probe = tmp_path / "probed.html"
    probe.write_text(page.read_text().replace("</body>", LAYOUT_PROBE + "</body>"))
    proc, console = chromium(f"--window-size={width},{height}", "--dump-dom", probe.as_uri(), cwd=tmp_path)
    assert console == [], console
    found = re.search(r'<pre id="layout-facts">(.*?)</pre>', proc.stdout, re.S)
    assert found, proc.stdout[-2000:]
    return json.loads(html.unescape(found.group(1)))


def test_the_matrix_reads_at_1280_px_and_every_failing_cell_leads_to_its_failure(page, tmp_path):
    facts = layout_facts(page, tmp_path)
    assert facts["viewport"] == 1280 and facts["cells"] > 100
    assert facts["pageWidth"] <= 1280, facts["pageWidth"]            # no horizontal scrolling
    assert facts["overflowing"] == [], facts["overflowing"][:10]     # no cell spills out of its column
    # The first screen: the legend, then the summary, then the start of the matrix.
    assert facts["legendTop"] < facts["summaryTop"] < facts["matrixTop"] < facts["firstMatrixRowTop"]
    assert facts["firstMatrixRowTop"] < facts["viewportHeight"]
    # One click from a failing cell to the failure: each links to a failure section that exists.
    assert facts["failingCells"] >= 2 and facts["missingTargets"] == []
    assert all("-failure-" in h for h in facts["failingTargets"]), [h for h in facts["failingTargets"] if "-failure-" not in h]
    # The filter leaves only rules some system fails or on which the systems that ran them disagree.
    assert 0 < facts["rowsFiltered"] < facts["rowsAll"]
    for verdicts in facts["filteredVerdicts"]:
        judged = {v for v in verdicts if v not in ("not-run", "not-applicable", "none")}
        assert {"fail", "one-of", "known-deviation", "error"} & set(verdicts) or len(judged) > 1, verdicts


def test_the_layout_check_can_fail(tmp_path):
    """The probe sees a cell that spills out of its column and a failing cell leading nowhere."""
    bad = tmp_path / "bad.html"
    bad.write_text('<!DOCTYPE html><html><body><ul id="legend"></ul><h2 id="summary">s</h2><h2 id="matrix">m</h2>'
                   '<input type="checkbox" id="only-standing-out"><table class="m" style="table-layout:fixed;'
                   'width:200px"><tbody><tr><td style="white-space:nowrap">' + "x" * 300 + '</td>'
                   '<td class="c fail"><a href="#nowhere">FAIL</a></td></tr></tbody></table></body></html>')
    facts = layout_facts(bad, tmp_path)
    assert facts["overflowing"] and facts["missingTargets"] == ["#nowhere"]


def test_report_renders_with_matrix_and_no_console_errors(page, tmp_path):
    shot = tmp_path / "report.png"
    proc, console = chromium(f"--screenshot={shot}", "--window-size=1400,2200", page.as_uri(), cwd=tmp_path)
    assert shot.exists() and shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 20000
    assert console == [], console
    proc, console = chromium("--dump-dom", page.as_uri(), cwd=tmp_path)
    dom = proc.stdout
    assert 'id="matrix"' in dom and "Rules by system" in dom
    assert "simulated [faults: get-inhibit-ignored]" in dom
    assert dom.count("<img") >= 4 and "data:image/png;base64," in dom   # the plots, embedded
    assert 'alt="Rule verdicts per area and system"' in dom
    # nothing to fetch: no image, script or style from elsewhere (links to IBM's pages are only links)
    assert not re.search(r"""\b(src|srcset)=["']?(https?:)?//""", dom)
    assert not re.search(r"""<link[^>]+href=["']?(https?:)?//""", dom)


def test_console_errors_are_detected(tmp_path):
    """The check above can fail: a page with a script error is caught."""
    bad = tmp_path / "bad.html"
    bad.write_text("<!DOCTYPE html><html><body><p id='matrix'>x</p><script>noSuchFunction()</script></body></html>")
    _, console = chromium(f"--screenshot={tmp_path / 'bad.png'}", bad.as_uri(), cwd=tmp_path)
    assert any("noSuchFunction" in line for line in console), console
