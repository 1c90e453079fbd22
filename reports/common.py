"""Text shared by the report formats: what a claim covers, and failures as tables."""

from __future__ import annotations

import collections
import time

from conformance import __version__
from conformance.records.history import Failure, rules_text
from conformance.records.results import REPLAY_CONFIRMED, REPLAY_SHOWN, replay_outcome
from conformance.records.render import alternative_differences, differences, explain, field_text, observation_text, op_text
from reports.matrix import VERDICTS, Column

VERDICT_ORDER = VERDICTS


def when(ts: float | None) -> str:
    return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(ts)) if ts else "-"


def claim_rows(col: Column) -> list[tuple[str, str]]:
    """(what, value) pairs stating what a column's verdicts cover."""
    m = col.meta
    system = m["system"]
    caps = m["capabilities"]
    rows = [
        ("adapter", m["adapter"]),
        ("system", str(system.get("system", "-"))),
        ("system version", str(system.get("version", "-"))),
    ]
    for key in sorted(system):
        if key not in ("system", "version", "platforms"):
            value = system[key]
            rows.append((key.replace("_", " "), ", ".join(map(str, value)) if isinstance(value, list) else str(value)))
    rows += [
        ("capabilities: areas", ", ".join(sorted(caps.get("areas", [])))),
        ("capabilities: platforms", ", ".join(caps.get("platforms", []))),
        ("real time", "yes" if caps.get("realtime") else "no (virtual clock)"),
        ("areas run", ", ".join(m["areas"])),
        ("kit version", f"mqconform {m['kit_version']} (Hypothesis {m['hypothesis_version']})"),
        ("seeds", ", ".join(map(str, m["seeds"])) or "-"),
        ("example budget per area", ", ".join(map(str, m["examples"])) or "-"),
        ("cases and steps run", f"{m['examples_run']} cases, {m['steps_run']} steps"),
        ("run", f"{when(m['started'])} to {when(m['ended'])}"),
        ("result directories", ", ".join(m["directories"])),
        ("what a verdict means",
         f"pass: no departure found in these {m['examples_run']} cases, which reached every input class the "
         "rule distinguishes; partly exercised: none found, but some input classes never reached; fail: a "
         "recorded history breaks the rule (it passes once the rule alone is relaxed); one of: a recorded history "
         "breaks this rule or another named with it (each alone, relaxed, makes it pass; nothing in it shows "
         "which, and no other history shows one of them broken); rules only mentioned by a failure are not "
         "failed"),
    ]
    if m.get("concurrency"):
        rows.append(("concurrent cases", f"{' or '.join(map(str, m['concurrency']))} clients at once a case: a rule "
                                         "passes where the order of some case's calls that MQ allows exercised it, "
                                         "and fails where no order of a case's calls is one MQ allows (a race: "
                                         + (", ".join(m["races"]) if m.get("races") else "none found") + ")"))
    if m.get("recorded"):
        shown = collections.Counter(map(replay_outcome, m["recorded"]))
        again = {what: sorted({e["file"] for e in m["recorded"] if e["shown"] == what})
                 for what in (REPLAY_SHOWN, REPLAY_CONFIRMED)}
        rows.append(("recorded counterexamples", f"{len(m['recorded'])} given to the runs (run --recorded), each "
                     "replayed after its area's search unless the search had found its departure in a history "
                     "shown again: "
                     + "; ".join(f"{what} {n}" + (f" ({', '.join(again[what])}: the failure is that replay's "
                                                  "departure, minimised in this run)" if again.get(what) else "")
                                 for what, n in sorted(shown.items()))))
    if m.get("not_expressible"):
        declined = m.get("declined") or {}
        rows.append(("operations left out", "; ".join(f"{kind} ({n})" for kind, n in sorted(m["not_expressible"].items()))
                     + " (the adapter cannot express them: not run, on the model neither, and not judged)"
                     + ("; declined by the system when run: " + "; ".join(f"{why} ({n})"
                                                                          for why, n in sorted(declined.items()))
                        if declined else "")))
    if m.get("interrupted"):
        rows.append(("INTERRUPTED", f"the run was stopped (Ctrl-C or a signal) during {', '.join(m['interrupted'])}: "
                                    "the rules of those areas have no verdict (error), and the cases counted are "
                                    "those run before the stop"))
    for err in m["errors"]:
        rows.append(("error", err))
    return rows


def passed_steps(col: Column, failure: Failure) -> dict[int, tuple[str, ...]]:
    """:meth:`Failure.passed` with the tolerance of the system its column is about."""
    return failure.passed(col.meta.get("capabilities", {}).get("expiry_tolerance", 0))


def failure_rows(failure: Failure, passed: dict[int, tuple[str, ...]] | None = None) -> list[tuple[str, int, str, str]]:
    """(mark, step number, operation, observed) for each step of a counterexample: ``>>`` the step that broke,
    ``~`` one that departs by rules its run had set aside, gone on past (``passed``: :meth:`Failure.passed`)."""
    mm = failure.mismatch
    passed = passed or {}
    return [(">>" if i == mm.index else "~" if i in passed else "", i + 1, op_text(s.op), observation_text(s.observed))
            for i, s in enumerate(failure.steps)]


