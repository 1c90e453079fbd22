"""The cluster what-if simulator: where would my messages go if...

Reads a cluster description (TOML, see ``docs/cluster-simulator.md``), runs the
reference model's workload algorithm for N messages and reports, per candidate
destination, the share the weights predict, the share the algorithm produced,
and the step that eliminated each destination that never receives anything.
"""

from __future__ import annotations

import os
import difflib
import re
import tomllib
from collections import Counter
from pathlib import Path

import attrs

from reference_model import cluster as W

STATE_NAMES = {
    "INACTIVE": W.MQCHS_INACTIVE, "BINDING": W.MQCHS_BINDING, "STARTING": W.MQCHS_STARTING,
    "RUNNING": W.MQCHS_RUNNING, "STOPPING": W.MQCHS_STOPPING, "RETRYING": W.MQCHS_RETRYING,
    "STOPPED": W.MQCHS_STOPPED, "REQUESTING": W.MQCHS_REQUESTING, "PAUSED": W.MQCHS_PAUSED,
    "INITIALIZING": W.MQCHS_INITIALIZING,
}


class ClusterConfigError(ValueError):
    """A malformed or inconsistent cluster description; the message names the line or key."""


@attrs.frozen
class Scenario:
    cluster: W.Cluster
    message: W.Message


def _table(data: dict, key: str) -> list[dict]:
    items = data.get(key, [])
    if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
        raise ClusterConfigError(f"'{key}' must be an array of tables ([[{key}]])")
    return items


def _unknown(where: str, key: str, known) -> ClusterConfigError:
    close = difflib.get_close_matches(key, sorted(known), n=1)
    hint = f"; did you mean '{close[0]}'?" if close else f" (known: {', '.join(sorted(known))})"
    return ClusterConfigError(f"{where}: unknown key '{key}'{hint}")


def _build(cls, where: str, fields: dict):
    known = {a.name for a in attrs.fields(cls)}
    unknown = sorted(set(fields) - known)
    if unknown:
        raise _unknown(where, unknown[0], known)
    try:
        return cls(**fields)
    except (TypeError, ValueError) as exc:
        raise ClusterConfigError(f"{where}: {_validation_message(exc)}") from None


def _validation_message(exc: Exception) -> str:
    """One readable sentence for a value the description's classes refuse (never the library's repr)."""
    args = exc.args
    if len(args) == 4 and isinstance(args[0], str) and isinstance(getattr(args[1], "name", None), str):
        name, options, value = args[1].name, args[2], args[3]   # an attrs validator's arguments
        if isinstance(options, range):
            return f"'{name}' must be a whole number from {options.start} to {options.stop - 1}, not {value!r}"
        if isinstance(options, (tuple, list, set, frozenset)):
            return f"'{name}' must be one of {', '.join(map(repr, options))}, not {value!r}"
        return f"'{name}' has a wrong value {value!r}"
    if len(args) >= 2 and isinstance(args[0], str) and isinstance(getattr(args[1], "name", None), str):
        return args[0]
    text = " ".join(str(args[0] if args else exc).split())
    return text[:200]


def _table_line(text: str, table: str, index: int) -> int | str:
    """The line of the ``index``-th ``[[table]]`` header (1-based), as far as a plain scan finds it."""
    found = [n for n, line in enumerate(text.splitlines(), 1) if re.match(rf"\s*\[\[\s*{table}\s*\]\]", line)]
    return found[index] if index < len(found) else "?"


def load_scenario(path: str | Path) -> Scenario:
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
        data = tomllib.loads(text)
    except OSError as exc:
        raise ClusterConfigError(f"{p}: cannot read ({exc.strerror})") from None
    except UnicodeDecodeError:
        raise ClusterConfigError(f"{p}: not a TOML cluster description (not UTF-8 text)") from None
    except tomllib.TOMLDecodeError as exc:
        raise ClusterConfigError(f"{p}: {exc}") from None
    def at(table: str, i: int) -> str:
        return f"{p}, line {_table_line(text, table, i)}: [[{table}]] #{i + 1}"

    top = ("local", "queue", "qmgr", "instance", "channel", "alias", "message")
    unknown = sorted(set(data) - set(top))
    if unknown:
        raise _unknown(str(p), unknown[0], top)
    for key in ("local", "queue"):
        if not isinstance(data.get(key), str) or not data[key]:
            raise ClusterConfigError(f"{p}: key '{key}' (a name) is required")
    qmgrs = [_build(W.QueueManager, at('qmgr', i), q) for i, q in enumerate(_table(data, "qmgr"))]
    names = {q.name for q in qmgrs}
    if len(names) != len(qmgrs):
        raise ClusterConfigError(f"{p}: qmgr names must be unique")
    if data["local"] not in names:
        raise ClusterConfigError(f"{p}: local queue manager '{data['local']}' has no [[qmgr]] entry")
    queues = []
    for i, q in enumerate(_table(data, "instance")):
        q = {"name": data["queue"], **q}
        if q.get("qmgr") not in names:
            raise ClusterConfigError(f"{at('instance', i)}: qmgr '{q.get('qmgr')}' is not a defined qmgr")
        queues.append(_build(W.QueueInstance, at('instance', i), q))
        if any(other.qmgr == queues[-1].qmgr for other in queues[:-1]):
            raise ClusterConfigError(f"{at('instance', i)}: a second instance of the queue on qmgr "
                                     f"'{queues[-1].qmgr}' (a queue manager hosts one instance of a cluster queue)")
    channels = []
    for i, c in enumerate(_table(data, "channel")):
        c = dict(c)
        state = c.get("state", "INACTIVE")
        if state not in STATE_NAMES:
            raise ClusterConfigError(f"{at('channel', i)}: state '{state}' is not one of {', '.join(STATE_NAMES)}")
        c["state"] = STATE_NAMES[state]
        if c.get("qmgr") not in names:
            raise ClusterConfigError(f"{at('channel', i)}: qmgr '{c.get('qmgr')}' is not a defined qmgr")
        channels.append(_build(W.Channel, at('channel', i), c))
        if any(other.name == channels[-1].name for other in channels[:-1]):
            raise ClusterConfigError(f"{at('channel', i)}: a second channel named '{channels[-1].name}' "
                                     f"(channel names are unique)")
    aliases = []
    for i, a in enumerate(_table(data, "alias")):
        if a.get("qmgr") not in names:
            raise ClusterConfigError(f"{at('alias', i)}: qmgr '{a.get('qmgr')}' is not a defined qmgr")
        aliases.append(_build(W.QmgrAlias, at('alias', i), a))
    message = _build(W.Message, f"{p}: message", {"queue": data["queue"], **data.get("message", {})})
    return Scenario(W.Cluster(local=data["local"], qmgrs=qmgrs, queues=queues, channels=channels,
                              aliases=aliases), message)



