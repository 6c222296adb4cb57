"""Label files written into a temporary workspace, mirroring the rules judge's evaluation:
the data of the calibration tests."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import evalkit
from evalkit.research import calibration
from tests.samples import copy_samples

PAIRS = [("demo", "ssh-miner"), ("demo", "weak-baseline")]


def copy_unlabelled_samples(into: Path) -> Path:
    """The sample ranges and runs without the shipped gold labels, so each test writes its own."""
    root = copy_samples(into)
    for folder in (root / "runs").glob("*/*/labels"):
        shutil.rmtree(folder)
    (root / "runs" / "gold-split.json").unlink(missing_ok=True)
    return root


def judge_evaluation(root: Path, run_id: str, range_id: str) -> evalkit.Evaluation:
    rng = evalkit.load_range(root / "ranges", range_id)
    submission = evalkit.load_submission(root / "runs", run_id, rng)
    return evalkit.evaluate(rng, submission, evalkit.make_judge("rules"))


def write_mirror_labels(
    root: Path,
    evaluation: evalkit.Evaluation,
    labeller: str,
    *,
    blind: bool = False,
    flips: dict[str, str] | None = None,
    extra_penalties: dict[str, list[dict]] | None = None,
) -> Path:
    """A label file saying exactly what the judge said (pre-penalty, grounded), except ``flips``
    (chk_id -> sub-score to invert) and ``extra_penalties``."""
    flips = flips or {}
    items = {item.chk_id: item for item in evaluation.items}
    checkpoints = []
    for verdict in evaluation.verdicts:
        item = items[verdict.chk_id]

        def values(claims, applicable, chk_id=verdict.chk_id):
            if not applicable:
                return None
            out = {claim.name: claim.value for claim in claims}
            if flips.get(chk_id) in out:
                out[flips[chk_id]] = 1 - out[flips[chk_id]]
            return out

        checkpoint = evaluation.range.checkpoint(verdict.chk_id)
        penalties = [
            {"rule": p.rule, "source": p.source, "quote": p.quote, "detail": p.detail}
            for p in item.penalties
        ] + (extra_penalties or {}).get(verdict.chk_id, [])
        checkpoints.append(
            {
                "chk_id": verdict.chk_id,
                "detection": values(verdict.detection, checkpoint.has_detection),
                "plan": values(verdict.plan, checkpoint.has_plan),
                "penalties": penalties,
                "note": f"{labeller} note on {verdict.chk_id}",
            }
        )
    folder = root / "runs" / evaluation.submission.run_id / evaluation.range.id / "labels"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{labeller}.json"
    document = {
        "schema_version": 1,
        "labeller": labeller,
        "range": evaluation.range.id,
        "run_id": evaluation.submission.run_id,
        "checklist_sha256": evaluation.range.sha256,
        "created": "2026-11-30",
        "blind": blind,
        "checkpoints": checkpoints,
    }
    path.write_text(json.dumps(document, indent=1), encoding="utf-8")
    return path


def labelled_workspace(tmp_path: Path) -> Path:
    """The demo pairs labelled by alice (mirroring the judge) and bob (blind, two flips)."""
    root = copy_unlabelled_samples(tmp_path)
    for run_id, range_id in PAIRS:
        evaluation = judge_evaluation(root, run_id, range_id)
        write_mirror_labels(root, evaluation, "alice")
        # bob (blind) differs from the judge on two ssh-miner sub-scores
        flips = {"CHK-01": "discovery", "CHK-02": "correctness"} if range_id == "ssh-miner" else {}
        write_mirror_labels(root, evaluation, "bob", blind=True, flips=flips)
    return root


def cases(root: Path, pairs=PAIRS) -> list[calibration.Case]:
    """The pairs judged by the rules judge, with their labels."""
    return calibration.evaluate_pairs(
        root / "ranges", root / "runs", evalkit.make_judge("rules"), pairs
    )


def first_plan_line(root: Path) -> str:
    text = (root / "runs/demo/ssh-miner/remediation-plan.md").read_text(encoding="utf-8")
    return next(line.strip("-* ") for line in text.splitlines() if len(line.strip()) > 20)
