"""matplotlib figures: standalone Figures (no pyplot state), the right artists, PNGs."""

from __future__ import annotations

import dataclasses

import matplotlib.pyplot as plt
import pytest
from matplotlib.container import BarContainer
from matplotlib.figure import Figure

from evalkit.model import SubScoreVerdict, Tally, Verdict
from evalkit.render import (
    capability_bars,
    checkpoint_heatmap,
    diagnosis_plane,
    plots,
    save_figure,
)
from evalkit.render.plots import HEATMAP_COLUMNS, STRONG_PCT
from evalkit.stability import stability_of

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def test_figures_are_managed_by_pyplot_for_the_notebook(render_evaluation):
    # The notebook shows each figure with plt.show(): the inline backend must know it.
    for make in (checkpoint_heatmap, capability_bars, diagnosis_plane):
        fig = make(render_evaluation)
        assert fig.number in plt.get_fignums()


def test_checkpoint_heatmap(render_evaluation, tmp_path):
    fig = checkpoint_heatmap(render_evaluation)
    assert isinstance(fig, Figure) and len(fig.axes) == 1
    ax = fig.axes[0]
    assert len(ax.images) == 1
    assert ax.images[0].get_array().shape == (4, len(HEATMAP_COLUMNS))
    # 10 scored cells carry their value; 5 N/A cells (CHK-02 plan, CHK-03 detection)
    # and 5 errored cells (CHK-04) are hatched patches. The names stand on the right.
    assert len([text for text in ax.texts if text.get_ha() == "center"]) == 10
    hatches = [patch.get_hatch() for patch in ax.patches]
    assert hatches.count("//") == 5 and hatches.count("xx") == 5
    labels = [tick.get_text() for tick in ax.get_yticklabels()]
    assert labels == ["CHK-01", "CHK-02", "CHK-03", "CHK-04 (error)"]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == [
        "1",
        "0",
        "0 (penalty)",
        "N/A",
        "error",
    ]
    path = save_figure(fig, tmp_path / "heatmap.png")
    assert path.read_bytes().startswith(PNG_MAGIC)


def test_capability_bars(render_evaluation, tmp_path):
    fig = capability_bars(render_evaluation)
    assert isinstance(fig, Figure) and len(fig.axes) == 1
    ax = fig.axes[0]
    bars = [c for c in ax.containers if isinstance(c, BarContainer)]
    assert len(bars) == 2 and all(len(c) == 2 for c in bars)
    assert [round(p.get_height(), 1) for p in bars[0]] == [33.3, 0.0]
    assert [round(p.get_height(), 1) for p in bars[1]] == [100.0, 50.0]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["CAP-01", "CAP-02"]
    assert any(list(line.get_ydata()) == [STRONG_PCT, STRONG_PCT] for line in ax.lines)
    assert save_figure(fig, tmp_path / "caps.png").read_bytes().startswith(PNG_MAGIC)


def test_capability_bars_label_na_dimensions(render_evaluation):
    cap = dataclasses.replace(
        render_evaluation.summary.capabilities[1], plan=Tally(0, 0, None, None)
    )
    summary = dataclasses.replace(
        render_evaluation.summary, capabilities=(render_evaluation.summary.capabilities[0], cap)
    )
    ax = capability_bars(dataclasses.replace(render_evaluation, summary=summary)).axes[0]
    assert "N/A" in [text.get_text() for text in ax.texts]


def test_diagnosis_plane(render_evaluation, tmp_path):
    fig = diagnosis_plane(render_evaluation)
    assert isinstance(fig, Figure) and len(fig.axes) == 1
    ax = fig.axes[0]
    texts = [text.get_text() for text in ax.texts]
    for mode in ("All-round", "Plan bottleneck", "Analysis blind spot", "Blind fix"):
        assert mode in texts
    # The run, then the capabilities with both percentages.
    assert len(ax.collections) == 2
    run = ax.collections[-1].get_offsets()
    assert run.tolist() == [[33.3, 75.0]]
    vertical = [line for line in ax.lines if list(line.get_xdata()) == [STRONG_PCT, STRONG_PCT]]
    horizontal = [line for line in ax.lines if list(line.get_ydata()) == [STRONG_PCT, STRONG_PCT]]
    assert vertical and horizontal
    assert "incomplete" in ax.get_title()
    assert save_figure(fig, tmp_path / "plane.png").read_bytes().startswith(PNG_MAGIC)


def test_diagnosis_plane_without_a_diagnosis(render_evaluation):
    summary = dataclasses.replace(
        render_evaluation.summary, plan=Tally(0, 0, None, None), diagnosis=None
    )
    ax = diagnosis_plane(dataclasses.replace(render_evaluation, summary=summary)).axes[0]
    assert len(ax.collections) == 1  # capabilities only, no run point
    assert any("no diagnosis" in text.get_text() for text in ax.texts)


def test_save_figure_follows_the_suffix_and_creates_folders(render_evaluation, tmp_path):
    fig = checkpoint_heatmap(render_evaluation)
    svg = save_figure(fig, tmp_path / "sub" / "heatmap.svg")
    assert svg.read_text().lstrip().startswith("<?xml")
    assert save_figure(fig, tmp_path / "noext").read_bytes().startswith(PNG_MAGIC)


def test_heatmap_shows_names_and_tells_a_penalty_zero_from_a_miss(render_evaluation):
    from evalkit.render.plots import PENALIZED

    ax = checkpoint_heatmap(render_evaluation).axes[0]
    grid = ax.images[0].get_array()
    # CHK-02's discovery and evidence were zeroed by its fabrication penalty.
    assert grid[1, 0] == PENALIZED and grid[1, 1] == PENALIZED
    assert grid[0, 1] == 0  # CHK-01's evidence: a plain miss (withheld)
    names = [t.get_text() for t in ax.texts if t.get_ha() == "left"]
    assert names == [item.name for item in render_evaluation.items]  # short names: not cut


def test_heatmap_height_is_bounded_for_long_checklists(render_evaluation):
    from evalkit.render.plots import HEATMAP_MAX_HEIGHT

    many = dataclasses.replace(render_evaluation, items=render_evaluation.items * 100)
    fig = checkpoint_heatmap(many)
    assert fig.get_size_inches()[1] <= HEATMAP_MAX_HEIGHT


def _sample(chk_id: str, discovery: int) -> Verdict:
    claim = SubScoreVerdict(value=discovery, quotes=("kworkerd",), rationale="")
    return Verdict(chk_id=chk_id, detection={"discovery": claim}, plan=None, penalties=())


def test_flip_rates_show_every_subscore_and_mark_the_unstable(render_evaluation):
    stability = stability_of(
        {
            "CHK-01": (_sample("CHK-01", 1), _sample("CHK-01", 0), _sample("CHK-01", 1)),
            "CHK-02": (_sample("CHK-02", 1), _sample("CHK-02", 1), _sample("CHK-02", 1)),
        }
    )
    fig = plots.flip_rates(dataclasses.replace(render_evaluation, stability=stability))
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == [
        "CHK-01 discovery",
        "CHK-02 discovery",
    ]
    widths = [patch.get_width() for patch in ax.patches]
    assert widths == pytest.approx([2 / 3, 0.0])  # 2 of 3 sample pairs disagree on CHK-01
    assert "3 repeats (1 unstable item(s))" in ax.get_title()


def test_flip_rates_need_repeats(render_evaluation):
    with pytest.raises(ValueError, match="repeats > 1"):
        plots.flip_rates(render_evaluation)
