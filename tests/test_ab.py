"""The A/B test of two judges against the same labels (research/ab.py)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from evalkit.errors import EvalkitError
from evalkit.research.ab import (
    SavedCalibration,
    SavedItem,
    ab_test,
    load_calibration,
    pair_up,
    report_markdown,
    write_outputs,
)
from evalkit.research.resample import UNIT_CHECKPOINTS


def calibration(name: str, judge_values, labels, flips=None, repeats=1) -> SavedCalibration:
    """One pair, one checkpoint per item index, targets cycling over two sub-scores."""
    items = []
    for i, (value, label) in enumerate(zip(judge_values, labels, strict=True)):
        items.append(
            SavedItem(
                run="r",
                range="x",
                chk_id=f"CHK-{i // 2:02d}",
                target=("completeness", "correctness")[i % 2],
                judge=value,
                label=label,
                labeller="a",
                flip_rate=None if flips is None else flips[i],
            )
        )
    return SavedCalibration(
        name=name,
        path=Path(name),
        judge={"name": "claude", "evaluator_model": "m", "repeats": repeats},
        pairs=("r/x",),
        reference={"r/x": "a"},
        items=tuple(items),
    )


LABELS = [(i // 2) % 2 for i in range(120)]  # both targets alternate 0, 1 by checkpoint


def test_a_judge_that_fixes_completeness_agrees_better_there_and_nowhere_else():
    # v1 misses a third of the completeness points; v2 gets them; correctness is the same
    v1 = [0 if i % 2 == 0 and i % 6 == 0 else label for i, label in enumerate(LABELS)]
    v1 = [1 - v if i % 2 == 1 and i % 10 == 1 else v for i, v in enumerate(v1)]
    v2 = [label if i % 2 == 0 else v1[i] for i, label in enumerate(LABELS)]
    result = ab_test(calibration("v1", v1, LABELS), calibration("v2", v2, LABELS), resamples=500)
    by_target = {t.target: t for t in result.targets}
    completeness = by_target["completeness"]
    assert completeness.moved == "v2" and completeness.kappa.delta > 0
    missed = sum(1 for i in range(0, 120, 2) if v1[i] != LABELS[i])
    assert missed == 10
    assert completeness.mcnemar.b_only == missed and completeness.mcnemar.a_only == 0
    assert completeness.mcnemar.p_value == pytest.approx(2 / 1024)
    assert by_target["correctness"].moved is None
    assert by_target["correctness"].kappa.delta == 0.0
    assert by_target["penalty:fabrication"].kappa.n == 0
    assert result.headline().startswith("v2 agrees better on completeness: Δκ +")
    assert result.headline().endswith("; no other target moved beyond noise")
    assert completeness.verdict.startswith("v2 agrees better on completeness: Δκ +")
    assert "McNemar p 0.002" in completeness.verdict
    assert result.unit == UNIT_CHECKPOINTS
    data = result.to_dict()
    assert data["targets"][4]["target"] == "completeness"
    assert data["targets"][4]["kappa"]["delta_ci95"][0] > 0


def test_flip_rates_are_shown_side_by_side_with_repeats():
    flips_a = [0.5, None] * 60
    flips_b = [0.0, None] * 60
    a = calibration("a", LABELS, LABELS, flips_a, repeats=3)
    b = calibration("b", LABELS, LABELS, flips_b, repeats=3)
    result = ab_test(a, b, resamples=50)
    target = next(t for t in result.targets if t.target == "completeness")
    assert (target.flip_a, target.flip_b) == (0.5, 0.0)
    report = report_markdown(result)
    assert "| flip rate a | flip rate b |" in report
    assert "0.50 | 0.00 |" in report
    plain = ab_test(calibration("a", LABELS, LABELS), calibration("b", LABELS, LABELS))
    assert "flip rate" not in report_markdown(plain)


def test_different_pairs_items_or_labels_are_refused():
    a = calibration("a", LABELS, LABELS)
    with pytest.raises(EvalkitError, match="different pairs"):
        pair_up(a, replace(a, name="b", pairs=("r/y",)))
    with pytest.raises(EvalkitError, match="different labels for r/x"):
        pair_up(a, replace(a, name="b", reference={"r/x": "b"}))
    with pytest.raises(EvalkitError, match="different items"):
        pair_up(a, replace(a, name="b", items=a.items[1:]))
    relabelled = (replace(a.items[0], label=1 - a.items[0].label), *a.items[1:])
    with pytest.raises(EvalkitError, match="the labels differ"):
        pair_up(a, replace(a, name="b", items=relabelled))


def test_outputs_and_loading(tmp_path: Path):
    a = calibration("a", LABELS, LABELS)
    result = ab_test(a, replace(a, name="b"), resamples=20)
    paths = write_outputs(result, tmp_path / "out")
    data = json.loads(paths["json"].read_text())
    assert data["headline"] == "b vs a: no target moved beyond noise"
    assert "NaN" not in paths["json"].read_text()
    report = paths["report"].read_text()
    assert "| penalty:fabrication | 0 | n/a | n/a | n/a |" in report
    folder = tmp_path / "cal"
    folder.mkdir()
    (folder / "calibration.json").write_text(
        json.dumps({"judge": {}, "pairs": [], "reference_labeller": {}})
    )
    with pytest.raises(EvalkitError, match="keeps no items"):
        load_calibration(folder)
    with pytest.raises(EvalkitError, match="not a calibration folder"):
        load_calibration(tmp_path)


def test_a_one_class_judge_moves_accuracy_not_kappa_and_mcnemar_says_so():
    # completeness: v1 gives 0 everywhere, v2 gives 1 everywhere; labels are 1 on a
    # third of the items, so v1 is right more often while both kappas are 0.
    labels = [1 if i % 2 == 0 and i % 6 == 0 else (i // 2) % 2 for i in range(120)]
    labels = [
        1 if i % 2 == 0 and (i // 2) % 3 == 0 else (0 if i % 2 == 0 else v)
        for i, v in enumerate(labels)
    ]
    v1 = [0 if i % 2 == 0 else label for i, label in enumerate(labels)]
    v2 = [1 if i % 2 == 0 else label for i, label in enumerate(labels)]
    result = ab_test(calibration("v1", v1, labels), calibration("v2", v2, labels), resamples=200)
    completeness = next(t for t in result.targets if t.target == "completeness")
    assert completeness.kappa.a == 0.0 and completeness.kappa.b == 0.0
    assert completeness.moved is None and completeness.more_often == "v1"
    # One conclusion per line: who is right more often; no "within noise ..., but".
    assert completeness.verdict.startswith(
        "v1 is right more often on completeness: on 20 more item(s)"  # 40 zeros, 20 ones
    )
    assert "within noise" not in completeness.verdict and ", but " not in completeness.verdict
    assert "kappa does not separate them here (Δκ +0.00 [0.00, 0.00])" in completeness.verdict
    assert result.headline().startswith("v1 is right more often on completeness (McNemar p 0.013)")
    assert "within noise" not in result.headline().split(";")[0]
