"""Penalty quotes, checked the moment they are selected or typed.

A penalty stands only on a passage found verbatim in the document its rule may
quote (:data:`evalkit.penalties.PENALTY_SOURCES`), with the tolerance grounding
gives a judge's quotes. :func:`check_penalty_quote` asks the one home of those
checks, :func:`evalkit.gold_labels.check_penalty` (what ``evalkit validate`` runs on
every penalty of a file), and adds what a labeller needs to act: where the
quote was found, or why not, and which other document holds it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import cast

from ..gold_labels import LabelPenalty, check_penalty
from ..grounding import Sources
from ..model import SourceName
from ..penalties import PENALTY_SOURCES

__all__ = ["QuoteResult", "check_penalty_quote", "locate"]

DOCUMENT_NAMES: Mapping[str, str] = {"report": "report", "plan": "plan"}


@dataclass(frozen=True)
class QuoteResult:
    """What the labeller is told about one penalty before it may be added."""

    ok: bool  # the penalty stands: check_penalty found no problem
    found: bool  # the quote is verbatim in the chosen document
    line: int | None  # where it starts there (1-based)
    message: str  # one line: found where, or not found and why
    problems: tuple[str, ...]  # every problem check_penalty found
    elsewhere: Mapping[str, int]  # other documents holding it: source -> line
    penalty: LabelPenalty


def locate(quote: str, sources: Sources) -> dict[str, int]:
    """Each document holding ``quote`` verbatim, with the line where it starts."""
    found: dict[str, int] = {}
    kinds: tuple[SourceName, ...] = ("report", "plan")
    for kind in kinds:
        check = sources.check(quote, (kind,))
        if check.found and check.line is not None:
            found[kind] = check.line
    return found


def check_penalty_quote(
    chk_id: str,
    scope: str,
    *,
    rule: str,
    source: str,
    quote: str,
    detail: str,
    sources: Sources,
) -> QuoteResult:
    """Check one penalty as the label file will hold it (see the module docstring)."""
    data = {"rule": rule, "source": source, "quote": quote, "detail": detail}
    problems = tuple(check_penalty(chk_id, data, scope, sources))
    where = locate(quote, sources) if quote.strip() else {}
    line = where.get(source)
    allowed = PENALTY_SOURCES.get(rule, ())
    if not quote.strip():
        message = "no quote yet: select a passage in a document or type it"
    elif line is not None:
        message = f"found verbatim in the {source}, line {line}"
    else:
        message = f"not found verbatim in the {source}"
        reason = (
            sources.why_not(quote, (cast(SourceName, source),))
            if source in DOCUMENT_NAMES
            else None
        )
        if reason:
            message += f": {reason}"
        others = {kind: at for kind, at in where.items() if kind != source}
        for kind, at in others.items():
            fits = kind in allowed
            message += f"; it is in the {kind}, line {at}" + (
                f" (choose the {kind})" if fits else f", which a {rule} may not quote"
            )
    if line is not None and source not in allowed and allowed:
        message += f", but a {rule} penalty quotes the {' or '.join(allowed)}"
    return QuoteResult(
        ok=not problems,
        found=line is not None,
        line=line,
        message=message,
        problems=problems,
        elsewhere={kind: at for kind, at in where.items() if kind != source},
        penalty=LabelPenalty(rule=rule, source=source, quote=quote, detail=detail),
    )
