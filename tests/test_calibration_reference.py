"""`evalkit calibrate --reference LABELLER`: which label of a pair the judge is measured against."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

import evalkit
from evalkit.errors import EvalkitError
from evalkit.gold_labels import find_labels
from evalkit.research.calibration import Case, calibrate
from tests.samples import REPO, copy_samples, run_evalkit

PAIR = ("demo", "redis-exposed")


@pytest.fixture(scope="module")
def case() -> Case:
    rng = evalkit.load_range(REPO / "ranges", PAIR[1])
    submission = evalkit.load_submission(REPO / "runs", PAIR[0], rng)
    evaluation = evalkit.evaluate(rng, submission, evalkit.make_judge("rules"))
    return Case(evaluation, find_labels(REPO / "runs", *PAIR))


def test_the_default_is_todays_rule_the_first_non_blind_labeller(case: Case):
    assert {label.labeller: label.blind for label in case.labels} == {"a": False, "b": True}
    assert calibrate([case], resamples=0).reference == {"demo/redis-exposed": "a"}


def test_a_named_reference_is_the_truth_of_the_main_tables(case: Case):
    by_a = calibrate([case], resamples=0)
    by_b = calibrate([case], resamples=0, reference_labeller="b")
    assert by_b.reference == {"demo/redis-exposed": "b"}
    # The judge against the reference is the band's "judge vs <reference>" row.
    for result, name in ((by_a, "a"), (by_b, "b")):
        pooled = result.agreement["pooled"]["all sub-scores"]
        assert pooled == result.band[f"judge vs {name}"]["all sub-scores"]
    assert by_a.agreement != by_b.agreement
    assert {row["labeller"] for row in by_b.per_pair_band} == {"a"}


def test_a_pair_without_the_reference_label_is_refused(case: Case):
    with pytest.raises(EvalkitError, match="demo/redis-exposed has no label by reference"):
        calibrate([case], resamples=0, reference_labeller="adjudicated")


def test_cli_refuses_a_missing_reference_before_running_anything(tmp_path: Path):
    root = copy_samples(tmp_path / "ws")
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC")}
    result = run_evalkit(
        "calibrate", "--pairs", "demo/*", "--reference", "zed", "--out", "cal", cwd=root, env=env
    )
    assert result.returncode == 2
    assert result.stderr.strip() == (
        "error: demo/redis-exposed has no label by reference labeller 'zed'"
    )
    assert not (root / "cal").exists()


@pytest.mark.e2e
def test_cli_passes_the_reference_to_the_notebook(tmp_path: Path):
    root = copy_samples(tmp_path / "ws")
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC")}
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    args = ("--pairs", "demo/redis-exposed", "--bootstrap", "0", "--quiet", "--out", "cal")
    result = run_evalkit("calibrate", *args, "--reference", "b", cwd=root, env=env)
    assert result.returncode == 0, result.stderr
    data = json.loads((root / "cal" / "calibration.json").read_text(encoding="utf-8"))
    assert data["reference_labeller"] == {"demo/redis-exposed": "b"}
