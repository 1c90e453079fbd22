"""Benchmarks of the kit itself (``mqconform bench``): outside what a plain run imports."""
