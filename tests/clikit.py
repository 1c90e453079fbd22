"""Running the ``mqconform`` command in-process, with its output and its one-line errors."""

from __future__ import annotations

import io
import sys
from pathlib import Path

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


def faulty_run(results, fault: str = "priority-ignored", seed: str = "7"):
    """Run the core area on the simulated queue manager (distributed) with ``fault`` into ``results``; the
    replay file of the first failure it recorded (the run must fail)."""
    code, out, err = run_cli("run", "--adapter", "simulated", "--faults", fault, "--area", "core", "--seed", seed,
                             "--keep-going", "0", "--adapter-opt", "platform=distributed", "--results", results)
    assert code == 1, out + err
    return sorted((Path(results) / "failures").glob("*.json"))[0]
