"""The ``mqconform`` command line: one module per command group, each adding its parsers and commands.

Exit codes: 0 conformant (or a listing printed), 1 non-conformance found,
2 usage or infrastructure error, 3 ``brokers status`` found a broker not ready,
130 interrupted (SIGINT or SIGTERM; a run writes what it found so far).  Errors are one line on stderr, never a traceback.
"""

from __future__ import annotations

import argparse
import functools
import sys

from adapters.base import AdapterError, AdapterOptionError
from adapters.brokers.server import BrokerControlError
from adapters.registry import UnknownAdapter
from conformance import __version__
from conformance.cli import bench, brokers, campaign, crash, ibmmq, listings, report, run, tools
from conformance.cli.bench import BENCH_FIGURES
from conformance.cli.common import (_RESULTS, EXIT_ERROR, EXIT_INTERRUPTED, EXIT_NONCONFORMANT, EXIT_NOT_READY,
                                    EXIT_OK, UsageError, _Parser, _save_traceback)
from conformance.cli.run import _summary
from conformance.tools.cluster_whatif import ClusterConfigError
from conformance.records.history import ReplayFileError
from conformance.runner.session import HarnessError
from conformance.runner.stack import with_frame_room
from reference_model.model import HistoryError
from reference_model.version import extra_for, install_hint

__all__ = ["main", "build_parser", "COMMANDS", "BENCH_FIGURES", "UsageError", "EXIT_OK", "EXIT_NONCONFORMANT",
           "EXIT_ERROR", "EXIT_NOT_READY", "EXIT_INTERRUPTED", "_summary"]

#: The command groups, in the order ``mqconform --help`` lists their commands.
GROUPS = (run, campaign, crash, listings, tools, report, brokers, ibmmq, bench)

COMMANDS = {name: command for group in GROUPS for name, command in group.COMMANDS.items()}


@functools.lru_cache(maxsize=1)
def build_parser() -> argparse.ArgumentParser:
    """The command line's parser, built once a process: parsing changes nothing in it, and building it (every
    command's options and help) cost about 5 ms of each in-process call, more than many a call's own work."""
    p = _Parser(prog="mqconform", description="Conformance kit for IBM MQ queue-manager semantics.")
    p.add_argument("--version", action="version", version=f"mqconform {__version__}")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for group in GROUPS:
        group.add_parsers(sub)
    return p


@with_frame_room
def main(argv: list[str] | None = None, out=None) -> int:
    out = out or sys.stdout
    err = sys.stderr
    _RESULTS.clear()
    command = "this command"
    try:
        args = build_parser().parse_args(argv)
        command = args.command
        return COMMANDS[args.command](args, out)
    except UsageError as exc:
        err.write(f"mqconform: error: {exc}\n")
    except UnknownAdapter as exc:
        err.write(f"mqconform: error: {exc}\n")
    except AdapterOptionError as exc:
        err.write(f"mqconform: error: {exc}\n")
    except ReplayFileError as exc:
        err.write(f"mqconform: error: {exc}\n")
    except (HarnessError, AdapterError, BrokerControlError) as exc:
        err.write(f"mqconform: error: {exc}\n")
    except ClusterConfigError as exc:
        err.write(f"mqconform: error: {exc}\n")
    except HistoryError as exc:
        err.write(f"mqconform: error: history not executable: {exc}\n")
    except KeyboardInterrupt:
        err.write("mqconform: interrupted\n")
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # output piped into a reader that stopped early
        sys.stderr.close()
        return EXIT_ERROR
    except ModuleNotFoundError as exc:
        if extra_for(exc.name) is None:
            return _internal_error(exc, err)
        # a part of the kit installed without its extra: which to install, on one line
        extra = extra_for(exc.name)
        err.write(f"mqconform: error: {command} needs the Python package {exc.name.split('.')[0]}, which the "
                  f"kit's {extra!r} extra brings: {install_hint(extra)}\n")
    except Exception as exc:  # noqa: BLE001 - a crash is never a verdict: one line, the traceback kept
        return _internal_error(exc, err)
    return EXIT_ERROR


def _internal_error(exc: Exception, err) -> int:
    """A crash is never a verdict: one line, the traceback kept."""
    err.write(f"mqconform: error: internal error ({type(exc).__name__}: {' '.join(str(exc).split())[:200]}); "
              f"traceback in {_save_traceback()}\n")
    return EXIT_ERROR
