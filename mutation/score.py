"""The mutation score from ``mutmut results --all true``: per file, killed over the mutants checked.

    python mutation/score.py RESULTS-FILE [--equivalent mutation/equivalent.txt] [--diffs survivors.diff]
                             [--survivors N]

A mutant counts as killed when the kit found a departure, or the mutated queue manager broke
or hung (mutmut: killed, timeout, segfault); as surviving when no kit run told it apart,
including a mutant no run reached (mutmut: survived, no tests).  Mutants not checked (outside
the sample or the time box) and those listed as equivalent are left out.

Given the surviving mutants' changes (``mutmut show`` of each, as ``scripts/mutation.sh`` writes
them), two kinds of mutant are equivalent too, whatever their number, because the kit's runs use
a clean queue manager, which switches no catalogue fault on:

- a mutant whose only change is to the name of a catalogue fault (``self._fault("NAME")``,
  ``self.on("NAME")``, ``"NAME" in self.faults``);
- a mutant whose change lies where a clean queue manager never goes: in the body of an ``if``
  (or of a conditional expression) whose test holds only with a fault switched on, or in a
  condition that is false without a fault before and after the change.  The mutated function is
  read from the source and compared with its mutant node by node; a change in a condition counts
  as unseen only when what the mutant evaluates before the fault's test cannot call anything or
  was there before;
- a mutant whose change lies after a guard that leaves its block unless a fault is on
  (``if not self._fault("NAME"): raise ...``, or return, continue, break);
- a mutant of a value, not a condition, that is ``False`` itself either way without a fault (a
  conjunction whose conjuncts ahead of the fault's test are comparisons or negations).

A statement over several lines that a mutant makes one line is put back whole.
"""

from __future__ import annotations

import argparse
import ast
import re
import textwrap
import sys
from collections import defaultdict
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parent.parent
KILLED = {"killed", "timeout", "segfault"}
SURVIVED = {"survived", "no tests"}
LINE = re.compile(r"^\s*(?P<name>[^\s:]+):\s*(?P<status>.+?)\s*$")
#: A catalogue fault's name where the simulated queue manager asks whether that fault is on.
FAULT_NAME = re.compile(r'(?:fault|\bon)\(\s*("[^"]*")|("[^"]*")\s+(?:not\s+)?in\s+self\.faults')
FAULT_RENAMED = "changes only the name of a catalogue fault, which a clean queue manager never switches on"
FAULT_ONLY = "changes only code that runs, or a condition that holds, only with a catalogue fault switched on"


def parse(text: str) -> dict[str, str]:
    out = {}
    for line in text.splitlines():
        m = LINE.match(line)
        if m:
            out[m["name"]] = m["status"]
    return out


def equivalent(path: Path | None) -> dict[str, str]:
    if path is None or not path.exists():
        return {}
    out = {}
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        name, _, reason = line.partition(" ")
        if not reason.strip():
            raise SystemExit(f"{path}:{n}: an equivalent mutant needs a one-line reason")
        out[name] = reason.strip()
    return out


def _changed(old: str, new: str) -> tuple[int, int]:
    """The span of ``old`` that ``new`` replaces (what lies between their common prefix and suffix)."""
    i = 0
    while i < min(len(old), len(new)) and old[i] == new[i]:
        i += 1
    j = 0
    while j < min(len(old), len(new)) - i and old[-1 - j] == new[-1 - j]:
        j += 1
    return i, len(old) - j


def fault_renamed(diffs: str) -> dict[str, str]:
    """The mutants among ``mutmut show`` outputs whose one changed line differs only in a fault's name."""
    out = {}
    for block in re.split(r"\n(?=# \S+: )", diffs):
        head = re.match(r"# (\S+): ", block)
        if not head:
            continue
        lines = block.splitlines()
        old = [ln[1:] for ln in lines if ln.startswith("-") and not ln.startswith("---")]
        new = [ln[1:] for ln in lines if ln.startswith("+") and not ln.startswith("+++")]
        if len(old) != 1 or len(new) != 1:
            continue
        start, end = _changed(old[0], new[0])
        for m in FAULT_NAME.finditer(old[0]):
            group = 1 if m.group(1) else 2
            if m.start(group) <= start and end <= m.end(group):
                out[head.group(1)] = FAULT_RENAMED
    return out


