"""The quick suite's guard: a process told not to start a broker or Spark (``MQCONFORM_REFUSE``, set by
conftest.py for every test of ``scripts/test.sh --quick`` not marked as needing one) refuses in one line, so
that an unmarked test fails at once instead of making the quick suite slow."""

from tests.clikit import run_cli


def test_a_refused_broker_is_not_started_and_the_error_names_the_mark(monkeypatch, tmp_path):
    monkeypatch.setenv("MQCONFORM_REFUSE", "broker")
    monkeypatch.setenv("MQCONFORM_RUN_DIR", str(tmp_path / "brokers"))
    code, out, err = run_cli("run", "--adapter", "rabbitmq", "--area", "core", "--examples", "2",
                             "--results", tmp_path / "r")
    assert code == 2 and "pytest.mark.broker" in err and len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "brokers" / "rabbitmq").exists()


def test_refused_spark_is_not_started_and_the_error_names_the_mark(monkeypatch, tmp_path):
    monkeypatch.setenv("MQCONFORM_REFUSE", "spark")
    code, out, err = run_cli("campaign", "--adapter", "simulated", "--minutes", "1", "--out", tmp_path / "c")
    assert code == 2 and "pytest.mark.spark" in err and len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "c" / ".spark-local").exists()


def test_without_the_guard_nothing_is_refused(monkeypatch):
    from adapters.brokers.server import refused

    monkeypatch.delenv("MQCONFORM_REFUSE", raising=False)
    assert refused() == set()
    monkeypatch.setenv("MQCONFORM_REFUSE", " spark, broker ")
    assert refused() == {"spark", "broker"}
