"""A race's replay file: a concurrent case no order of whose operations MQ allows, in the operation language.

The file keeps what ran (the set-up, each client's operations with when each was invoked and returned, the
check after) and what the concurrent checker found (the rules, the longest order, where it broke), so that
``mqconform replay`` can run the same clients again, as often as ``--tries`` says, and the timeline can be read
one column per client.  Times are seconds from the first operation's invocation.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import attrs
from tabulate import tabulate

from conformance.checker.linearizable import Event, Linearization
from conformance.records.history import ReplayFileError, rules_text, write_json_atomic
from conformance.records.render import observation_text, op_text
from reference_model import language as L

FORMAT = "mqconform-race"
VERSION = 1


@attrs.frozen(kw_only=True)
class RaceRecord:
    """A race as recorded: where it ran, what ran, and the rules no order of it satisfies."""

    adapter: str
    adapter_options: dict = attrs.field(factory=dict, eq=False)
    platform: str
    seed: int
    index: int
    setup: tuple[tuple[L.Op, L.Observation], ...]
    events: tuple[Event, ...]
    after: tuple[tuple[L.Op, L.Observation], ...]
    rules: tuple[str, ...]
    #: The longest order of the events the checker found (indexes into ``events``) and where it broke:
    #: "setup", an event's index, or "after".
    order: tuple[int, ...] = ()
    at: str | int | None = None
    #: How many calls the clients made in the race as first found, before it was shrunk (None: not shrunk).
    shrunk_from: int | None = None
    #: Its shrink was stopped by its time bound (a smaller case may exist), not by finding nothing smaller.
    shrink_timed_out: bool = False
    #: The rules races found earlier in its run had broken, set aside when it was judged (and when it is replayed).
    set_aside: tuple[str, ...] = ()
    #: The clients in the order their threads were started (a replay starts them so; empty: by name).
    started: tuple[str, ...] = ()
    #: ``rules`` are more than one and each alone explains the race: it breaks one of them, not which (a verdict of
    #: *one of* for each, as for a sequential history that shows as much).
    one_of: bool = False

    @property
    def rules_text(self) -> str:
        """The rules it breaks as a line says them (:func:`conformance.records.history.rules_text`)."""
        return rules_text(self.rules, self.one_of)

    @property
    def clients(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(e.client for e in sorted(self.events, key=lambda e: e.invoked)))

    def scripts(self) -> dict[str, list[L.Op]]:
        """Each client's operations in the order it made them (what a replay runs again), the clients in the order
        their threads were started."""
        order = [c for c in self.started if c in self.clients] + sorted(set(self.clients) - set(self.started))
        out: dict[str, list[L.Op]] = {c: [] for c in order}
        for e in sorted(self.events, key=lambda e: e.invoked):
            out[e.client].append(e.op)
        return out

    def to_json(self) -> dict:
        start = min((e.invoked for e in self.events), default=0.0)
        pairs = lambda steps: [{"op": L.to_json(op), "observed": L.to_json(obs)} for op, obs in steps]  # noqa: E731
        return {
            "format": FORMAT, "version": VERSION, "adapter": self.adapter, "adapter_options": dict(self.adapter_options),
            "platform": self.platform, "seed": self.seed, "index": self.index, "rules": list(self.rules),
            "setup": pairs(self.setup),
            "events": [{"client": e.client, "op": L.to_json(e.op),
                        "observed": None if e.observed is None else L.to_json(e.observed),
                        "invoked": round(e.invoked - start, 6),
                        "returned": None if e.returned is None else round(e.returned - start, 6)} for e in self.events],
            "after": pairs(self.after), "order": list(self.order), "at": self.at,
            **({} if self.shrunk_from is None else {"shrunk_from": self.shrunk_from}),
            **({"shrink_timed_out": True} if self.shrink_timed_out else {}),
            **({"set_aside": list(self.set_aside)} if self.set_aside else {}),
            **({"started": list(self.started)} if self.started else {}),
            **({"one_of": True} if self.one_of else {}),
        }

    @classmethod
    def from_json(cls, data: dict, origin: str = "race") -> "RaceRecord":
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise ReplayFileError(f"{origin}: not a mqconform race file")
        if data.get("version") != VERSION:
            raise ReplayFileError(f"{origin}: race file version {data.get('version')!r}; this kit reads {VERSION}")
        try:
            pairs = lambda steps: tuple((L.from_json(s["op"]), L.from_json(s["observed"])) for s in steps)  # noqa: E731
            events = tuple(Event(client=str(e["client"]), op=L.from_json(e["op"]),
                                 observed=None if e["observed"] is None else L.from_json(e["observed"]),
                                 invoked=float(e["invoked"]),
                                 returned=None if e["returned"] is None else float(e["returned"]))
                           for e in data["events"])
            return cls(adapter=str(data["adapter"]), adapter_options=dict(data.get("adapter_options") or {}),
                       platform=str(data["platform"]), seed=int(data["seed"]), index=int(data["index"]),
                       setup=pairs(data["setup"]), events=events, after=pairs(data.get("after") or ()),
                       rules=tuple(data.get("rules") or ()), order=tuple(data.get("order") or ()), at=data.get("at"),
                       shrunk_from=None if data.get("shrunk_from") is None else int(data["shrunk_from"]),
                       shrink_timed_out=data.get("shrink_timed_out") is True,
                       set_aside=tuple(str(r) for r in data.get("set_aside") or ()),
                       started=tuple(str(c) for c in data.get("started") or ()),
                       one_of=data.get("one_of") is True and len(data.get("rules") or ()) > 1)
        except (KeyError, TypeError, ValueError, L.LanguageError) as exc:
            raise ReplayFileError(f"{origin}: not a well-formed race file ({exc})") from None


def race_failure(race: RaceRecord):
    """The race as the sequential departure of its longest order: the set-up, the calls in that order, then the
    call no order could place after them (or the check after, up to its step that failed), diagnosed as the race
    was (its rules), with the rules its run had set aside: what a known deviation's shape is matched against.
    None where it cannot be said (no order recorded, a call of unknown effect in it, or the history no longer
    departs)."""
    from conformance.checker.sequential import ModelTracker, follow
    from conformance.records.history import Failure, Step

    if race.at is None or race.at == "setup":
        return None
    placed = [race.events[i] for i in race.order]
    if any(e.observed is None for e in placed):
        return None
    pairs = list(race.setup) + [(e.op, e.observed) for e in placed if e.observed is not None]
    if race.at == "after":
        pairs += list(race.after)
    elif isinstance(race.at, int) and 0 <= race.at < len(race.events) and race.events[race.at].observed is not None:
        pairs.append((race.events[race.at].op, race.events[race.at].observed))
    else:
        return None
    tracker = ModelTracker(race.platform, set_aside=frozenset(race.set_aside))
    for n, (op, observed) in enumerate(pairs):
        _, mismatch = follow(tracker, op, observed)
        if mismatch is not None:
            steps = tuple(Step(op=o, observed=obs) for o, obs in pairs[:n + 1])
            return Failure(area="core", adapter=race.adapter, adapter_options=dict(race.adapter_options),
                           platform=race.platform, seed=race.seed, steps=steps,
                           mismatch=attrs.evolve(mismatch, index=n, blamed=tuple(race.rules) or mismatch.rules,
                                                 blamed_each=race.one_of),
                           set_aside=tuple(race.set_aside))
    return None


def race_record(*, adapter: str, adapter_options: dict, platform: str, seed: int, index: int, setup, events, after,
                result: Linearization, shrunk_from: int | None = None, set_aside=(), started=(),
                shrink_timed_out: bool = False) -> RaceRecord:
    return RaceRecord(adapter=adapter, adapter_options=dict(adapter_options), platform=platform, seed=seed,
                      index=index, setup=tuple(setup), events=tuple(events), after=tuple(after),
                      rules=tuple(result.rules), order=tuple(result.order), at=result.at, shrunk_from=shrunk_from,
                      shrink_timed_out=shrink_timed_out,
                      set_aside=tuple(sorted(set_aside)), started=tuple(started), one_of=result.one_of)


def is_race_file(path: Path) -> bool:
    """Whether ``path`` holds a race (a JSON object of this format), read without raising."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(data, dict) and data.get("format") == FORMAT