def _fault_names() -> set[str]:
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    from adapters.simulated.faults import FAULTS, RACES, SOMETIMES
    return set(FAULTS) | set(RACES) | set(SOMETIMES)


#: A mutant's name after its module: ``x_f__mutmut_3`` (a function) or ``xǁClassǁf__mutmut_3`` (a method).
MUTANT_NAME = re.compile(r"x(?:ǁ(?P<cls>[^ǁ]+)ǁ|_)(?P<func>.+)__mutmut_\d+$")


def function_source(name: str) -> str | None:
    """The source of the function a mutant ``name`` mutates (``x_f__mutmut_3``, ``xǁClassǁf__mutmut_3``)."""
    path = ROOT / module_of(name)
    head = MUTANT_NAME.match(name.rsplit(".", 1)[1])
    if head is None or not path.is_file():
        return None
    text = path.read_text(encoding="utf-8")
    scope: list[ast.stmt] = ast.parse(text).body
    if head["cls"]:
        classes = [n for n in scope if isinstance(n, ast.ClassDef) and n.name == head["cls"]]
        scope = classes[0].body if classes else []
    for node in scope:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == head["func"]:
            return "\n".join(text.splitlines()[node.lineno - 1:node.end_lineno])
    return None


class _Faults:
    """Which expressions of a mutated function hold only with a catalogue fault switched on."""

    def __init__(self, names: set[str]):
        self.names = names

    def _name(self, node: ast.AST) -> bool:
        return isinstance(node, ast.Constant) and node.value in self.names

    def test(self, node: ast.AST) -> bool:
        """``x.f("FAULT")`` or ``"FAULT" in x``: true only with that fault on."""
        if isinstance(node, ast.Call):
            return len(node.args) == 1 and not node.keywords and self._name(node.args[0])
        return isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], ast.In) \
            and self._name(node.left)

    @staticmethod
    def _conjuncts(node: ast.AST) -> list[ast.AST]:
        if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.And):
            return [c for v in node.values for c in _Faults._conjuncts(v)]
        return [node]

    _ACTIVE = (ast.Call, ast.Subscript, ast.Attribute, ast.NamedExpr, ast.Await, ast.Lambda)

    def guard(self, node: ast.stmt) -> bool:
        """``if not x.f("FAULT"): ... raise`` (or return, continue, break): the statements after it in its block
        run only with that fault on."""
        return isinstance(node, ast.If) and not node.orelse and isinstance(node.test, ast.UnaryOp) \
            and isinstance(node.test.op, ast.Not) and self.test(node.test.operand) and bool(node.body) \
            and isinstance(node.body[-1], (ast.Raise, ast.Return, ast.Continue, ast.Break))

    def false_value(self, node: ast.AST, before: ast.AST | None = None) -> bool:
        """Whether ``node``, a value and not only a condition, is ``False`` itself whenever no fault is on: a
        conjunction whose fault test comes after conjuncts that are each True or False (comparisons,
        negations), so that whichever of them stops it, the value is the same ``False``."""
        if not (isinstance(node, ast.BoolOp) and isinstance(node.op, ast.And)) or not self.never_clean(node, before):
            return False
        for part in self._conjuncts(node):
            if self.test(part):
                return True
            if not (isinstance(part, (ast.Compare, ast.UnaryOp)) and (
                    not isinstance(part, ast.UnaryOp) or isinstance(part.op, ast.Not))
                    or isinstance(part, ast.Constant) and isinstance(part.value, bool)):
                return False
        return False

    def never_clean(self, node: ast.AST, before: ast.AST | None = None) -> bool:
        """Whether ``node`` is false whenever no fault is on, reached without anything new run on the way.

        ``before``: the expression ``node`` replaces; what ``node`` evaluates ahead of its fault
        test may then call, index or look up (which may run code or raise) only what ``before`` did.
        """
        active = {ast.dump(n) for n in ast.walk(before) if isinstance(n, self._ACTIVE)} if before is not None else None
        for part in self._conjuncts(node):
            if self.test(part) or (isinstance(part, ast.Constant) and part.value is False):
                return True
            if active is not None and any(isinstance(n, self._ACTIVE) and ast.dump(n) not in active
                                          for n in ast.walk(part)):
                return False
        return False


