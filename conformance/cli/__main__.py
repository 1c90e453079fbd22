"""``python -m conformance.cli``: the ``mqconform`` command."""

import sys

from conformance.cli import main

sys.exit(main())
