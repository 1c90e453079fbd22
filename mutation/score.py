"""The mutation score from ``mutmut results --all true``: per file, killed over the mutants checked.

    python mutation/score.py RESULTS-FILE [--equivalent mutation/equivalent.txt] [--diffs survivors.diff]
                             [--survivors N]

A mutant counts as killed when the kit found a departure, or the mutated queue manager broke
or hung (mutmut: killed, timeout, segfault); as surviving when no kit run told it apart,
including a mutant no run reached (mutmut: survived, no tests).  Mutants not checked (outside
the sample or the time box) and those listed as equivalent are left out.

Given the surviving mutants' changes (``mutmut show`` of each, as ``scripts/mutation.sh`` writes
them), a mutant whose only change is to the name of a catalogue fault (``self._fault("NAME")``,
``"NAME" in self.faults``) is equivalent too, whatever its number: the kit's runs use a clean
queue manager, which switches no fault on under any name.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
KILLED = {"killed", "timeout", "segfault"}
SURVIVED = {"survived", "no tests"}
LINE = re.compile(r"^\s*(?P<name>[^\s:]+):\s*(?P<status>.+?)\s*$")
#: A catalogue fault's name where the simulated queue manager asks whether that fault is on.
FAULT_NAME = re.compile(r'fault\(\s*("[^"]*")|("[^"]*")\s+(?:not\s+)?in\s+self\.faults')
FAULT_RENAMED = "changes only the name of a catalogue fault, which a clean queue manager never switches on"


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


def module_of(name: str) -> str:
    """``adapters.simulated.queue_manager.xǁQueueManagerǁput__mutmut_3`` -> ``adapters/simulated/queue_manager.py``."""
    path = name.rsplit(".", 1)[0].replace(".", "/")
    return path + "/__init__.py" if (ROOT / path).is_dir() else path + ".py"


def score(results: dict[str, str], equiv: dict[str, str]) -> tuple[dict[str, tuple[int, int]], list[str], int]:
    """(killed, checked) per file, the surviving mutants, and how many equivalent ones were left out."""
    per_file: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    survivors, left_out = [], 0
    for name, status in sorted(results.items()):
        if name in equiv:
            left_out += 1
            continue
        if status in KILLED or status in SURVIVED:
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
                    help="the surviving mutants' changes: those that only rename a fault are left out")
    ap.add_argument("--survivors", type=int, default=40)
    args = ap.parse_args(argv)
    for given in (args.results, args.diffs):
        if given is not None and not given.is_file():
            sys.stderr.write(f"mutation/score.py: no such file: {given}\n")
            return 2
    equiv = equivalent(args.equivalent)
    if args.diffs is not None:
        equiv = {**fault_renamed(args.diffs.read_text(encoding="utf-8")), **equiv}
    per_file, survivors, left_out = score(parse(args.results.read_text(encoding="utf-8")), equiv)
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