def _divergence(a: ast.AST, b: ast.AST) -> list[tuple[ast.AST, ast.AST, str]] | None:
    """The path from ``a`` down to the innermost node where ``b`` differs: (node in a, node in b, field
    by which the path goes on; "" at the last), or None when they do not differ."""
    if ast.dump(a) == ast.dump(b):
        return None
    if type(a) is not type(b):
        return [(a, b, "")]
    for field in a._fields:
        va, vb = getattr(a, field, None), getattr(b, field, None)
        if isinstance(va, list) and isinstance(vb, list):
            if len(va) != len(vb):
                return [(a, b, "")]
            apart = [i for i, (x, y) in enumerate(zip(va, vb))
                     if (ast.dump(x) if isinstance(x, ast.AST) else x) != (ast.dump(y) if isinstance(y, ast.AST) else y)]
            if len(apart) > 1:
                return [(a, b, "")]
            if apart:
                x, y = va[apart[0]], vb[apart[0]]
                if not isinstance(x, ast.AST) or not isinstance(y, ast.AST):
                    return [(a, b, "")]
                return [(a, b, field)] + (_divergence(x, y) or [])
        elif isinstance(va, ast.AST) and isinstance(vb, ast.AST):
            if ast.dump(va) != ast.dump(vb):
                return [(a, b, field)] + (_divergence(va, vb) or [])
        elif va != vb:
            return [(a, b, "")]
    return [(a, b, "")]


def fault_only(original: str, mutant: str, faults: _Faults) -> str | None:
    """FAULT_RENAMED or FAULT_ONLY when the change from ``original`` to ``mutant`` (one function's
    source each) cannot show in a clean queue manager; None otherwise."""
    try:
        a, b = ast.parse(textwrap.dedent(original)), ast.parse(textwrap.dedent(mutant))
    except SyntaxError:
        return None
    path = _divergence(a, b)
    if not path:
        return None
    last_a, last_b, _ = path[-1]
    if len(path) > 1 and faults._name(last_a) and isinstance(last_b, ast.Constant) \
            and faults.test(path[-2][0]) and not faults.test(path[-2][1]):
        return FAULT_RENAMED
    in_test = False   # whether the node is a condition, or a part of one joined by and/or
    for at, (node_a, node_b, field) in enumerate(path):
        if in_test and isinstance(node_a, ast.expr) and faults.never_clean(node_a) \
                and faults.never_clean(node_b, node_a):
            return FAULT_ONLY
        if isinstance(node_a, (ast.If, ast.IfExp, ast.While)) and field == "body" and faults.never_clean(node_a.test):
            return FAULT_ONLY
        if at + 1 < len(path):
            inner_a, inner_b, _ = path[at + 1]
            block = getattr(node_a, field, None)
            if isinstance(block, list):
                # after a guard that leaves the block unless a fault is on
                index = next((k for k, statement in enumerate(block) if statement is inner_a), None)
                if index is not None and any(faults.guard(statement) for statement in block[:index]):
                    return FAULT_ONLY
            if isinstance(node_a, (ast.Assign, ast.AnnAssign)) and field == "value" \
                    and faults.false_value(inner_a) and faults.false_value(inner_b, inner_a):
                return FAULT_ONLY
        in_test = (isinstance(node_a, (ast.If, ast.IfExp, ast.While, ast.Assert)) and field == "test") or \
            (in_test and isinstance(node_a, ast.BoolOp) and field == "values")
    return None


_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+\d+(?:,\d+)? @@")


