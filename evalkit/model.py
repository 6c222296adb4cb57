"""Plain dataclasses that flow through evalkit, in the order they appear.

checklist -> :class:`Range`; run folder -> :class:`Submission`; a judge ->
:class:`Verdict` per checkpoint; grounding -> :class:`GroundedVerdict`;
scoring -> :class:`ItemScore` and :class:`Summary`; all of it ->
:class:`Evaluation`, which is the only thing renderers read.

This module imports nothing from evalkit, does no I/O and holds no rules.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from .penalties import PENALTY_RULE_NAMES

Scope = Literal["both", "detection-only", "plan-only"]
SCOPES: tuple[str, ...] = ("both", "detection-only", "plan-only")

Dimension = Literal["detection", "plan"]
DETECTION_SUBSCORES: tuple[str, ...] = ("discovery", "evidence", "attribution")
PLAN_SUBSCORES: tuple[str, ...] = ("correctness", "completeness")
SUBSCORES: Mapping[str, tuple[str, ...]] = {
    "detection": DETECTION_SUBSCORES,
    "plan": PLAN_SUBSCORES,
}

PenaltyRule = Literal["fabrication", "wrong_attribution", "dangerous_advice"]
# The rules themselves (what each zeroes, where its quote may come from) live in penalties.py;
# tests/test_penalties.py checks that this Literal names the same rules.
PENALTY_RULES: tuple[str, ...] = PENALTY_RULE_NAMES

REPORT_KINDS: tuple[str, ...] = ("intrusion-report", "vuln-report", "baseline-report")
PLAN_FILENAME = "remediation-plan.md"

Status = Literal["scored", "error"]
Level = Literal["strong", "weak"]
Diagnosis = Literal["All-round", "Plan bottleneck", "Analysis blind spot", "Blind fix"]


# A dimension is strong at score/max >= 70 %, compared on the unrounded ratio.
STRONG_THRESHOLD_PCT = 70

# The SKILL's diagnostic table: (detection level, plan level) -> mode.
MODES: dict[tuple[Level, Level], Diagnosis] = {
    ("strong", "strong"): "All-round",
    ("strong", "weak"): "Plan bottleneck",
    ("weak", "weak"): "Analysis blind spot",
    ("weak", "strong"): "Blind fix",
}

# What the SKILL says each mode means, and where to improve.
MODE_GUIDANCE: dict[Diagnosis, tuple[str, str]] = {
    "All-round": ("Ideal state", "Maintain"),
    "Plan bottleneck": (
        "Finds the issue but cannot produce a correct plan",
        "Improve the detection Agent's plan-generation ability",
    ),
    "Analysis blind spot": (
        "Core analysis capability is insufficient",
        "Improve the detection Agent's foundational capability",
    ),
    "Blind fix": (
        "Happens to fix it correctly, but the report shows no analysis",
        "Untrustworthy; the analysis pipeline needs strengthening",
    ),
}


# --------------------------------------------------------------------------- inputs


@dataclass(frozen=True)
class Capability:
    id: str
    name: str


@dataclass(frozen=True)
class Checkpoint:
    """One CHK item of a checklist, normalised from either checklist form."""

    id: str
    name: str
    scope: Scope = "both"
    caps: tuple[str, ...] = ()
    detection_criteria: str | None = None
    plan_criteria: str | None = None
    indicators: tuple[str, ...] = ()
    attribution_terms: tuple[str, ...] = ()
    remediation_terms: tuple[str, ...] = ()
    # Fields the format does not define, kept verbatim (name as written -> value).
    extra: Mapping[str, str] = field(default_factory=dict)
    line: int | None = None

    @property
    def has_detection(self) -> bool:
        return self.scope != "plan-only"

    @property
    def has_plan(self) -> bool:
        return self.scope != "detection-only"


@dataclass(frozen=True)
class Range:
    """A parsed checklist: the ground truth of one security scenario."""

    id: str
    title: str
    report: str  # one of REPORT_KINDS: which analysis report the agent writes
    checkpoints: tuple[Checkpoint, ...]
    capabilities: tuple[Capability, ...] = ()
    facts: tuple[str, ...] = ()
    path: str | None = None
    sha256: str | None = None
    # "file:line: CHK-03: unknown field ..." lines: kept fields a reader may have misspelt.
    warnings: tuple[str, ...] = ()

    @property
    def report_filename(self) -> str:
        return f"{self.report}.md"

    def checkpoint(self, chk_id: str) -> Checkpoint:
        for checkpoint in self.checkpoints:
            if checkpoint.id == chk_id:
                return checkpoint
        raise KeyError(chk_id)

    def capability_name(self, cap_id: str) -> str:
        for capability in self.capabilities:
            if capability.id == cap_id:
                return capability.name
        return cap_id


SourceName = Literal["report", "plan"]


@dataclass(frozen=True)
class Document:
    """One of the detection agent's documents, as read from disk."""

    kind: SourceName
    path: str
    text: str  # as judged: newlines normalised to \n, no byte-order mark
    file_sha256: str | None = None  # of the file's bytes as stored, when read from disk

    @property
    def filename(self) -> str:
        return self.path.replace("\\", "/").rsplit("/", 1)[-1]

    @property
    def sha256(self) -> str:
        """What ``sha256sum`` gives for the file; for an in-memory document, of its text."""
        return self.file_sha256 or hashlib.sha256(self.text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Submission:
    """What the detection agent wrote for one range in one run."""

    run_id: str
    range_id: str
    report: Document
    plan: Document
    model_under_test: str | None = None
    notes: str | None = None
    # True when a document resolved outside the runs folder and was read anyway
    # (--allow-outside-inputs); scores.json records it as meta.inputs_outside.
    inputs_outside: bool = False

    def document(self, kind: SourceName) -> Document:
        return self.report if kind == "report" else self.plan


# --------------------------------------------------------------------------- judging


@dataclass(frozen=True)
class SubScoreVerdict:
    """A judge's claim for one sub-score: 0/1, the quotes it rests on, why."""

    value: int
    quotes: tuple[str, ...] = ()
    rationale: str = ""


@dataclass(frozen=True)
class PenaltyFlag:
    """A negative rule the judge says applies, with the passage that shows it."""

    rule: PenaltyRule
    detail: str
    quote: str


@dataclass(frozen=True)
class Verdict:
    """A judge's answer for one checkpoint, before grounding.

    ``detection``/``plan`` map sub-score names to claims; they are ``None`` for
    a dimension that is N/A for the checkpoint's scope. A verdict with
    ``status == "error"`` carries the reason in ``error`` and no scores.
    """

    chk_id: str
    status: Status = "scored"
    detection: Mapping[str, SubScoreVerdict] | None = None
    plan: Mapping[str, SubScoreVerdict] | None = None
    penalties: tuple[PenaltyFlag, ...] = ()
    error: str | None = None
    # Passages of either document the judge reports as speaking to whoever evaluates,
    # reviews, grades or scores them (verbatim quotes; prompt v3 asks for them).
    addressed_to_evaluator: tuple[str, ...] = ()

    @classmethod
    def failed(cls, chk_id: str, error: str) -> Verdict:
        return cls(chk_id=chk_id, status="error", error=error)


@dataclass(frozen=True)
class QuoteCheck:
    """Whether one quoted passage was found verbatim in the agent's documents."""

    quote: str
    found: bool
    source: SourceName | None = None
    line: int | None = None  # 1-based line in that document where the quote starts


@dataclass(frozen=True)
class GroundedSubScore:
    name: str
    claimed: int  # what the judge said
    value: int  # after grounding: a 1 with no verbatim quote is withheld (0)
    quotes: tuple[QuoteCheck, ...]
    rationale: str  # the judge's rationale, then grounding's note
    note: str = ""  # what grounding added: why a claimed point was withheld or trimmed

    @property
    def withheld(self) -> bool:
        return self.claimed == 1 and self.value == 0


@dataclass(frozen=True)
class GroundedPenalty:
    flag: PenaltyFlag
    check: QuoteCheck

    @property
    def applies(self) -> bool:
        # A penalty must trace back to a passage the agent really wrote.
        return self.check.found


@dataclass(frozen=True)
class GroundedVerdict:
    chk_id: str
    status: Status
    detection: tuple[GroundedSubScore, ...] | None
    plan: tuple[GroundedSubScore, ...] | None
    penalties: tuple[GroundedPenalty, ...]
    error: str | None = None
    # The passages the judge reported as addressed to the evaluator, as it quoted them;
    # grounded once per evaluation (Evaluation.reported_passages), not per item.
    addressed_to_evaluator: tuple[str, ...] = ()


@dataclass(frozen=True)
class ReportedPassage:
    """A passage the judge reported as addressed to whoever evaluates the documents.

    One per distinct quote, however many checkpoints' answers reported it (``items``).
    ``found`` says whether grounding found it verbatim (hidden content included: the
    judge read the source); a quote not found raises nothing and is only counted.
    """

    quote: str
    items: tuple[str, ...]
    found: bool
    source: SourceName | None = None
    first_line: int | None = None
    last_line: int | None = None


# --------------------------------------------------------------------------- scores


@dataclass(frozen=True)
class Penalty:
    """A penalty as applied: which rule, why, and the verbatim passage."""

    rule: PenaltyRule
    detail: str
    quote: str
    source: SourceName | None = None
    line: int | None = None


@dataclass(frozen=True)
class DismissedPenalty:
    """A penalty the judge raised that was not applied, and why."""

    flag: PenaltyFlag
    reason: str


@dataclass(frozen=True)
class DimensionScore:
    """Detection (max 3) or plan (max 2) of one checkpoint, after penalties."""

    subscores: Mapping[str, int]
    total: int
    max: int
    rationale: str
    quotes: tuple[str, ...]  # verbatim passages supporting the points awarded
    withheld: tuple[str, ...] = ()  # sub-scores claimed but ungrounded
    penalized: tuple[str, ...] = ()  # sub-scores zeroed by a penalty


@dataclass(frozen=True)
class ItemScore:
    chk_id: str
    name: str
    caps: tuple[str, ...]
    scope: Scope
    status: Status
    error: str | None
    detection: DimensionScore | None
    plan: DimensionScore | None
    penalties: tuple[Penalty, ...] = ()
    # Penalties the judge raised that did not apply (quote not verbatim, or the dimension
    # they act on is N/A for this item): shown with the reason, never counted.
    dismissed_penalties: tuple[DismissedPenalty, ...] = ()
    # Plan points without a finding: both dimensions apply, the plan total after penalties
    # is above 0 and discovery after penalties is 0 (the SKILL's "Blind fix", per item).
    blind_fix: bool = False


@dataclass(frozen=True)
class Tally:
    score: int
    max: int
    pct: float | None  # rounded to one decimal; None when max is 0
    level: Level | None  # from the unrounded ratio; None when max is 0


@dataclass(frozen=True)
class Loss:
    """A sub-score lost ``count`` times, by the checkpoints in ``items``."""

    subscore: str
    count: int
    items: tuple[str, ...]


@dataclass(frozen=True)
class BlindFixes:
    """The checkpoints whose plan earned points the report never found, and those points."""

    items: tuple[str, ...] = ()
    plan_points: int = 0


@dataclass(frozen=True)
class CapabilityScore:
    cap: str
    name: str
    items: tuple[str, ...]
    detection: Tally
    plan: Tally
    diagnosis: Diagnosis | None = None


# Who raised a warning: screening's rules, or the judge's own report of a passage
# addressed to the evaluator (always an ``instruction`` warning).
FoundBy = Literal["screening", "judge"]
FOUND_BY: tuple[FoundBy, ...] = ("screening", "judge")

# The screening rules that report what they find (evalkit/screening/policy.py: SCREEN_RULES).
WarningKind = Literal[
    "instruction",
    "obfuscation",
    "other_language",
    "keyword_stuffing",
    "fake_scores",
    "restated_criteria",
    "repeated_passage",
]
# A keyword judge matches terms and cannot read context (a heading, a question, a denial);
# a reader (an LLM, a person) reads the document as a whole. Screening withholds more from
# the first (evalkit/screening/policy.py).
JudgeKind = Literal["keyword", "reader"]
JUDGE_KINDS: tuple[JudgeKind, ...] = ("keyword", "reader")


@dataclass(frozen=True)
class Mask:
    """Lines of a document that are not evidence, and why (said in grounding's rationale).

    ``kind`` names the screening rule (or, for the keyword judge's own reading, the
    scope: ``not_examined``, ``illustration``, ``reference``) that set the lines apart.
    """

    first_line: int
    last_line: int
    reason: str
    kind: str = "not_examined"


@dataclass(frozen=True)
class DocumentWarning:
    """A passage of the agent's documents that screening set apart and reports."""

    kind: WarningKind
    source: SourceName  # the document it is in
    line: int
    excerpt: str
    message: str
    found_by: FoundBy = "screening"


@dataclass(frozen=True)
class Summary:
    total_checkpoints: int
    detection_only_count: int
    plan_only_count: int
    detection: Tally
    plan: Tally
    diagnosis: Diagnosis | None  # None when a dimension has nothing scorable
    complete: bool
    errored: tuple[str, ...]
    capabilities: tuple[CapabilityScore, ...]
    top_detection_misses: tuple[Loss, ...]
    top_plan_defects: tuple[Loss, ...]
    # What screening (or the judge) flagged in the agent's documents (evalkit/screening/).
    warnings: tuple[DocumentWarning, ...] = ()
    blind_fix: BlindFixes = BlindFixes()


@dataclass(frozen=True)
class Usage:
    """What judging cost. All zeros for offline judges.

    ``cost_usd`` is None when some call was made to a model the price table
    does not know: an unknown cost is never shown as a free one.
    """

    requests: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_creation_input_tokens: int = 0
    cache_read_input_tokens: int = 0
    cost_usd: float | None = 0.0
    latency_s: float = 0.0
    cached_responses: int = 0  # answers served from the response cache (no API call)

    def __add__(self, other: Usage) -> Usage:
        cost = (
            None
            if self.cost_usd is None or other.cost_usd is None
            else round(self.cost_usd + other.cost_usd, 6)
        )
        return Usage(
            requests=self.requests + other.requests,
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cache_creation_input_tokens=self.cache_creation_input_tokens
            + other.cache_creation_input_tokens,
            cache_read_input_tokens=self.cache_read_input_tokens + other.cache_read_input_tokens,
            cost_usd=cost,
            latency_s=round(self.latency_s + other.latency_s, 3),
            cached_responses=self.cached_responses + other.cached_responses,
        )


# --------------------------------------------------------------------------- repeats


@dataclass(frozen=True)
class SubScoreStability:
    chk_id: str
    dimension: str  # "detection" or "plan"
    subscore: str
    values: tuple[int, ...]
    kept: int
    agreement: float
    flip: float

    @property
    def unstable(self) -> bool:
        return self.flip > 0


@dataclass(frozen=True)
class ItemStability:
    chk_id: str
    samples: int  # scored samples the majority was taken over
    subscores: tuple[SubScoreStability, ...]

    @property
    def unstable(self) -> bool:
        return any(sub.unstable for sub in self.subscores)


@dataclass(frozen=True)
class Stability:
    """Agreement and flip rates of every item's K samples (``repeats`` = K > 1)."""

    repeats: int
    items: tuple[ItemStability, ...]

    @property
    def unstable(self) -> tuple[str, ...]:
        return tuple(item.chk_id for item in self.items if item.unstable)


@dataclass(frozen=True)
class JudgeInfo:
    """Which judge produced the verdicts, precisely enough to reproduce them."""

    name: str  # backend: rules, claude, ...
    evaluator_model: str  # a model id, or e.g. "rules-v1"
    prompt_version: str | None = None
    prompt_sha256: str | None = None
    # What was measured of this judge's reliability, for every record to show beside its
    # scores (the rules judge's held-out agreement with human labels); None: nothing stated.
    caveat: str | None = None
    # How the judge reads: screening withholds suspicious passages from keyword judges only.
    kind: JudgeKind = "reader"


@dataclass(frozen=True)
class Evaluation:
    """Everything one evaluation produced; renderers read only this."""

    range: Range
    submission: Submission
    judge: JudgeInfo
    timestamp: str  # ISO 8601 UTC with Z
    evalkit_version: str
    items: tuple[ItemScore, ...]
    summary: Summary
    verdicts: tuple[GroundedVerdict, ...]
    usage: Usage = Usage()
    usage_by_item: Mapping[str, Usage] = field(default_factory=dict)
    # The judge's raw calls (request, response, usage), kept for audit as judgments.jsonl.
    records: tuple[Mapping[str, Any], ...] = ()
    # Agreement of the judge's K samples per item (evalkit.stability.stability_of); None for
    # a single sample (repeats = 1) and for judges that do not sample.
    stability: Stability | None = None
    # What the judge reported as addressed to the evaluator, grounded, one per quote.
    reported_passages: tuple[ReportedPassage, ...] = ()

    @property
    def inputs(self) -> dict[str, str | None]:
        return {
            "checklist_sha256": self.range.sha256,
            "report_sha256": self.submission.report.sha256,
            "plan_sha256": self.submission.plan.sha256,
        }
