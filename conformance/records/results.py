"""Rule coverage, verdicts, and the result directory that runs write and reports read.

A result directory holds:

* ``run.json``: what the claim covers (adapter and its identity, capabilities,
  platform, areas, seed, example budget, kit and Hypothesis versions, times) and
  the run's status;
* ``rules.jsonl``: one record per rule, with its source, summary, verdict and
  how often it was exercised, checked and broken, and for a rule that declares
  input classes the checked steps in each (``classes``);
* ``failures/*.json``: one replay file per distinct failure.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from pathlib import Path

import attrs

from conformance import __version__
from conformance.checker.sequential import StepCheck
from conformance.records.history import Failure, drop_failure, save_failure, write_json_atomic
from conformance.records.races import save_race
from reference_model.classes import NEEDS, label, names_of
from reference_model.rules import RULES, Rule

PASS = "pass"
FAIL = "fail"
NOT_APPLICABLE = "not applicable"
NOT_EXERCISED = "not exercised"
INDETERMINATE = "indeterminate"
ERROR = "error"
#: Checked and never broken, but some of the rule's input classes were never reached: not a pass.
PARTLY = "partly exercised"
#: Broken, or another rule is: a history each of these rules alone explains, and no other history shows one broken.
ONE_OF = "one of"
VERDICTS = (PASS, FAIL, ONE_OF, PARTLY, NOT_APPLICABLE, NOT_EXERCISED, INDETERMINATE, ERROR)
RESULTS_FORMAT = "mqconform-results"
RESULTS_VERSION = 1


def _count(counter: Counter, keys) -> None:
    for key in keys:
        counter[key] += 1


@attrs.define
class Coverage:
    """Per-rule counters accumulated over a run.

    The steps that matched are added to ``exercised``, ``checked`` and ``classes`` when those are
    read: read them again after more steps rather than holding on to a counter read before.
    """

    _exercised: Counter = attrs.Factory(Counter)
    _checked: Counter = attrs.Factory(Counter)
    failed: Counter = attrs.Factory(Counter)
    #: Histories that break one of several rules, not all (each alone explains them), by their rules joined by
    #: "+" (``CORE-32+CORE-15``): no rule of them is failed by such a history alone (see :func:`one_of`).
    one_of: Counter = attrs.Factory(Counter)
    indeterminate: Counter = attrs.Factory(Counter)
    examples: int = 0
    steps: int = 0
    #: Puts to cluster queues: messages each destination received, and the share the weights expected.
    shares_observed: Counter = attrs.Factory(Counter)
    shares_expected: Counter = attrs.Factory(Counter)
    #: Operations the adapter could not express, by operation type (not run, not checked).
    not_expressible: Counter = attrs.Factory(Counter)
    #: Checked steps per input class of a rule (``RULE:class``, :mod:`reference_model.classes`).
    _classes: Counter = attrs.Factory(Counter)
    #: Operations in an input class that the adapter could not express (``RULE:class``: how many were left out):
    #: a class reached only so is not "never reached" but not expressible on the system.
    classes_not_expressible: Counter = attrs.Factory(Counter)
    #: Operations the system declined when run, by ``"Type: reason"`` (also counted in ``not_expressible``).
    declined: Counter = attrs.Factory(Counter)
    #: Calls of the kinds an input class needs before it (:data:`reference_model.classes.NEEDS`) that the system
    #: made and that it left out, by ``"kind:made"`` and ``"kind:left out"`` (counted only where an adapter leaves
    #: calls out).
    calls: Counter = attrs.Factory(Counter)
    #: Checked steps not yet added to the counters, by their rules (or classes): a step costs one
    #: lookup here instead of a counter update per rule (a run has few sets of rules that steps
    #: check together); the counters take them when read.
    _pending_rules: dict = attrs.field(factory=dict, init=False, eq=False, repr=False)
    _pending_classes: dict = attrs.field(factory=dict, init=False, eq=False, repr=False)

    @property
    def exercised(self) -> Counter:
        self._settle()
        return self._exercised

    @property
    def checked(self) -> Counter:
        self._settle()
        return self._checked

    @property
    def classes(self) -> Counter:
        self._settle()
        return self._classes

    def _settle(self) -> None:
        """Add the pending steps to the counters."""
        if self._pending_rules:
            exercised, checked = self._exercised, self._checked
            for rules, n in self._pending_rules.items():
                for rule in rules:
                    exercised[rule] += n
                    checked[rule] += n
            self._pending_rules.clear()
        if self._pending_classes:
            classes = self._classes
            for names, n in self._pending_classes.items():
                for name in names:
                    classes[name] += n
            self._pending_classes.clear()

    def record_share(self, chosen: str, expected: dict[str, float]) -> None:
        if chosen and expected:
            self.shares_observed[chosen] += 1
            self.shares_expected.update(expected)

    def record(self, check: StepCheck) -> None:
        # Called at every step: a step that matched with nothing left in doubt (nearly all) is only
        # noted against its rules and classes (see _pending_rules).
        self.steps += 1
        if check.mismatch is None and not check.in_doubt and not check.decided:
            pending = self._pending_rules
            pending[check.rules] = pending.get(check.rules, 0) + 1
            if check.classes:
                pending = self._pending_classes
                pending[check.classes] = pending.get(check.classes, 0) + 1
            return
        exercised, checked = self._exercised, self._checked
        _count(exercised, check.rules)
        if check.decided:
            _count(exercised, check.decided)
            _count(checked, check.decided)
        if check.in_doubt:
            _count(self.indeterminate, check.rules)
        elif check.mismatch is None:
            _count(checked, check.rules)
            _count(self._classes, check.classes)

    def count_failure(self, blamed: tuple[str, ...], each: bool, either: tuple[str, ...] = ()) -> None:
        """A failing history blamed on ``blamed``: each failed, or (``each``) one of them, or each but ``either``,
        and one of those."""
        self._tally(blamed, each, either, 1)

    def discount_failure(self, blamed: tuple[str, ...], each: bool, either: tuple[str, ...] = ()) -> None:
        """Take back what :meth:`count_failure` counted for the same history."""
        self._tally(blamed, each, either, -1)
        for counter in (self.failed, self.one_of):
            for key in [k for k, n in counter.items() if n <= 0]:
                del counter[key]

    def _tally(self, blamed: tuple[str, ...], each: bool, either: tuple[str, ...], n: int) -> None:
        if each and len(blamed) > 1:
            self.one_of["+".join(blamed)] += n
        elif len(either) > 1:
            for r in blamed:
                if r not in either:
                    self.failed[r] += n
            self.one_of["+".join(either)] += n
        else:
            for r in blamed:
                self.failed[r] += n

    def only_one_of(self, rule: str) -> bool:
        """Whether ``rule`` is named by a history that breaks one of several rules, and by no failure of its own."""
        return not self.failed[rule] and any(rule in key.split("+") for key in self.one_of)

    def undecided(self) -> dict[str, list[tuple[str, ...]]]:
        """Each rule named by a history that breaks one of several rules, none of which another history shows
        broken: the other rules of each such history (:func:`one_of`)."""
        return one_of({r for r, n in self.failed.items() if n}, self.one_of)

    def record_held(self, rules: tuple[str, ...], classes: tuple[str, ...]) -> None:
        """A step that departed only as a departure found before explains, stepped past: ``rules``, those that
        decide nothing of what differed, held there (checked), in the input ``classes``."""
        _count(self._exercised, rules)
        _count(self._checked, rules)
        _count(self._classes, classes)

    def class_counts(self, rule: str) -> dict[str, int]:
        """Checked steps in each input class ``rule`` declares, in declaration order (0: never reached)."""
        return {name: self.classes[label(rule, name)] for name in names_of(rule)}

    def unreached(self, rule: str) -> list[str]:
        """The input classes of ``rule`` no checked step was in, those the system cannot express apart."""
        return [name for name, n in self.class_counts(rule).items() if not n and not self._beyond(rule, name)]

    def inexpressible(self, rule: str) -> list[str]:
        """The input classes of ``rule`` that no checked step was in because the adapter could not express the
        operations that would have reached them, or the earlier calls they need (every one of those it was asked
        for left out, none made)."""
        return [name for name, n in self.class_counts(rule).items() if not n and self._beyond(rule, name)]

    def _beyond(self, rule: str, name: str) -> bool:
        key = label(rule, name)
        if self.classes_not_expressible[key]:
            return True
        kind = NEEDS.get(key)
        return kind is not None and not self.calls[f"{kind}:made"] and self.calls[f"{kind}:left out"] > 0

    COUNTERS = ("exercised", "checked", "failed", "one_of", "indeterminate", "shares_observed", "shares_expected",
                "not_expressible", "classes", "classes_not_expressible", "declined", "calls")

    def to_json(self) -> dict:
        return {**{name: dict(getattr(self, name)) for name in self.COUNTERS},
                "examples": self.examples, "steps": self.steps}

    @classmethod
    def from_json(cls, data: dict) -> "Coverage":
        return cls(**{name: Counter(data.get(name) or {}) for name in cls.COUNTERS},
                   examples=int(data.get("examples") or 0), steps=int(data.get("steps") or 0))

    def merge(self, other: "Coverage") -> None:
        for name in self.COUNTERS:
            getattr(self, name).update(getattr(other, name))
        self.examples += other.examples
        self.steps += other.steps


def one_of(failed: set[str], sets) -> dict[str, list[tuple[str, ...]]]:
    """The rules histories that each break one of several rules (``sets``: the rules of each, joined by "+", or
    as tuples) leave in question: where none of a history's rules is in ``failed`` (shown broken by another
    history, which then explains this one as well), each of them, with the others named with it."""
    out: dict[str, list[tuple[str, ...]]] = {}
    for key in sets:
        rules = tuple(key.split("+")) if isinstance(key, str) else tuple(key)
        if any(r in failed for r in rules):
            continue
        for rule in rules:
            others = tuple(r for r in rules if r != rule)
            if others not in out.setdefault(rule, []):
                out[rule].append(others)
    return out


def verdict_for(rule: Rule, coverage: Coverage, applicable: bool, error: bool,
                undecided: dict[str, list] | None = None) -> str:
    """A rule's verdict.  A recorded failure is a fail whatever the adapter declared (a system that
    broke a rule could express it), and so is *one of* (``undecided``: :meth:`Coverage.undecided`); a pass needs
    every input class the rule declares reached."""
    if coverage.failed[rule.id]:
        return FAIL
    if undecided and rule.id in undecided:
        return ONE_OF
    if not applicable:
        return NOT_APPLICABLE
    if error:
        return ERROR
    if coverage.checked[rule.id]:
        return PARTLY if coverage.unreached(rule.id) else PASS
    if coverage.indeterminate[rule.id]:
        return INDETERMINATE
    return NOT_EXERCISED


def unreached_areas(rows, areas) -> list[str]:
    """Of ``areas`` (those a run was asked for), each whose rules ``rows`` (rule records) give no verdict
    that needed a case to reach them: the system takes part in the area (some rule is not "not
    applicable") yet no rule of it was checked, broken or left indeterminate.  An area in error is not
    counted here: its error says why."""
    out = []
    for area in areas:
        verdicts = {row["verdict"] for row in rows if row["area"] == area}
        if NOT_EXERCISED in verdicts and verdicts <= {NOT_EXERCISED, NOT_APPLICABLE}:
            out.append(area)
    return out


def vacuity(rows, areas, examples: int) -> str | None:
    """Why a run's verdicts are no evidence at all, in one line, or None: no case ran, or an area asked
    for was never reached (a pass elsewhere says nothing of it).  The one rule of every command that gives
    verdicts (run, campaign, report, the pytest plugin): such a run exits 2."""
    unreached = unreached_areas(rows, areas)
    if not unreached:
        return None
    if examples == 0:
        return "no test case ran"
    taking_part = [a for a in areas if any(row["area"] == a and row["verdict"] != NOT_APPLICABLE for row in rows)]
    if len(unreached) == len(taking_part):
        return f"{examples} cases ran but no rule was exercised"
    many = len(unreached) > 1
    return (f"area{'s' if many else ''} {', '.join(unreached)} {'were' if many else 'was'} asked for, but no rule "
            f"of {'them' if many else 'it'} was exercised")


#: What replaying a recorded counterexample after an area's search showed (``RunRecord.recorded``,
#: :mod:`conformance.runner.recorded`): its departure again, recorded as the run's; again, but explained by the
#: departures the run found (nothing new); none; another (and REPLAY_CONFIRMED below).  And why one was not
#: replayed: the search found what it breaks, it was recorded on another adapter, or the system cannot run it.
REPLAY_SHOWN, REPLAY_EXPLAINED = "shown again", "shown again, explained by the departures found"
REPLAY_CONFORMANT, REPLAY_OTHERWISE = "conformant", "departs otherwise than recorded"
REPLAY_FOUND, REPLAY_OTHER_SYSTEM, REPLAY_NOT_EXPRESSIBLE = ("found by the search", "recorded on another adapter",
                                                             "not expressible")
#: A recorded counterexample shown again whose departure the search found, but in a history not shown again (the
#: system's timing): the run's failure is the recorded one's, shown again, in place of the search's.
REPLAY_CONFIRMED = "shown again, in place of the search's history not shown again"


def replay_outcome(entry: dict) -> str:
    """What a ``RunRecord.recorded`` entry's replay showed, its reason apart ("not expressible (Restart at step
    4)": "not expressible")."""
    return entry["shown"].split(" (")[0]

