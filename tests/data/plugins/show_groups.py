"""A pytest plugin for tests/test_shared_brokers.py: after collection, one JSON line per test with the shared
brokers its fixtures use and the pytest-xdist groups it is marked with."""

import json


def pytest_collection_finish(session):
    for item in session.items:
        groups = sorted(str(m.args[0]) for m in item.iter_markers("xdist_group"))
        uses = sorted(f for f in getattr(item, "fixturenames", ()) if f.endswith("_broker") and f != "broker")
        print("GROUPS " + json.dumps({"test": item.nodeid, "groups": groups, "uses": uses}))
