"""Adapters: how the kit drives a queue manager (see :mod:`adapters.base`)."""
