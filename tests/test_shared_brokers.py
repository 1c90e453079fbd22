"""The tests of a broker's mapping share one broker per test process (conftest.py): every test that uses a shared
broker is in that broker's pytest-xdist group, so that ``--dist loadgroup`` (scripts/test.sh) runs them on one worker
beside one broker; a test that starts a broker of its own is in no group and runs wherever there is room."""

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MODULES = ("tests/test_rabbitmq.py", "tests/test_activemq.py", "tests/test_activemq_openwire.py")


def test_every_test_of_a_shared_broker_is_in_its_group_and_no_other_test_is():
    # collection only, in a process of its own: no broker starts
    proc = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
                           "-p", "tests.data.plugins.show_groups", *MODULES], cwd=ROOT, capture_output=True,
                          text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr
    rows = [json.loads(line.split(" ", 1)[1]) for line in proc.stdout.splitlines() if line.startswith("GROUPS ")]
    assert rows, proc.stdout[-2000:]
    expected = {"rabbitmq_broker": "rabbitmq", "activemq_broker": "activemq"}
    assert {r["test"]: r["groups"] for r in rows if r["groups"] != [expected[u] for u in r["uses"]]} == {}
    # both brokers are shared, by the mapping tests of all three modules; the tests that start their own are free
    shared = {(r["test"].split("::")[0], g) for r in rows for g in r["groups"]}
    assert shared == {("tests/test_rabbitmq.py", "rabbitmq"), ("tests/test_activemq.py", "activemq"),
                      ("tests/test_activemq_openwire.py", "activemq")}
    free = [r["test"] for r in rows if not r["groups"]]
    assert any("starts_a_private_one" in t for t in free), free
