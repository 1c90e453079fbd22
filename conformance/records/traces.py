"""Two traces of runs of one seed (``MQCONFORM_TRACE``), compared: where they part, and whose doing it was.

A seed fixes the operations the kit sends; only the system's answers can make
two runs of it differ.  When they do, the first step at which the traces part
says why: the same operation answered differently is the system's doing (a
broker whose answer depended on timing, or on what it lost in a crash); a
different operation with every earlier answer the same is the kit's own doing
(its generation or shrinking depended on something other than the seed and the
answers), which is a defect of the kit.

Compared: every step in order, leaving out clock advances (on a system that runs
on real time the kit inserts those as time passes) and the message identifiers
a system generates.  Pure over the two lists of rows; :func:`load` reads a file.
"""

from __future__ import annotations

import json
from pathlib import Path

import attrs

from reference_model import language as L


class TraceFileError(ValueError):
    """A trace file that is missing or is not a trace of the kit."""


@attrs.frozen(kw_only=True)
class TraceStep:
    """One step of a trace, as compared."""

    number: int            # 1-based, among the steps compared (clock advances left out)
    area: str
    platform: str
    case: int
    op: L.Op
    observed: L.Observation

    @property
    def where(self) -> tuple[str, str, int]:
        """The area, platform and case the step belongs to."""
        return (self.area, self.platform, self.case)


@attrs.frozen(kw_only=True)
class Divergence:
    """Where two traces part.  ``kind``: ``system`` (same operation, another answer), ``kit`` (another
    operation after the same answers), ``length`` (one trace goes on after the other ended)."""

    kind: str
    first: TraceStep | None
    second: TraceStep | None
    before: tuple[TraceStep, ...] = ()     # the steps of the same case just before, alike in both


def load(path: Path) -> list[TraceStep]:
    """The steps of a trace file (as :func:`steps` gives them); a file that is missing or holds anything
    else raises TraceFileError."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise TraceFileError(f"{path}: cannot read ({exc.strerror})") from None
    except UnicodeDecodeError:
        raise TraceFileError(f"{path}: not UTF-8 text: a trace is JSON lines (MQCONFORM_TRACE=FILE writes one)") from None
    rows = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            if not isinstance(row, dict) or not {"area", "platform", "case", "op", "observed"} <= row.keys():
                raise ValueError("not a step of a trace")
            op, observed = L.from_json(row["op"]), L.from_json(row["observed"])
            if not isinstance(op, L.Op) or not isinstance(observed, L.Observation):
                raise ValueError("its op is not an operation or its observed not an observation")
            if not isinstance(row["area"], str) or not isinstance(row["platform"], str) \
                    or not isinstance(row["case"], int) or isinstance(row["case"], bool):
                raise ValueError("its area, platform or case is not what a run writes")
            rows.append(dict(row, op=op, observed=observed))
        except ValueError as exc:
            raise TraceFileError(f"{path}: line {number} is not a step of a trace of the kit ({exc})") from None
    if not rows:
        # two empty files are not two runs that went alike: there is nothing to compare
        raise TraceFileError(f"{path}: holds no step of a trace (MQCONFORM_TRACE=FILE writes one as a run goes)")
    return steps(rows)


def _blank_ids(observed: L.Observation) -> L.Observation:
    if observed.message is None or observed.message.msg_id is None:
        return observed
    return attrs.evolve(observed, message=attrs.evolve(observed.message, msg_id=None))


def steps(rows: list[dict]) -> list[TraceStep]:
    """The steps compared, in order, from a trace's rows (operation and observation in their JSON form or
    already read): clock advances left out, generated message identifiers blanked."""
    out = []
    for row in rows:
        op, observed = (v if isinstance(v, (L.Op, L.Observation)) else L.from_json(v)
                        for v in (row["op"], row["observed"]))
        if isinstance(op, L.AdvanceClock):
            continue
        out.append(TraceStep(number=len(out) + 1, area=row["area"], platform=row["platform"], case=row["case"],
                             op=op, observed=_blank_ids(observed)))
    return out


def first_divergence(a: list[TraceStep], b: list[TraceStep], context: int = 5) -> Divergence | None:
    """Where the traces ``a`` and ``b`` (steps as :func:`load` or :func:`steps` give them) part; None when alike."""
    for x, y in zip(a, b):
        if x.where == y.where and x.op == y.op and x.observed == y.observed:
            continue
        kind = "system" if x.where == y.where and x.op == y.op else "kit"
        before = tuple(s for s in a[max(0, x.number - 1 - context):x.number - 1] if s.where == x.where)
        return Divergence(kind=kind, first=x, second=y, before=before)
    if len(a) != len(b):
        n = min(len(a), len(b))
        return Divergence(kind="length", first=a[n] if n < len(a) else None, second=b[n] if n < len(b) else None)
    return None


def describe(d: Divergence | None, first_name: str = "first", second_name: str = "second") -> str:
    """The divergence in a few lines of text."""
    from conformance.records.render import observation_text, op_text

    if d is None:
        return f"{first_name} and {second_name} ran the same operations and got the same answers\n"
    if d.kind == "length":
        longer, name = (d.first, first_name) if d.first is not None else (d.second, second_name)
        return (f"the traces agree until one ends; {name} goes on at step {longer.number} "
                f"({longer.area} on {longer.platform}, case {longer.case}): {op_text(longer.op)}\n")
    x, y = d.first, d.second
    lines = []
    if d.kind == "system":
        lines.append(f"the system answered differently at step {x.number} ({x.area} on {x.platform}, case {x.case}); "
                     "every earlier step was alike:")
        lines += [f"  {s.number:>6}  {op_text(s.op)}  ->  {observation_text(s.observed)}" for s in d.before]
        lines.append(f"  {x.number:>6}  {op_text(x.op)}")
        lines.append(f"          {first_name}: {observation_text(x.observed)}")
        lines.append(f"          {second_name}: {observation_text(y.observed)}")
    else:
        lines.append(f"the kit ran a different operation at step {x.number} after the same answers "
                     "(a defect of the kit: a seed must fix every operation):")
        lines.append(f"  {first_name}: {x.area} on {x.platform}, case {x.case}: {op_text(x.op)}")
        lines.append(f"  {second_name}: {y.area} on {y.platform}, case {y.case}: {op_text(y.op)}")
    return "\n".join(lines) + "\n"


__all__ = ["Divergence", "TraceFileError", "TraceStep", "describe", "first_divergence", "load", "steps"]
