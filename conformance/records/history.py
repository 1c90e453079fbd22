"""Histories and failures, and the replay file that saves a failure."""

from __future__ import annotations

import hashlib
import json
import os
from functools import lru_cache
from pathlib import Path

import attrs

from conformance import __version__
from conformance.checker.sequential import Mismatch, alternatives
from reference_model import language as L

REPLAY_FORMAT = "mqconform-replay"
REPLAY_VERSION = 1


class ReplayFileError(ValueError):
    """A replay file that is missing, corrupt, or not a mqconform replay."""


@attrs.frozen(kw_only=True)
class Step:
    op: L.Op
    observed: L.Observation

    def to_json(self) -> dict:
        return {"op": L.to_json(self.op), "observed": L.to_json(self.observed)}

    @classmethod
    def from_json(cls, data: dict) -> "Step":
        return cls(op=L.from_json(data["op"]), observed=L.from_json(data["observed"]))


def rules_text(rules, one_of: bool, either=(), sep: str = ", ") -> str:
    """Rules a history (or a race) breaks as a line says them: "one of A / B" where it breaks one of them, not
    which; "A, and one of B / C" where it breaks A and one of B and C (``either``); else "A, B" (``sep`` between
    the rules each broken)."""
    if one_of:
        return "one of " + " / ".join(rules)
    if len(either) > 1:
        return sep.join(r for r in rules if r not in either) + ", and one of " + " / ".join(either)
    return sep.join(rules)


