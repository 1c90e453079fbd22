"""Finding adapters: the ``mq_conformance.adapters`` entry-point group."""

from __future__ import annotations

from importlib import import_module
from importlib.metadata import entry_points

from adapters.base import Adapter, AdapterOptionError

GROUP = "mq_conformance.adapters"

#: The kit's own adapters, used when the kit runs from a source tree without
#: being installed (installed, they come through the entry points as well).
BUILTIN = {
    "reference": "adapters.reference:ReferenceAdapter",
    "simulated": "adapters.simulated:SimulatedAdapter",
    "rabbitmq": "adapters.rabbitmq:RabbitMQAdapter",
    "activemq": "adapters.activemq.openwire:ActiveMQOpenWireAdapter",
    "activemq-stomp": "adapters.activemq:ActiveMQAdapter",
    "subprocess": "adapters.subprocess:SubprocessAdapter",
    "ibmmq": "adapters.ibmmq:IbmMqAdapter",
}


class UnknownAdapter(LookupError):
    def __init__(self, name: str, known: list[str]) -> None:
        super().__init__(f"unknown adapter {name!r} (known: {', '.join(known)})")
        self.name = name
        self.known = known


def _targets() -> dict[str, str]:
    targets = dict(BUILTIN)
    for ep in entry_points(group=GROUP):
        targets.setdefault(ep.name, ep.value)
    return targets


def adapter_names() -> list[str]:
    return sorted(_targets())


def adapter_class(name: str) -> type:
    targets = _targets()
    if name not in targets:
        raise UnknownAdapter(name, sorted(targets))
    module, _, attr = targets[name].partition(":")
    return getattr(import_module(module), attr)


def create_adapter(name: str, options: dict[str, str] | None = None) -> Adapter:
    """Instantiate adapter ``name``; raises UnknownAdapter or AdapterOptionError."""
    cls = adapter_class(name)
    try:
        return cls(**(options or {}))
    except TypeError as exc:  # a third-party adapter rejecting keyword options
        raise AdapterOptionError(f"adapter {name!r}: {exc}") from None
