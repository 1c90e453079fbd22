"""The nemesis: faults injected from outside a broker client while a case runs.

A broker adapter with ``--adapter-opt nemesis=on`` sends every client connection
through a :class:`CuttingProxy` on 127.0.0.1, which forwards bytes both ways
and can cut one program connection's TCP links with a reset, as a network
failure would:

- :meth:`CuttingProxy.cut` resets them now (between two calls of the program);
- :meth:`CuttingProxy.arm` resets them once the program's next request has
  reached the broker and the broker has answered it, dropping the answer: the
  call is in flight when the connection breaks, and only later observations can
  tell whether the broker carried it out.  (Cutting when the answer comes, not
  after a fixed grace, makes the outcome the same on a loaded machine as on an
  idle one: the broker has always acted on the request, so one seed gives one
  run.)

Neither the client library nor the broker is told: each finds out as it would
on a real network.  Which links belong to which program connection is decided
by *tagging*: links accepted while :meth:`CuttingProxy.tagging` is active carry
its tag (the kit makes calls one at a time, so the links a client opens while
connecting are that connection's).  Abrupt restarts (SIGKILL) are the broker
lifecycle's: :meth:`adapters.brokers.server.BrokerServer.restart` with ``kill``.
"""

from __future__ import annotations

import contextlib
import socket
import struct
import threading
import time

LOOPBACK = "127.0.0.1"
#: How long an armed link waits, after passing the request on, for the broker's answer before it cuts
#: anyway (a request the broker does not answer, or a broker that is paused).
IN_FLIGHT_ANSWER_WAIT = 2.0


class _Link:
    """One client TCP connection and its twin to the broker."""

    def __init__(self, client: socket.socket, upstream: socket.socket, tag: str | None) -> None:
        self.client = client
        self.upstream = upstream
        self.tag = tag
        self.armed = False
        self.muted = False   # the broker's answers are dropped (the connection is being cut)
        self.answered = threading.Event()   # an answer came (and was dropped) while muted
        self.closed = threading.Event()

    def cut(self) -> None:
        """Reset both sides (SO_LINGER 0: the peers see a reset, not an orderly close)."""
        if self.closed.is_set():
            return
        self.closed.set()
        self.muted = True
        for sock in (self.client, self.upstream):
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RD)   # wakes the pump blocked reading it, sends nothing
            with contextlib.suppress(OSError):
                sock.close()                    # with linger 0: a reset


class CuttingProxy:
    """A TCP proxy to ``target`` whose links can be cut per tag (see the module's text)."""

    def __init__(self, host: str, port: int) -> None:
        self.target = (host, port)
        self._listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._listener.bind((LOOPBACK, 0))
        self._listener.listen(64)
        self.port = self._listener.getsockname()[1]
        self._lock = threading.Lock()
        self._links: list[_Link] = []
        self._tag: str | None = None
        self._stopped = threading.Event()
        #: Links cut so far, by tag (for reports and tests).
        self.cuts: dict[str, int] = {}
        threading.Thread(target=self._accept, name="nemesis-accept", daemon=True).start()

    # ------------------------------------------------------------------ control
    @contextlib.contextmanager
    def tagging(self, tag: str):
        """Links accepted inside the block belong to program connection ``tag``."""
        self._tag = tag
        try:
            yield
        finally:
            self._tag = None

    def cut(self, tag: str) -> int:
        """Reset ``tag``'s links now; returns how many were cut."""
        links = self._take(tag)
        for link in links:
            link.cut()
        self.cuts[tag] = self.cuts.get(tag, 0) + len(links)
        return len(links)

    def arm(self, tag: str) -> None:
        """Cut ``tag``'s links once the next request on them has been passed on to the broker."""
        with self._lock:
            for link in self._links:
                if link.tag == tag and not link.closed.is_set():
                    link.armed = True

    def wait_cut(self, tag: str, timeout: float) -> bool:
        """Wait until no link of ``tag`` is open (an armed cut has happened); False on timeout."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            with self._lock:
                if not any(link.tag == tag and not link.closed.is_set() for link in self._links):
                    return True
            time.sleep(0.01)
        return False

    def forget(self, tag: str) -> None:
        """The program ended connection ``tag``: its closed links are dropped from the books."""
        with self._lock:
            self._links = [link for link in self._links if link.tag != tag or not link.closed.is_set()]

    def close(self) -> None:
        self._stopped.set()
        with contextlib.suppress(OSError):
            self._listener.close()
        with self._lock:
            links, self._links = self._links, []
        for link in links:
            link.cut()

    # ------------------------------------------------------------------ forwarding
    def _take(self, tag: str) -> list[_Link]:
        with self._lock:
            return [link for link in self._links if link.tag == tag and not link.closed.is_set()]

    def _accept(self) -> None:
        while not self._stopped.is_set():
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            try:
                upstream = socket.create_connection(self.target, timeout=10)
                upstream.settimeout(None)
            except OSError:
                with contextlib.suppress(OSError):
                    client.close()
                continue
            for sock in (client, upstream):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            link = _Link(client, upstream, self._tag)
            with self._lock:
                self._links.append(link)
            threading.Thread(target=self._pump, args=(link, True), daemon=True, name="nemesis-up").start()
            threading.Thread(target=self._pump, args=(link, False), daemon=True, name="nemesis-down").start()

    def _cut_when_answered(self, link: _Link) -> None:
        link.answered.wait(IN_FLIGHT_ANSWER_WAIT)
        link.cut()
        with self._lock:
            self.cuts[link.tag] = self.cuts.get(link.tag, 0) + 1

    def _pump(self, link: _Link, up: bool) -> None:
        source, sink = (link.client, link.upstream) if up else (link.upstream, link.client)
        while not link.closed.is_set():
            try:
                data = source.recv(65536)
            except OSError:
                data = b""
            if not data:
                break
            if up and link.armed:
                # The request goes out, the answer never comes back: the call is in flight when it
                # breaks.  What else the client sends without waiting for an answer (frames it
                # pipelines behind the first) goes out too, until the broker answers.
                link.armed = False
                link.muted = True
                threading.Thread(target=self._cut_when_answered, args=(link,), daemon=True,
                                 name="nemesis-in-flight").start()
            if not up and link.muted:
                link.answered.set()
                continue
            try:
                sink.sendall(data)
            except OSError:
                break
        # One side ended: end the other the same way (an orderly close stays orderly).
        if not link.closed.is_set():
            link.closed.set()
            for sock in (link.client, link.upstream):
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
                with contextlib.suppress(OSError):
                    sock.close()
