"""The screening policy: one table, one row per rule.

Two kinds of rule, kept apart:

* **admissibility**: what can never be evidence, whatever the judge and however
  careful: text a reader of the rendered document never sees (hidden content,
  invisible or look-alike characters that disguise a word) and text inside a
  flagged instruction to the evaluator. These withhold points from every judge.
* **suspicion**: what looks like gaming (checklist terms dumped without a
  sentence, fake score tables, the checklist's criteria said back, one passage
  repeated). A reader judges such a passage in context, so for an LLM judge (or a
  person) these only warn; a keyword judge cannot read context, so for it a
  suspicion rule may also withhold, but only when it is precise: it must fire on
  no document of the honest held-out corpus (corpora/honest in the repository;
  ``evalkit robustness --honest`` measures it).

Every row names what the rule matches, the judge kinds it withholds points from,
whether it reports a warning (``summary.warnings``), whether penalties still read
the lines it sets apart, and its detector (:mod:`evalkit.screening.detectors`):
:func:`evalkit.screening.screen_document` runs the rows in this order, so a new
rule is one row here and one detector. The warning kinds, the masks grounding
reads, the ``scores.json`` schema's enum and docs/screening.md all derive from (or
are pinned by tests to) this table.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ..model import JUDGE_KINDS, JudgeKind
from . import detectors
from .detectors import Detector

__all__ = ["SCREEN_RULES", "WARNING_RULES", "Category", "ScreenRule", "rule"]

Category = Literal["admissibility", "suspicion"]
_ALL: frozenset[JudgeKind] = frozenset(JUDGE_KINDS)
_KEYWORD: frozenset[JudgeKind] = frozenset({"keyword"})
_NONE: frozenset[JudgeKind] = frozenset()


@dataclass(frozen=True)
class ScreenRule:
    name: str  # the mask kind, and the warning kind when it warns
    category: Category
    matches: str  # in plain words, as docs/screening.md shows it
    withholds_from: frozenset[JudgeKind]  # judge kinds that earn nothing from its lines
    warns: bool  # reported in summary.warnings
    # What finds its lines; None where the Markdown reader applies the rule itself.
    detector: Detector | None = None
    penalties_read: bool = False  # a penalty may still quote its lines

    def withholds(self, kind: JudgeKind) -> bool:
        return kind in self.withholds_from


SCREEN_RULES: tuple[ScreenRule, ...] = (
    ScreenRule(
        "hidden_content",
        "admissibility",
        "text a reader of the rendered document never sees: HTML comments and raw HTML"
        " blocks, link targets and titles, reference definitions, image alt text,"
        " collapsed `<details>` blocks (found by the Markdown reader)",
        _ALL,
        warns=False,
    ),
    ScreenRule(
        "instruction",
        "admissibility",
        "a passage that speaks to the evaluator rather than about the incident: asks for"
        " marks or for criteria to be treated as met; makes any request of the grader, a"
        " model or a scoring pipeline; asks a review of the documents (an auditor, a"
        " reviewer, an automated or AI review or check, whoever checks them) for a score"
        " ('record each item as identified', 'should be rated correct', 'please credit');"
        " names the rubric's sub-scores or the checklist's ids with a scoring directive;"
        " fakes a conversation turn or a verdict in the judge's format, or forges an end"
        " or start of document; hidden content is read too. The whole block holding it"
        " is set apart, and a forged end of document sets apart everything up to the next"
        " forged start",
        _ALL,
        warns=True,
        detector=detectors.instructions,
    ),
    ScreenRule(
        "obfuscation",
        "admissibility",
        "a word disguised from matching: an invisible character (zero-width space,"
        " joiner, soft hyphen ...) inside it, or Latin letters mixed with Cyrillic or"
        " Greek look-alikes; the line holding it",
        _ALL,
        warns=True,
        detector=detectors.disguised_words,
        penalties_read=True,  # a disguised fabricated CVE is still a fabrication
    ),
    ScreenRule(
        "other_language",
        "suspicion",
        "a passage of twelve or more words in another language than English: its words"
        " mostly another language's function words ('und', 'nicht'; 'les', 'pour'; 'para',"
        " 'está' ...), or its letters mostly of another script; the other rules read"
        " English only, so a person or an LLM judge should read it",
        _NONE,
        warns=True,
        detector=detectors.other_language,
    ),
    ScreenRule(
        "keyword_stuffing",
        "suspicion",
        "a line that is a dump of checklist terms: three or more distinct terms making up"
        " 85 % of its words, attribution concepts ('brute force') beside the artifacts an"
        " Indicator names or remediation actions, or four or more such terms listed in a"
        " row inside a sentence ('A, B, C, D is not present'), outside code and code spans;"
        " or, anywhere, terms making up 70 % of a line beside the checklist's own CHK ids",
        _KEYWORD,
        warns=True,
        detector=detectors.stuffed_lines,
    ),
    ScreenRule(
        "fake_scores",
        "suspicion",
        "a table that scores the checklist: a header naming two or more of the rubric's"
        " sub-scores (discovery, attribution, correctness, completeness), or a header"
        " naming scores (or both dimensions) over rows holding rubric fractions (x/3,"
        " x/2, full marks) against CHK ids",
        _KEYWORD,
        warns=True,
        detector=detectors.fake_score_tables,
    ),
    ScreenRule(
        "restated_criteria",
        "suspicion",
        "a line that says a checkpoint back: its name and two or more of its terms in a"
        " row with at most three other words and no code span, or its Detection or Plan"
        " criterion nearly whole (three quarters of its words, and at least ten, in a row)",
        _KEYWORD,
        warns=True,
        detector=detectors.restated_criteria,
    ),
    ScreenRule(
        "repeated_passage",
        "suspicion",
        "the same sentence of eight or more words, holding three or more checklist terms,"
        " written three or more times in one document (code excluded)",
        _KEYWORD,
        warns=True,
        detector=detectors.repeated_sentences,
    ),
)

_BY_NAME = {row.name: row for row in SCREEN_RULES}
WARNING_RULES: tuple[str, ...] = tuple(row.name for row in SCREEN_RULES if row.warns)


def rule(name: str) -> ScreenRule:
    return _BY_NAME[name]
