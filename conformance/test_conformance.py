"""The conformance suite, collected by ``pytest --pyargs conformance``.

One test per rule area; each runs that area's Hypothesis machine against the
adapter chosen with ``--mq-adapter`` (see :mod:`conformance.runner.plugin`).  With ``--mq-concurrency N``, one
test of concurrent cases instead.
"""


def test_area_conforms(mq_area, mq_run_area):
    mq_run_area(mq_area)


def test_concurrent_clients_have_an_order_mq_allows(mq_run_concurrent):
    mq_run_concurrent()
