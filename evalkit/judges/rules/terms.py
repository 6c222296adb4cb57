"""The checklist's terms (Indicators, Attribution and Remediation terms) and how they match.

A term matches case-insensitively at word boundaries, any run of whitespace standing
for its spaces (``term_pattern``); a Remediation command also matches with options
after its first word (``step_pattern``). The text they are matched against is folded
first (see :mod:`.document`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import replace
from functools import lru_cache

from ...model import Range
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
        negation_at(text, match.start(), match.end()) for match in term_pattern(term).finditer(text)
    )


# Terms derived from a criterion's own words, for an item the checklist gives no
# Indicators or Remediation terms: what the criterion quotes (`...`, "..."), the
# artifacts it names (paths, addresses, ports, CVE ids, key=value, settings in CamelCase),
# and, failing those, the distinctive words of the item's name.
_QUOTED = re.compile(r"`([^`\n]+)`|\"([^\"\n]{2,60})\"")
_ARTIFACT_WORD = re.compile(
    r"(?<![\w/.*-])(?:/[A-Za-z_.][\w.@-]*(?:/[\w.@*-]+)*"  # a path
    r"|\d{1,3}(?:\.\d{1,3}){3}(?:[:/]\d+)?"  # an IPv4 address, with a port or prefix
    r"|\d{2,5}/(?:tcp|udp)"  # a port
    r"|CVE-\d{4}-\d{4,}"
    r"|[A-Za-z_][\w.-]*=[^\s,;)`'\"]+"  # key=value
    r"|[A-Z][a-z]+(?:[A-Z][a-z0-9]+)+)"  # a setting in CamelCase: PasswordAuthentication
    r"(?![\w/-])"
)
_NAME_WORD = re.compile(r"[A-Za-z][\w.-]{3,}")
# Words of a checkpoint's name that name the kind of work, not the finding.
_GENERIC = frozenset(
    "detection identification determination analysis reconstruction check checks review "
    "reviewed inventory attribution source over with from into enabled disabled missing "
    "without weak permitted".split()
)


@lru_cache(maxsize=1024)
def derived_terms(criterion: str | None, name: str) -> tuple[str, ...]:
    """Terms for an item whose checklist line of terms is absent, from its criterion."""
    text = criterion or ""
    found: list[str] = []
    for match in _QUOTED.finditer(text):
        found.append((match.group(1) or match.group(2)).strip())
    found.extend(match.group(0).rstrip(".") for match in _ARTIFACT_WORD.finditer(text))
    if not found:
        found = [word for word in _NAME_WORD.findall(name) if word.lower() not in _GENERIC]
    return distinct_terms(found)


def with_derived_terms(rng: Range) -> tuple[Range, dict[str, str]]:
    """``rng`` with derived Indicators and Remediation terms where an item has none, and,
    per such item, what was derived (for its rationales)."""
    items = []
    derived: dict[str, str] = {}
    for chk in rng.checkpoints:
        notes = []
        if chk.has_detection and not distinct_terms(chk.indicators):
            terms = derived_terms(chk.detection_criteria, chk.name)
            chk = replace(chk, indicators=terms)
            notes.append(f"Indicators {code_list(terms) or 'none'}")
        if chk.has_plan and not distinct_terms(chk.remediation_terms):
            terms = derived_terms(chk.plan_criteria, chk.name)
            chk = replace(chk, remediation_terms=terms)
            notes.append(f"Remediation {code_list(terms) or 'none'}")
        if notes:
            derived[chk.id] = "; ".join(notes)
        items.append(chk)
    return (replace(rng, checkpoints=tuple(items)) if derived else rng), derived
