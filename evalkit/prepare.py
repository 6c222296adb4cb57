"""What one planned evaluation needs before the pipeline runs: inputs, judge, out folder.

A :class:`~evalkit.runplan.RunPlan` is data: the range, the run, the judge and its
settings, the folders, all validated when the plan is built. :func:`load_inputs`
reads the range and the submission it names under the confinement rules;
:func:`build_judge` builds the judge it names, or, for a plan that replays a
recorded evaluation, that evaluation's verdicts under its judge's identity; the
output folder is checked (:func:`check_out_dir`) and created
(:func:`prepare_out_dir`) without following a planted symlink. Then
:func:`evalkit.pipeline.evaluate` does the rest. ``evalkit run`` checks everything
before any notebook runs; the notebook does it again in its kernel.

Not part of :mod:`evalkit.pipeline` itself, which ``import evalkit`` loads: the
file judge this module may build brings the JSON Schema machinery with it.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from .checklist import CHECKLIST_FILENAME, load_range
from .fileio import check_no_symlinks, confined, is_outside, make_folder
from .judges import Judge, make_judge
from .judges.file import FileJudge
from .model import Range, Submission
from .runplan import RunPlan
from .runs import load_submission

__all__ = ["build_judge", "check_out_dir", "load_inputs", "prepare_out_dir"]


def load_inputs(plan: RunPlan) -> tuple[Range, Submission]:
    """The range and the submission ``plan`` names, read under the confinement rules.

    Raises ChecklistError / RunError.
    """
    checklist = plan.ranges_dir / plan.range_id / CHECKLIST_FILENAME
    confined(checklist, plan.ranges_dir, allow_outside=plan.allow_outside_inputs)
    rng = load_range(plan.ranges_dir, plan.range_id)
    submission = load_submission(
        plan.runs_dir,
        plan.run_id,
        rng,
        model_under_test=plan.model_under_test or None,
        allow_outside_inputs=plan.allow_outside_inputs,
    )
    if plan.allow_outside_inputs and is_outside(checklist, plan.ranges_dir):
        submission = replace(submission, inputs_outside=True)
    return rng, submission


def build_judge(plan: RunPlan) -> Judge:
    """The judge ``plan`` names, with its settings; or, when the plan replays a recorded
    evaluation, the recorded verdicts under that judge's identity."""
    if plan.replay_from is not None:
        return FileJudge.from_record(plan.replay_from)
    return make_judge(plan.judge, **dict(plan.judge_settings))


def check_out_dir(plan: RunPlan) -> None:
    """Refuse an evaluation folder reached through a planted symlink (RunError)."""
    check_no_symlinks(plan.out_dir, plan.output_root)


def prepare_out_dir(plan: RunPlan) -> Path:
    """Create the evaluation folder without following any symlink below the runs folder."""
    return make_folder(plan.out_dir, root=plan.output_root)