@attrs.frozen(kw_only=True)
class Failure:
    """A non-conformance: the history up to the step whose observation broke a rule."""

    area: str
    adapter: str
    adapter_options: dict = attrs.field(factory=dict, eq=False)
    platform: str
    seed: int | None
    steps: tuple[Step, ...]
    mismatch: Mismatch
    #: False when the system did not show the departure again when the same operations were run a
    #: second time (a real broker's timing): the history is what it did once, and may not replay.
    reproduced: bool = attrs.field(default=True, eq=False)
    #: Rules the run that found it had already found broken and stepped past (keep-going rounds): the
    #: history may pass through departures from them before its own step.
    set_aside: tuple[str, ...] = attrs.field(default=(), eq=False)
    #: The rules found broken when it was diagnosed (of those set aside, the others were only mentioned by a
    #: departure; and those found later in the round that met it): a departure naming only set-aside rules was
    #: stepped past where these, relaxed, explained the history, and its diagnosis never put them on trial.  A
    #: replay steps past the same departures (empty: all set-aside rules but the failure's own).
    found_broken: tuple[str, ...] = attrs.field(default=(), eq=False)

    @property
    def rules(self) -> tuple[str, ...]:
        """Every rule the checker named for the departure (what a keep-going search sets aside)."""
        return self.mismatch.rules

    def stepped_past(self) -> frozenset[str]:
        """The rules a replay of this history steps past a departure from outright (see :attr:`found_broken`)."""
        return frozenset(self.found_broken) if self.found_broken else frozenset(self.set_aside) - set(self.rules)

    def passed(self, expiry_tolerance: int = 0) -> dict[int, tuple[str, ...]]:
        """The steps before the failing one at which the history departs from MQ's outcomes by rules its run had
        set aside (found broken before it, or named by a departure before it), and which the run went on past as
        those rules broken allow: each step's index, with the rules its departure names.  A reader of the
        counterexample sees there an answer MQ does not give that is not this failure's."""
        from conformance.checker.sequential import ModelTracker, follow

        if not self.set_aside:
            return {}
        tracker = ModelTracker(self.platform, expiry_tolerance=expiry_tolerance, set_aside=frozenset(self.set_aside))
        out: dict[int, tuple[str, ...]] = {}
        for i, step in enumerate(self.steps[:self.mismatch.index]):
            check, stop = follow(tracker, step.op, step.observed)
            if stop is not None:
                break   # (a history its run's readings do not follow here: nothing said of the rest)
            if check.mismatch is not None:
                out[i] = tuple(check.mismatch.rules)
        return out

    def known_before(self) -> frozenset[str]:
        """The rules found broken before this departure, as a diagnosis of it again takes them (never on trial):
        those it steps past, but for the rules it is itself blamed on (a rule found broken in another area of
        the run is judged again in this one)."""
        return self.stepped_past() - set(self.blamed)

    @property
    def blamed(self) -> tuple[str, ...]:
        """The rules the history breaks, the verdict's failures (:mod:`conformance.checker.blame`): the checker's
        rules until the failure is diagnosed (:func:`with_alternatives`)."""
        return self.mismatch.blamed or self.mismatch.rules

    @property
    def one_of(self) -> bool:
        """Whether the history breaks one of the rules it is blamed on, not all: each alone, relaxed, makes it
        pass, and nothing in it shows which is broken (a verdict of *one of* for each, unless another history
        shows one of them broken: that one then explains this history too)."""
        return self.mismatch.blamed_each and len(self.blamed) > 1

    @property
    def either(self) -> tuple[str, ...]:
        """Of :attr:`blamed`, those of which the history breaks one, not which, beside the others, each broken
        (empty where it breaks each rule blamed, or one of all: :attr:`one_of`)."""
        either = tuple(r for r in self.mismatch.blamed_either if r in self.blamed)
        return either if len(either) > 1 and not self.one_of and len(either) < len(self.blamed) else ()

    @property
    def broken(self) -> tuple[str, ...]:
        """Of :attr:`blamed`, the rules the history breaks each of (none where it breaks one of them)."""
        return () if self.one_of else tuple(r for r in self.blamed if r not in self.either)

    @property
    def blamed_text(self) -> str:
        """The rules it breaks as a line says them (:func:`rules_text`)."""
        return rules_text(self.blamed, self.one_of, self.either)

    @property
    def mentioned(self) -> tuple[str, ...]:
        """Rules the checker named, or that an earlier reading of the history implicates, that the history
        does not break (relaxing them alone does not make it pass): shown, never failed."""
        others = [*self.mismatch.rules, *(r for a in self.mismatch.alternatives for r in a.rules)]
        return tuple(r for r in dict.fromkeys(others) if r not in self.blamed)

    @property
    def size(self) -> int:
        """The calls of the history, clock advances apart: on a system that runs on real time the
        kit inserts those as time passes, so two runs of one case differ in them alone."""
        return sum(not isinstance(s.op, L.AdvanceClock) for s in self.steps)

    def fingerprint(self) -> str:
        """Platform, rule IDs, the differing fields and the op kinds of the history."""
        kinds = ",".join(type(s.op).__name__ for s in self.steps)
        return f"{self.platform}|{'+'.join(self.rules)}|{'+'.join(self.mismatch.fields)}|{kinds}"

    def to_json(self) -> dict:
        return {
            "format": REPLAY_FORMAT,
            "version": REPLAY_VERSION,
            "kit_version": __version__,
            "area": self.area,
            "adapter": self.adapter,
            "adapter_options": dict(self.adapter_options),
            "platform": self.platform,
            "seed": self.seed,
            "rules": list(self.blamed),
            **({"mentioned": list(self.mentioned)} if self.mentioned else {}),
            "steps": [s.to_json() for s in self.steps],
            "mismatch": self.mismatch.to_json(),
            **({} if self.reproduced else {"reproduced": False}),
            **({"set_aside": list(self.set_aside)} if self.set_aside else {}),
            **({"found_broken": list(self.found_broken)} if self.found_broken else {}),
        }

    @classmethod
    def from_json(cls, data: object, origin: str = "replay file") -> "Failure":
        if not isinstance(data, dict) or data.get("format") != REPLAY_FORMAT:
            raise ReplayFileError(f"{origin}: not a mqconform replay file")
        if data.get("version") != REPLAY_VERSION:
            raise ReplayFileError(
                f"{origin}: replay format version {data.get('version')!r} is not supported "
                f"(this kit reads version {REPLAY_VERSION})"
            )
        why = replay_problem(data)
        if why:
            raise ReplayFileError(f"{origin}: not a valid replay file: {why}")
        try:
            failure = cls(
                area=data["area"],
                adapter=data["adapter"],
                adapter_options=dict(data.get("adapter_options") or {}),
                platform=data["platform"],
                seed=data.get("seed"),
                steps=tuple(Step.from_json(s) for s in data["steps"]),
                mismatch=Mismatch.from_json(data["mismatch"]),
                reproduced=data.get("reproduced", True) is not False,
                set_aside=tuple(data.get("set_aside") or ()),
                found_broken=tuple(data.get("found_broken") or ()),
            )
        except (KeyError, TypeError, L.LanguageError) as exc:
            raise ReplayFileError(f"{origin}: corrupt replay file ({exc})") from None
        why = inconsistency(failure)
        if why:
            raise ReplayFileError(f"{origin}: the file contradicts itself: {why}")
        return failure


