"""``mqconform brokers``: the kit's private RabbitMQ and ActiveMQ, started, shown and stopped."""

from __future__ import annotations

from pathlib import Path

from adapters.brokers.server import BrokerControlError
from conformance.cli.common import EXIT_NOT_READY, EXIT_OK


def add_parsers(sub) -> None:
    brokers = sub.add_parser("brokers", help="start, show or stop the kit's private RabbitMQ and ActiveMQ")
    brokers.add_argument("action", choices=("up", "status", "down"))
    brokers.add_argument("names", nargs="*", metavar="BROKER", help="rabbitmq, activemq or all (default: all)")
    brokers.add_argument("--dir", type=Path, help="run directory for the brokers' state, data and logs "
                         "(default: $MQCONFORM_RUN_DIR or ~/.cache/mqconform/run)")



def cmd_brokers(args, out) -> int:
    from adapters.brokers import SERVERS, server

    names = args.names or ["all"]
    names = sorted(SERVERS) if "all" in names else list(dict.fromkeys(names))
    servers = [server(n, args.dir) for n in names]  # an unknown name fails before anything starts
    failed = []
    for srv in servers:
        try:
            status = {"up": srv.up, "down": srv.down, "status": srv.status}[args.action]()
        except BrokerControlError as exc:
            failed.append(str(exc))
            continue
        out.write(status.line() + "\n")
        out.flush()
    if failed:
        raise BrokerControlError("; ".join(failed))
    if args.action == "status" and not all(srv.status().ready for srv in servers):
        return EXIT_NOT_READY
    return EXIT_OK




COMMANDS = {"brokers": cmd_brokers}
