"""select_pairs: all labelled pairs, a part of the split file, or run/range globs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalkit.errors import EvalkitError
from evalkit.research.pairs import select_pairs
from tests.labelled import PAIRS, labelled_workspace


def test_select_pairs(tmp_path: Path):
    runs = labelled_workspace(tmp_path) / "runs"
    assert select_pairs(runs, "all") == PAIRS
    assert select_pairs(runs, "*/weak-*") == [("demo", "weak-baseline")]
    assert select_pairs(runs, "demo/ssh-miner,demo/weak-baseline") == PAIRS
    with pytest.raises(EvalkitError, match="no labelled pair matches"):
        select_pairs(runs, "nope/*")
    with pytest.raises(EvalkitError, match="split file"):
        select_pairs(runs, "holdout")
    (runs / "gold-split.json").write_text(
        json.dumps({"seed": 1, "tune": ["demo/ssh-miner"], "holdout": ["demo/weak-baseline"]})
    )
    assert select_pairs(runs, "holdout") == [("demo", "weak-baseline")]
    assert select_pairs(runs, "tune") == [("demo", "ssh-miner")]
    with pytest.raises(EvalkitError, match="'fresh' must be a list"):
        select_pairs(runs, "fresh")
    (runs / "gold-split.json").write_text(
        json.dumps({"tune": [], "holdout": [], "fresh": ["demo/ssh-miner"]})
    )
    assert select_pairs(runs, "fresh") == [("demo", "ssh-miner")]
    (runs / "gold-split.json").write_text(json.dumps({"tune": ["agent-z/ssh-miner"]}))
    with pytest.raises(EvalkitError, match="no label files for agent-z/ssh-miner"):
        select_pairs(runs, "tune")


def test_the_shipped_split_names_labelled_pairs():
    runs = Path(__file__).resolve().parent.parent / "runs"
    names = ("tune", "holdout", "fresh", "hard")
    parts = {part: select_pairs(runs, part) for part in names}
    assert [len(parts[p]) for p in names] == [4, 5, 3, 3]
    assert len(select_pairs(runs, "all")) == 15