#: Areas whose rules a failure of an area may name besides its own: every area builds on the core calls, and
#: messages expire in all of them.
_AREAS_BESIDE = ("core", "expiry")


def inconsistency(failure: Failure) -> str | None:
    """Why ``failure`` cannot be what a run recorded (an edited label, step or answer), or None.  Checked before
    any verdict is given on it: the failing step it records is the step of its history at that place, with the
    answer recorded there, and every rule it names belongs to its area (or core, or expiry) and applies on its
    platform."""
    from reference_model.rules import RULES

    mm = failure.mismatch
    step = failure.steps[mm.index]
    if step.op != mm.op:
        return f"the failing step {mm.index + 1} of its history is not the operation its mismatch records"
    if step.observed != mm.observed:
        return f"the answer at its failing step {mm.index + 1} is not the one its mismatch records"
    named = [*mm.rules, *mm.blamed]
    foreign = [r for r in named if RULES[r].area not in (failure.area, *_AREAS_BESIDE)]
    if foreign:
        return f"it is labelled area {failure.area}, whose failures cannot break {foreign[0]} ({RULES[foreign[0]].area})"
    elsewhere = [r for r in named if not RULES[r].applies_on(failure.platform)]
    if elsewhere:
        return f"it is labelled platform {failure.platform}, where {elsewhere[0]} does not apply"
    return None


def with_alternatives(failure: Failure, expiry_tolerance: int = 0,
                      set_aside: frozenset[str] = frozenset(), known_by: frozenset[str] | None = None) -> Failure:
    """``failure`` diagnosed: with the earlier steps where a departure explains its history as well
    (:func:`conformance.checker.sequential.alternatives`), and the rules it breaks by counterfactual
    (:func:`conformance.checker.blame.blame`); ``set_aside``: the rules the run stepped past."""
    from conformance.checker.blame import blame

    set_aside = frozenset(set_aside) | frozenset(failure.set_aside)
    found = alternatives(failure.steps, failure.mismatch, failure.platform, expiry_tolerance, set_aside)
    mismatch = attrs.evolve(failure.mismatch, alternatives=found)
    verdict = blame(failure.steps, mismatch, failure.platform, expiry_tolerance, set_aside, known_by)
    mismatch = attrs.evolve(mismatch, blamed=verdict.rules, confirmed=verdict.confirmed, known=verdict.known,
                            blamed_each=verdict.each, blamed_either=verdict.either)
    return attrs.evolve(failure, mismatch=mismatch, set_aside=tuple(sorted(set_aside)))


def blamed_rules(failure: Failure, expiry_tolerance: int = 0,
                 set_aside: frozenset[str] = frozenset()) -> tuple[str, ...]:
    """The rules ``failure`` breaks (:func:`conformance.checker.blame.blame`), without the search for alternatives."""
    return blamed_as(failure, expiry_tolerance, set_aside)[0]


