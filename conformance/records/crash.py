"""A crash campaign's results as JSON (``crash.json``) and a breaking schedule's file (``schedules/RULE.json``), which
``mqconform crash --replay`` runs again; the parts of a campaign run as Spark tasks are merged here."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from reference_model import language as L

if TYPE_CHECKING:
    from conformance.runner.crash import CrashResult, Schedule

#: The format of a crash campaign's results.
CRASH_FORMAT = "mqconform-crash"
#: The format of a breaking schedule's file.
SCHEDULE_FORMAT = "mqconform-crash-schedule"


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """Wilson's 95% score interval of a rate seen ``k`` times in ``n``."""
    if not n:
        return 0.0, 1.0
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def binomial_interval(n: int, p: float, mass: float = 0.95) -> tuple[int, int]:
    """The central interval of a binomial(n, p) holding at least ``mass`` of its probability: where the count of
    ``n`` schedules broken at a true rate ``p`` falls, but for the tails."""
    if n == 0:
        return 0, 0
    cdf, low, high = 0.0, None, n
    for k in range(n + 1):
        cdf += math.comb(n, k) * p ** k * (1 - p) ** (n - k)
        if low is None and cdf > (1 - mass) / 2:
            low = k
        if cdf >= 1 - (1 - mass) / 2:
            high = k
            break
    return low or 0, high


def schedule_file(rule: str) -> str:
    """The name of a rule's (or a departure verdict's) breaking schedule's file under ``schedules/``: "A or B"
    written ``A_or_B``, no blank in a file name."""
    return rule.replace(" ", "_") + ".json"


def schedule_record(done: Schedule) -> dict:
    """One schedule as it ran: its calls and answers, what the drain read, each message's fate."""
    return {"case": done.case_id, "drained": list(done.drained),
            "steps": [{"op": L.to_json(op), "observed": L.to_json(obs)} for op, obs in done.steps],
            "messages": [{"body": a.body, "class": a.cls, "found": list(a.found), "rules": list(a.rules)}
                         for a in done.accounting.accounts]}


def schedule_json(done: Schedule, rule: str, adapter: str, seed: int, tries: int) -> dict:
    """A breaking schedule as ``--replay`` reads it: its calls, and the run that last broke ``rule``."""
    return {"format": SCHEDULE_FORMAT, "version": 1, "adapter": adapter, "seed": seed, "rule": rule,
            "tries": tries, "ops": [L.to_json(op) for op, _ in done.steps], "run": schedule_record(done)}


def result_json(result: CrashResult, adapter: str, describe: dict, seed: int) -> dict:
    """A crash campaign's results (``crash.json``): per rule broken, how many schedules, the share, its interval,
    the first schedule that broke it and, cut down, the one its file holds."""
    schedule = schedule_record

    def cut_down(rule: str) -> dict:
        return {"minimal": schedule(result.minimal[rule]), "replay": f"schedules/{schedule_file(rule)}"}

    return {"format": CRASH_FORMAT, "version": 1, "adapter": adapter, "system": describe, "seed": seed,
            "schedules": result.schedules, "departed": result.departed, "interrupted": result.interrupted,
            "classes": dict(result.classes),
            # (a departure verdict that a drain broke too shares that rule's cut-down schedule, under "rules")
            "departures": {rule: {"schedules": n, "first": schedule(result.first_departed[rule]),
                                  **(cut_down(rule) if rule in result.minimal and rule not in result.broke else {})}
                           for rule, n in sorted(result.departures.items())},
            "tries": result.tries, "cut_short": list(result.cut_short),
            "rules": {rule: {"schedules": n, "frequency": result.frequency(rule),
                             "interval": list(result.interval(rule)), "first": schedule(result.first[rule]),
                             **(cut_down(rule) if rule in result.minimal else {})}
                      for rule, n in sorted(result.broke.items())}}

