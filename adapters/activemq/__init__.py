"""ActiveMQ Classic, two ways: ``activemq`` over OpenWire (JMS, the most faithful
mapping) and ``activemq-stomp`` over STOMP 1.2 for brokers reached only through STOMP."""

from adapters.activemq.stomp import ActiveMQAdapter

__all__ = ["ActiveMQAdapter"]
