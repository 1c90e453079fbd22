"""What every command shares: errors, exit codes, argument types, result directories, signals."""

from __future__ import annotations

import argparse
import os
import secrets
import signal
import sys
import time
from pathlib import Path

from adapters.base import parse_options
from adapters.registry import adapter_class
from conformance import __version__
from conformance.runner.session import STOP
from reference_model.rules import parse_areas

EXIT_OK, EXIT_NONCONFORMANT, EXIT_ERROR = 0, 1, 2
EXIT_NOT_READY = 3  # mqconform brokers status: some broker is not ready
EXIT_INTERRUPTED = 130  # SIGINT or SIGTERM; what was found so far is written


class UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, exit 2
        raise UsageError(message)


def _areas(text: str | None) -> list[str]:
    try:
        return parse_areas(text)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def _without_default_restarts(adapter: str, options: dict[str, str]) -> dict[str, str]:
    """``options`` with ``restart=off`` where the adapter takes the option and it was not given: a restart acts on
    the whole system, disturbing every case run beside it (a run shared among jobs, a campaign's tasks on one
    broker), so such runs make none of the few a run on a broker the kit started makes by default."""
    if "restart" not in options and "restart" in getattr(adapter_class(adapter), "option_names", ()):
        return {**options, "restart": "off"}
    return options


def _adapter_options(args) -> dict[str, str]:
    options = parse_options(args.adapter_opt or [])
    faults = getattr(args, "faults", None)
    if faults is not None:
        if not faults.strip(" ,"):
            raise UsageError("--faults names no fault")
        options["faults"] = faults  # the simulated adapter validates the names
    return options


def _replay_system(args, adapter: str, options: dict) -> tuple[str, dict]:
    """The adapter and options a replay runs on: ``--adapter`` with its ``--adapter-opt``, else the recorded
    ``adapter`` and ``options`` (``--faults`` added to them).  (An ``--adapter-opt`` without ``--adapter`` is
    refused by ``mqconform replay`` before any file is read.)"""
    if args.adapter:
        return args.adapter, _adapter_options(args)
    options = dict(options)
    if args.faults:
        options["faults"] = args.faults
    return adapter, options


def _number(convert, what: str, ok, bound: str):
    """An argparse type: ``convert(text)``, which must be ``what`` and satisfy ``ok`` (else: must be ``bound``)."""
    def parse(text: str):
        try:
            value = convert(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not {what}: {text!r}") from None
        if not ok(value):
            raise argparse.ArgumentTypeError(f"must be {bound}: {text!r}")
        return value
    return parse


def _whole(minimum: int):
    """A whole number of at least ``minimum``."""
    return _number(int, "a whole number", lambda value: value >= minimum, f"at least {minimum}")


_positive = _whole(1)
_count = _whole(0)


def _duration(unit: str):
    """A number of ``unit`` above 0, finite."""
    return _number(float, f"a number of {unit}", lambda value: 0 < value < float("inf"), "more than 0")


_minutes = _duration("minutes")
_seconds = _duration("seconds")


def _seed(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None



def _adapter_args(p: argparse.ArgumentParser, required: bool) -> None:
    p.add_argument("--adapter", required=required, help="adapter name (see 'mqconform adapters')")
    p.add_argument("--adapter-opt", action="append", metavar="KEY=VALUE", help="adapter option (repeatable)")
    p.add_argument("--faults", help="comma-separated faults for the simulated adapter")



def _results_dir(given: Path | None) -> Path:
    """Where a run writes: a new directory, never one holding anything already."""
    if given is None:
        stamp = time.strftime("run-%Y%m%d-%H%M%S")
        return Path("mqconform-results") / f"{stamp}-{os.getpid()}-{secrets.token_hex(2)}"
    if given.exists() and (not given.is_dir() or any(given.iterdir())):
        raise UsageError(f"results directory {given} already holds something; give a new or empty one")
    return given


def _stop(signum, frame):
    STOP.set()
    raise KeyboardInterrupt


def _on_signals(handlers: dict) -> dict:
    """Install ``{signal: handler}`` (only the main thread can); returns the previous handlers."""
    previous = {}
    for sig, handler in handlers.items():
        try:
            previous[sig] = signal.signal(sig, handler)
        except (ValueError, TypeError):
            pass
    return previous




#: The results directory of the command running, once it exists: a crash's traceback goes there.
_RESULTS: list[Path] = []


def _save_traceback() -> str:
    import tempfile
    import traceback

    if _RESULTS and _RESULTS[-1].is_dir():
        path = str(_RESULTS[-1] / f"crash-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}.txt")
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    else:
        fd, path = tempfile.mkstemp(prefix="mqconform-crash-", suffix=".txt")
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(f"mqconform {__version__}: {' '.join(sys.argv)}\n\n")
        fh.write(traceback.format_exc())
    return path
