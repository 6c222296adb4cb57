"""The plan sub-scores and the dangerous-advice penalty, read from the item's passages.

An item's passages are the plan's sections about it, else the report's remediation
sections about it. Correctness: one Remediation step planned there (not advised
against, denied, supposed or only floated). Completeness: verification or rollback
language there. Dangerous advice: a destructive command there (see :mod:`.destructive`)
with no risk note in its own block. ``docs/rules-judge.md`` (Plan, Penalties) states
each rule.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from ...model import Checkpoint, PenaltyFlag, Range, SourceName, SubScoreVerdict
from .destructive import DESTRUCTIVE_HINTS, destructive_commands
from .document import DocumentView, Hit, describe_lines, nearest
from .terms import code_list, distinct_terms, is_specific

# Verification or rollback language: what makes a plan complete (docs/rules-judge.md).
_VERIFICATION = re.compile(
    r"\b(?:verif(?:y|ies|ied|ying|ication)"
    r"|confirm(?:s|ed|ing|ation)?"
    r"|check(?:s|ed|ing)?\s+that"
    r"|validat(?:e|es|ed|ing|ion)"
    r"|ensur(?:e|es|ed|ing)"
    r"|re-?run(?:s|ning)?"
    r"|roll(?:s|ed|ing)?[\s-]?backs?"
    r"|restor(?:e|es|ed|ing|ation)"
    r"|back(?:s|ed|ing)?[\s-]?ups?"
    r"|snapshots?"
    r"|monitor(?:s|ed|ing)?"
    r"|test(?:s|ed|ing)?"
    # the outcome a step must show: "# expect: redis", "must print nothing"
    r"|make\s+sure|dry[\s-]?run"
    r"|expect(?:s|ed)?(?=\s*:)"
    r"|(?:must|should)\s+(?:now\s+|still\s+)?(?:print|report|show|answer|return|read|list"
    r"|fail|succeed|be\s+refused|contain|match)"
    r"|(?:must|should)\s+still\s+be"
    # a check named as one: "check with sudo -l -U deploy", "Check:", "re-check"
    r"|(?:re-?)?check(?:s|ed|ing)?\s+(?:with|again|afterwards|whether))\b"
    # ... "Check:" as a label: the word boundary of the alternatives above would need a
    # letter after the colon
    r"|\b(?:re-?)?checks?\s*:",
    re.IGNORECASE,
)

# A risk note, in the destructive command's own block: worded as a note, not a bare "risk".
_RISK_NOTE = re.compile(
    r"\b(?:back(?:s|ed|ing)?[\s-]?ups?|snapshots?|caution|warning|data\s+loss|downtime"
    r"|outage|maintenance\s+windows?|irreversible)\b|\brisks?:|\u26a0",
    re.IGNORECASE,
)
# ... which must state a risk or a safeguard: "(no backup needed)", "-- no downtime" and
# "(risk: none)" say there is none.
_RISK_DENIED_BEFORE = re.compile(
    r"\b(?:no|not|none|without|never|zero|nothing|needn't|don't|doesn't|isn't)\b"
    r"(?:\W+\w+){0,2}\W*$",
    re.IGNORECASE,
)
_RISK_DENIED_AFTER = re.compile(
    r"^\s*(?:none|n/?a|nil|zero|no\b|nothing|low|minimal|negligible|-\s*$|$)", re.IGNORECASE
)


_RISK_WORDS = (
    "back",
    "snapshot",
    "caution",
    "warning",
    "data",
    "downtime",
    "outage",
    "maintenance",
    "irreversible",
    "risk",
    "\u26a0",
)


def _risk_matches(text: str) -> Iterator[re.Match[str]]:
    """The matches of _RISK_NOTE, looked for only where one of its words stands."""
    lower = text.lower()
    if len(lower) != len(text):
        yield from _RISK_NOTE.finditer(text)
        return
    seen = -1
    for word_at in _risk_positions(lower):
        match = _RISK_NOTE.search(text, max(seen + 1, word_at - 1), word_at + 40)
        if match is not None and match.start() > seen:
            seen = match.start()
            yield match


def _risk_positions(lower: str) -> list[int]:
    positions: set[int] = set()
    for word in _RISK_WORDS:
        at = lower.find(word)
        while at >= 0:
            positions.add(at)
            at = lower.find(word, at + 1)
    return sorted(positions)


def risk_note(text: str) -> bool:
    """Does ``text`` hold a risk note that states a risk or a safeguard?"""
    for match in _risk_matches(text):
        before = text[max(0, match.start() - 40) : match.start()]
        if _RISK_DENIED_BEFORE.search(before):
            continue
        if match.group(0).endswith(":") and _RISK_DENIED_AFTER.match(text[match.end() :]):
            continue
        return True
    return False


# A report section about remediation: its heading or a parent heading (level 2 or deeper).
_REMEDIATION_HEADING = re.compile(
    r"\b(?:remediat\w*|recommend\w*|mitigat\w*|containment|response|harden\w*|fix(?:es)?"
    r"|next\s+steps)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Passages:
    """Where a plan item is read: sections of one document (none: the item is not addressed)."""

    doc: DocumentView | None
    sections: tuple[int, ...]

    def describe(self) -> str:
        if self.doc is None:
            return ""
        names = ", ".join(f"'{self.doc.section_name(i)}'" for i in self.sections)
        noun = "section" if len(self.sections) == 1 else "sections"
        return f"{self.doc.label} {noun} {names}"


def _no_passages(chk_id: str, indicators: tuple[str, ...]) -> str:
    named = f"an Indicator ({code_list(indicators)}) or {chk_id}" if indicators else chk_id
    return (
        f"The plan never addresses this item: no section of the plan, nor any remediation "
        f"section of the report, mentions {named}."
    )


def dangerous_steps(doc: DocumentView) -> tuple[tuple[Hit, str], ...]:
    """Every destructive command of ``doc`` with no risk note in its own block, and what it
    does: at most one per line, none where the document advises against it."""
    out: list[tuple[Hit, str]] = []
    for block in doc.md.blocks:
        if risk_note(block.text):
            continue  # the note is in the command's own block
        # Only lines that hold a row's hint word are read line by line.
        candidates = doc.lines_with(block, DESTRUCTIVE_HINTS)
        for index in candidates:
            line = block.lines[index]
            offset = block.starts[index]
            if line.number in doc.masked_for_penalties:
                continue
            for start, end, what in destructive_commands(line.text):
                hit = doc.hit_at(block, offset + start, offset + end, penalty=True)
                if doc.advised_against(hit):
                    continue
                if hit.quote is not None:
                    out.append((hit, what))
                break  # one flag per line
    return tuple(out)


class PlanRules:
    """The plan rules for one (report, plan) pair: what is computed once per judge() call,
    and each item's passages, sub-scores and dangerous-advice flags."""

    def __init__(self, rng: Range, report: DocumentView, plan: DocumentView) -> None:
        self.rng = rng
        self.report = report
        self.plan = plan
        self.report_remediation_sections = {
            section.index
            for section in report.md.sections
            if any(
                level >= 2 and _REMEDIATION_HEADING.search(title)
                for title, level in zip(section.path, section.levels, strict=True)
            )
        }
        self.dangerous = {doc.kind: dangerous_steps(doc) for doc in (plan, report)}
        self._passages_cache: dict[str, Passages] = {}
        self._owner_cache: dict[tuple[SourceName, int, int], frozenset[str]] = {}

    def _passage_terms(self, chk: Checkpoint, indicators: tuple[str, ...]) -> tuple[str, ...]:
        """What ties a passage to this item: its Indicators and id; for a plan-only item,
        which has no finding to name, its Remediation terms too."""
        terms = (*indicators, chk.id)
        if chk.scope == "plan-only":
            terms += distinct_terms(chk.remediation_terms)
        return terms

    def passages(self, chk: Checkpoint, indicators: tuple[str, ...]) -> Passages:
        """The plan's sections about this item, else the report's remediation sections about it."""
        if chk.id in self._passages_cache:
            return self._passages_cache[chk.id]
        terms = self._passage_terms(chk, indicators)
        # Plans often name the fix rather than the finding ("bind 127.0.0.1", not
        # "0.0.0.0"), and often in a section of its own ("Block network"): the sections
        # holding one of the item's specific Remediation terms are its passages too.
        fixes = tuple(term for term in distinct_terms(chk.remediation_terms) if is_specific(term))
        in_plan = self.plan.sections_of(terms) | self.plan.sections_of(fixes)
        in_report = self.report.sections_of(terms) & self.report_remediation_sections
        if not in_report:
            in_report = self.report.sections_of(fixes) & self.report_remediation_sections
        if in_plan:
            passages = Passages(self.plan, tuple(sorted(in_plan)))
        elif in_report:
            passages = Passages(self.report, tuple(sorted(in_report)))
        else:
            passages = Passages(None, ())
        self._passages_cache[chk.id] = passages
        return passages

    def _owners(self, doc: DocumentView, hit: Hit) -> frozenset[str]:
        """The checkpoints whose remediation a destructive line belongs to.

        Among the items whose relevant passages hold the line, those whose own terms
        (id, Indicators, Remediation terms) stand nearest to it in its section: in its
        own block, else the nearest block (a block before it wins a tie with one after).
        """
        key = (doc.kind, hit.block, hit.start)
        if key in self._owner_cache:
            return self._owner_cache[key]
        distances: dict[str, float] = {}
        for chk in self.rng.checkpoints:
            if not chk.has_plan:
                continue
            indicators = distinct_terms(chk.indicators)
            passages = self.passages(chk, indicators)
            if passages.doc is not doc or hit.section not in passages.sections:
                continue
            terms = (*self._passage_terms(chk, indicators), *distinct_terms(chk.remediation_terms))
            distances[chk.id] = doc.block_distance(terms, hit)
        owners = nearest(distances)
        self._owner_cache[key] = owners
        return owners

    def correctness(
        self,
        chk: Checkpoint,
        indicators: tuple[str, ...],
        remediation: tuple[str, ...],
        passages: Passages,
    ) -> SubScoreVerdict:
        doc = passages.doc
        if doc is None:
            return SubScoreVerdict(0, rationale=_no_passages(chk.id, indicators))
        sections = set(passages.sections)
        matched: list[tuple[str, Hit]] = []
        advised_against: list[Hit] = []
        for term in remediation:
            hits = [h for h in doc.step_hits(term) if h.section in sections and h.quote]
            # A step advised against, denied ("X was not used") or only supposed ("if we
            # had ... we could have run X") is not a step of the plan. (A "no" before a term
            # is not read here: "`protected-mode no` becomes `protected-mode yes`".)
            # A step only floated ("consider X", "look at X") is not planned either.
            hit = next(
                (
                    h
                    for h in hits
                    if not doc.advised_against(h) and not doc.denied(h) and not doc.hedged(h)
                ),
                None,
            )
            if hit is not None:
                matched.append((term, hit))
            elif hits:
                advised_against.extend(hits)
        where = f"({passages.describe()})"
        against = (
            f" Advised against, so not counted: {describe_lines(advised_against)}."
            if advised_against
            else ""
        )
        if not matched:
            return SubScoreVerdict(
                0,
                rationale=(
                    f"No Remediation term of {code_list(remediation)} in the {doc.label} "
                    f"passages about this item {where}.{against}"
                ),
            )
        # One planned Remediation step is enough: careful readers count a plan as correct
        # when it takes the item's fix in the right direction, even where it leaves steps
        # out (what it leaves out is completeness). Requiring half the terms instead
        # disagreed with both labellers on the tune split (kappa 0.59 vs a, 0.38 vs b;
        # one step: 0.71 and 0.68).
        listed = ", ".join(f"`{term}` (line {hit.line})" for term, hit in matched)
        quotes: list[str] = []
        for _, hit in matched:
            if hit.quote not in quotes:
                quotes.append(hit.quote)  # type: ignore[arg-type]
        absent = [term for term in remediation if term not in {t for t, _ in matched}]
        unplanned = f" Not planned: {code_list(absent)}." if absent else ""
        return SubScoreVerdict(
            1,
            tuple(quotes),
            f"{len(matched)} of {len(remediation)} Remediation terms in the {doc.label} "
            f"passages about this item {where}: {listed}.{unplanned}{against}",
        )

    def completeness(
        self, chk: Checkpoint, indicators: tuple[str, ...], passages: Passages
    ) -> SubScoreVerdict:
        doc = passages.doc
        if doc is None:
            return SubScoreVerdict(0, rationale=_no_passages(chk.id, indicators))
        sections = set(passages.sections)
        for hit in doc.regex_hits(_VERIFICATION):
            # A heading ("Monitoring") names a kind of work; it checks nothing.
            if doc.md.blocks[hit.block].kind == "heading":
                continue
            if hit.section in sections and hit.quote and not doc.denied(hit):
                return SubScoreVerdict(
                    1,
                    (hit.quote,),
                    f"Verification/rollback language '{hit.matched}' in {doc.where(hit)} "
                    f"of the {doc.label}.",
                )
        return SubScoreVerdict(
            0,
            rationale=(
                "No verification or rollback language (verify, confirm, check that, validate, "
                "ensure, re-run, roll back, restore, back up, snapshot, monitor, test) in the "
                f"{doc.label} passages about this item ({passages.describe()})."
            ),
        )

    def dangerous_flags(self, chk: Checkpoint, passages: Passages) -> list[PenaltyFlag]:
        if passages.doc is None:
            return []
        sections = set(passages.sections)
        doc = passages.doc
        return [
            PenaltyFlag(
                "dangerous_advice",
                f"`{hit.matched}` {what}, with no backup or risk note in its own block "
                f"({doc.label} line {hit.line}).",
                hit.quote or "",
            )
            for hit, what in self.dangerous[doc.kind]
            if hit.section in sections and chk.id in self._owners(doc, hit)
        ]
