"""``mqconform ibmmq cleanup``: remove the queues and processes a killed run left on an IBM MQ queue manager."""

from __future__ import annotations

import re

from conformance.cli.common import EXIT_OK, UsageError, _adapter_options, _Parser

#: What a run's prefix looks like (the adapter's own rule), so that no other object can match.
PREFIX = re.compile(r"[A-Z0-9_][A-Z0-9._]{3,19}")


def add_parsers(sub) -> None:
    ibmmq = sub.add_parser("ibmmq", help="IBM MQ queue-manager tools")
    ibmmq_sub = ibmmq.add_subparsers(dest="ibmmq_command", required=True, parser_class=_Parser)
    cleanup = ibmmq_sub.add_parser("cleanup",
                                   help="delete the queues and processes whose names start with a run's prefix")
    cleanup.add_argument("--prefix", required=True, help="the run's prefix (run.json: system.prefix), e.g. MQC.1A2B")
    cleanup.add_argument("--adapter-opt", action="append", metavar="KEY=VALUE",
                         help="connection option of the ibmmq adapter (repeatable; or MQCONFORM_IBMMQ_*)")


def cmd_ibmmq(args, out) -> int:
    from adapters.ibmmq import IbmMqAdapter

    prefix = args.prefix.rstrip(".")
    if not PREFIX.fullmatch(prefix) or prefix.startswith(("SYSTEM", "AMQ")):
        raise UsageError(f"--prefix {args.prefix!r}: not a run's prefix (4 to 20 of A-Z, 0-9, '.' and '_', "
                         f"such as MQC.1A2B; never SYSTEM or AMQ)")
    adapter = IbmMqAdapter(**_adapter_options(args))
    try:
        removed = adapter.cleanup(prefix + ".")
    finally:
        adapter.close()
    out.write("".join(f"deleted {name}\n" for name in removed))
    out.write(f"{len(removed)} object(s) with prefix {prefix} deleted\n")
    return EXIT_OK


COMMANDS = {"ibmmq": cmd_ibmmq}
