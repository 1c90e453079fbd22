"""The DLQ tools for administrators, the handler host and the external-handler protocol."""

import json
import sys
from pathlib import Path

import pytest

from adapters.simulated import SimulatedAdapter
from reference_model import language as L
from reference_model import mqconst as C
from tests.clikit import run_cli

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE_TABLE = ROOT / "docs/dlq/rules-example.tbl"
EXAMPLE_MESSAGES = ROOT / "docs/dlq/messages-example.toml"


@pytest.mark.parametrize("table", ["docs/dlq/rules-example.tbl", "docs/dlq/ibm-examples.tbl"])
def test_check_accepts_the_shipped_tables(table):
    code, out, _ = run_cli("dlq", "check", ROOT / table)
    assert code == 0 and "valid" in out


def test_check_lists_every_seeded_error_with_its_line():
    path = ROOT / "tests/data/dlq-seeded-errors.tbl"
    code, out, _ = run_cli("dlq", "check", path)
    assert code == 1
    lines = [l for l in out.splitlines() if l.startswith(str(path) + ":") and "error(s)" not in l]
    assert [int(l[len(str(path)) + 1:].split(":")[0]) for l in lines] == list(range(3, 13))
    assert "10 error(s)" in out


def test_check_refuses_keywords_run_together_naming_the_line(tmp_path):
    path = tmp_path / "t.tbl"
    path.write_text("* keywords need a blank or a comma between them\nDESTQ(A) ACTION(DISCARD)+\nREPLYQ(X)\n"
                    "ACTION(DISCARD)REPLYQ(Y)\n")
    code, out, _ = run_cli("dlq", "check", path)
    assert code == 1 and "2 error(s)" in out
    assert f"{path}:3:1: no blank or comma between ACTION(...) and 'R'" in out
    assert f"{path}:4:16: no blank or comma between ACTION(...) and 'R'" in out


@pytest.mark.parametrize("argv,message", [
    (["dlq", "check", "/no/such/table"], "cannot read rules table"),
    (["dlq", "simulate", EXAMPLE_TABLE, "--messages", "/no/such.toml"], "cannot read messages file"),
    (["dlq", "simulate", EXAMPLE_TABLE], "--messages"),
])
def test_bad_input_is_one_line_exit_2(argv, message):
    code, _, err = run_cli(*argv)
    assert code == 2 and message in err and err.count("\n") == 1


@pytest.mark.parametrize("content,message", [
    ("[[message]\n", "not valid TOML"),
    ("[[message]]\nid = 'M1'\nreason = 'MQRC_NOPE'\ndest_q = 'Q'\n", "is not a number or one of"),
    ("[[message]]\nid = 'M1'\ncolour = 'red'\n", "unknown key(s) ['colour']"),
    ("[queues]\nQ = 'sometimes'\n[[message]]\nreason = 2053\ndest_q = 'Q'\n", "queues.Q"),
    ("[[message]]\nid = 'M1'\n", "needs reason and dest_q"),
    ("title = 'x'\n", "unknown section"),
])
def test_malformed_messages_file(tmp_path, content, message):
    f = tmp_path / "m.toml"
    f.write_text(content)
    code, _, err = run_cli("dlq", "simulate", EXAMPLE_TABLE, "--messages", f)
    assert code == 2 and message in err, err


def test_simulate_the_documented_example():
    code, out, _ = run_cli("dlq", "simulate", EXAMPLE_TABLE, "--messages", EXAMPLE_MESSAGES)
    assert code == 0
    fates = {line.split(":")[0]: line.split(": ", 1)[1] for line in out.splitlines() if line[:1] == "M"}
    assert fates == {
        "M1": "put to ORDERS.IN (MQDLH removed)",            # third try of the Q_FULL rule
        "M2": "put to DLQ.PARKING (with MQDLH)",             # five failed RETRYs, then the catch-all
        "M3": "put to CLIENT.REPLY (with MQDLH)",            # &REPLYQ
        "M4": "put to PAYROLL.EXCEPTIONS (MQDLH removed)",   # DESTQ(PAYROLL.*)
        "M5": "put to BATCH.OUT (MQDLH removed)",            # the first matching rule wins
        "M6": "left on the DLQ: no MQDLH (reported as in error)",
    }
    assert "1-5" in out   # the failing tries of one rule, summed up


def test_simulate_ignore_assumed_and_huge_retry_counts(tmp_path):
    table = tmp_path / "t.tbl"
    table.write_text("REASON(MQRC_Q_FULL) ACTION(RETRY) RETRY(999999999)\nDESTQ(KEEP.*) ACTION(IGNORE)\n")
    msgs = tmp_path / "m.toml"
    msgs.write_text("[queues]\nA = 'full'\n[[message]]\nid='M1'\nreason='MQRC_Q_FULL'\ndest_q='A'\n"
                    "[[message]]\nid='M2'\nreason=2085\ndest_q='B'\n[[message]]\nid='M3'\nreason=2085\ndest_q='KEEP.1'\n")
    code, out, _ = run_cli("dlq", "simulate", table, "--messages", msgs)
    assert code == 0
    assert "M1: left on the DLQ: IGNORE assumed (every matching rule used its tries)" in out
    assert "1-999999999" in out
    assert "M2: left on the DLQ: IGNORE assumed (no rule matches)" in out
    assert "M3: left on the DLQ by the rule at line 2" in out


