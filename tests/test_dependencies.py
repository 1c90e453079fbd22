"""What a verdict depended on besides the system: each broker adapter states the broker and client settings
and the adapter code it relies on, and every report format shows them beside the verdicts they bear on."""

import json
import re
import sys
from pathlib import Path

import pytest

from adapters.base import Capabilities, Dependency, RestartBudget
from adapters.registry import adapter_class
from reference_model.rules import RULES
from tests.clikit import run_cli

BROKERS = ("rabbitmq", "activemq", "activemq-stomp")


def offline(name: str, **settings):
    """Adapter ``name`` as constructed, without reaching a broker (its capabilities need none)."""
    cls = adapter_class(name)
    adapter = cls.__new__(cls)
    for key, value in {"restarts": False, "nemesis": False, "server": None, "queue_type": "quorum",
                       "mapping": "faithful", "faithful": True, "owned": None, "budget": RestartBudget(),
                       **settings}.items():
        setattr(adapter, key, value)
    return adapter


def test_a_dependency_names_known_rules_and_a_known_kind():
    with pytest.raises(ValueError):
        Dependency(kind="broker setting", what="x", why="y", rules={"CORE-999"})
    with pytest.raises(ValueError):
        Dependency(kind="a wish", what="x", why="y", rules={"CORE-01"})
    with pytest.raises(ValueError):
        Dependency(kind="adapter code", what="x", why="y", rules=set())
    d = Dependency(kind="client setting", what="prefetch 0", why="pull", rules={"CORE-05", "CORE-01"})
    caps = Capabilities(areas={"core"}, depends_on=[d])
    assert caps.to_json()["depends_on"] == [{"kind": "client setting", "what": "prefetch 0", "why": "pull",
                                             "rules": ["CORE-01", "CORE-05"]}]
    assert "depends_on" not in Capabilities(areas={"core"}).to_json()


@pytest.mark.parametrize("name", BROKERS)
def test_every_broker_adapter_states_what_its_verdicts_depend_on(name):
    caps = offline(name).capabilities()
    kinds = {d.kind for d in caps.depends_on}
    # the adapter code every broker adapter has (handles, definitions, MsgId, MQDISC's commit), and settings
    assert "adapter code" in kinds and kinds & {"broker setting", "client setting"}
    ruled = {r for d in caps.depends_on for r in d.rules}
    assert {"CORE-07", "CORE-11", "CORE-22", "CORE-30"} <= ruled
    # never a rule the adapter cannot express: it has no verdict the dependency could bear on
    assert not ruled & set(caps.not_applicable)
    assert all(RULES[r].area in caps.areas for r in ruled)
    # delivery order on a priority queue is the broker's only with a setting the adapter or its broker chose
    assert any("CORE-04" in d.rules and d.kind in ("broker setting", "client setting", "adapter code")
               for d in caps.depends_on)
    assert json.loads(json.dumps(caps.to_json()))["depends_on"]


def test_what_is_stated_follows_the_options_in_force():
    quorum = offline("rabbitmq").capabilities().depends_on
    classic = offline("rabbitmq", queue_type="classic").capabilities().depends_on
    assert any("quorum" in d.what for d in quorum) and not any("quorum" in d.what for d in classic)
    # a rule the nemesis runs (a cut connection's unit of work backed out) bears the dependency only then
    assert not any("CORE-46" in d.rules for d in quorum)
    assert any("CORE-46" in d.rules for d in offline("rabbitmq", nemesis=True).capabilities().depends_on)


@pytest.fixture(scope="session")
def run_with_dependencies(tmp_path_factory):
    """A run's result directory whose recorded capabilities carry the RabbitMQ adapter's dependencies (the run
    itself on the simulated queue manager, which has none: the reports render what run.json records)."""
    out = tmp_path_factory.mktemp("deps") / "run"
    assert run_cli("run", "--adapter", "simulated", "--area", "core", "--seed", "3", "--examples", "10",
                   "--adapter-opt", "platform=distributed", "--results", out)[0] == 0
    meta = json.loads((out / "run.json").read_text())
    meta["capabilities"]["depends_on"] = [d.to_json() for d in offline("rabbitmq").capabilities().depends_on]
    (out / "run.json").write_text(json.dumps(meta))
    return out, meta["capabilities"]["depends_on"]


