"""Shared set-up of the labelling tests: a copied workspace with one judge evaluation."""

from __future__ import annotations

from pathlib import Path

import evalkit
from evalkit import render
from evalkit.grounding import Sources
from evalkit.model import Range, Submission
from tests.samples import copy_samples

RUN, RANGE = "demo", "redis-exposed"


def workspace_with_evaluation(root: Path, run: str = RUN, range_id: str = RANGE) -> Path:
    """ranges/ and runs/ copied under ``root``, with the rules judge's evaluation of the pair
    in ``runs/<run>/<range>/evaluations/rules`` (verdicts.json and scores.json)."""
    copy_samples(root)
    write_rules_evaluation(root, run, range_id)
    return root


def write_rules_evaluation(root: Path, run: str, range_id: str) -> Path:
    """The rules judge's evaluation of one pair of the workspace, where the notebook finds it."""
    rng = evalkit.load_range(root / "ranges", range_id)
    submission = evalkit.load_submission(root / "runs", run, rng)
    evaluation = evalkit.evaluate(rng, submission, evalkit.make_judge("rules"))
    out = root / "runs" / run / range_id / "evaluations" / "rules"
    render.write_outputs(evaluation, out)
    return out


def pair(root: Path, run: str = RUN, range_id: str = RANGE) -> tuple[Range, Submission, Sources]:
    rng = evalkit.load_range(root / "ranges", range_id)
    submission = evalkit.load_submission(root / "runs", run, rng)
    return rng, submission, Sources.of(submission)
