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
from .fileio import is_outside, make_folder
from .judges import Judge
from .judges.file import FileJudge
from .model import Range, Submission
from .runplan import RunPlan
from .runs import load_submission
from .workspace import Workspace, within

__all__ = [
    "build_judge",
    "check_out_dir",
    "load_inputs",
    "load_range_of",
    "load_submission_of",
    "prepare_out_dir",
]


def load_inputs(plan: RunPlan) -> tuple[Range, Submission]:
    """The range and the submission ``plan`` names, read under the confinement rules.

    Raises ChecklistError / RunError.
    """
    rng = load_range_of(plan)
    return rng, load_submission_of(plan, rng)


def load_range_of(plan: RunPlan) -> Range:
    """The range ``plan`` names, read under the confinement rules (ChecklistError). A
    batch reads each range once for all its runs."""
    return load_range(plan.ranges_dir, plan.range_id, allow_outside=plan.allow_outside_inputs)


def load_submission_of(plan: RunPlan, rng: Range) -> Submission:
    """The documents ``plan`` names for ``rng``, read under the confinement rules
    (RunError); marked ``inputs_outside`` when the checklist lies outside too."""
    submission = load_submission(
        plan.runs_dir,
        plan.run_id,
        rng,
        model_under_test=plan.model_under_test or None,
        allow_outside_inputs=plan.allow_outside_inputs,
    )
    checklist = plan.ranges_dir / plan.range_id / CHECKLIST_FILENAME
    if plan.allow_outside_inputs and is_outside(checklist, plan.ranges_dir):
        submission = replace(submission, inputs_outside=True)
    return submission


def build_judge(plan: RunPlan) -> Judge:
    """The judge ``plan`` names, with its settings; or, when the plan replays a recorded
    evaluation, the recorded verdicts under that judge's identity (read without following
    a link out of the runs folder, or of the folder itself when it lies elsewhere)."""
    if plan.replay_from is not None:
        root = plan.runs_dir if within(plan.replay_from, plan.runs_dir) else plan.replay_from
        return FileJudge.from_record(plan.replay_from, root=root)
    return plan.judge_config.build()


def check_out_dir(plan: RunPlan, workspace: Workspace | None = None) -> None:
    """Refuse, before anything runs, an evaluation folder or a response cache folder that
    is a symlink or is reached through one (RunError, exit 2)."""
    workspace = workspace or plan.workspace()
    workspace.check_out(plan.out_dir)
    cache = plan.judge_settings.get("cache_dir")
    if isinstance(cache, Path):
        workspace.check_out(cache)


def prepare_out_dir(plan: RunPlan) -> Path:
    """Create the evaluation folder without following any symlink below the runs folder."""
    return make_folder(plan.out_dir, root=plan.output_root)
