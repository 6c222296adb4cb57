"""The detection sub-scores, read from the report: discovery, evidence, attribution.

Discovery: an Indicator the report states (not negates, not only supposes). Evidence:
a concrete artifact (see :mod:`.artifacts`) in the block of a stated Indicator or the
block right after it. Attribution: an Attribution term stated in the block of a stated
Indicator or a block next to it. ``docs/rules-judge.md`` (Detection) states each rule.
"""

from __future__ import annotations

from collections.abc import Iterable

from ...model import Checkpoint, SubScoreVerdict
from .document import DocumentView, Hit, describe_lines
from .terms import code_list, distinct_terms, negated_in

MAX_DISCOVERY_QUOTES = 3


def _exempt(chk: Checkpoint, terms: Iterable[str]) -> frozenset[str]:
    """The terms the item's own Detection criterion negates: their absence is the finding."""
    return frozenset(term for term in terms if negated_in(chk.detection_criteria, term))


def _stated(
    report: DocumentView, terms: tuple[str, ...], exempt: frozenset[str]
) -> tuple[dict[str, list[Hit]], list[Hit]]:
    """Per term, its quotable matches the report does not negate; and the negated ones."""
    stated: dict[str, list[Hit]] = {}
    negated: list[Hit] = []
    for term in terms:
        stated[term] = []
        for hit in report.hits(term):
            if not hit.quote:
                continue
            if report.asserted(hit, negation_is_finding=term in exempt):
                stated[term].append(hit)
            else:
                negated.append(hit)
    return stated, negated


def detection_scores(
    report: DocumentView, chk: Checkpoint, indicators: tuple[str, ...]
) -> dict[str, SubScoreVerdict]:
    """The item's discovery, evidence and attribution, read from the report."""
    attribution = distinct_terms(chk.attribution_terms)
    exempt = _exempt(chk, (*indicators, *attribution))
    stated, negated = _stated(report, indicators, exempt)
    return {
        "discovery": _discovery(report, indicators, stated, negated),
        "evidence": _evidence(report, stated, negated),
        "attribution": _attribution(report, attribution, stated, exempt),
    }


def _discovery(
    report: DocumentView,
    indicators: tuple[str, ...],
    stated: dict[str, list[Hit]],
    negated: list[Hit],
) -> SubScoreVerdict:
    found = [(term, hits[0]) for term, hits in stated.items() if hits]
    if not found:
        rationale = f"No Indicator of {code_list(indicators)} appears in the report"
        if negated:
            rationale = (
                f"Indicators of {code_list(indicators)} appear only where the report negates "
                f"them ({describe_lines(negated)}), which is not a finding"
            )
        return SubScoreVerdict(0, rationale=rationale + ".")
    quotes: list[str] = []
    for _, hit in found:
        if hit.quote not in quotes and len(quotes) < MAX_DISCOVERY_QUOTES:
            quotes.append(hit.quote)  # type: ignore[arg-type]
    term, hit = found[0]
    rationale = f"Indicator `{term}` found in {report.where(hit)}."
    if len(found) > 1:
        also = ", ".join(f"`{t}` (line {h.line})" for t, h in found[1:])
        rationale += f" Also: {also}."
    return SubScoreVerdict(1, tuple(quotes), rationale)


def _evidence(
    report: DocumentView, stated: dict[str, list[Hit]], negated: list[Hit]
) -> SubScoreVerdict:
    hits = sorted(
        ((term, hit) for term, term_hits in stated.items() for hit in term_hits),
        key=lambda item: (item[1].block, item[1].start),
    )
    if not hits:
        why = " stated" if negated else ""
        return SubScoreVerdict(
            0, rationale=f"No Indicator{why} in the report, so no evidence tied to one."
        )
    blocks = len(report.md.blocks)
    for term, hit in hits:
        found = report.nearest_artifact(hit)
        where = "the same block"
        if found is None and hit.block + 1 < blocks:
            found = report.first_artifact(hit.block + 1)
            where = "the block right after it"
        if found is None:
            continue
        kind, artifact = found
        quotes = (hit.quote,) if artifact.quote == hit.quote else (hit.quote, artifact.quote)
        rationale = (
            f"Indicator `{term}` in {report.where(hit)}; {where} holds {kind} "
            f"(line {artifact.line})."
        )
        return SubScoreVerdict(1, tuple(q for q in quotes if q), rationale)
    return SubScoreVerdict(
        0,
        rationale=(
            f"Indicators match on {describe_lines(hit for _, hit in hits)}, but no block there or "
            "right after holds a concrete artifact (absolute path, IPv4 address, hash, log "
            "line, config value in code, PID, port or fenced code block)."
        ),
    )


def _tied(
    report: DocumentView, term: str, hit: Hit, indicator: str, indicator_hit: Hit, how: str
) -> SubScoreVerdict:
    """The attribution point: an Attribution term ``how`` near (or with) a stated Indicator,
    quoting both where they are different passages."""
    quotes = (hit.quote,) if indicator_hit.quote == hit.quote else (hit.quote, indicator_hit.quote)
    rationale = (
        f"Attribution term `{term}` in {report.where(hit)}, {how} Indicator "
        f"`{indicator}` (line {indicator_hit.line})."
    )
    return SubScoreVerdict(1, tuple(q for q in quotes if q), rationale)


def _attribution(
    report: DocumentView,
    terms: tuple[str, ...],
    stated: dict[str, list[Hit]],
    exempt: frozenset[str],
) -> SubScoreVerdict:
    if not terms:
        return SubScoreVerdict(
            0, rationale="The checklist gives no Attribution terms for this item."
        )
    # Per block with a stated Indicator, its first one.
    indicator_at: dict[int, tuple[str, Hit]] = {}
    for term, hits in stated.items():
        for hit in hits:
            current = indicator_at.get(hit.block)
            if current is None or hit.start < current[1].start:
                indicator_at[hit.block] = (term, hit)
    if not indicator_at:
        return SubScoreVerdict(
            0, rationale="No Indicator stated in the report, so nothing to attribute."
        )
    attributed, _ = _stated(report, terms, exempt)
    candidates = sorted(
        ((term, hit) for term, hits in attributed.items() for hit in hits),
        key=lambda item: (item[1].block, item[1].start),
    )
    for term, hit in candidates:
        for block, where in (
            (hit.block, "the same block as"),
            (hit.block - 1, "the block after"),
            (hit.block + 1, "the block before"),
        ):
            if block not in indicator_at:
                continue
            return _tied(report, term, hit, *indicator_at[block], where)
    # A report often ties its findings to their cause in the section that presents them,
    # not in the very block ("## Weaknesses that made it possible": a table of findings,
    # then the chain in prose): the same top section under the title counts too.
    by_section = {report.top_section(hit): (t, hit) for t, hit in indicator_at.values()}
    for term, hit in candidates:
        if report.top_section(hit) in by_section:
            indicator, indicator_hit = by_section[report.top_section(hit)]
            return _tied(report, term, hit, indicator, indicator_hit, "in the same section as")
    lines = describe_lines(hit for _, hit in indicator_at.values())
    return SubScoreVerdict(
        0,
        rationale=(
            f"No Attribution term of {code_list(terms)} stated in, or in a block next to, a "
            f"block where an Indicator is stated, nor in its section ({lines})."
        ),
    )
