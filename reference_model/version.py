"""The kit's version, in one place: the package metadata reads it (pyproject.toml), and every part of the kit,
adapters included, imports it from here."""

__version__ = "0.1.0"

#: The kit's optional parts (pyproject.toml's optional-dependencies) and what each brings: distribution name ->
#: the module it is imported as.  A plain install runs the model, the machines, the simulated queue manager,
#: the JSON-lines adapter, the CLI and the reports; each extra adds what its name says.
EXTRAS: dict[str, dict[str, str]] = {
    "spark": {"pyspark": "pyspark"},
    "plots": {"matplotlib": "matplotlib"},
    "rabbitmq": {"pika": "pika"},
    "activemq": {"stomp.py": "stomp", "JPype1": "jpype"},
    "examples": {"queuelib": "queuelib"},
}


def extra_for(module: str | None) -> str | None:
    """The extra that brings ``module`` (a dotted name: its top level counts), or None."""
    top = (module or "").split(".")[0]
    return next((extra for extra, brings in EXTRAS.items() if top in brings.values()), None)


def install_hint(extra: str) -> str:
    """How to install ``extra``, in words to print."""
    return f"pip install 'mqconform[{extra}]' (bash scripts/setup.sh installs every extra)"
