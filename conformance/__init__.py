"""mqconform's conformance engine: machines, checker, sessions, results, CLI and pytest plugin."""

__version__ = "0.1.0"

from conformance.stable import STABLE  # noqa: E402,F401 - before any case is generated
