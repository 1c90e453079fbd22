"""mqconform's reference model: an executable encoding of IBM MQ's documented rules.

Pure and deterministic: no I/O and no wall clock.  Time is a virtual clock in
tenths of a second.  :func:`reference_model.model.step` is the entry point.
"""
