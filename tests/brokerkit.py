"""Helpers for the tests that run the kit against a real broker the test starts itself."""

from __future__ import annotations

import os
import subprocess
import sys
import time

from reference_model import language as L
from reference_model import mqconst as C


def mqconform(*argv, env=None, timeout=300):
    """``mqconform ARGV`` as a separate process under a deadline: (exit code, stdout, stderr, seconds)."""
    started = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "conformance.cli", *map(str, argv)], capture_output=True,
                          text=True, timeout=timeout, stdin=subprocess.DEVNULL, env={**os.environ, **(env or {})})
    return proc.returncode, proc.stdout, proc.stderr, time.monotonic() - started


def put(conn, handle, body, options=C.MQPMO_NO_SYNCPOINT, **md):
    return L.Put(conn=conn, handle=handle, body=body, options=options, md=L.MessageDescriptor(**md))


def get(conn, handle, options=C.MQGMO_NO_SYNCPOINT):
    return L.Get(conn=conn, handle=handle, options=options)


def running_broker(name, directory):
    """A private broker in ``directory``, stopped by PID when the generator is closed (a fixture body)."""
    from adapters.brokers import server

    srv = server(name, directory)
    srv.up()
    try:
        yield srv
    finally:
        srv.down()
