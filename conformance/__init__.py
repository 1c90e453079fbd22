"""mqconform's conformance engine: machines, checker, sessions, results, CLI and pytest plugin."""

from reference_model.version import __version__  # noqa: F401 - the kit's version, as conformance.__version__
