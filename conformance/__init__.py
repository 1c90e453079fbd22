"""mqconform's conformance engine: machines, checker, sessions, results, CLI and pytest plugin."""

__version__ = "0.1.0"
