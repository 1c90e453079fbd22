"""The nemesis's cutting proxy, against a plain TCP server (no broker needed)."""

import socket
import threading
import time

import pytest

from adapters.brokers.nemesis import CuttingProxy


@pytest.fixture()
def server():
    """An upper-casing echo server on 127.0.0.1 that records every request it received."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    received: list[bytes] = []

    def serve(conn):
        with conn:
            while True:
                try:
                    data = conn.recv(1024)
                except OSError:
                    return
                if not data:
                    return
                if data.startswith(b"slow"):
                    # A server slow to act, which drops the request if its client is gone by then
                    # (as a broker does with the work of a connection that was reset).
                    time.sleep(0.6)
                    try:
                        conn.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT)
                    except BlockingIOError:
                        pass   # still connected, nothing more sent
                    except OSError:
                        return
                received.append(data)
                try:
                    conn.sendall(data.upper())
                except OSError:
                    return

    def accept():
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            threading.Thread(target=serve, args=(conn,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    yield listener.getsockname()[1], received
    listener.close()


def _connect(proxy, tag):
    with proxy.tagging(tag):
        sock = socket.create_connection(("127.0.0.1", proxy.port), timeout=5)
        sock.sendall(b"hello")
        assert sock.recv(1024) == b"HELLO"   # the link exists (and is tagged) once this returns
    return sock


def test_links_forward_both_ways_until_their_tag_is_cut(server):
    port, received = server
    proxy = CuttingProxy("127.0.0.1", port)
    try:
        a, b = _connect(proxy, "a"), _connect(proxy, "b")
        assert proxy.cut("a") == 1
        with pytest.raises(OSError):   # a reset, as a network failure would give
            a.sendall(b"more")
            if not a.recv(1024):
                raise ConnectionResetError("closed")
        b.sendall(b"still")
        assert b.recv(1024) == b"STILL"   # the other program connection is untouched
        assert proxy.cut("nobody") == 0
    finally:
        proxy.close()


@pytest.mark.parametrize("request_", [b"commit", b"slow commit"])
def test_an_armed_link_passes_the_request_on_and_cuts_once_the_server_has_answered(server, request_):
    """The request reaches the server and the answer never reaches the client. The outcome of a call
    in flight does not depend on the machine's load: the cut waits for the answer (and drops it), so
    even a slow server has always acted on the request."""
    port, received = server
    proxy = CuttingProxy("127.0.0.1", port)
    try:
        a = _connect(proxy, "a")
        proxy.arm("a")
        a.sendall(request_)
        with pytest.raises(OSError):
            if not a.recv(1024):   # the answer never reaches the client
                raise ConnectionResetError("closed")
        assert proxy.wait_cut("a", 5.0)
        assert request_ in received   # the server acted on the request: the outcome is the server's
    finally:
        proxy.close()
