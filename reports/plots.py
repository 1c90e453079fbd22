"""Pictures for the HTML report (PNG, as data to embed): rule verdicts per area."""

from __future__ import annotations

import base64
import importlib.util
import io

from reports.matrix import Column, Report


def available() -> bool:
    """Whether pictures can be drawn: matplotlib comes with the ``plots`` extra."""
    return importlib.util.find_spec("matplotlib") is not None


def MaxNLocator(**kwargs):   # noqa: N802 - matplotlib's own name, imported when a picture is drawn
    from matplotlib.ticker import MaxNLocator as locator

    return locator(**kwargs)


def _png(fig) -> str:
    from matplotlib import pyplot as plt

    buf = io.BytesIO()
    fig.savefig(buf, format="png", bbox_inches="tight")   # legends outside the axes are kept whole
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
    from conformance.records.identity import distinct_count

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
    ax.set_ylim(bottom=0)
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax2 = ax.twinx()
    ax2.step(times, distinct, where="post", color="#c62828", label="distinct failures")
    ax2.set_ylabel("distinct failures")
    ax2.set_ylim(bottom=0, top=max(distinct + [1]) + 0.5)
    ax2.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_title("Campaign throughput and distinct failures")
    handles = ax.get_legend_handles_labels()[0] + ax2.get_legend_handles_labels()[0]
    ax.legend(handles, [h.get_label() for h in handles], loc="upper left", bbox_to_anchor=(1.12, 1),
              fontsize="small")
    fig.tight_layout()
    return _png(fig)

COLOURS = {"pass": "#2e7d32", "fail": "#c62828", "one of": "#ad1457", "known deviation": "#ef6c00", "not applicable": "#9e9e9e", "not exercised": "#f9a825", "partly exercised": "#9ccc65",
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
    for y, area in enumerate(areas):
        if not report.area_run(column, area):
            ax.text(0.2, y, "not run", va="center", fontsize="small", color="#757575", style="italic")
    ax.invert_yaxis()
    ax.set_xlabel("rules")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_title("Rule verdicts per area")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1), fontsize="small")
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
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_title("Cluster destinations: received vs expected by CLWLWGHT")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1), fontsize="small")
    fig.tight_layout()
    return _png(fig)


def overview_png(report: Report) -> str:
    """Rule verdicts per area, a stacked bar per system in each area, side by side.  Returns base64 PNG."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot as plt

    areas = report.areas()
    columns = report.columns
    fig, axes = plt.subplots(len(areas), 1, sharex=True, squeeze=False, dpi=90,
                             figsize=(8, sum(0.28 * len(columns) + 0.45 for _ in areas) + 0.6))
    labels = [c.label if len(c.label) <= 40 else c.label[:39] + "…" for c in columns]
    shown = set()
    for ax, area in zip(axes[:, 0], areas):
        left = [0] * len(columns)
        for verdict, colour in COLOURS.items():
            values = [report.area_counts(c, area)[verdict] if report.area_run(c, area) else 0 for c in columns]
            if any(values):
                ax.barh(labels, values, left=left, color=colour,
                        label=None if verdict in shown else verdict)
                shown.add(verdict)
                left = [x + y for x, y in zip(left, values)]
        for y, c in enumerate(columns):
            if not report.area_run(c, area):
                ax.text(0.2, y, "not run", va="center", fontsize="small", color="#757575", style="italic")
        ax.invert_yaxis()
        ax.set_title(area, loc="left", fontsize="medium")
        ax.tick_params(axis="y", labelsize="small")
    axes[-1, 0].set_xlabel("rules")
    axes[-1, 0].xaxis.set_major_locator(MaxNLocator(integer=True))
    fig.legend(loc="upper left", bbox_to_anchor=(1.0, 0.98), fontsize="small")
    fig.suptitle("Rule verdicts per area and system", x=0.02, ha="left")
    fig.tight_layout()
    return _png(fig)
