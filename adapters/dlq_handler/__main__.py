"""``python -m adapters.dlq_handler [--fault NAME ...]``: the kit's handler behind the external protocol."""

import argparse
import sys

from adapters.dlq_handler.serve import serve

parser = argparse.ArgumentParser(prog="python -m adapters.dlq_handler", description=__doc__)
parser.add_argument("--fault", action="append", default=[], help="a dlq fault to break the handler with")
args = parser.parse_args()
sys.exit(serve(frozenset(args.fault)))
