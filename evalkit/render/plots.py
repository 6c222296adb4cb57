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
from matplotlib.axes import Axes
from matplotlib.colors import ListedColormap
from matplotlib.figure import Figure
from matplotlib.patches import Patch, Rectangle
from matplotlib.transforms import ScaledTranslation, blended_transform_factory

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
COLOR_PENALTY = "#9575cd"  # a zero imposed by a penalty, not a plain miss
PENALIZED = 2  # the heatmap's cell value for a penalty zero
# The heatmap grows with the checklist up to this height (inches); beyond, rows get thinner.
HEATMAP_MAX_HEIGHT = 16.0
LABEL_CHARS = 38  # checkpoint names are cut to this length next to their id
COLOR_DETECTION = "#4c72b0"
COLOR_PLAN = "#dd8452"

# Quadrants of the diagnosis plane: (detection strong, plan strong) -> mode.
QUADRANTS: dict[tuple[bool, bool], str] = {
    (detection == "strong", plan == "strong"): mode for (detection, plan), mode in MODES.items()
}


def _margins(fig: Figure, *, left: float, right: float, bottom: float, top: float) -> None:
    """Fixed margins, in inches. A layout engine (constrained, tight) measures every label
    again on each draw, which cost most of a plot's time in the notebook."""
    width, height = fig.get_size_inches()
    fig.subplots_adjust(
        left=left / width, right=1 - right / width, bottom=bottom / height, top=1 - top / height
    )


