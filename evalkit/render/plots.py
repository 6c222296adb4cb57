"""matplotlib figures of an Evaluation.

Each function returns a :class:`~matplotlib.figure.Figure` and never calls
``plt.show``. Figures are created through pyplot, so a notebook's inline
backend shows them when the cell ends (write ``plots.capability_bars(ev);``
to show it once); any backend works, Agg included. Scripts that make many
figures should ``plt.close(fig)`` when done with each.
"""

from __future__ import annotations

from io import BytesIO
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.colors import ListedColormap
from matplotlib.figure import Figure
from matplotlib.patches import Patch, Rectangle

from ..fileio import write_bytes_atomic
from ..model import (
    DETECTION_SUBSCORES,
    MODES,
    PLAN_SUBSCORES,
    STRONG_THRESHOLD_PCT,
    Evaluation,
    Tally,
)

STRONG_PCT = float(STRONG_THRESHOLD_PCT)  # the reference lines
HEATMAP_COLUMNS: tuple[str, ...] = (*DETECTION_SUBSCORES, *PLAN_SUBSCORES)
COLOR_LOST = "#e57373"
COLOR_POINT = "#81c784"
COLOR_NA = "#e0e0e0"
COLOR_ERROR = "#ffb74d"
COLOR_DETECTION = "#4c72b0"
COLOR_PLAN = "#dd8452"

# Quadrants of the diagnosis plane: (detection strong, plan strong) -> mode.
QUADRANTS: dict[tuple[bool, bool], str] = {
    (detection == "strong", plan == "strong"): mode for (detection, plan), mode in MODES.items()
}


def checkpoint_heatmap(ev: Evaluation) -> Figure:
    """Checkpoints (rows) x sub-scores (columns): 1 green, 0 red, N/A hatched grey.

    An errored checkpoint's row is orange, hatched, and its label says ``error``.
    """
    items = ev.items
    grid = np.full((len(items), len(HEATMAP_COLUMNS)), np.nan)
    for row, item in enumerate(items):
        for dim in (item.detection, item.plan):
            if dim is None:
                continue
            for name, value in dim.subscores.items():
                if name in HEATMAP_COLUMNS:
                    grid[row, HEATMAP_COLUMNS.index(name)] = value

    fig = plt.figure(figsize=(7.5, 1.2 + 0.42 * max(len(items), 1)), layout="constrained")
    ax = fig.subplots()
    ax.imshow(
        np.ma.masked_invalid(grid),
        cmap=ListedColormap([COLOR_LOST, COLOR_POINT]),
        vmin=0,
        vmax=1,
        aspect="auto",
    )
    ax.set_facecolor("white")
    for row, item in enumerate(items):
        errored = item.status == "error"
        for col in range(len(HEATMAP_COLUMNS)):
            if np.isnan(grid[row, col]):
                ax.add_patch(
                    Rectangle(
                        (col - 0.5, row - 0.5),
                        1,
                        1,
                        facecolor=COLOR_ERROR if errored else COLOR_NA,
                        hatch="xx" if errored else "//",
                        edgecolor="white",
                        linewidth=0,
                    )
                )
            else:
                ax.text(col, row, str(int(grid[row, col])), ha="center", va="center", fontsize=9)
    ax.set_xticks(
        range(len(HEATMAP_COLUMNS)), labels=list(HEATMAP_COLUMNS), rotation=30, ha="right"
    )
    labels = [f"{item.chk_id} (error)" if item.status == "error" else item.chk_id for item in items]
    ax.set_yticks(range(len(items)), labels=labels)
    for tick, item in zip(ax.get_yticklabels(), items, strict=True):
        if item.status == "error":
            tick.set_color("#e65100")
    # White cell borders, and a black line between detection and plan sub-scores.
    ax.set_xticks(np.arange(len(HEATMAP_COLUMNS) + 1) - 0.5, minor=True)
    ax.set_yticks(np.arange(len(items) + 1) - 0.5, minor=True)
    ax.grid(which="minor", color="white", linewidth=2)
    ax.tick_params(which="minor", length=0)
    ax.axvline(len(DETECTION_SUBSCORES) - 0.5, color="black", linewidth=1.5)
    ax.set_xlim(-0.5, len(HEATMAP_COLUMNS) - 0.5)
    ax.set_ylim(len(items) - 0.5, -0.5)
    ax.set_title(f"{ev.range.id} / {ev.submission.run_id}: sub-scores per checkpoint")
    ax.legend(
        handles=[
            Patch(facecolor=COLOR_POINT, label="1"),
            Patch(facecolor=COLOR_LOST, label="0"),
            Patch(facecolor=COLOR_NA, hatch="//", label="N/A"),
            Patch(facecolor=COLOR_ERROR, hatch="xx", label="error"),
        ],
        loc="upper left",
        bbox_to_anchor=(1.01, 1.0),
        frameon=False,
    )
    return fig


