"""A third-party judge: scores every sub-score 0 and raises no penalty."""

from __future__ import annotations

from evalkit.judges import JudgeBase, JudgeResult, JudgeSetting, JudgeSpec
from evalkit.judges.base import ProgressCallback
from evalkit.model import (
    DETECTION_SUBSCORES,
    PLAN_SUBSCORES,
    JudgeInfo,
    Range,
    Submission,
    SubScoreVerdict,
    Verdict,
)


class ZeroJudge(JudgeBase):
    def __init__(self, rationale: str = "nothing found") -> None:
        self.rationale = rationale

    @property
    def info(self) -> JudgeInfo:
        return JudgeInfo(name="zero", evaluator_model="zero-v1")

    async def judge(
        self, rng: Range, submission: Submission, *, on_item_done: ProgressCallback | None = None
    ) -> JudgeResult:
        verdicts = []
        for checkpoint in rng.checkpoints:
            zero = SubScoreVerdict(value=0, rationale=self.rationale)
            verdicts.append(
                Verdict(
                    chk_id=checkpoint.id,
                    detection={n: zero for n in DETECTION_SUBSCORES}
                    if checkpoint.has_detection
                    else None,
                    plan={n: zero for n in PLAN_SUBSCORES} if checkpoint.has_plan else None,
                )
            )
            if on_item_done is not None:
                on_item_done(checkpoint.id)
        return JudgeResult(verdicts=tuple(verdicts))


SPEC = JudgeSpec(
    name="zero",
    factory=ZeroJudge,
    settings=(JudgeSetting("rationale", str, "nothing found", "what every rationale says"),),
    help="scores every checkpoint 0 (a test plugin)",
)
