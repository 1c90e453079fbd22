"""The conformance suite, collected by ``pytest --pyargs conformance``.

One test per rule area; each runs that area's Hypothesis machine against the
adapter chosen with ``--mq-adapter`` (see :mod:`conformance.runner.plugin`).
"""


def test_area_conforms(mq_area, mq_run_area):
    mq_run_area(mq_area)
