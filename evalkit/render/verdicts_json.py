"""``verdicts.json``: the judge's verdicts as recorded, so they can be replayed and audited.

A JSON list, one object per checkpoint, in the ``file`` judge's format: the LLM
judge's answer shape with the checkpoint's id (``{"chk_id", "detection": {sub-score:
{"quotes", "rationale", "score"}} | null, "plan": ..., "penalties": [{"rule",
"detail", "quote"}], "addressed_to_evaluator": [...]}``, the last only where the judge
reported such passages): the claims *before* grounding, with the rationale as the
judge wrote it. A checkpoint the judge could not score is ``{"chk_id", "error":
reason}``. So ``evalkit run --judge file --verdicts .../verdicts.json`` replays it,
and ``evalkit record`` and ``evalkit verify`` re-derive everything from it without
judging again (:mod:`evalkit.replay`).
"""

from __future__ import annotations

import json
from typing import Any

from ..grounding import DETECTION_SOURCES, PLAN_SOURCES, judge_rationale
from ..model import Evaluation, GroundedSubScore, GroundedVerdict, SourceName

VERDICTS_FILENAME = "verdicts.json"


def _dimension(
    subs: tuple[GroundedSubScore, ...] | None, allowed: tuple[SourceName, ...]
) -> dict[str, Any] | None:
    if subs is None:
        return None
    return {
        sub.name: {
            "quotes": [check.quote for check in sub.quotes],
            "rationale": judge_rationale(sub),
            "score": sub.claimed,
        }
        for sub in subs
    }


def verdict_answer(verdict: GroundedVerdict) -> dict[str, Any]:
    """One checkpoint's verdict as the judge claimed it (see the module docstring)."""
    if verdict.status == "error":
        return {"chk_id": verdict.chk_id, "error": verdict.error or "unknown error"}
    answer: dict[str, Any] = {
        "chk_id": verdict.chk_id,
        "detection": _dimension(verdict.detection, DETECTION_SOURCES),
        "plan": _dimension(verdict.plan, PLAN_SOURCES),
        "penalties": [
            {"rule": p.flag.rule, "detail": p.flag.detail, "quote": p.flag.quote}
            for p in verdict.penalties
        ],
    }
    if verdict.addressed_to_evaluator:
        # Only where the judge reported something, so other records keep their shape.
        answer["addressed_to_evaluator"] = list(verdict.addressed_to_evaluator)
    return answer


def to_verdicts_list(ev: Evaluation) -> list[dict[str, Any]]:
    return [verdict_answer(verdict) for verdict in ev.verdicts]


def dumps_verdicts(ev: Evaluation) -> str:
    return json.dumps(to_verdicts_list(ev), indent=2, ensure_ascii=False) + "\n"
