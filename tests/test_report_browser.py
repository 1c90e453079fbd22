"""The HTML report as a person sees it: rendered by headless Chromium (installed by scripts/setup.sh)."""

import io
import re
import shutil
import subprocess
import sys

import pytest

from conformance import cli

CHROMIUM = shutil.which("chromium")


def chromium(*args, cwd):
    if CHROMIUM is None:
        pytest.fail("chromium is not installed: run 'bash scripts/setup.sh --install'")
    proc = subprocess.run([CHROMIUM, "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                           "--enable-logging=stderr", "--v=0", *args], capture_output=True, text=True, timeout=120,
                          cwd=cwd)
    console = [line for line in proc.stderr.splitlines() if ":CONSOLE" in line]
    return proc, console


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    base = tmp_path_factory.mktemp("browser")
    for name, faults in (("ok", []), ("bad", ["--faults", "get-inhibit-ignored"])):
        code = cli.main(["run", "--adapter", "simulated", "--area", "core", "--seed", "7", "--examples", "10",
                         "--adapter-opt", "platform=distributed", "--results", str(base / name), *faults],
                        out=io.StringIO())
        assert code in (0, 1)
    out = base / "report.html"
    assert cli.main(["report", str(base / "ok"), str(base / "bad"), "--format", "html", "--out", str(out),
                     "--report-only"], out=io.StringIO()) == 0
    return out


def test_report_renders_with_matrix_and_no_console_errors(page, tmp_path):
    shot = tmp_path / "report.png"
    proc, console = chromium(f"--screenshot={shot}", "--window-size=1400,2200", page.as_uri(), cwd=tmp_path)
    assert shot.exists() and shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 20000
    assert console == [], console
    proc, console = chromium("--dump-dom", page.as_uri(), cwd=tmp_path)
    dom = proc.stdout
    assert 'id="matrix"' in dom and "Rules by system" in dom
    assert "simulated [faults: get-inhibit-ignored]" in dom
    assert dom.count("<img") >= 2 and "data:image/png;base64," in dom   # the coverage plots, embedded
    # nothing to fetch: no image, script or style from elsewhere (links to IBM's pages are only links)
    assert not re.search(r"""\b(src|srcset)=["']?(https?:)?//""", dom)
    assert not re.search(r"""<link[^>]+href=["']?(https?:)?//""", dom)


def test_console_errors_are_detected(tmp_path):
    """The check above can fail: a page with a script error is caught."""
    bad = tmp_path / "bad.html"
    bad.write_text("<!DOCTYPE html><html><body><p id='matrix'>x</p><script>noSuchFunction()</script></body></html>")
    _, console = chromium(f"--screenshot={tmp_path / 'bad.png'}", bad.as_uri(), cwd=tmp_path)
    assert any("noSuchFunction" in line for line in console), console
