"""evalkit: score a security detection agent's reports against a range checklist.

The public surface, in the order of the flow::

    rng = evalkit.load_range("ranges", "ssh-miner")
    submission = evalkit.load_submission("runs", "demo", rng)
    judge = evalkit.make_judge("rules")            # or "claude", model=...
    evaluation = evalkit.evaluate(rng, submission, judge)
    evalkit.render.write_outputs(evaluation, out_dir)
"""

from . import _imports  # noqa: F401  (first: it decides what jsonschema loads)
from ._version import __version__
from .checklist import list_ranges, load_range, parse_checklist
from .errors import (
    ChecklistError,
    ChecklistErrors,
    EvalkitError,
    JudgeError,
    JudgeInputError,
    NotebookError,
    OutputError,
    RunError,
)
from .judges import Judge, JudgeResult, judge_names, judge_options, make_judge
from .model import Evaluation, Range, Submission, Verdict
from .pipeline import evaluate
from .runs import list_runs, load_submission

__all__ = [
    "ChecklistError",
    "ChecklistErrors",
    "Evaluation",
    "EvalkitError",
    "Judge",
    "JudgeError",
    "JudgeInputError",
    "JudgeResult",
    "NotebookError",
    "OutputError",
    "Range",
    "RunError",
    "Submission",
    "Verdict",
    "__version__",
    "evaluate",
    "judge_names",
    "judge_options",
    "list_ranges",
    "list_runs",
    "load_range",
    "load_submission",
    "make_judge",
    "parse_checklist",
]


def __getattr__(name: str) -> object:
    # JUDGE_NAMES includes plugins, loaded on first use rather than at import.
    if name == "JUDGE_NAMES":
        return judge_names()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