def test_every_report_format_shows_the_dependencies_beside_the_rules(run_with_dependencies, tmp_path):
    out, deps = run_with_dependencies
    for fmt in ("md", "html", "json"):
        code, _, err = run_cli("report", out, "--format", fmt, "--out", tmp_path / f"r.{fmt}")
        assert code == 0, err
    md = (tmp_path / "r.md").read_text()
    assert "### What the verdicts depended on" in md
    for n, d in enumerate(deps, start=1):
        assert f"| D{n} " in md and d["what"].split()[0].replace("_", "\\_") in md
    # the per-rule table names, for CORE-11, the dependency on a generated MsgId
    msgid = next(n for n, d in enumerate(deps, start=1) if "MsgId" in d["what"])
    row = next(line for line in md.splitlines() if line.startswith("| CORE-11 ") and "depended" not in line
               and line.count("|") > 6)
    assert re.search(rf"\bD{msgid}\b", row)
    data = json.loads((tmp_path / "r.json").read_text())
    column = data["columns"][0]
    assert [d["what"] for d in column["depends_on"]] == [d["what"] for d in deps]
    assert f"D{msgid}" in column["cells"]["CORE-11"]["depends_on"]
    assert "depends_on" not in column["cells"]["CORE-12"] or all(
        "CORE-12" in deps[int(label[1:]) - 1]["rules"] for label in column["cells"]["CORE-12"]["depends_on"])
    html = (tmp_path / "r.html").read_text()
    assert "What the verdicts depended on" in html and f'href="#col-simulated-D{msgid}"' in html


def test_a_run_without_dependencies_shows_no_such_section(tmp_path):
    out = tmp_path / "run"
    assert run_cli("run", "--adapter", "simulated", "--area", "core", "--seed", "3", "--examples", "5",
                   "--adapter-opt", "platform=distributed", "--results", out)[0] == 0
    code, _, err = run_cli("report", out, "--format", "md", "--out", tmp_path / "r.md")
    assert code == 0, err
    text = (tmp_path / "r.md").read_text()
    assert "depended on" not in text


GLUE_SERVER = Path(__file__).parent / "data" / "servers" / "with_glue.py"


def test_a_protocol_server_states_its_dependencies_and_the_report_shows_them(tmp_path):
    out = tmp_path / "r"
    code, text, err = run_cli("run", "--adapter", "subprocess", "--adapter-opt",
                              f"command={sys.executable} {GLUE_SERVER}", "--area", "core", "--seed", "2",
                              "--examples", "5", "--results", out)
    assert code == 0, text + err
    recorded = json.loads((out / "run.json").read_text())["capabilities"]["depends_on"]
    assert [d["what"] for d in recorded] == ["consumers pull (prefetch 0)", "a blank MsgId replaced by the server"]
    assert run_cli("report", out, "--format", "json", "--out", tmp_path / "r.json")[0] == 0
    cells = json.loads((tmp_path / "r.json").read_text())["columns"][0]["cells"]
    assert cells["CORE-05"]["depends_on"] == ["D1"] and cells["CORE-11"]["depends_on"] == ["D2"]


def test_a_dependency_on_an_unknown_rule_is_one_line_and_exit_2(tmp_path):
    code, text, err = run_cli("run", "--adapter", "subprocess", "--adapter-opt",
                              f"command={sys.executable} {GLUE_SERVER} unknown-rule", "--area", "core",
                              "--examples", "5", "--results", tmp_path / "r")
    assert code == 2 and len(err.strip().splitlines()) == 1 and "CORE-999" in err, err
    assert "Traceback" not in err


def test_the_protocol_schema_takes_a_dependency_and_names_a_bad_one():
    from adapters.subprocess import schemas

    hello = {"id": 1, "result": {"protocol": 1, "server": {"name": "s", "version": "1"},
                                 "capabilities": {"areas": ["core"], "depends_on": [
                                     {"kind": "broker setting", "what": "x", "rules": ["CORE-01"]}]}}}
    assert schemas.problem("hello.response", hello) is None
    hello["result"]["capabilities"]["depends_on"][0]["kind"] = "hope"
    assert "kind" in schemas.problem("hello.response", hello)


def test_the_defaults_mapping_states_only_what_it_keeps():
    faithful = offline("rabbitmq", mapping="faithful", faithful=True, owned=None).capabilities().depends_on
    plain = offline("rabbitmq", mapping="defaults", faithful=False, owned=None).capabilities().depends_on
    assert plain and all(d.needed for d in plain) and set(plain) < set(faithful)
    dropped = {d.what for d in set(faithful) - set(plain)}
    assert any("MsgId" in w for w in dropped) and any("MQDISC" in w for w in dropped)
    assert any("x-max-priority" in w for w in dropped)