def load_race(path: str | Path) -> RaceRecord:
    p = Path(path)
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ReplayFileError(f"{p}: cannot read ({exc.strerror})") from None
    except ValueError as exc:
        raise ReplayFileError(f"{p}: not JSON ({exc})") from None
    return RaceRecord.from_json(data, origin=str(p))


def save_race(race: RaceRecord, directory: Path) -> Path:
    """Write ``race`` under ``directory``/failures, named by its rules and contents; returns the path."""
    data = race.to_json()
    digest = hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:10]
    path = Path(directory) / "failures" / f"race-{'_'.join(race.rules) or 'unnamed'}-{digest}.json"
    write_json_atomic(path, data)
    return path


def _short(obs: L.Observation) -> str:
    """An answer in a timeline's cell: the reason, the message's body or the attributes (the rest is in the file)."""
    text = observation_text(L.Observation(cc=obs.cc, rc=obs.rc, attrs=obs.attrs))
    return text + (f" {obs.message.body!r}" if obs.message is not None else "")


#: Tries a race's replay line suggests.
SUGGESTED_TRIES = 20


def race_replay_command(path) -> str:
    """The command that runs a race's clients again, as often as is worth suggesting."""
    return f"mqconform replay {path} --tries {SUGGESTED_TRIES}"


