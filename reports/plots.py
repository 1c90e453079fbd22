"""Pictures for the HTML report (PNG, as data to embed): rule verdicts per area."""

from __future__ import annotations

import base64
import io

from reports.matrix import Column, Report


def _png(fig) -> str:
    from matplotlib import pyplot as plt

    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    plt.close(fig)
    return base64.b64encode(buf.getvalue()).decode("ascii")


def campaign_png(column: Column) -> str | None:
    """Examples run and distinct failures over a campaign's time (None when no run is a campaign)."""
    tasks = sorted(t for run in column.runs for t in run.tasks)
    if not tasks or not any(finished for finished, _, _ in tasks):
        return None
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot as plt

    start = min(f for f, _, _ in tasks if f)
    times, examples, distinct = [], [], []
    from conformance.campaign import distinct_count

    seen: list = []
    total = 0
    for finished, n, prints in tasks:
        total += n
        seen.extend(prints)
        times.append(((finished or start) - start) / 60)
        examples.append(total)
        distinct.append(distinct_count(seen))
    fig, ax = plt.subplots(figsize=(7, 3), dpi=90)
    ax.plot(times, examples, marker=".", color="#1565c0", label="examples run")
    ax.set_xlabel("minutes since the first task finished")
    ax.set_ylabel("examples run")
    ax2 = ax.twinx()
    ax2.step(times, distinct, where="post", color="#c62828", label="distinct failures")
    ax2.set_ylabel("distinct failures")
    ax2.set_ylim(bottom=0)
    ax.set_title("Campaign throughput and distinct failures")
    fig.legend(loc="upper left", fontsize="small")
    fig.tight_layout()
    return _png(fig)

COLOURS = {"pass": "#2e7d32", "fail": "#c62828", "known deviation": "#ef6c00", "not applicable": "#9e9e9e", "not exercised": "#f9a825",
           "indeterminate": "#6a1b9a", "error": "#37474f"}


def coverage_png(report: Report, column: Column) -> str:
    """A stacked bar per area: how many rules got each verdict.  Returns base64 PNG."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot as plt

    areas = report.areas()
    fig, ax = plt.subplots(figsize=(7, 0.45 * len(areas) + 1.2), dpi=90)
    left = [0] * len(areas)
    for verdict, colour in COLOURS.items():
        values = [report.area_counts(column, a)[verdict] for a in areas]
        if any(values):
            ax.barh(areas, values, left=left, color=colour, label=verdict)
            left = [x + y for x, y in zip(left, values)]
    ax.invert_yaxis()
    ax.set_xlabel("rules")
    ax.set_title("Rule verdicts per area")
    ax.legend(loc="lower right", fontsize="small")
    fig.tight_layout()
    return _png(fig)


def shares_png(column: Column) -> str | None:
    """Messages each cluster destination received vs what the weights lead the model to expect."""
    observed: dict = {}
    expected: dict = {}
    for run in column.runs:
        shares = run.meta.get("cluster_shares") or {}
        for k, v in (shares.get("observed") or {}).items():
            observed[k] = observed.get(k, 0) + v
        for k, v in (shares.get("expected") or {}).items():
            expected[k] = expected.get(k, 0) + v
    keys = sorted(set(observed) | set(expected))
    if not keys:
        return None
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 3), dpi=90)
    xs = range(len(keys))
    ax.bar([x - 0.2 for x in xs], [observed.get(k, 0) for k in keys], width=0.4, color="#1565c0",
           label="messages received")
    ax.bar([x + 0.2 for x in xs], [expected.get(k, 0) for k in keys], width=0.4, color="#9e9e9e",
           label="expected from the weights")
    ax.set_xticks(list(xs))
    ax.set_xticklabels(keys, rotation=30, ha="right", fontsize="small")
    ax.set_ylabel("messages")
    ax.set_title("Cluster destinations: received vs expected by CLWLWGHT")
    ax.legend(fontsize="small")
    fig.tight_layout()
    return _png(fig)
