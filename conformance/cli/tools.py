"""``mqconform cluster`` and ``mqconform dlq``: what-if tools for cluster workload and DLQ rules tables;
``mqconform compare-traces``: where two runs of one seed parted; ``mqconform protocol check``: a server of the
JSON-lines protocol checked before a run."""

from __future__ import annotations

from pathlib import Path

from tabulate import tabulate

from conformance.cli.common import EXIT_NONCONFORMANT, EXIT_OK, UsageError, _Parser, _positive
from conformance.records.render import counted


def add_parsers(sub) -> None:
    cluster = sub.add_parser("cluster", help="cluster workload tools")
    cluster_sub = cluster.add_subparsers(dest="cluster_command", required=True, parser_class=_Parser)
    simulate = cluster_sub.add_parser("simulate", help="where would messages go in this cluster?")
    simulate.add_argument("config", type=Path, help="cluster description (TOML)")
    simulate.add_argument("--messages", type=_positive, default=1000)
    simulate.add_argument("--plot", type=Path, help="write a bar chart of the shares (PNG)")

    dlq = sub.add_parser("dlq", help="DLQ handler rules-table tools")
    dlq_sub = dlq.add_subparsers(dest="dlq_command", required=True, parser_class=_Parser)
    check = dlq_sub.add_parser("check", help="validate a rules table (exit 0 valid, 1 with every error listed)")
    check.add_argument("table", type=Path)
    dsim = dlq_sub.add_parser("simulate", help="what the table does to each message of a file")
    dsim.add_argument("table", type=Path)
    dsim.add_argument("--messages", type=Path, required=True, help="messages file (TOML, see docs/dlq-tools.md)")

    traces = sub.add_parser("compare-traces",
                            help="where two traces of one seed (MQCONFORM_TRACE) part, and whether the system or the kit "
                                 "made them part (exit 0 alike, 1 they part)")
    traces.add_argument("first", type=Path)
    traces.add_argument("second", type=Path)

    protocol = sub.add_parser("protocol", help="tools for authors of servers of the JSON-lines protocol")
    protocol_sub = protocol.add_subparsers(dest="protocol_command", required=True, parser_class=_Parser)
    pcheck = protocol_sub.add_parser(
        "check", help="check a server speaks the protocol (exit 0 every check passes, 1 one fails); judges no MQ rule")
    pcheck.add_argument("--command", dest="server", required=True, help="the server's command line")
    pcheck.add_argument("--timeout", type=_positive_seconds, default=10.0, help="seconds per answer (default 10)")
    pcheck.add_argument("--start-timeout", type=_positive_seconds, default=30.0,
                        help="seconds for the answer to hello (default 30)")
    pcheck.add_argument("--format", choices=("text", "json"), default="text")



def cmd_cluster(args, out) -> int:
    from conformance.tools import cluster_whatif as WI

    scenario = WI.load_scenario(args.config)
    why = WI.plot_problem(args.plot) if args.plot else None
    if why:
        raise UsageError(f"--plot {why}")
    outcome = WI.simulate(scenario, args.messages)
    target = scenario.message.qmgr or scenario.message.queue
    if outcome.nowhere:
        # the answer an administrator runs the what-if for: nowhere to go, and why each candidate was dropped
        if not outcome.candidates:
            out.write(f"No destination for {target} from {scenario.cluster.local}: no instance of it is reachable "
                      "(no [[instance]] hosts it, or no cluster channel leads to the queue managers that do); "
                      "MQ fails every put\n")
        else:
            out.write(f"No eligible destination for {target} from {scenario.cluster.local}: every candidate was "
                      "dropped, so MQ fails every put (the workload-management topic names no reason code)\n")
            out.write(tabulate([[k, outcome.eliminated.get(k, "")] for k in outcome.candidates],
                               headers=["candidate", "dropped at"]) + "\n")
        if args.plot:
            out.write(f"No plot: there are no shares to draw ({args.plot} not written)\n")
        return EXIT_OK
    out.write(f"{args.messages} messages to {scenario.message.queue} from {scenario.cluster.local}\n")
    out.write(tabulate(WI.rows(outcome), headers=["destination", "expected share", "simulated share",
                                                    "messages", "eliminated at"]) + "\n")
    if args.plot:
        try:
            WI.plot(outcome, args.plot)
        except OSError as exc:
            raise UsageError(f"--plot {args.plot}: cannot write ({exc.strerror})") from None
        out.write(f"Plot: {args.plot}\n")
    return EXIT_OK



def cmd_dlq(args, out) -> int:
    from conformance.tools import dlq_tools as DT

    try:
        table, errors = DT.check(args.table)
        if errors:
            out.write("\n".join(errors) + "\n")
            out.write(f"{args.table}: {len(errors)} error(s); a DLQ handler would not start with this table\n")
            return EXIT_NONCONFORMANT
        if args.dlq_command == "check":
            out.write(f"{args.table}: valid: {'control data and ' if table.control != DT.T.ControlData() else ''}"
                      f"{counted(len(table.rules), 'rule')}\n")
            return EXIT_OK
        scenario = DT.load_messages(args.messages)
    except DT.MessagesFileError as exc:
        raise UsageError(str(exc)) from None
    for fate in DT.simulate(table, scenario):
        out.write(f"\n{fate.message}: {fate.final}\n")
        if fate.steps:
            out.write(tabulate([[s.tries, s.rule_line, s.action, s.target, s.outcome] for s in fate.steps],
                               headers=["try", "rule (line)", "action", "to", "outcome"]) + "\n")
    return EXIT_OK




def cmd_compare_traces(args, out) -> int:
    from conformance.records import traces as T

    try:
        first, second = T.load(args.first), T.load(args.second)
    except T.TraceFileError as exc:
        raise UsageError(str(exc)) from None
    divergence = T.first_divergence(first, second)
    out.write(T.describe(divergence, str(args.first), str(args.second)))
    return EXIT_OK if divergence is None else EXIT_NONCONFORMANT


def _positive_seconds(text: str) -> float:
    import argparse

    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds, not {text!r}")
    return value


def cmd_protocol(args, out) -> int:
    import json

    from conformance.tools import protocol_check as P

    try:
        checks = P.check_server(args.server, timeout=args.timeout, start_timeout=args.start_timeout)
    except ValueError as exc:
        raise UsageError(f"--command: {exc}") from None
    ok = P.passed(checks)
    if args.format == "json":
        out.write(json.dumps({"passed": ok, "checks": [{"check": c.name, "result": c.result, "detail": c.detail}
                                                       for c in checks]}, indent=2) + "\n")
    else:
        out.write(tabulate([(c.result, c.name, c.detail) for c in checks], headers=("result", "check", "detail"),
                           tablefmt="simple", disable_numparse=True) + "\n")
        run = [c for c in checks if c.result != P.NOT_RUN]
        failed = [c for c in run if c.result == P.FAIL]
        out.write(f"\n{len(run) - len(failed)} of {len(run)} checks passed"
                  + (f"; first failure: {failed[0].name}: {failed[0].detail}" if failed else "")
                  + ("; the server stopped answering: the checks after it were not run"
                     if len(run) < len(checks) else "") + "\n")
    return EXIT_OK if ok else EXIT_NONCONFORMANT


COMMANDS = {"cluster": cmd_cluster, "dlq": cmd_dlq, "compare-traces": cmd_compare_traces, "protocol": cmd_protocol}