def render_race(race: RaceRecord) -> str:
    """The race as a timeline: the set-up, then one column per client, a row per call in the order the calls
    were invoked (ms from the first), each call with what it answered (or "?" where it never returned), then
    the check after; the call where every order breaks is marked."""
    clients = sorted(race.clients)
    start = min((e.invoked for e in race.events), default=0.0)
    broken = race.at if isinstance(race.at, int) else None
    rows = []
    for i, e in sorted(enumerate(race.events), key=lambda x: x[1].invoked):
        answer = "?" if e.observed is None else _short(e.observed)
        ended = "" if e.returned is None else f"-{(e.returned - start) * 1000:.2f}"
        cell = f"{op_text(e.op)} -> {answer}"
        rows.append([">>" if i == broken else "", f"{(e.invoked - start) * 1000:.2f}{ended}",
                     *[cell if c == e.client else "" for c in clients]])
    lines = [f"Race on adapter '{race.adapter}' (platform {race.platform}, seed {race.seed}, case {race.index + 1}): "
             f"no order of the calls is one MQ allows ({race.rules_text or 'rules not named'})"
             + (f"; shrunk from {race.shrunk_from} calls to {len(race.events)}" if race.shrunk_from is not None
                else "")
             + (" (the shrink stopped at its time bound: a smaller case may exist)" if race.shrink_timed_out else "")
             + (f"; judged with {', '.join(race.set_aside)} set aside (found broken before)" if race.set_aside
                else ""), "",
             "Set-up:"]
    lines += [f"  {op_text(op)} -> {observation_text(obs)}" for op, obs in race.setup]
    lines += ["", tabulate(rows, headers=["", "ms", *[f"client {c}" for c in clients]], tablefmt="simple"), ""]
    if race.after:
        lines.append("Then:" + (" (every order breaks here)" if race.at == "after" else ""))
        lines += [f"  {op_text(op)} -> {observation_text(obs)}" for op, obs in race.after]
    return "\n".join(lines)


__all__ = ["RaceRecord", "race_record", "race_failure", "is_race_file", "load_race", "save_race", "render_race", "race_replay_command",
           "SUGGESTED_TRIES", "FORMAT"]
