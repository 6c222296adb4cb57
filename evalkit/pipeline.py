"""``evaluate()``: checklist + documents -> screening, judge -> grounding -> scoring -> Evaluation.

The one call the notebook makes. It owns the order of the stages and the
progress bar, and nothing else: every rule lives in ``scoring`` and
``grounding``, every backend in ``judges``.
"""

from __future__ import annotations

import asyncio
import dataclasses
import sys
import threading
from collections.abc import Callable, Coroutine
from datetime import UTC, datetime
from typing import Any, TypeVar

from ._version import __version__
from .errors import RunError
from .grounding import Sources, ground_reported, ground_verdict
from .judges import Judge, JudgeResult
from .model import Evaluation, Range, Submission
from .scoring import score_all
from .screening import screen
from .stability import stability_of

T = TypeVar("T")
# Every progress bar's line starts with this: the notebook runner streams those lines to
# the terminal and keeps them out of the record (evalkit.notebook).
PROGRESS_PREFIX = "judging "


def utc_timestamp(now: datetime | None = None) -> str:
    """ISO 8601 UTC with a ``Z`` suffix, to the second."""
    moment = (now or datetime.now(UTC)).astimezone(UTC).replace(microsecond=0)
    return moment.isoformat().replace("+00:00", "Z")


def run_sync(make_coroutine: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """Run a coroutine to completion from sync code, even inside Jupyter.

    A notebook kernel already runs an event loop, where ``asyncio.run`` is
    refused; the coroutine then runs on its own loop in a worker thread.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(make_coroutine())
    outcome: dict[str, Any] = {}

    def worker() -> None:
        try:
            outcome["value"] = asyncio.run(make_coroutine())
        except BaseException as exc:  # re-raised in the caller's thread
            outcome["error"] = exc

    thread = threading.Thread(target=worker, name="evalkit-judge")
    thread.start()
    thread.join()
    if "error" in outcome:
        raise outcome["error"]
    value: T = outcome["value"]
    return value


def _progress_bar(total: int, description: str) -> Callable[[str], None] | None:
    # The plain text bar, not tqdm.auto: it renders the same in a terminal, in a notebook and
    # in an executed notebook kept as a record, and needs no widget state to be readable.
    from tqdm import tqdm

    bar = tqdm(total=total, desc=description, unit="item", leave=True, file=sys.stderr)
    lock = threading.Lock()

    def advance(chk_id: str) -> None:
        with lock:
            bar.set_postfix_str(chk_id, refresh=False)
            bar.update(1)
            if bar.n >= total:
                bar.close()

    return advance


def evaluate(
    rng: Range,
    submission: Submission,
    judge: Judge,
    *,
    progress: bool = False,
    timestamp: str | None = None,
) -> Evaluation:
    """Judge every checkpoint, ground the verdicts, score them, and bundle it all."""
    if submission.range_id != rng.id:
        raise RunError(f"submission is for range {submission.range_id!r}, not {rng.id!r}")
    on_item_done = (
        _progress_bar(len(rng.checkpoints), f"{PROGRESS_PREFIX}{rng.id} ({judge.info.name})")
        if progress
        else None
    )
    # Screening is the same for every judge: what it sets apart is not evidence for any.
    screening = screen(rng, submission)
    result: JudgeResult = run_sync(lambda: judge.judge(rng, submission, on_item_done=on_item_done))
    # What the judge itself reported as addressed to the evaluator is set apart like
    # screening's instructions, before any verdict is grounded.
    reported = ground_reported(result.verdicts, submission)
    screening = screening.with_reported(reported, submission)
    sources = Sources.of(submission, screening, judge.info.kind)
    grounded = tuple(ground_verdict(verdict, sources) for verdict in result.verdicts)
    items, summary = score_all(rng, grounded)
    summary = dataclasses.replace(summary, warnings=screening.warnings)
    return Evaluation(
        range=rng,
        submission=submission,
        judge=judge.info,
        timestamp=timestamp or result.timestamp or utc_timestamp(),
        evalkit_version=__version__,
        items=items,
        summary=summary,
        verdicts=grounded,
        usage=result.usage,
        usage_by_item=dict(result.usage_by_item),
        records=tuple(result.records),
        stability=stability_of(result.samples),
        reported_passages=reported,
    )
