"""A private ActiveMQ Classic broker (Debian's ``activemq``) on 127.0.0.1: STOMP and OpenWire.

The broker runs from ``/usr/share/activemq/bin/activemq.jar`` with its own
configuration, KahaDB store and log under the run directory.  Queues whose
names begin with ``prio.`` deliver in priority order (``prioritizedMessages``);
the others are FIFO.  Expired messages are swept every second and discarded
(MQ discards expired messages; it never dead-letters them), and idle empty queues
are removed, so the store stays small across many test cases.  With ``settings = "defaults"`` (a run of
``mapping=defaults`` that starts its own broker) none of that but the removal of idle queues: the broker as
ActiveMQ installs it.
"""

from __future__ import annotations

import shutil
import socket
from pathlib import Path

from adapters.brokers.server import LOOPBACK, BrokerServer, Process, free_port

HOME = Path("/usr/share/activemq")

CONFIG = """<beans xmlns="http://www.springframework.org/schema/beans"
  xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"
  xsi:schemaLocation="http://www.springframework.org/schema/beans http://www.springframework.org/schema/beans/spring-beans.xsd
    http://activemq.apache.org/schema/core http://activemq.apache.org/schema/core/activemq-core.xsd">
 <broker xmlns="http://activemq.apache.org/schema/core" brokerName="mqconform" useJmx="false" schedulePeriodForDestinationPurge="10000"
         persistent="true" schedulerSupport="false" dataDirectory="{data}">
  <destinationPolicy><policyMap><policyEntries>
   <policyEntry queue="prio.>" prioritizedMessages="true" useCache="false" expireMessagesPeriod="1000"
                gcInactiveDestinations="true" inactiveTimoutBeforeGC="30000">
    <deadLetterStrategy><sharedDeadLetterStrategy processExpired="false" processNonPersistent="false"/></deadLetterStrategy>
   </policyEntry>
   <policyEntry queue=">" expireMessagesPeriod="1000" gcInactiveDestinations="true" inactiveTimoutBeforeGC="30000">
    <deadLetterStrategy><sharedDeadLetterStrategy processExpired="false" processNonPersistent="false"/></deadLetterStrategy>
   </policyEntry>
  </policyEntries></policyMap></destinationPolicy>
  <persistenceAdapter><kahaDB directory="{data}/kahadb"/></persistenceAdapter>
  <systemUsage><systemUsage>
   <memoryUsage><memoryUsage limit="64 mb"/></memoryUsage>
   <storeUsage><storeUsage limit="1 gb"/></storeUsage>
   <tempUsage><tempUsage limit="1 gb"/></tempUsage>
  </systemUsage></systemUsage>
  <transportConnectors>
   <transportConnector name="stomp" uri="stomp://{host}:{port}?transport.tcpNoDelay=true"/>
   <transportConnector name="openwire" uri="tcp://{host}:{openwire}?transport.tcpNoDelay=true"/>
  </transportConnectors>
 </broker>
</beans>
"""

#: The same broker as ActiveMQ installs it, for ``mapping=defaults``: no priority dispatch, expired messages
#: dead-lettered and swept at the broker's default period (only idle empty queues still removed, to keep the
#: store small: that changes no message's fate).
CONFIG_DEFAULTS = CONFIG[:CONFIG.index("  <destinationPolicy>")] + """  <destinationPolicy><policyMap><policyEntries>
   <policyEntry queue=">" gcInactiveDestinations="true" inactiveTimoutBeforeGC="30000"/>
  </policyEntries></policyMap></destinationPolicy>
""" + CONFIG[CONFIG.index("  <persistenceAdapter>"):]

LOG4J = """log4j.rootLogger=WARN, logfile
log4j.appender.logfile=org.apache.log4j.FileAppender
log4j.appender.logfile.file={data}/activemq.log
log4j.appender.logfile.append=true
log4j.appender.logfile.layout=org.apache.log4j.PatternLayout
log4j.appender.logfile.layout.ConversionPattern=%d %-5p %c{{1}} - %m%n
"""


def stomp_handshake(host: str, port: int, timeout: float = 3.0) -> bool:
    """A STOMP 1.2 CONNECT answered by CONNECTED (then DISCONNECT), bounded by socket timeouts."""
    try:
        with socket.create_connection((host, port), timeout=timeout) as sock:
            sock.settimeout(timeout)
            sock.sendall(b"CONNECT\naccept-version:1.2\nhost:localhost\nlogin:mqconform\npasscode:mqconform\n\n\x00")
            data = b""
            while b"\x00" not in data:
                chunk = sock.recv(1024)
                if not chunk:
                    return False
                data += chunk
            if data.lstrip(b"\r\n").startswith(b"CONNECTED"):
                sock.sendall(b"DISCONNECT\n\n\x00")
                return True
            return False
    except OSError:
        return False


class ActiveMQServer(BrokerServer):
    name = "activemq"
    package = "activemq"
    scheme = "stomp"
    client_ports = ("openwire",)

    def installed(self) -> str | None:
        if not (HOME / "bin" / "activemq.jar").exists():
            return f"{HOME / 'bin' / 'activemq.jar'} is missing (Debian package {self.package})"
        if not shutil.which("java"):
            return "java is missing (Debian package openjdk-17-jre-headless)"
        return None

    def ports(self) -> dict[str, int]:
        return {"main": free_port(), "openwire": free_port()}

    @property
    def log(self) -> Path:
        return self.dir / "data" / "console.out"

    handshake = staticmethod(stomp_handshake)

    def prepare(self, ports: dict[str, int]) -> list[Process]:
        d = self.dir
        for sub in ("conf", "data", "tmp"):
            (d / sub).mkdir(parents=True, exist_ok=True)
        config = CONFIG_DEFAULTS if self.settings == "defaults" else CONFIG
        (d / "conf" / "activemq.xml").write_text(config.format(data=d / "data", host=LOOPBACK, port=ports["main"],
                                                                   openwire=ports["openwire"]))
        (d / "conf" / "log4j.properties").write_text(LOG4J.format(data=d / "data"))
        # The JIT's first tier alone: the broker behaves the same, and a test suite's or a run's short traffic
        # costs about a third less CPU (C2 compiling for a steady state a run never reaches; measured in
        # docs/testing.md, 94 s of CPU to 62 s for the ActiveMQ mapping's tests).
        command = [
            shutil.which("java") or "java", "-Xms64m", "-Xmx512m", "-XX:-UsePerfData", "-XX:TieredStopAtLevel=1",
            "-Djava.awt.headless=true",
            f"-Djava.io.tmpdir={d / 'tmp'}", f"-Dlog4j.configuration=file:{d / 'conf' / 'log4j.properties'}",
            f"-Dactivemq.classpath={d / 'conf'}", f"-Dactivemq.home={HOME}", f"-Dactivemq.base={d}",
            f"-Dactivemq.conf={d / 'conf'}", f"-Dactivemq.data={d / 'data'}",
            "-jar", str(HOME / "bin" / "activemq.jar"), "start", f"xbean:file:{d / 'conf' / 'activemq.xml'}",
        ]
        return [Process("activemq", command, ports["main"], self.log, self.handshake)]
