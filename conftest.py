"""Test configuration for the kit's own tests (``tests/``).

The Hypothesis profile comes from ``HYPOTHESIS_PROFILE`` (``dev`` by default,
``ci`` in CI); the profiles themselves are registered by the mqconform plugin.
"""

import os

from hypothesis import settings

import conformance.plugin  # noqa: F401  (registers the profiles)

settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev"))
