"""The real brokers the project installs, starts and stops itself (``mqconform brokers``)."""

from __future__ import annotations

from adapters.brokers.activemq import ActiveMQServer
from adapters.brokers.rabbitmq import RabbitMQServer
from adapters.brokers.server import BrokerControlError, BrokerServer, Status, port_open, run_dir

SERVERS: dict[str, type[BrokerServer]] = {"activemq": ActiveMQServer, "rabbitmq": RabbitMQServer}

__all__ = ["SERVERS", "BrokerControlError", "BrokerServer", "Status", "port_open", "run_dir", "server"]


def server(name: str, base=None) -> BrokerServer:
    if name not in SERVERS:
        raise BrokerControlError(f"unknown broker {name!r} (known: {', '.join(sorted(SERVERS))}, all)")
    return SERVERS[name](base)