def blamed_as(failure: Failure, expiry_tolerance: int = 0,
              set_aside: frozenset[str] = frozenset()) -> tuple[tuple[str, ...], bool, tuple[str, ...]]:
    """:func:`blamed_rules`, whether ``failure`` breaks only one of them (:attr:`Failure.one_of`), and those of
    which it breaks one beside the others (:attr:`Failure.either`)."""
    from conformance.checker.blame import blame

    if failure.mismatch.blamed:
        return failure.mismatch.blamed, failure.one_of, failure.either
    found = blame(failure.steps, failure.mismatch, failure.platform, expiry_tolerance, set_aside)
    return found.rules, found.each, found.either


def _replay_schema() -> dict:
    from reference_model import mqconst as C
    from reference_model.rules import AREAS

    lang = "urn:mqconform:protocol:1:language#/$defs/"
    step = {"type": "object", "required": ["op", "observed"], "additionalProperties": False,
            "properties": {"op": {"$ref": lang + "Op"}, "observed": {"$ref": lang + "Observation"}}}
    rules = {"type": "array", "items": {"type": "string", "pattern": "^[A-Z]+-[0-9]{2,3}[a-z]?$"}}
    return {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "required": ["format", "version", "area", "adapter", "platform", "steps", "mismatch"],
        "properties": {
            "format": {"const": REPLAY_FORMAT}, "version": {"const": REPLAY_VERSION},
            "kit_version": {"type": "string"}, "area": {"enum": list(AREAS)},
            "adapter": {"type": "string", "minLength": 1}, "adapter_options": {"type": ["object", "null"]},
            "platform": {"enum": list(C.PLATFORMS)}, "seed": {"type": ["integer", "null"]},
            "rules": rules, "mentioned": rules, "steps": {"type": "array", "minItems": 1, "items": step},
            "reproduced": {"type": "boolean"}, "set_aside": rules, "found_broken": rules,
            "mismatch": {"type": "object", "required": ["index", "op", "observed", "allowed", "fields", "rules"],
                         "properties": {"index": {"type": "integer", "minimum": 0},
                                        "op": {"$ref": lang + "Op"}, "observed": {"$ref": lang + "Observation"},
                                        # expected observations may leave any field open (None: any value)
                                        "allowed": {"type": "array", "items": {
                                            "type": "object", "properties": {"type": {"const": "Observation"}},
                                            "required": ["type"]}},
                                        "fields": {"type": "array", "items": {"type": "string"}},
                                        "rules": {**rules, "minItems": 1},
                                        "blamed": rules, "confirmed": {"type": "boolean"},
                                        "blamed_each": {"type": "boolean"}, "blamed_either": rules,
                                        "alternatives": {"type": "array", "items": {
                                            "type": "object", "additionalProperties": False,
                                            "required": ["index", "expected", "fields", "rules"],
                                            "properties": {
                                                "index": {"type": "integer", "minimum": 0},
                                                "expected": {"type": "object",
                                                             "properties": {"type": {"const": "Observation"}},
                                                             "required": ["type"]},
                                                "fields": {"type": "array", "items": {"type": "string"}},
                                                "rules": {**rules, "minItems": 1}}}}}},
        },
    }


@lru_cache(maxsize=1)
def _fast_replay_check():
    """A compiled check of a replay against :func:`_replay_schema`, the language's definitions inside it (fast; its
    error texts are vague, so a file it refuses is checked again for the one line that says why)."""
    import fastjsonschema

    from reference_model.language_schema import with_language_inside

    return fastjsonschema.compile(with_language_inside(_replay_schema()))


