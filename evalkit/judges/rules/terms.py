"""The checklist's terms (Indicators, Attribution and Remediation terms) and how they match.

A term matches case-insensitively at word boundaries, any run of whitespace standing
for its spaces (``term_pattern``); a Remediation command also matches with options
after its first word (``step_pattern``). The text they are matched against is folded
first (see :mod:`.document`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

from ...text.negation import negation_at


@lru_cache(maxsize=4096)
def term_pattern(term: str) -> re.Pattern[str]:
    """Case-insensitive; word boundaries at alphanumeric ends; spaces match any whitespace."""
    term = term.strip()
    body = r"\s+".join(re.escape(part) for part in term.split())
    before = r"(?<!\w)" if term[:1].isalnum() else ""
    after = r"(?!\w)" if term[-1:].isalnum() else ""
    return re.compile(before + body + after, re.IGNORECASE)


_OPTIONS = r"(?:\s+--?[A-Za-z][\w-]*(?:=\S+)?)*"


def step_pattern(term: str) -> re.Pattern[str]:
    """``term_pattern``, but a command term also matches with options after its first word:
    the Remediation term `chown redis:redis` is the step `chown -R redis:redis`."""
    parts = term.split()
    if len(parts) < 2 or not parts[0].isalpha() or parts[1].startswith("-"):
        return term_pattern(term)
    plain = term_pattern(term).pattern
    first = re.escape(parts[0])
    return re.compile(plain.replace(first + r"\s+", first + _OPTIONS + r"\s+", 1), re.I)


def anchor_of(term: str) -> str | None:
    """The longest space-free piece of ``term``, lower-cased: every match of it holds it."""
    parts = term.split()
    return max(parts, key=len).lower() if parts else None


def distinct_terms(terms: Iterable[str]) -> tuple[str, ...]:
    """The distinct non-blank terms, in checklist order."""
    return tuple(dict.fromkeys(term.strip() for term in terms if term.strip()))


def code_list(terms: Iterable[str]) -> str:
    """The terms as a rationale names them: `a`, `b`."""
    return ", ".join(f"`{term}`" for term in terms)


_PLAIN_WORD = re.compile(r"[A-Za-z]+")


def is_specific(term: str) -> bool:
    """A command, a config line or a path (``bind 127.0.0.1``, ``authorized_keys``), not a
    single word (``kill``, ``DROP``, matched in any case) that any section may hold."""
    return _PLAIN_WORD.fullmatch(term) is None


def negated_in(text: str | None, term: str) -> bool:
    """Is ``term`` negated somewhere in ``text`` (the checklist's own words)?

    Negated, not merely supposed: "Checks whether data left the host (flow logs ...)" asks
    for a result, it does not make the absence of flow logs the finding.
    """
    text = text or ""
    return any(
        negation_at(text, match.start(), match.end())
        for match in term_pattern(term).finditer(text)
    )
