"""The mutation score from ``mutmut results --all true``: per file, killed over the mutants checked.

    python mutation/score.py RESULTS-FILE [--equivalent mutation/equivalent.txt] [--survivors N]

A mutant counts as killed when the kit found a departure, or the mutated queue manager broke
or hung (mutmut: killed, timeout, segfault); as surviving when no kit run told it apart,
including a mutant no run reached (mutmut: survived, no tests).  Mutants not checked (outside
the sample or the time box) and those listed as equivalent are left out.
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
    ap.add_argument("--survivors", type=int, default=40)
    args = ap.parse_args(argv)
    per_file, survivors, left_out = score(parse(args.results.read_text(encoding="utf-8")), equivalent(args.equivalent))
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