@attrs.frozen
class Outcome:
    messages: int
    counts: dict
    expected: dict
    eliminated: dict
    #: Every candidate was dropped (or there was none): MQ fails each put, and ``eliminated`` says why each went.
    nowhere: bool = False
    #: The candidates the algorithm started from (destination keys).
    candidates: tuple = ()


def simulate(scenario: Scenario, messages: int) -> Outcome:
    """Put ``messages`` messages, each to the first destination the algorithm allows."""
    history = W.WorkloadHistory()
    counts: Counter = Counter()
    first = W.choose(scenario.cluster, scenario.message, history)
    start = next((keys for step, keys in first.trace if step == "start"), ())
    if not first.allowed:
        # no eligible destination: MQ fails the put (the workload topic names no reason code for it)
        return Outcome(messages=messages, counts={}, expected={}, eliminated=dict(first.eliminated), nowhere=True,
                       candidates=tuple(start))
    for _ in range(messages):
        choice = W.choose(scenario.cluster, scenario.message, history)
        pick = sorted(choice.allowed)[0]
        counts[pick] += 1
        history = W.advance(scenario.cluster, scenario.message, history, pick)
    return Outcome(messages=messages, counts=dict(counts),
                   expected=W.expected_shares(scenario.cluster, scenario.message)
                   if len(first.finalists) > 1 else {k: 1.0 for k in first.allowed},
                   eliminated={k: v for k, v in first.eliminated.items() if v != "CLWL-12"}, candidates=tuple(start))


def rows(outcome: Outcome) -> list[list]:
    keys = sorted(set(outcome.counts) | set(outcome.expected) | set(outcome.eliminated))
    out = []
    for k in keys:
        share = outcome.counts.get(k, 0) / outcome.messages if outcome.messages else 0.0
        out.append([k, f"{outcome.expected.get(k, 0.0):.1%}", f"{share:.1%}", outcome.counts.get(k, 0),
                    outcome.eliminated.get(k, "")])
    return out


def plot_problem(path: str | Path) -> str | None:
    """Why a plot cannot be written to ``path`` (unknown extension, no such directory), or None."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.backend_bases import FigureCanvasBase

    p = Path(path)
    kinds = FigureCanvasBase.get_supported_filetypes()
    ext = p.suffix.lower().lstrip(".")
    if ext not in kinds:
        return f"{p}: a plot is written as {', '.join(sorted(kinds))}, by the file's extension"
    parent = p.parent if str(p.parent) else Path(".")
    if not parent.is_dir():
        return f"{p}: no such directory {parent}"
    if not os.access(parent, os.W_OK):
        return f"{p}: directory {parent} is not writable"
    return None


def plot(outcome: Outcome, path: str | Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    table = rows(outcome)
    names = [r[0] for r in table]
    expected = [outcome.expected.get(n, 0.0) * 100 for n in names]
    actual = [outcome.counts.get(n, 0) / max(outcome.messages, 1) * 100 for n in names]
    fig, ax = plt.subplots(figsize=(max(5, 1.4 * len(names)), 3.6), dpi=100)
    xs = range(len(names))
    ax.bar([x - 0.2 for x in xs], expected, width=0.4, label="expected (weights)")
    ax.bar([x + 0.2 for x in xs], actual, width=0.4, label=f"simulated ({outcome.messages} messages)")
    ax.set_xticks(list(xs), names, rotation=15)
    ax.set_ylabel("share of messages (%)")
    ax.set_title("Cluster destination shares")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