def fault_equivalents(diffs: str, source: Callable[[str], str | None] = function_source,
                      faults: set[str] | None = None) -> dict[str, str]:
    """The mutants among ``mutmut show`` outputs that a clean queue manager cannot show, with the reason.

    Each one-line change is put back into its function's source (``source``) and the two compared
    by :func:`fault_only`; a change whose function is not found is judged by its line alone
    (:func:`fault_renamed`).
    """
    judge = _Faults(_fault_names() if faults is None else faults)
    out = fault_renamed(diffs)
    for block in re.split(r"\n(?=# \S+: )", diffs):
        head = re.match(r"# (\S+): ", block)
        if not head or head.group(1) in out:
            continue
        lines = block.splitlines()
        hunk = [i for i, ln in enumerate(lines) if _HUNK.match(ln)]
        if len(hunk) != 1:
            continue
        body = lines[hunk[0] + 1:]
        old = [ln[1:] for ln in body if ln[:1] in (" ", "-") or ln == ""]
        while old and not old[-1].strip():
            old.pop()
        original = source(head.group(1))
        minus = [k for k, ln in enumerate(body) if ln.startswith("-")]
        plus = [k for k, ln in enumerate(body) if ln.startswith("+")]
        # one line changed, or one statement over several lines made one line (the mutant's lines follow the
        # original's at once)
        if original is None or not minus or len(plus) != 1 or minus != list(range(minus[0], minus[-1] + 1)) \
                or plus[0] != minus[-1] + 1:
            continue
        # mutmut shows a method as a function of its own, dedented, though not its continued lines:
        # lines are matched without their indentation, and the changed one keeps the source's.
        src = textwrap.dedent(original).splitlines()
        bare = [ln.strip() for ln in old]
        at = [i for i in range(len(src) - len(old) + 1) if [ln.strip() for ln in src[i:i + len(old)]] == bare]
        if len(at) != 1:
            continue
        changed = next(k for k, ln in enumerate(ln for ln in body if ln[:1] in (" ", "-") or ln == "")
                       if ln.startswith("-"))
        line = src[at[0] + changed]
        indent = line[:len(line) - len(line.lstrip())]
        mutated = list(src)
        mutated[at[0] + changed:at[0] + changed + len(minus)] = [indent + body[plus[0]][1:].strip()]
        reason = fault_only(original, "\n".join(mutated), judge)
        if reason:
            out[head.group(1)] = reason
    return out


def _mutated_sources() -> dict[str, str]:
    """The text of every file of mutmut's source paths (pyproject.toml), by path."""
    import tomllib
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mutmut"]
    return {str(p.relative_to(ROOT)): p.read_text(encoding="utf-8")
            for folder in config["source_paths"] for p in sorted((ROOT / folder).rglob("*.py"))}


def fault_called(sources: dict[str, str], faults: set[str] | None = None) -> set[str]:
    """The functions and methods of ``sources`` (path: text) used only where a catalogue fault is on.

    Every use of a function's name in any of the files (a call, or the name passed on) must lie in the
    body of an ``if`` (or conditional expression, or ``while``) whose test holds only with a fault on,
    after such a test in a chain of ``and``, or inside a function that is itself used only so (worked
    out until nothing changes).  A name used nowhere, or defined twice with a use anywhere, is not one:
    what is left out must be code a clean queue manager cannot run.
    """
    judge = _Faults(_fault_names() if faults is None else faults)
    trees = [ast.parse(text) for text in sources.values()]
    defined: dict[str, int] = defaultdict(int)
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                defined[node.name] += 1
    # each use of a defined name: (the name, the innermost function it is in, whether it is under a fault)
    uses: list[tuple[str, str | None, bool]] = []

    def visit(node: ast.AST, function: str | None, guarded: bool) -> None:
        name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None
        if name in defined:
            uses.append((name, function, guarded))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            function = node.name
        if isinstance(node, (ast.If, ast.IfExp, ast.While)) and judge.never_clean(node.test):
            visit(node.test, function, guarded)
            for part in (node.body if isinstance(node.body, list) else [node.body]):
                visit(part, function, True)
            for part in (node.orelse if isinstance(node.orelse, list) else [node.orelse]):
                visit(part, function, guarded)
            return
        if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.And):
            after = guarded
            for value in node.values:
                visit(value, function, after)
                after = after or judge.test(value) or judge.never_clean(value)
            return
        for child in ast.iter_child_nodes(node):
            visit(child, function, guarded)

    for tree in trees:
        visit(tree, None, False)
    found: set[str] = set()
    while True:
        more = {name for name in defined if defined[name] == 1 and name not in found
                and any(u == name for u, _, _ in uses)
                and all(guarded or (function in found and function != name)
                        for u, function, guarded in uses if u == name)}
        if not more:
            return found
        found |= more


