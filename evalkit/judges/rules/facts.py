"""Contradictions with the range's Facts: the fabrication penalty.

The report fabricates when it asserts what the Facts rule out: a CVE id that is not
among the Facts' (or any CVE, where a Fact says none is involved), or an artifact a
Fact says does not exist. A fabricated mention is a claim about the checkpoints whose
Indicators stand nearest to it in its section, and zeroes their detection.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass

from ...model import Checkpoint, PenaltyFlag, Range
from ...text.fold import fold
from .document import DocumentView, Hit, nearest
from .terms import distinct_terms

# Matched in folded text, so a Cyrillic С, a Unicode hyphen or a zero-width space does not
# hide an id; "CVE 2024-6387" and "CVE2024-6387" are the same id (see ``cve_id``).
_CVE = re.compile(r"(?<![\w-])CVE[-\s]?\d{4}-\d{4,}(?!\d)", re.IGNORECASE)


def cve_id(mention: str) -> str:
    """The canonical form of a CVE mention: ``CVE-YYYY-NNNN``, upper case."""
    return re.sub(r"^CVE[-\s]?", "CVE-", mention.upper())


_NO_CVE = re.compile(r"\bno\s+CVEs?\b", re.IGNORECASE)
_ABSENCE = re.compile(
    r"^\s*(?:no\s|there\s+(?:is|are)\s+no\s)|\bdo(?:es)?\s+not\s+exist\b|\bnot\s+present\b",
    re.IGNORECASE,
)
_BACKTICKED = re.compile(r"`([^`]+)`")


@dataclass(frozen=True)
class Facts:
    """What the range's Facts rule out, read from the folded Facts."""

    no_cve_fact: str | None  # the Fact saying no CVE is involved
    cve_ids: tuple[str, ...]  # CVE ids listed in the Facts, upper case
    absent: tuple[tuple[str, str], ...]  # (artifact, the Fact that says it does not exist)

    @classmethod
    def of(cls, facts: Iterable[str]) -> Facts:
        no_cve: str | None = None
        cve_ids: list[str] = []
        absent: list[tuple[str, str]] = []
        for fact in facts:
            for match in _CVE.finditer(fact):
                if cve_id(match.group(0)) not in cve_ids:
                    cve_ids.append(cve_id(match.group(0)))
            if no_cve is None and _NO_CVE.search(fact):
                no_cve = fact.strip()
            if _ABSENCE.search(fact):
                for term in _BACKTICKED.findall(fact):
                    if term.strip() and all(term.strip() != seen for seen, _ in absent):
                        absent.append((term.strip(), fact.strip()))
        return cls(no_cve, tuple(cve_ids), tuple(absent))


@dataclass(frozen=True)
class Fabrication:
    """A mention of the report that the Facts contradict."""

    what: str  # the CVE id, or the absent artifact in backticks
    hit: Hit
    detail: str  # what the Facts say against it


def find_fabrications(report: DocumentView, facts: Facts) -> tuple[Fabrication, ...]:
    """Every fabricated mention the report asserts, quotable, in document order."""
    out: list[Fabrication] = []
    for hit in report.penalty_hits(_CVE):
        cve = cve_id(hit.matched)
        if facts.cve_ids:
            if cve in facts.cve_ids:
                continue
            detail = (
                f"The report names {cve}, which is not among the CVE ids in the Facts "
                f"({', '.join(facts.cve_ids)})."
            )
        elif facts.no_cve_fact is not None:
            detail = f'The report names {cve}, but the Facts say: "{facts.no_cve_fact}"'
        else:
            continue
        if report.asserted(hit):
            out.append(Fabrication(cve, hit, detail))
    for artifact, fact in facts.absent:
        for hit in report.penalty_hits(artifact):
            if report.asserted(hit):
                detail = (
                    f'The report names `{artifact}`, which the Facts say does not exist: "{fact}"'
                )
                out.append(Fabrication(f"`{artifact}`", hit, detail))
    out.sort(key=lambda found: (found.hit.block, found.hit.start))
    return tuple(found for found in out if found.hit.quote is not None)


class FabricationRule:
    """The report's fabricated mentions, found once per judge() call, and the flags they
    raise on each checkpoint."""

    def __init__(self, rng: Range, report: DocumentView) -> None:
        self.rng = rng
        self.report = report
        self.fabrications = find_fabrications(report, Facts.of(fold(f) for f in rng.facts))
        self._owners: dict[tuple[int, int], frozenset[str]] = {}

    def _claim_owners(self, hit: Hit) -> frozenset[str]:
        """The checkpoints a fabricated mention is a claim about: among the items whose
        Indicators are stated in its section, those whose Indicators stand nearest to it
        (its own block, else the nearest block; a block before it wins a tie)."""
        key = (hit.block, hit.start)
        if key in self._owners:
            return self._owners[key]
        distances: dict[str, float] = {}
        for chk in self.rng.checkpoints:
            if not chk.has_detection:
                continue
            gap = self.report.block_distance(distinct_terms(chk.indicators), hit)
            if gap < math.inf:
                distances[chk.id] = gap
        owners = nearest(distances)
        self._owners[key] = owners
        return owners

    def flags(self, chk: Checkpoint, indicators: tuple[str, ...]) -> list[PenaltyFlag]:
        """The item's fabrication flags: one per fabricated id or artifact mentioned in a
        section where its Indicators are stated, when the mention is a claim about it."""
        sections = self.report.sections_of(indicators)
        flags: list[PenaltyFlag] = []
        seen: set[str] = set()
        for found in self.fabrications:
            hit = found.hit
            if (
                hit.section in sections
                and found.what not in seen
                and chk.id in self._claim_owners(hit)
            ):
                seen.add(found.what)
                flags.append(PenaltyFlag("fabrication", found.detail, hit.quote or ""))
        return flags
