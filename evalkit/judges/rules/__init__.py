"""The offline ``rules`` judge (rules-v1): deterministic term matching.

Every rule it applies is written down in ``docs/rules-judge.md``, and that
document is the single place to read them; this package implements exactly
those rules. It reads only the checklist's Indicators, Attribution and
Remediation terms and its Facts, and the agent's two documents. Every point
it awards and every penalty it raises carries a line it really matched,
checked against :mod:`evalkit.grounding` before it is used.

One module per concern: :mod:`.terms` (how a checklist term matches),
:mod:`.artifacts` (what counts as concrete evidence), :mod:`.document` (the
judge's view of a document), :mod:`.detection` and :mod:`.plan` (the sub-scores
of each dimension, the plan's with the dangerous-advice penalty),
:mod:`.destructive` (the destructive-operation table) and :mod:`.facts`
(fabrication: contradictions with the range's Facts). Negation is read by
:mod:`evalkit.text.negation`.
"""

from __future__ import annotations

from dataclasses import replace

from ...markdown import parse
from ...model import (
    Checkpoint,
    JudgeInfo,
    PenaltyFlag,
    Range,
    Submission,
    SubScoreVerdict,
    Verdict,
)
from ...screening import screen
from ..base import JudgeBase, JudgeResult, ProgressCallback
from ..measured import MEASURED_AGREEMENT
from .detection import detection_scores
from .document import DocumentView
from .facts import FabricationRule
from .plan import PlanRules
from .terms import distinct_terms, term_pattern, with_derived_terms

EVALUATOR_MODEL = "rules-v1"


class _Context:
    """Everything computed once per judge() call."""

    def __init__(self, rng: Range, submission: Submission) -> None:
        # An item without Indicators or Remediation terms (both optional in the format) is
        # read through terms derived from its own criteria, not refused.
        # Screening reads the checklist as written, as the pipeline's does: both must set
        # apart the same lines.
        self.screening = screen(rng, submission)
        rng, self.derived = with_derived_terms(rng)
        self.rng = rng
        report_md = parse(submission.report.text)
        plan_md = parse(submission.plan.text)
        masks = self.screening.masks
        self.report = DocumentView("report", report_md, masks.get("report", ()))
        self.plan = DocumentView("plan", plan_md, masks.get("plan", ()))
        # Document-wide work (the fabricated mentions, the dangerous steps) is done here,
        # once: an error in it fails the call, not one checkpoint.
        self.fabrication = FabricationRule(rng, self.report)
        self.plan_rules = PlanRules(rng, self.report, self.plan)

    def verdict(self, chk: Checkpoint) -> Verdict:
        chk = self.rng.checkpoint(chk.id)  # with its derived terms, where it had none
        indicators = distinct_terms(chk.indicators)
        remediation = distinct_terms(chk.remediation_terms)
        missing = []
        if chk.has_detection and not indicators:
            missing.append("no Indicators, and none to derive from its Detection criterion")
        if chk.has_plan and not remediation:
            missing.append("no Remediation terms, and none to derive from its Plan criterion")
        if missing:
            return Verdict.failed(chk.id, "rules judge: " + ", ".join(missing))
        detection = detection_scores(self.report, chk, indicators) if chk.has_detection else None
        plan = None
        penalties: list[PenaltyFlag] = []
        if chk.has_detection:
            penalties.extend(self.fabrication.flags(chk, indicators))
        if chk.has_plan:
            rules = self.plan_rules
            passages = rules.passages(chk, indicators)
            plan = {
                "correctness": rules.correctness(chk, indicators, remediation, passages),
                "completeness": rules.completeness(chk, indicators, passages),
            }
            penalties.extend(rules.dangerous_flags(chk, passages))
        if chk.id in self.derived:
            note = f" (Terms derived from the criteria: {self.derived[chk.id]}.)"
            detection = _noted(detection, note)
            plan = _noted(plan, note)
        return Verdict(chk_id=chk.id, detection=detection, plan=plan, penalties=tuple(penalties))


def _noted(
    scores: dict[str, SubScoreVerdict] | None, note: str
) -> dict[str, SubScoreVerdict] | None:
    if scores is None:
        return None
    return {name: replace(sub, rationale=sub.rationale + note) for name, sub in scores.items()}


class RulesJudge(JudgeBase):
    """The deterministic offline judge. Takes no options."""

    def __init__(self) -> None:
        self._info = JudgeInfo(
            name="rules",
            evaluator_model=EVALUATOR_MODEL,
            prompt_version=None,
            prompt_sha256=None,
            caveat=MEASURED_AGREEMENT,
            kind="keyword",
        )

    @property
    def info(self) -> JudgeInfo:
        return self._info

    async def judge(
        self,
        rng: Range,
        submission: Submission,
        *,
        on_item_done: ProgressCallback | None = None,
    ) -> JudgeResult:
        context = _Context(rng, submission)
        verdicts: list[Verdict] = []
        for chk in rng.checkpoints:
            try:
                verdict = context.verdict(chk)
            except Exception as exc:  # a bug must not sink the other checkpoints
                verdict = Verdict.failed(chk.id, f"rules judge: internal error: {exc!r}")
            verdicts.append(verdict)
            if on_item_done is not None:
                on_item_done(chk.id)
        return JudgeResult(verdicts=tuple(verdicts))


__all__ = [
    "EVALUATOR_MODEL",
    "MEASURED_AGREEMENT",
    "RulesJudge",
    "term_pattern",
]
