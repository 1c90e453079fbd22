"""``mqconform adapters``, ``faults``, ``rules`` and ``sources``: what the installed kit holds."""

from __future__ import annotations

import json

from adapters.registry import adapter_class, adapter_names
from adapters.simulated.faults import FAULTS, RACES, SOMETIMES
from conformance.cli.common import EXIT_OK, _areas
from reference_model.classes import names_of
from reference_model.rules import RULES


def add_parsers(sub) -> None:
    adapters = sub.add_parser("adapters", help="list the adapters")
    adapters.add_argument("--format", choices=("text", "json"), default="text")
    faults = sub.add_parser("faults", help="list the simulated queue manager's faults")
    faults.add_argument("--area")
    faults.add_argument("--format", choices=("text", "json"), default="text")
    rules = sub.add_parser("rules", help="list the rules: ID, area, IBM document and item, summary")
    rules.add_argument("--area")
    rules.add_argument("--format", choices=("text", "json"), default="text")
    srcs = sub.add_parser("sources", help="list the IBM MQ documentation topics the rules come from")
    srcs.add_argument("--format", choices=("text", "json", "markdown"), default="text")



def cmd_adapters(args, out) -> int:
    for name in adapter_names():
        # the docstring's first paragraph, on one line
        summary = " ".join((adapter_class(name).__doc__ or "").strip().split("\n\n")[0].split())
        if args.format == "json":
            out.write(json.dumps({"adapter": name, "summary": summary}, ensure_ascii=False) + "\n")
        else:
            out.write(f"{name}\t{summary}\n")
    return EXIT_OK


def cmd_faults(args, out) -> int:
    areas = _areas(args.area)
    # after the others: the race faults, shown only when calls overlap (conformance/runner/concurrent.py), and those
    # shown at some calls only, judged by their frequency (conformance/runner/crash.py)
    kinds = [(f, "") for f in FAULTS.values()] + [(f, "concurrent") for f in RACES.values()] \
        + [(f, "sometimes") for f in SOMETIMES.values()]
    notes = {"concurrent": " (shows only when calls overlap: a concurrent case)",
             "sometimes": " (shows at some calls only: judged by its frequency over many crash schedules)"}
    for f, kind in kinds:
        if f.area not in areas:
            continue
        if args.format == "json":
            out.write(json.dumps({"fault": f.name, "area": f.area, "rules": list(f.rules),
                                  "description": f.description, **({kind: True} if kind else {})},
                                 ensure_ascii=False) + "\n")
        else:
            out.write(f"{f.name}\t{f.area}\t{f.description}{notes.get(kind, '')}\n")
    return EXIT_OK


def cmd_rules(args, out) -> int:
    areas = _areas(args.area)
    for area in areas:
        for r in RULES.all(area):
            if args.format == "json":
                out.write(json.dumps({"rule": r.id, "area": r.area, "source": r.source, "cites": r.citations(),
                                      "summary": r.summary, "platforms": list(r.platforms), "note": r.note,
                                      "input_classes": list(names_of(r.id))},
                                     ensure_ascii=False) + "\n")
            else:
                out.write(f"{r.id}\t{r.area}\t{r.source}\t{r.summary}\n")
    return EXIT_OK


def cmd_sources(args, out) -> int:
    from conformance.tools import sourcedoc
    out.write(sourcedoc.render(args.format))
    return EXIT_OK




COMMANDS = {"adapters": cmd_adapters, "faults": cmd_faults, "rules": cmd_rules, "sources": cmd_sources}