def _short(text: str, limit: int = LABEL_CHARS) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def checkpoint_heatmap(ev: Evaluation) -> Figure:
    """Checkpoints (rows, id and name) x sub-scores (columns): 1 green, 0 red, a penalty's 0
    purple, N/A hatched grey.

    An errored checkpoint's row is orange, hatched, and its label says ``error``. The
    figure's height is bounded: a long checklist gets thinner rows, not a huge image.
    """
    items = ev.items
    grid = np.full((len(items), len(HEATMAP_COLUMNS)), np.nan)
    for row, item in enumerate(items):
        for dim in (item.detection, item.plan):
            if dim is None:
                continue
            for name, value in dim.subscores.items():
                if name in HEATMAP_COLUMNS:
                    penalized = name in dim.penalized and value == 0
                    grid[row, HEATMAP_COLUMNS.index(name)] = PENALIZED if penalized else value

    rows = max(len(items), 1)
    height = min(1.4 + 0.36 * rows, HEATMAP_MAX_HEIGHT)
    fontsize = min(9.0, max(4.0, 72 * (height - 1.4) / rows * 0.6))
    fig = plt.figure(figsize=(9.5, height))
    ax = fig.subplots()
    _margins(fig, left=1.3, right=3.0, bottom=0.95, top=0.85)
    ax.imshow(
        np.ma.masked_invalid(grid),
        cmap=ListedColormap([COLOR_LOST, COLOR_POINT, COLOR_PENALTY]),
        vmin=0,
        vmax=PENALIZED,
        aspect="auto",
        interpolation="nearest",
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
            elif fontsize >= 5:
                value = int(grid[row, col])
                ax.text(
                    col,
                    row,
                    "0" if value == PENALIZED else str(value),
                    ha="center",
                    va="center",
                    fontsize=fontsize,
                    color="white" if value == PENALIZED else "black",
                )
    ax.set_xticks(
        range(len(HEATMAP_COLUMNS)), labels=list(HEATMAP_COLUMNS), rotation=30, ha="right"
    )
    labels = [f"{item.chk_id} (error)" if item.status == "error" else item.chk_id for item in items]
    ax.set_yticks(range(len(items)), labels=labels, fontsize=fontsize)
    for tick, item in zip(ax.get_yticklabels(), items, strict=True):
        if item.status == "error":
            tick.set_color("#e65100")
    # Names on the right, next to the grid: ids on the left stay short and aligned. Placed as
    # the labels of a right-hand axis would be (its tick pad from the frame), without the
    # cost of a second axis.
    beside = blended_transform_factory(ax.transAxes, ax.transData) + ScaledTranslation(
        plt.rcParams["ytick.major.pad"] / 72, 0, fig.dpi_scale_trans
    )
    for row, item in enumerate(items):
        ax.text(
            1, row, _short(item.name), transform=beside, fontsize=fontsize,
            ha="left", va="center_baseline", rotation_mode="default",
        )  # fmt: skip
    # White cell borders (drawn as a grid on minor ticks would be, without the ticks), and a
    # black line between detection and plan sub-scores.
    for col in range(len(HEATMAP_COLUMNS) + 1):
        ax.axvline(col - 0.5, color="white", linewidth=2, zorder=1.5)
    for row in range(len(items) + 1):
        ax.axhline(row - 0.5, color="white", linewidth=2, zorder=1.5)
    ax.axvline(len(DETECTION_SUBSCORES) - 0.5, color="black", linewidth=1.5)
    ax.set_xlim(-0.5, len(HEATMAP_COLUMNS) - 0.5)
    ax.set_ylim(len(items) - 0.5, -0.5)
    ax.set_title(f"{ev.range.id} / {ev.submission.run_id}: sub-scores per checkpoint", pad=20)
    ax.legend(
        handles=[
            Patch(facecolor=COLOR_POINT, label="1"),
            Patch(facecolor=COLOR_LOST, label="0"),
            Patch(facecolor=COLOR_PENALTY, label="0 (penalty)"),
            Patch(facecolor=COLOR_NA, hatch="//", label="N/A"),
            Patch(facecolor=COLOR_ERROR, hatch="xx", label="error"),
        ],
        loc="lower center",
        bbox_to_anchor=(0.5, 1.0),
        borderaxespad=0.2,
        ncols=5,
        frameon=False,
        fontsize=8,
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
    fig = plt.figure(figsize=(max(5.0, 1.3 * len(caps) + 2) + 1.6, 4))
    ax = fig.subplots()
    _margins(fig, left=0.7, right=1.8, bottom=0.5, top=0.45)
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
    fig = plt.figure(figsize=(7.0, 5.5))
    ax = fig.subplots()
    _margins(fig, left=0.75, right=1.6, bottom=0.6, top=0.45)
    # Percentages live in [0, 100]; the mode names sit in bands above and below that range,
    # so no point or label can land on them.
    ax.set_xlim(-4, 104)
    ax.set_ylim(-14, 114)
    ax.set_yticks(range(0, 101, 20))
    ax.axvline(STRONG_PCT, color="grey", linestyle="--", linewidth=1)
    ax.axhline(STRONG_PCT, color="grey", linestyle="--", linewidth=1)
    for y in (-4, 104):
        ax.axhline(y, color="#eeeeee", linewidth=0.8)
    centres = {False: STRONG_PCT / 2, True: (STRONG_PCT + 100) / 2}
    for (det_strong, plan_strong), mode in QUADRANTS.items():
        ax.text(
            centres[det_strong],
            109 if plan_strong else -9,
            mode,
            ha="center",
            va="center",
            fontsize=9,
            color="#424242" if mode == ev.summary.diagnosis else "grey",
            fontweight="bold" if mode == ev.summary.diagnosis else "normal",
        )
    caps = [
        c for c in ev.summary.capabilities if c.detection.pct is not None and c.plan.pct is not None
    ]
    if caps:
        ax.scatter(
            [c.detection.pct or 0.0 for c in caps],
            [c.plan.pct or 0.0 for c in caps],
            s=25,
            color="#9e9e9e",
            label="capabilities",
            zorder=2,
        )
        _label_points(ax, [(c.cap, c.detection.pct or 0.0, c.plan.pct or 0.0) for c in caps])
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
    else:
        ax.text(50, 50, "no diagnosis: a dimension has nothing scorable", ha="center", va="bottom")
    if ax.collections:
        # Outside the data, to the right: never over a point.
        ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize=8, frameon=False)
    title = f"{ev.range.id}: {summary.diagnosis or 'no diagnosis'}"
    if not summary.complete:
        title += f" (incomplete: {len(summary.errored)} errored)"
    ax.set_title(title)
    ax.set_xlabel("detection % (report)")
    ax.set_ylabel("plan % (remediation)")
    return fig


# Where a label may go around its point (offsets in points), in order of preference.
_LABEL_OFFSETS = ((5, 4), (-5, 4), (5, -11), (-5, -11), (5, 14), (-5, 14), (5, -21), (-5, -21))
# The plane's scale, roughly: data units per point of offset or of 7 pt text.
_UNITS_PER_PT = (0.30, 0.40)
_CHAR_PT, _LINE_PT = 4.2, 8.0


def _label_box(x: float, y: float, text: str, offset: tuple[int, int]) -> tuple[float, ...]:
    ux, uy = _UNITS_PER_PT
    width = len(text) * _CHAR_PT * ux
    left = x + offset[0] * ux - (width if offset[0] < 0 else 0)
    bottom = y + offset[1] * uy
    return (left, bottom, left + width, bottom + _LINE_PT * uy)


def _overlaps(a: tuple[float, ...], b: tuple[float, ...]) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def _label_points(ax: Axes, points: list[tuple[str, float, float]]) -> None:
    """Label points without piling labels up: points at the same spot share one label, and
    each label takes the first place around its point that overlaps no label placed before,
    no point, and stays inside the plot."""
    groups: dict[tuple[float, float], list[str]] = {}
    for name, x, y in points:
        groups.setdefault((round(x, 1), round(y, 1)), []).append(name)
    dots = [(x - 1.2, y - 1.2, x + 1.2, y + 1.2) for x, y in groups]
    placed: list[tuple[float, ...]] = []
    for (x, y), names in sorted(groups.items()):
        text = ", ".join(names)
        boxes = [(offset, _label_box(x, y, text, offset)) for offset in _LABEL_OFFSETS]
        clear = [
            (offset, box)
            for offset, box in boxes
            if box[0] >= -4 and box[2] <= 104 and box[1] >= -4 and box[3] <= 104
            and not any(_overlaps(box, other) for other in (*placed, *dots))
        ]  # fmt: skip
        offset, box = (clear or boxes)[0]
        placed.append(box)
        ax.annotate(
            text,
            (x, y),
            textcoords="offset points",
            xytext=offset,
            ha="left" if offset[0] > 0 else "right",
            fontsize=7,
            color="#616161",
        )


def flip_rates(ev: Evaluation) -> Figure:
    """Flip rate of every (checkpoint, sub-score) over the judge's K repeated verdicts.

    A bar is the share of sample pairs that disagree (0: every sample gave the same
    score); the majority kept is written beside it. Only for evaluations judged with
    ``repeats`` > 1 (``ev.stability``).
    """
    stability = ev.stability
    if stability is None:
        raise ValueError("flip rates need repeats > 1: this evaluation has one verdict per item")
    rows = [
        (f"{sub.chk_id} {sub.subscore}", sub.flip, sub.kept)
        for item in stability.items
        for sub in item.subscores
    ]
    height = min(2.0 + 0.22 * len(rows), HEATMAP_MAX_HEIGHT)
    fig = plt.figure(figsize=(7.5, height))
    ax = fig.subplots()
    _margins(fig, left=2.0, right=0.9, bottom=0.6, top=0.45)
    y = np.arange(len(rows))
    flips = [flip for _, flip, _ in rows]
    colors = [COLOR_LOST if flip > 0 else COLOR_POINT for flip in flips]
    ax.barh(y, flips, color=colors)
    for index, (_, flip, kept) in enumerate(rows):
        ax.text(flip + 0.01, index, f"kept {kept}", va="center", fontsize=7)
    ax.set_yticks(y, labels=[label for label, _, _ in rows], fontsize=7)
    ax.invert_yaxis()
    ax.set_xlim(0, 1.1)
    ax.set_xlabel("flip rate (share of sample pairs that disagree)")
    unstable = len(stability.unstable)
    ax.set_title(
        f"{ev.range.id} / {ev.submission.run_id}: judge stability over {stability.repeats}"
        f" repeats ({unstable} unstable item(s))"
    )
    return fig


def save_figure(fig: Figure, path: str | Path, *, dpi: int = 150) -> Path:
    """Save ``fig`` atomically; the format follows the suffix (``.png`` when none)."""
    target = Path(path)
    fmt = target.suffix.lstrip(".").lower() or "png"
    buffer = BytesIO()
    fig.savefig(buffer, format=fmt, dpi=dpi, bbox_inches="tight")
    return write_bytes_atomic(target, buffer.getvalue())
