"""The judge protocol: what every backend (rules, claude, ...) provides.

A judge turns a range and a submission into one :class:`~evalkit.model.Verdict`
per checkpoint. It never scores: grounding and scoring happen afterwards, the
same way for every judge. A judge that cannot score one checkpoint returns
``Verdict.failed(...)`` for it instead of raising; it raises
:class:`~evalkit.errors.JudgeError` only when it cannot run at all.

``preflight(rng, submission)`` checks, without side effects or network calls,
that ``judge`` could run (raising JudgeError otherwise) and returns how many
paid calls it would make; the CLI calls it before executing any notebook.
:class:`JudgeBase` gives the no-op default.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from ..model import JudgeInfo, Range, Submission, Usage, Verdict

# Called once per checkpoint as its verdict is ready (drives progress bars).
ProgressCallback = Callable[[str], None]


@dataclass(frozen=True)
class JudgeResult:
    verdicts: tuple[Verdict, ...]
    usage: Usage = Usage()
    usage_by_item: Mapping[str, Usage] = field(default_factory=dict)
    # One JSON-ready record per judge call (request, response, usage), for audit.
    records: tuple[Mapping[str, Any], ...] = ()
    # Every sample's verdict per item, when the judge drew more than one (repeats).
    samples: Mapping[str, tuple[Verdict, ...]] = field(default_factory=dict)
    # When the verdicts were made, if not now (recorded verdicts replayed keep their time).
    timestamp: str | None = None


@runtime_checkable
class Judge(Protocol):
    @property
    def info(self) -> JudgeInfo: ...

    async def judge(
        self,
        rng: Range,
        submission: Submission,
        *,
        on_item_done: ProgressCallback | None = None,
    ) -> JudgeResult:
        """One verdict per checkpoint of ``rng``, in checklist order."""
        ...

    def preflight(self, rng: Range, submission: Submission) -> int:
        """Raise JudgeError if ``judge`` could not run; the number of paid calls it would make."""
        ...


class JudgeBase:
    """Defaults for the optional parts of :class:`Judge`."""

    def preflight(self, rng: Range, submission: Submission) -> int:
        return 0