# ---------------------------------------------------------------------------- the handler host


def _queue_manager(**options):
    adapter = SimulatedAdapter(platform="distributed", **options)
    adapter.start_case("t")
    do = adapter.execute
    do(L.DefineQueue(queue="DLQ"))
    do(L.DefineQueue(queue="A"))
    do(L.AlterQueueManager(attrs={"DEADQ": "DLQ"}))
    do(L.Connect(conn="app"))
    return adapter, do


def _dead(do, mid, dest="A"):
    md = L.MessageDescriptor(msg_id=mid, format=C.MQFMT_DEAD_LETTER_HEADER,
                             context=L.MessageContext(user_id="u"))
    assert do(L.Put1(conn="app", queue="DLQ", body=mid, md=md,
                     dlh=L.DeadLetterHeader(reason=C.MQRC_Q_FULL, dest_q=dest, format="MQSTR"))).rc == 0


@pytest.mark.parametrize("external", [False, True])
def test_host_reports_fates_from_what_happened(external):
    options = {"dlq-handler": f"{sys.executable} -m adapters.dlq_handler"} if external else {}
    adapter, do = _queue_manager(**options)
    try:
        assert do(L.StartDlqHandler(handler="H", table="RETRYINT(1)\nDESTQ(A) ACTION(RETRY)\n"
                                                   "ACTION(DISCARD)\n")) == L.OK
        _dead(do, "M1")
        _dead(do, "M2", dest="B")
        do(L.AlterQueue(queue="A", attrs={"PUT": 1}))
        assert dict(do(L.RunDlqHandler(handler="H")).attrs) == {
            "M1": "backed-out", "M2": "discarded", "HANDLER": "RUNNING"}
        do(L.AlterQueue(queue="A", attrs={"PUT": 0}))
        do(L.AdvanceClock(tenths=10))
        assert dict(do(L.RunDlqHandler(handler="H")).attrs) == {"M1": "discarded", "HANDLER": "RUNNING"}
        bad = do(L.StartDlqHandler(handler="H2", table="ACTION(FWD)\n"))
        assert bad.cc == C.MQCC_FAILED and dict(bad.attrs) == {"TABLE": "INVALID"}
    finally:
        adapter.close()


def test_an_external_handler_that_breaks_the_protocol_is_an_adapter_error():
    from adapters.base import AdapterError

    adapter, do = _queue_manager(**{"dlq-handler": f"{sys.executable} -c print(42)"})
    with pytest.raises(AdapterError, match="not an object|ended"):
        do(L.StartDlqHandler(handler="H", table="ACTION(DISCARD)\n"))
    adapter.close()


def test_conformance_run_with_an_external_handler(tmp_path):
    """The dlq machine against the kit's handler behind the protocol: conformant, every rule checked as often
    as with the built-in handler on the same cases; and a failing history found on the built-in handler fails
    the same way on a broken external one."""
    handler = f"{sys.executable} -m adapters.dlq_handler"
    checked = {}
    for name, options in (("ok", ("--adapter-opt", f"dlq-handler={handler}")), ("built-in", ())):
        # 4 cases of seed 9: every one of the 41 rules checked, 69 handler programs run (each a process of its own;
        # seed 2 ran 101 and checked 40)
        code, out, err = run_cli("run", "--adapter", "simulated", "--area", "dlq", "--examples", "4", "--seed", "9",
                                 *options, "--adapter-opt", "platform=distributed", "--results", tmp_path / name)
        assert code == 0, out + err
        checked[name] = {row["rule"]: (row["verdict"], row["checked"]) for row in
                         map(json.loads, (tmp_path / name / "rules.jsonl").read_text().splitlines())}
    assert checked["ok"] == checked["built-in"]
    assert sum(n > 0 for _, n in checked["ok"].values()) >= 40
    code, out, err = run_cli("run", "--adapter", "simulated", "--area", "dlq", "--seed", "7", "--keep-going", "0",
                             "--faults", "dlq-no-dlh-processed", "--adapter-opt", "platform=distributed",
                             "--results", tmp_path / "bad")
    assert code == 1, out + err
    # the run's first departure (others met while it was shrunk are saved beside it)
    replay = tmp_path / "bad" / json.loads((tmp_path / "bad" / "run.json").read_text())["failures"][0]
    code, out, err = run_cli("replay", replay, "--adapter", "simulated",
                             "--adapter-opt", f"dlq-handler={handler} --fault dlq-no-dlh-processed")
    assert code == 1 and "DLQ-07" in out, out + err
    code, out, err = run_cli("replay", replay, "--adapter", "simulated", "--adapter-opt", f"dlq-handler={handler}")
    assert code == 0, out + err
