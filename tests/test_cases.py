"""Reading, checking and judging the labelled pairs; the judge a calibration measures."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalkit.errors import EvalkitError
from evalkit.judges.config import JudgeConfig
from evalkit.research.cases import evaluate_pairs, load_pairs
from tests.labelled import PAIRS, cases, labelled_workspace


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return labelled_workspace(tmp_path)


def test_each_pair_is_judged_with_its_labels(workspace: Path):
    found = cases(workspace)
    assert [(c.evaluation.submission.run_id, c.evaluation.range.id) for c in found] == PAIRS
    assert [sorted(label.labeller for label in c.labels) for c in found] == [["alice", "bob"]] * 2
    loaded = load_pairs(workspace / "ranges", workspace / "runs", PAIRS)
    assert [rng.id for rng, _, _ in loaded] == ["ssh-miner", "weak-baseline"]


def test_stale_labels_are_refused_before_judging(workspace: Path):
    path = workspace / "runs/demo/ssh-miner/labels/alice.json"
    data = json.loads(path.read_text())
    data["checklist_sha256"] = "0" * 64
    path.write_text(json.dumps(data))
    with pytest.raises(EvalkitError, match="demo/ssh-miner"):
        evaluate_pairs(workspace / "ranges", workspace / "runs", JudgeConfig().build(), PAIRS)
