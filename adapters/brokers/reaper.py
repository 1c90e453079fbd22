"""Stops a private broker when the process that owns it ends, however it ends.

A run, a campaign or a test that starts a broker of its own stops it when it
closes (or at interpreter exit).  A process killed by a signal (a test's
timeout, a CI job cancelled, SIGKILL) runs neither, and the broker, started in a
session of its own so that a terminal's Ctrl-C reaches the kit and not the
broker, would run on unowned.  So a broker with an owner
(:attr:`adapters.brokers.server.BrokerServer.owner`) gets this small process
beside it: it reads the broker's record (``state.json``) every
:data:`POLL` seconds and

- ends as soon as the record is gone or names another reaper (the broker was
  stopped, or started again, on purpose);
- once the owner (its PID with its start time) is no longer running, stops the
  recorded processes as ``down`` does (SIGTERM, SIGKILL after a deadline),
  removes the record and ends.

Usage (the broker lifecycle starts it): ``python -m adapters.brokers.reaper STATE_FILE TOKEN``.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from adapters.brokers.server import running_process, stop_processes

#: Seconds between two looks at the owner and the record.
POLL = 0.5


def _record(state_file: Path, token: str) -> dict | None:
    """The broker's record while it is still this reaper's to watch, else None."""
    try:
        state = json.loads(state_file.read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(state, dict) or (state.get("reaper") or {}).get("token") != token:
        return None
    return state


def watch(state_file: Path, token: str, poll: float = POLL) -> bool:
    """Watch until the broker is stopped on purpose (False) or its owner ends and the broker is stopped here
    (True)."""
    while True:
        state = _record(state_file, token)
        if state is None:
            return False
        if running_process(state.get("owner") or {}) is None:
            stop_processes(state)
            if _record(state_file, token) is not None:
                state_file.unlink(missing_ok=True)
            print(f"reaper: owner {state['owner'].get('pid')} ended; broker {state.get('broker')} stopped",
                  flush=True)
            return True
        time.sleep(poll)


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: python -m adapters.brokers.reaper STATE_FILE TOKEN", file=sys.stderr)
        return 2
    watch(Path(argv[0]), argv[1])
    return 0


if __name__ == "__main__":  # pragma: no cover - run as a process by the broker lifecycle
    sys.exit(main(sys.argv[1:]))
