"""The kit's version, in one place: the package metadata reads it (pyproject.toml), and every part of the kit,
adapters included, imports it from here."""

__version__ = "0.1.0"
