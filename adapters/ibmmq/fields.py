"""How the ``ibmmq`` adapter reads MQI character fields (shared by its modules)."""

from __future__ import annotations


def text(value) -> str:
    """An MQI character field (bytes or str, blank- or null-padded) as the text it holds."""
    if isinstance(value, bytes):
        value = value.decode("ascii", "replace")
    return str(value).rstrip(" \0")
