"""Compliance reports built from result directories (see :mod:`conformance.results`)."""
