"""What the two ActiveMQ adapters share: the broker the kit starts and what ActiveMQ can express."""

from __future__ import annotations

from adapters.base import Dependency
from adapters.brokers.activemq import ActiveMQServer
from adapters.broker_shim import BrokerShim
from reference_model import mqconst as C


#: The settings of the ActiveMQ the kit starts (adapters/brokers/activemq.py) that bear on verdicts.
BROKER_SETTINGS = (
    "prioritizedMessages=true (and useCache=false) for the queues of MSGDLVSQ(PRIORITY) (prio.>)",
    "expired messages discarded, not dead-lettered (sharedDeadLetterStrategy processExpired=false)",
    "expireMessagesPeriod=1000 (expired messages swept every second)",
)


class ActiveMQShim(BrokerShim):
    """Settings common to ActiveMQ over STOMP and over OpenWire."""

    system = "ActiveMQ Classic"
    server_class = ActiveMQServer
    option_names = BrokerShim.option_names - {"vhost"}
    # No per-destination message count limit: MAXDEPTH cannot be expressed.
    definable = BrokerShim.definable - {"MAXDEPTH"}
    default_user = "mqconform"
    default_password = "mqconform"
    # The broker's expiry sweep runs every second; dispatch never hands out an expired message.
    expiry_tolerance = 3
    can_browse = True
    # A handle's browse cursor is kept by the adapter, so getting the message under it can be expressed.
    unsupported_gmo = C.MQGMO_LOCK | C.MQGMO_UNLOCK | C.MQGMO_MARK_SKIP_BACKOUT
    # Any priority and any expiry: the JMS client's send and STOMP's priority and expires headers take any
    # integer (the broker clamps a priority to 0-9; a time to live of zero or less, or an expiry time already
    # past, is taken as given), so CORE-08/09 and EXP-10 are run, not declared away.
    priorities = (None, None)
    expiries = (None, None)

    broker_configured = frozenset(BROKER_SETTINGS)

    def dependencies(self) -> tuple[Dependency, ...]:
        """The broker settings of the ActiveMQ the kit starts (adapters/brokers/activemq.py): a broker of one's
        own gives these verdicts only with the same settings."""
        return (
            Dependency(kind="broker setting", what=BROKER_SETTINGS[0],
                       why="ActiveMQ's default dispatch ignores message priority",
                       rules={"CORE-04", "CORE-05", "CORE-08"}),
            Dependency(kind="broker setting", what=BROKER_SETTINGS[1],
                       why="by default ActiveMQ moves an expired message to ActiveMQ.DLQ, where MQ discards it",
                       rules={"EXP-04", "EXP-05"}),
            Dependency(kind="broker setting", what=BROKER_SETTINGS[2],
                       why="how long an expired message still counts toward the depth before it is removed",
                       rules={"EXP-11", "EXP-26"}),
        )