def _pct_or_zero(tally: Tally) -> float:
    return 0.0 if tally.pct is None else tally.pct


def capability_bars(ev: Evaluation) -> Figure:
    """Detection % and plan % per capability, side by side, with the 70 % line.

    A dimension with nothing scorable (max 0) gets an empty bar labelled N/A.
    """
    caps = ev.summary.capabilities
    x = np.arange(len(caps))
    width = 0.38
    fig = plt.figure(figsize=(max(5.0, 1.3 * len(caps) + 2), 4), layout="constrained")
    ax = fig.subplots()
    for offset, label, color, attr in (
        (-width / 2, "detection", COLOR_DETECTION, "detection"),
        (width / 2, "plan", COLOR_PLAN, "plan"),
    ):
        tallies = [getattr(cap, attr) for cap in caps]
        bars = ax.bar(
            x + offset, [_pct_or_zero(t) for t in tallies], width, label=label, color=color
        )
        ax.bar_label(
            bars,
            labels=["N/A" if t.pct is None else f"{t.pct:.0f}%" for t in tallies],
            fontsize=8,
            padding=2,
        )
    ax.axhline(
        STRONG_PCT,
        color="black",
        linestyle="--",
        linewidth=1,
        label=f"strong ({STRONG_THRESHOLD_PCT}%)",
    )
    ax.set_xticks(x, labels=[cap.cap for cap in caps])
    ax.set_ylim(0, 110)
    ax.set_ylabel("% of max")
    ax.set_title(f"{ev.range.id} / {ev.submission.run_id}: detection vs plan per capability")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    return fig


def diagnosis_plane(ev: Evaluation) -> Figure:
    """The run as a point at (detection %, plan %), quadrants named by diagnostic mode.

    Capabilities with both percentages are shown as small labelled points. A
    run with a dimension of max 0 has no point, and the plot says so.
    """
    fig = plt.figure(figsize=(5.5, 5.5), layout="constrained")
    ax = fig.subplots()
    # A little margin, so points at 0 % or 100 % are not cut by the frame.
    ax.set_xlim(-4, 104)
    ax.set_ylim(-4, 104)
    ax.axvline(STRONG_PCT, color="grey", linestyle="--", linewidth=1)
    ax.axhline(STRONG_PCT, color="grey", linestyle="--", linewidth=1)
    centres = {False: STRONG_PCT / 2, True: (STRONG_PCT + 100) / 2}
    for (det_strong, plan_strong), mode in QUADRANTS.items():
        ax.text(
            centres[det_strong],
            centres[plan_strong],
            mode,
            ha="center",
            va="center",
            fontsize=10,
            color="grey",
            alpha=0.8,
            fontweight="bold" if mode == ev.summary.diagnosis else "normal",
        )
    caps = [
        c for c in ev.summary.capabilities if c.detection.pct is not None and c.plan.pct is not None
    ]
    if caps:
        ax.scatter(
            [c.detection.pct for c in caps],
            [c.plan.pct for c in caps],
            s=25,
            color="#9e9e9e",
            label="capabilities",
            zorder=2,
        )
        for cap in caps:
            ax.annotate(
                cap.cap,
                (cap.detection.pct, cap.plan.pct),
                textcoords="offset points",
                xytext=(4, 4),
                fontsize=7,
                color="#616161",
            )
    summary = ev.summary
    if summary.detection.pct is not None and summary.plan.pct is not None:
        ax.scatter(
            [summary.detection.pct],
            [summary.plan.pct],
            s=90,
            color="#c62828",
            label=f"run {ev.submission.run_id}",
            zorder=3,
        )
        ax.legend(loc="lower right", fontsize=8)
    else:
        ax.text(50, 50, "no diagnosis: a dimension has nothing scorable", ha="center", va="bottom")
    title = f"{ev.range.id}: {summary.diagnosis or 'no diagnosis'}"
    if not summary.complete:
        title += f" (incomplete: {len(summary.errored)} errored)"
    ax.set_title(title)
    ax.set_xlabel("detection % (report)")
    ax.set_ylabel("plan % (remediation)")
    return fig


def save_figure(fig: Figure, path: str | Path, *, dpi: int = 150) -> Path:
    """Save ``fig`` atomically; the format follows the suffix (``.png`` when none)."""
    target = Path(path)
    fmt = target.suffix.lstrip(".").lower() or "png"
    buffer = BytesIO()
    fig.savefig(buffer, format=fmt, dpi=dpi, bbox_inches="tight")
    return write_bytes_atomic(target, buffer.getvalue())
