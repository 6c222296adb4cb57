"""Evaluate many (run, range) pairs at once: plan and resume, engines, index.

* :mod:`.plan`: what every evaluation shares (:class:`Settings`), the pairs a batch takes
  (:func:`select_pairs`: globs over runs and ranges, by default every run x every range it
  has documents for) and which are already done (:func:`plan_batch`);
* :mod:`.tasks`: one evaluation (:func:`run_task`), which never raises: a failing cell, a
  cell timeout or a dead kernel comes back as a failed :class:`Outcome` with its reason;
* :mod:`.engines`: local worker processes (:func:`run_local`) or a Dask cluster
  (:func:`run_dask`);
* :mod:`.index`: ``index.csv``, ``index.json``, ``leaderboard.md`` and ``index.html`` in
  the runs folder (:func:`write_index`), and the failures' table.
"""

from __future__ import annotations

from .engines import OnOutcome, run_dask, run_local
from .index import (
    INDEX_COLUMNS,
    failure_table,
    index_rows,
    leaderboard_markdown,
    write_index,
)
from .plan import BatchPlan, Outcome, Settings, Task, inputs_of, plan_batch, select_pairs
from .tasks import evaluate_in_process, run_task

__all__ = [
    "INDEX_COLUMNS",
    "BatchPlan",
    "OnOutcome",
    "Outcome",
    "Settings",
    "Task",
    "evaluate_in_process",
    "failure_table",
    "index_rows",
    "inputs_of",
    "leaderboard_markdown",
    "plan_batch",
    "run_dask",
    "run_local",
    "run_task",
    "select_pairs",
    "write_index",
]
