"""Pictures for the HTML report (PNG, as data to embed): rule verdicts per area."""

from __future__ import annotations

import base64
import io

from reports.matrix import Column, Report

COLOURS = {"pass": "#2e7d32", "fail": "#c62828", "not applicable": "#9e9e9e", "not exercised": "#f9a825",
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
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    plt.close(fig)
    return base64.b64encode(buf.getvalue()).decode("ascii")
