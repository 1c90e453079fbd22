"""Running the ``mqconform`` command in-process, with its output and its one-line errors."""

from __future__ import annotations

import io
import sys

from conformance import cli


def run_cli(*argv) -> tuple[int, str, str]:
    """(exit code, standard output, standard error) of ``mqconform ARGV``; arguments may be paths."""
    out, err = io.StringIO(), io.StringIO()
    old, sys.stderr = sys.stderr, err
    try:
        code = cli.main([str(a) for a in argv], out=out)
    finally:
        sys.stderr = old
    return code, out.getvalue(), err.getvalue()
