"""``verdicts.json``: the judge's verdicts as recorded, so they can be replayed and audited.

One object per checkpoint, keyed by its id, in the LLM judge's answer shape
(``{"detection": {sub-score: {"quotes", "rationale", "score"}} | null, "plan": ...,
"penalties": [{"rule", "detail", "quote"}]}``): the claims *before* grounding, with
the rationale as the judge wrote it. A checkpoint the judge could not score is
``{"error": reason}``. :mod:`evalkit.replay` reads the file back into verdicts;
``evalkit record`` and ``evalkit verify`` use it to re-derive everything without
judging again.
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
        return {"error": verdict.error or "unknown error"}
    return {
        "detection": _dimension(verdict.detection, DETECTION_SOURCES),
        "plan": _dimension(verdict.plan, PLAN_SOURCES),
        "penalties": [
            {"rule": p.flag.rule, "detail": p.flag.detail, "quote": p.flag.quote}
            for p in verdict.penalties
        ],
    }


def to_verdicts_dict(ev: Evaluation) -> dict[str, Any]:
    return {verdict.chk_id: verdict_answer(verdict) for verdict in ev.verdicts}


def dumps_verdicts(ev: Evaluation) -> str:
    return json.dumps(to_verdicts_dict(ev), indent=2, ensure_ascii=False) + "\n"