def expected_vs_observed(failure: Failure) -> list[tuple[str, str]]:
    mm = failure.mismatch
    rows = [("in one sentence", explain(failure)), ("observed", observation_text(mm.observed))]
    rows += [("allowed", observation_text(a)) for a in mm.allowed]
    rows.append(("differing fields", ", ".join(mm.fields)))
    if failure.mentioned:
        rows.append(("also mentioned, not failed", ", ".join(failure.mentioned)
                     + " (the history passes with none of these relaxed alone)"))
    closest = mm.allowed[0] if mm.allowed else None
    for path in dict.fromkeys([*mm.fields, *differences(closest, mm.observed)]):
        rows.append((path, f"expected {field_text(closest, path)}, observed {field_text(mm.observed, path)}"))
    for alt in mm.alternatives:
        rows.append((f"or a departure at step {alt.index + 1}",
                     f"{', '.join(alt.rules)}: {alternative_differences(failure, alt)} (MQ allows several "
                     "outcomes there; from this one every later step is what MQ gives)"))
    return rows


def dependencies(col: Column) -> list[dict]:
    """What the column's verdicts depended on besides the system (its adapter's :class:`~adapters.base.Dependency`
    list as run.json records it), each labelled D1, D2, ... in order."""
    deps = col.meta["capabilities"].get("depends_on") or []
    return [{**d, "label": f"D{n}"} for n, d in enumerate(deps, start=1)
            if isinstance(d, dict) and isinstance(d.get("rules"), list)]


def rule_dependencies(col: Column) -> dict[str, list[str]]:
    """Per rule, the labels of the dependencies its verdict on this column depended on."""
    out: dict[str, list[str]] = {}
    for d in dependencies(col):
        for rule in d["rules"]:
            out.setdefault(rule, []).append(d["label"])
    return out


DEPENDS_INTRO = ("Besides the system itself, the verdicts below depended on these settings and this adapter code: "
                 "a pass is the system's with them in place. An application moving from MQ onto the system needs "
                 "the same settings, and code of its own doing what the adapter's does.")


def dependency_rows(col: Column) -> list[tuple[str, str, str, str, str]]:
    """(label, kind, what, why, the rules it bears on with their verdicts here) for each dependency."""
    rows = []
    for d in dependencies(col):
        rules = ", ".join(f"{r} ({col.cells[r].verdict})" if r in col.cells else r for r in d["rules"])
        rows.append((d["label"], str(d.get("kind", "")), str(d.get("what", "")), str(d.get("why", "")), rules))
    return rows


def deviation_rows(report) -> list[tuple[str, str, str, str]]:
    """(rule, system, status, behaviour seen) for each known deviation of a system the report shows."""
    return [(d.deviation.rule, d.system, d.status, d.deviation.seen) for d in report.deviations]


def failure_note(col: Column, failure: Failure) -> str:
    """"" or, for a failure naming rules that are known deviations of its system, a note naming them."""
    known = [r for r in failure.blamed if col.cells.get(r) is not None and col.cells[r].deviation is not None
             and col.cells[r].deviation.why_not(failure) is None]
    return f"known deviation: {', '.join(known)}" if known else ""


#: What the table of input classes a system cannot express is.
CANNOT_EXPRESS_INTRO = ("Only operations the adapter could not express would have reached these classes, or only "
                        "operations after calls it could not make (a get finding only messages another handle locked, "
                        "where the system has no browse locks): they count neither for nor against a pass.")

#: What a report's races section shows.
RACES_INTRO = ("Concurrent cases whose calls no order MQ allows explains: the set-up, then a column per client, a row "
               "per call in the order invoked (ms from the first), >> where every order breaks.")


def races(col: Column) -> list[tuple[str, str]]:
    """The races a column's runs of concurrent cases recorded: (timeline, replay command); a race file that
    cannot be read says so in place of its timeline."""
    from conformance.records.history import ReplayFileError
    from conformance.records.races import load_race, race_replay_command, render_race

    out = []
    for path in col.meta.get("races") or []:
        try:
            text = render_race(load_race(path))
        except (ReplayFileError, KeyError, TypeError, ValueError) as exc:
            text = f"(the race file cannot be read: {exc})"
        out.append((text, race_replay_command(path)))
    return out


def replay_command(path: str) -> str:
    return f"mqconform replay {path}"


def title(failure: Failure) -> str:
    rules = rules_text(failure.blamed, failure.one_of, failure.either, sep="+")
    return (f"{rules} in area {failure.area} (platform {failure.platform}): "
            f"step {failure.mismatch.index + 1} of {len(failure.steps)}"
            + ("" if failure.reproduced else "; not shown again when the same operations ran a second time"))


KIT = f"mqconform {__version__}"
