"""Compliance reports from result directories: per system under test and side by side.

``mqconform report DIR [DIR ...] --format md|html|json|junit|migration --out FILE`` reads
the result directories (:mod:`reports.inputs`), builds one report structure
(:mod:`reports.matrix`) and renders it in the chosen format; every format
renders the same structure, so they agree.
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

from reports.deviations import load_all
from reports.inputs import ReportInputError, is_crash, load_crash, load_run, load_runs
from reports.matrix import Report, build

FORMATS = ("md", "html", "json", "junit", "migration")


def make_report(directories: list, baseline: list | None = None, known_deviations: list | None = None) -> Report:
    """The report over ``directories``; ``known_deviations`` are known-deviations files (TOML) to apply."""
    deviations = load_all(known_deviations)
    runs = load_runs(directories)
    crashes = [load_crash(d) for d in directories if is_crash(d)]
    base = [load_run(d) for d in baseline] if baseline else None
    return build(runs, base, deviations, crashes)


def render(report: Report, fmt: str, generated: float | None = None) -> str:
    generated = time.time() if generated is None else generated
    if fmt == "md":
        from reports.markdown import render_markdown
        return render_markdown(report, generated)
    if fmt == "html":
        from reports.html import render_html
        return render_html(report, generated)
    if fmt == "json":
        from reports.jsonform import render_json
        return render_json(report, generated)
    if fmt == "junit":
        from reports.junit import render_junit
        return render_junit(report)
    if fmt == "migration":
        from reports.migration import render_migration
        return render_migration(report, generated)
    raise ValueError(f"unknown format {fmt!r} (known: {', '.join(FORMATS)})")


def write_atomically(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` so that a failure never leaves a half-written report."""
    path = Path(path)
    directory = path.parent if str(path.parent) else Path(".")
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=directory)
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o666 & ~umask)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


__all__ = ["FORMATS", "ReportInputError", "make_report", "render", "write_atomically"]