FAULT_CALLED = "changes a function used only where a catalogue fault is on, which a clean queue manager never is"


def _function_of(name: str) -> str | None:
    head = MUTANT_NAME.match(name.rsplit(".", 1)[1])
    return head["func"] if head else None


def module_of(name: str) -> str:
    """``adapters.simulated.queue_manager.xǁQueueManagerǁput__mutmut_3`` -> ``adapters/simulated/queue_manager.py``."""
    path = name.rsplit(".", 1)[0].replace(".", "/")
    return path + "/__init__.py" if (ROOT / path).is_dir() else path + ".py"


def score(results: dict[str, str], equiv: dict[str, str]) -> tuple[dict[str, tuple[int, int]], list[str], int]:
    """(killed, checked) per file, the surviving mutants, and how many equivalent ones were left out."""
    per_file: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    survivors, left_out = [], 0
    for name, status in sorted(results.items()):
        if status not in KILLED and status not in SURVIVED:
            continue   # not checked (outside the sample or the time box)
        if name in equiv:
            left_out += 1
            continue
        tally = per_file[module_of(name)]
        tally[1] += 1
        if status in KILLED:
            tally[0] += 1
        else:
            survivors.append(f"{name} ({status})")
    return {f: (k, n) for f, (k, n) in sorted(per_file.items())}, survivors, left_out


def main(argv: list[str] | None = None, out=sys.stdout) -> int:
    ap = argparse.ArgumentParser(prog="mutation/score.py")
    ap.add_argument("results", type=Path)
    ap.add_argument("--equivalent", type=Path, default=None)
    ap.add_argument("--diffs", type=Path, default=None,
                    help="the surviving mutants' changes: those a clean queue manager cannot show are left out")
    ap.add_argument("--survivors", type=int, default=40)
    args = ap.parse_args(argv)
    for given in (args.results, args.diffs):
        if given is not None and not given.is_file():
            sys.stderr.write(f"mutation/score.py: no such file: {given}\n")
            return 2
    equiv = equivalent(args.equivalent)
    results = parse(args.results.read_text(encoding="utf-8"))
    only_faulted = fault_called(_mutated_sources())
    equiv = {**{name: FAULT_CALLED for name in results if _function_of(name) in only_faulted}, **equiv}
    if args.diffs is not None:
        equiv = {**fault_equivalents(args.diffs.read_text(encoding="utf-8")), **equiv}
    per_file, survivors, left_out = score(results, equiv)
    total_k = sum(k for k, _ in per_file.values())
    total_n = sum(n for _, n in per_file.values())
    if not total_n:
        out.write("mutation: no mutant was checked\n")
        return 2
    width = max(len(f) for f in per_file)
    for f, (k, n) in per_file.items():
        out.write(f"{f:<{width}}  {100 * k / n:5.1f}%  ({k} of {n} killed)\n")
    out.write(f"{'all':<{width}}  {100 * total_k / total_n:5.1f}%  ({total_k} of {total_n} killed"
              + (f"; {left_out} equivalent left out" if left_out else "") + ")\n")
    if survivors:
        out.write(f"surviving mutants ({len(survivors)}):\n")
        for name in survivors[:args.survivors]:
            out.write(f"  {name}\n")
        if len(survivors) > args.survivors:
            out.write(f"  ... and {len(survivors) - args.survivors} more\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