def _schema_problem(data: dict) -> str | None:
    """Why ``data`` breaks the replay's schema (an operation or observation named by its own type first), or None."""
    import fastjsonschema
    from jsonschema import Draft7Validator
    from referencing import Registry, Resource

    from reference_model.language_schema import language_schema, one_line, term_problem

    try:
        _fast_replay_check()(data)
        return None
    except fastjsonschema.JsonSchemaException:
        pass
    terms = [(f"steps/{i}/{k}", step.get(k), kind) for i, step in enumerate(data.get("steps") or [])
             if isinstance(step, dict) for k, kind in (("op", L.Op), ("observed", L.Observation))]
    for where, term, kind in terms:   # an operation or observation: named by its own type
        problem = term_problem(term, kind)
        if problem is not None:
            path, why = problem
            return f"{where}{'/' + path if path else ''}: {why}"
    language = language_schema()
    registry = Registry().with_resource(language["$id"], Resource.from_contents(language))
    return one_line(Draft7Validator(_replay_schema(), registry=registry).iter_errors(data), "the file", deepest=False)


def replay_problem(data: dict) -> str | None:
    """Why ``data`` is not a replay the kit can trust (format, area, every op and observation), or None."""
    from reference_model.rules import RULES

    why = _schema_problem(data)
    if why:
        return why
    others = data["mismatch"].get("alternatives") or []
    unknown = [r for r in [*data.get("rules", []), *data.get("mentioned", []), *data.get("set_aside", []), *data.get("found_broken", []), *data["mismatch"]["rules"], *(data["mismatch"].get("blamed") or []),
                           *(r for a in others for r in a["rules"])]
               if r not in RULES]
    if unknown:
        return f"unknown rule {unknown[0]}"
    if data["mismatch"]["index"] >= len(data["steps"]):
        return f"the failing step {data['mismatch']['index']} is beyond its {len(data['steps'])} steps"
    late = [a["index"] for a in others if a["index"] >= data["mismatch"]["index"]]
    if late:
        return f"an alternative's step {late[0]} is not before the failing step {data['mismatch']['index']}"
    return None


def write_json_atomic(path: Path, data: object) -> None:
    """Write JSON so that a reader never sees a half-written file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(data, f, indent=1, sort_keys=True)
        f.write("\n")
    os.replace(tmp, path)


def save_failure(failure: Failure, directory: Path) -> Path:
    """Write ``failure`` as a replay file named by its area, platform and rules; never over another failure."""
    data = failure.to_json()
    path, written = _failure_file(failure, data, directory)
    if not written:
        write_json_atomic(path, data)
    return path


def drop_failure(failure: Failure, directory: Path) -> None:
    """Remove ``failure``'s replay file from ``directory``, where one was written (none other)."""
    path, written = _failure_file(failure, failure.to_json(), directory)
    if written:
        path.unlink()


def _failure_file(failure: Failure, data: dict, directory: Path) -> tuple[Path, bool]:
    """The replay file of ``failure`` (its JSON form ``data``) in ``directory``, and whether it is written there
    (False: the name it would be written under, one no other failure's file holds)."""
    digest = hashlib.sha1(failure.fingerprint().encode("utf-8", "surrogatepass")).hexdigest()[:10]
    stem = f"{failure.area}-{failure.platform}-{'_'.join(failure.blamed[:3]) or 'unknown'}-{digest}"
    as_read = json.loads(json.dumps(data))
    n = 1
    while True:
        path = Path(directory) / (f"{stem}.json" if n == 1 else f"{stem}-{n}.json")
        try:
            if json.loads(path.read_text(encoding="utf-8")) == as_read:
                return path, True  # this very failure, written before
        except FileNotFoundError:
            return path, False
        except (OSError, ValueError):
            pass
        n += 1


def load_failure(path: str | Path) -> Failure:
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as exc:
        raise ReplayFileError(f"{p}: cannot read ({exc.strerror})") from None
    except UnicodeDecodeError:
        raise ReplayFileError(f"{p}: not a mqconform replay file (not UTF-8 text)") from None
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ReplayFileError(f"{p}: not JSON ({exc})") from None
    return Failure.from_json(data, origin=str(p))