def test_the_settings_of_a_broker_the_kit_did_not_configure_stay_in_force():
    from adapters.brokers.activemq import ActiveMQServer

    configured = {d.what for d in offline("activemq").capabilities().depends_on if d.kind == "broker setting"}
    assert len(configured) == 3
    given = offline("activemq", mapping="defaults", faithful=False, owned=None).capabilities().depends_on
    assert configured <= {d.what for d in given}   # a broker given (or brokers up's): its settings are its own
    own = ActiveMQServer.__new__(ActiveMQServer)
    own.settings = "defaults"
    private = offline("activemq", mapping="defaults", faithful=False, owned=own).capabilities().depends_on
    assert not configured & {d.what for d in private}
    assert all(d.needed for d in private)


def test_the_defaults_config_of_the_kit_started_activemq_leaves_the_policies_out(tmp_path):
    from adapters.brokers.activemq import ActiveMQServer

    for settings, present in (("faithful", True), ("defaults", False)):
        server = ActiveMQServer(tmp_path / settings)
        server.settings = settings
        server.prepare({"main": 1, "openwire": 2})
        text = (server.dir / "conf" / "activemq.xml").read_text()
        assert ('prioritizedMessages="true"' in text) is present
        assert ('processExpired="false"' in text) is present
        assert "<persistenceAdapter>" in text and "<transportConnectors>" in text


def test_what_the_defaults_mapping_sends():
    from reference_model import language as L
    from reference_model import mqconst as C
    from adapters.broker_shim import Definition

    d = Definition(name="q", attrs={"DEFPRTY": 7, "DEFPSIST": C.MQPER_PERSISTENT})
    md = L.MessageDescriptor(priority=C.MQPRI_PRIORITY_AS_Q_DEF, persistence=C.MQPER_PERSISTENCE_AS_Q_DEF)
    faithful = offline("activemq", mapping="faithful", faithful=True)
    plain = offline("activemq", mapping="defaults", faithful=False)
    assert (faithful.resolved(md, d).priority, faithful.resolved(md, d).persistence) == (7, C.MQPER_PERSISTENT)
    # a JMS producer's own defaults: priority 4, persistent
    assert (plain.resolved(md, d).priority, plain.resolved(md, d).persistence) == (4, C.MQPER_PERSISTENT)
    rabbit = offline("rabbitmq", mapping="defaults", faithful=False)
    assert rabbit.resolved(md, d) == md   # sent with no priority and no delivery mode: the broker's own
    assert faithful.message_id(L.MessageDescriptor()) and not plain.message_id(L.MessageDescriptor())
    assert plain.message_id(L.MessageDescriptor(msg_id="given")) == "given"


def test_an_unknown_mapping_is_one_line_and_exit_2(tmp_path):
    code, text, err = run_cli("run", "--adapter", "rabbitmq", "--adapter-opt", "mapping=cosy",
                              "--adapter-opt", "host=127.0.0.1", "--adapter-opt", "port=1",
                              "--results", tmp_path / "r")
    assert code == 2 and "mapping must be faithful or defaults" in err and len(err.strip().splitlines()) == 1, err


@pytest.mark.parametrize("name", BROKERS)
def test_what_a_broker_queue_cannot_carry_is_not_applicable_with_its_reason(name):
    """A broker queue takes no MAXMSGL: a definition asking for one is run without it, so no put is ever too long
    for its queue (CORE-49) nor segmented (CORE-50), and those rules are not applicable, said so; EXP-09 (another
    program that discards expired messages) is only a DLQ handler, which a broker has not."""
    from reference_model import language as L

    adapter = offline(name, definable=frozenset(adapter_class(name).definable))
    asked = L.DefineQueue(queue="Q", attrs=(("MAXMSGL", 16), ("DEFPRTY", 3)))
    assert adapter.express(asked) == L.DefineQueue(queue="Q", attrs=(("DEFPRTY", 3),))
    caps = adapter.capabilities()
    for rule in ("CORE-49", "CORE-50"):
        assert "MAXMSGL" in caps.not_applicable[rule]
    assert "DLQ handler" in caps.not_applicable["EXP-09"] and "dlq" not in caps.areas


@pytest.mark.parametrize("name", BROKERS)
def test_with_restarts_off_what_only_a_restart_shows_is_not_applicable(name):
    """A run with broker restarts off never restarts: what a restart keeps (CORE-32) and the BackoutCount it keeps
    (CORE-45) are not applicable, the reason saying how to turn restarts on; with restarts on, both are run."""
    from reference_model import language as L

    off = offline(name, restart_given=True)
    assert off.express(L.Restart()) is None
    for rule in ("CORE-32", "CORE-45"):
        assert "restart=on" in off.capabilities().not_applicable[rule]
    on = offline(name, restarts=True, restart_given=True)
    assert not {"CORE-32", "CORE-45"} & set(on.capabilities().not_applicable)