#: Where a run's time goes: new cases searched, a departure shrunk by Hypothesis, its history minimised.
PHASES = ("search", "shrink", "minimise")


@attrs.define
class RunRecord:
    """Everything one run produced, written to a result directory."""

    adapter: str
    describe: dict
    capabilities: dict
    areas: list[str]
    seed: int | None
    examples: int
    coverage: Coverage = attrs.Factory(Coverage)
    failures: list[Failure] = attrs.Factory(list)
    error: str | None = None
    started: float = attrs.Factory(time.time)
    ended: float | None = None
    #: Areas a run was interrupted in or before (their rules get no verdict but "error").
    interrupted: list[str] = attrs.Factory(list)
    #: Areas the run's error happened in or kept from running; empty with an error means every area.
    errored: list[str] = attrs.Factory(list)
    #: Areas (``"AREA on PLATFORM"``) whose shrinking a time limit ended before its cases were spent:
    #: there a seed does not fix which cases ran, nor the verdicts only those cases gave evidence for.
    timed_shrinks: list[str] = attrs.Factory(list)
    #: Seconds spent per ``"AREA on PLATFORM"`` (a campaign's: its tasks' worker time).
    seconds: dict = attrs.Factory(dict)
    #: Of those, seconds per phase (:data:`PHASES`) in all: searching with new cases, Hypothesis shrinking a
    #: departure, minimising its history.
    phases: dict = attrs.Factory(dict)
    #: Cases that a departure already found cut short: the model could not follow the system past it, so
    #: the rest of the case was not run.
    cut_short: int = 0
    #: Departures a worker of a run shared among jobs met after another worker had found them: not shrunk on
    #: nor minimised a second time (the other's counterexample is the run's).
    found_elsewhere: int = 0
    #: A run of concurrent cases (``run --concurrency``): the clients each case had, and the races found
    #: (:class:`conformance.records.races.RaceRecord`), written beside the replay files.
    concurrency: int | None = None
    races: list = attrs.Factory(list)
    #: Recorded counterexamples given to the run (``run --recorded``): each file's name, area, platform and what
    #: its replay after the area's search showed, or why it was not replayed (:mod:`conformance.runner.recorded`).
    recorded: list = attrs.Factory(list)
    #: Failures recorded, then given up for others that show the same departure better (:meth:`replace_failure`):
    #: their replay files, where written, are removed at the next write.
    _given_up: list = attrs.field(factory=list, eq=False, repr=False)

    def spend(self, phase: str, seconds: float) -> None:
        """Count ``seconds`` spent in ``phase`` (one of :data:`PHASES`)."""
        self.phases[phase] = round(self.phases.get(phase, 0.0) + seconds, 3)

    def _in_error(self, area: str) -> bool:
        if area in self.interrupted:
            return True
        return self.error is not None and (not self.errored or area in self.errored)

    def applicable(self, rule: Rule) -> bool:
        return rule.area in self.capabilities["areas"] and rule.id not in self.capabilities.get(
            "not_applicable", {}) and any(rule.applies_on(p) for p in self.capabilities["platforms"])

    def why_not_applicable(self, rule: Rule) -> str:
        given = self.capabilities.get("not_applicable", {}).get(rule.id)
        if given:
            return given
        if rule.area not in self.capabilities["areas"]:
            return f"the system under test does not take part in area {rule.area!r}"
        return (f"the rule holds on {' and '.join(rule.platforms)} only; the system under test runs on "
                f"{' and '.join(self.capabilities['platforms'])}")

    def add_failure(self, failure: Failure) -> None:
        # failed: the rules the history breaks (or one of them), not every rule the checker mentioned
        self.coverage.count_failure(failure.blamed, failure.one_of, failure.either)
        self.failures.append(failure)

    def replace_failure(self, old: Failure, new: Failure) -> None:
        """Record ``new`` in ``old``'s place (counted instead of it; its replay file, where written, removed at the
        next write): the same departure shown better, as a recorded counterexample shown again is, where the
        search's history of it was not shown again."""
        at = next(i for i, f in enumerate(self.failures) if f is old)
        self.coverage.discount_failure(old.blamed, old.one_of, old.either)
        self.coverage.count_failure(new.blamed, new.one_of, new.either)
        self.failures[at] = new
        self._given_up.append(old)

    def add_race(self, race) -> None:
        """A race: the rules no order of its calls satisfies are failed, as a failure's blamed rules are (or, where
        each alone explains it, one of them)."""
        self.coverage.count_failure(tuple(race.rules), race.one_of)
        self.races.append(race)

    def _rules(self) -> list[tuple[Rule, list[str]]]:
        """Each rule reported, with the areas whose errors bear on it: the rules of the areas run, then
        rules of other areas the run found broken (a machine may reach another area's rules, as the
        dlq machine's expiring dead letters reach expiry's: a departure is never left out)."""
        ran = [(rule, [area]) for area in self.areas for rule in RULES.all(area)]
        seen = {rule.id for rule, _ in ran}
        undecided = self.coverage.undecided()
        reached = [(rule, list(self.areas)) for rule in RULES.all()
                   if rule.id not in seen and (self.coverage.failed[rule.id] or rule.id in undecided)]

        return ran + reached

    def rule_rows(self) -> list[dict]:
        rows = []
        undecided = self.coverage.undecided()
        for rule, areas in self._rules():
            in_error = any(self._in_error(area) for area in areas)
            verdict = verdict_for(rule, self.coverage, self.applicable(rule), in_error, undecided)
            interrupted = any(area in self.interrupted for area in areas)
            rows.append({
                "rule": rule.id,
                "area": rule.area,
                "source": rule.source,
                "cites": rule.citations(),
                "summary": rule.summary,
                "verdict": verdict,
                **({"interrupted": True} if interrupted and verdict == ERROR else {}),
                "exercised": self.coverage.exercised[rule.id],
                "checked": self.coverage.checked[rule.id],
                "failed": self.coverage.failed[rule.id],
                # one of these rules is broken (or this one): histories that each of them alone explains
                **({"one_of": [list(o) for o in undecided[rule.id]],
                    "otherwise": verdict_for(rule, self.coverage, self.applicable(rule), in_error)}
                   if verdict == ONE_OF else {}),
                **({"not_applicable": self.why_not_applicable(rule)} if verdict == NOT_APPLICABLE else {}),
                # declared not applicable, and broken all the same: the declaration is contradicted
                **({"declared_not_applicable": self.why_not_applicable(rule)}
                   if verdict in (FAIL, ONE_OF) and not self.applicable(rule) else {}),
                **({"classes": self.coverage.class_counts(rule.id)} if names_of(rule.id) else {}),
                **({"classes_not_expressible": self.coverage.inexpressible(rule.id)}
                   if self.coverage.inexpressible(rule.id) else {}),
            })
        return rows

    def status(self) -> str:
        if self.error is not None or self.interrupted:
            return ERROR
        return FAIL if self.failures or self.races else PASS

    def part_json(self) -> dict:
        """What one of several processes sharing a run found: merged into one record by :meth:`absorb`."""
        return {"adapter": self.adapter, "describe": self.describe, "capabilities": self.capabilities,
                "areas": self.areas, "seed": self.seed, "examples": self.examples,
                "coverage": self.coverage.to_json(), "failures": [f.to_json() for f in self.failures],
                "error": self.error, "errored": self.errored, "interrupted": self.interrupted,
                "timed_shrinks": self.timed_shrinks, "seconds": self.seconds, "phases": self.phases,
                "cut_short": self.cut_short, "found_elsewhere": self.found_elsewhere, "started": self.started,
                "ended": self.ended}

    @classmethod
    def from_parts(cls, parts: list[dict]) -> "RunRecord":
        """One record for a run whose areas were shared out among processes (pytest-xdist workers)."""
        first = parts[0]
        record = cls(adapter=first["adapter"], describe=first["describe"], capabilities=first["capabilities"],
                     areas=first["areas"], seed=first["seed"], examples=first["examples"],
                     started=min(p["started"] for p in parts))
        for part in parts:
            record.absorb(part)
        return record

    def absorb(self, part: dict) -> None:
        self.coverage.merge(Coverage.from_json(part["coverage"]))
        for data in part["failures"]:   # counted in the part's coverage already
            failure = Failure.from_json(data, origin="worker record")
            if all(f.fingerprint() != failure.fingerprint() for f in self.failures):
                self.failures.append(failure)
        if part.get("error"):
            everywhere = not part.get("errored") or (self.error is not None and not self.errored)
            self.errored = [] if everywhere else sorted(set(self.errored) | set(part["errored"]))
            self.error = part["error"] if self.error is None else f"{self.error}; {part['error']}"
        self.interrupted = sorted(set(self.interrupted) | set(part.get("interrupted") or []))
        self.timed_shrinks += [t for t in part.get("timed_shrinks") or [] if t not in self.timed_shrinks]
        self.recorded += [r for r in part.get("recorded") or [] if r not in self.recorded]
        for where, spent in (part.get("seconds") or {}).items():
            self.seconds[where] = round(self.seconds.get(where, 0.0) + spent, 3)
        for phase, spent in (part.get("phases") or {}).items():
            self.spend(phase, spent)
        self.cut_short += part.get("cut_short") or 0
        self.found_elsewhere += part.get("found_elsewhere") or 0
        ended = [e for e in (self.ended, part.get("ended")) if e is not None]
        self.ended = max(ended) if ended else None

    def write(self, directory: Path) -> list[Path]:
        """Write the result directory; returns the replay files written."""
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        for gone in self._given_up:
            drop_failure(gone, directory / "failures")
        replay_paths = [save_failure(f, directory / "failures") for f in self.failures]
        race_paths = [save_race(r, directory) for r in self.races]
        rows = self.rule_rows()
        tmp = directory / "rules.jsonl.tmp"
        with open(tmp, "w", encoding="utf-8") as fh:
            for row in rows:
                fh.write(json.dumps(row, sort_keys=True) + "\n")
        tmp.replace(directory / "rules.jsonl")
        import hypothesis

        write_json_atomic(directory / "run.json", {
            "format": RESULTS_FORMAT,
            "version": RESULTS_VERSION,
            "kit_version": __version__,
            "hypothesis_version": hypothesis.__version__,
            "adapter": self.adapter,
            "system": self.describe,
            "capabilities": self.capabilities,
            "areas": self.areas,
            "seed": self.seed,
            "examples": self.examples,
            "examples_run": self.coverage.examples,
            "steps_run": self.coverage.steps,
            "status": self.status(),
            "error": self.error,
            "interrupted": self.interrupted,
            "errored": self.errored,
            "timed_shrinks": self.timed_shrinks,
            "seconds": self.seconds,
            "phases": self.phases,
            "cut_short": self.cut_short,
            **({"found_elsewhere": self.found_elsewhere} if self.found_elsewhere else {}),
            **({"recorded": self.recorded} if self.recorded else {}),
            "started": self.started,
            "ended": self.ended,
            "failures": [str(p.relative_to(directory)) for p in replay_paths],
            **({"concurrency": self.concurrency, "races": [str(p.relative_to(directory)) for p in race_paths]}
               if self.concurrency else {}),
            "not_expressible": dict(self.coverage.not_expressible),
            **({"declined": dict(self.coverage.declined)} if self.coverage.declined else {}),
            "cluster_shares": {"observed": dict(self.coverage.shares_observed),
                               "expected": {k: round(v, 3) for k, v in self.coverage.shares_expected.items()}},
        })
        return replay_paths
