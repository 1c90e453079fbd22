"""RabbitMQ 3.10 over AMQP 0-9-1: the ``rabbitmq`` adapter (mapping in docs/adapters/rabbitmq.md)."""

from adapters.rabbitmq.adapter import RabbitMQAdapter, answered_within

__all__ = ["RabbitMQAdapter", "answered_within"]
