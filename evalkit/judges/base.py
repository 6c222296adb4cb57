"""The judge protocol: what every backend (rules, claude, ...) provides.

A judge turns a range and a submission into one :class:`~evalkit.model.Verdict`
per checkpoint. It never scores: grounding and scoring happen afterwards, the
same way for every judge. A judge that cannot score one checkpoint returns
``Verdict.failed(...)`` for it instead of raising; it raises
:class:`~evalkit.errors.JudgeError` only when it cannot run at all.

A backend may also offer ``preflight(rng, submission)``: a check without side
effects or network calls that raises JudgeError when ``judge`` could not run
(the CLI calls it before executing any notebook).
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
