"""Does a sentence state a mention, or negate, deny, suppose, advise against or only float it?

A judge that matches terms must not count "no xmrig was found" as finding xmrig.
These predicates read the words around a mention ``text[start:end]``, inside its
clause: a negating word or phrase shortly before it ("no xmrig", "there is no
evidence of xmrig"), a denial shortly after it ("xmrig was not found", "ruled
out"), a list such a negation governs ("no xmrig, kworkerd or cron"), a clause
that supposes rather than states ("if we had looked we might have found xmrig"),
advice against a step ("do not run X") and a step only floated ("consider X").

The triggers are data: the regexes and reaches below. Nothing here knows about
checklists, documents or judges; ``docs/rules-judge.md`` (Negation) states the
rules as the offline judge applies them.
"""

from __future__ import annotations

import bisect
import re
from typing import TypeAlias

__all__ = [
    "CONTEXT_CHARS",
    "LIST_ITEM_WORDS",
    "NEGATION_REACH",
    "PHRASE_REACH",
    "ClauseBreaks",
    "advised_against_at",
    "clause_ends",
    "denied_at",
    "hedged_at",
    "negated_at",
    "negation_at",
    "supposed_at",
]

# The starts and the ends of a text's clause breaks (see ``clause_ends``), found once per
# text and passed to every predicate that reads the same text.
ClauseBreaks: TypeAlias = tuple[list[int], list[int]]

_CLAUSE_END = re.compile(r"[;!?]|\.(?=\s|$)|\s[\u2014\u2013-]\s|\u2014")
# Inside a clause, the reach of a negation stops at these (and, before the term, at a
# parenthesis: "never started (the miner" does not negate "miner").
# ("and" too: "fail2ban is not installed and MaxAuthTries is at 6"; a negation that governs
# a list joined by "and" is read by the list rule below.)
_SCOPE_BREAK = re.compile(
    r"[,:|]|\b(?:and|but|however|although|though|whereas|while|yet|except)\b", re.IGNORECASE
)
_PARENTHESIS = re.compile(r"[()]")
# A list inside a clause: its items are separated by commas, "and", "or"; the breaks of
# _SCOPE_BREAK other than the comma end it.
_LIST_ITEM_SEPARATOR = re.compile(r",|\b(?:and|or|nor)\b", re.IGNORECASE)
# A colon is no break inside a list: its items are artifacts such as 03:14:07, SHA256:...
# or "Status: inactive".
_LIST_SCOPE_BREAK = re.compile(
    r"[|]|\b(?:but|however|although|though|whereas|while|yet|except)\b", re.IGNORECASE
)
LIST_ITEM_WORDS = 4  # at most this many words in an item of a list ("Accepted publickey for root")
# A word that makes a piece a clause of its own rather than a list item.
# ("-ed" only in lower case: "Accepted password" and "Failed password" are log strings.)
_LIST_VERB = re.compile(
    r"\b(?i:is|are|was|were|be|been|being|has|have|had|do|does|did|ran|runs?|shows?|showed"
    r"|found|saw|seen|used|uses)\b|\b[a-z]\w*ed\b"
)
NEGATION_REACH = 2  # at most this many words between a negating word and the term
PHRASE_REACH = 5  # ... between a negating phrase and the term, or the term and "ruled out"
_NEGATING_WORD = re.compile(
    r"\b(?:no|not|never|none|nothing|neither|nor|without|cannot|rather\s+than|instead\s+of)\b"
    r"|\b\w+n['\u2019]t\b",
    re.IGNORECASE,
)
_NEGATING_PHRASE = re.compile(
    r"\bno\s+(?:evidence|signs?|traces?|indications?|records?)\b"
    r"|\bnot\s+(?:vulnerable|affected|exploitable)\b"
    r"|\bthere\s+(?:is|are|was|were)\s+no\b"
    r"|\b(?:found|find|finds|saw|see|sees|observed|detected|shows?|showed)\s+no\b"
    r"|\brul(?:e|es|ed|ing)\s+out\b",
    re.IGNORECASE,
)
# After the mention: "xmrig was ruled out", "xmrig is not present", "auditd was never run".
_NEGATED_AFTER = re.compile(
    r"\bruled\s+out\b"
    r"|\b(?:(?:is|was|are|were|has\s+been|have\s+been|had\s+been)\s+(?:not|never)"
    r"|isn't|wasn't|aren't|weren't|hasn't\s+been|haven't\s+been)\s+(?:present|found|observed"
    r"|seen|detected|there|involved|used|run|executed|exploited|installed)\b"
    r"|\bnot\s+(?:present|found|observed|seen|detected|involved)\b"
    r"|\b(?:absent|missing)\b",
    re.IGNORECASE,
)
# A clause that supposes rather than states (ConText's hypothetical and possible):
# "if we had looked we might have found X", "the considerations may include X", "whether X
# ran", "it is possible that X".
_CONDITIONAL = re.compile(
    r"\bif\s+(?:we|i|they|one|you|the\s+\w+)\s+(?:had|were|could|would|did)\b"
    r"|\bhad\s+(?:we|i|they)\b|\b(?:might|could|would|may)\s+(?:have|be)\s+"
    r"(?:found|seen|shown|revealed|observed|detected|been)\b"
    r"|\b(?:might|could|would|may)\s+(?:include|involve|indicate|suggest|point\s+to)\b"
    # ("check whether X" is a check to run, not a supposition)
    r"|(?<!\bcheck\s)(?<!\bchecks\s)(?<!\bverify\s)(?<!\bconfirm\s)(?<!\btest\s)\bwhether\b"
    r"|\bit\s+is\s+(?:possible|conceivable)\s+that\b"
    r"|\bhypothetic\w*|\bwe\s+(?:did\s+not|didn't|never)\s+(?:look|check|examine)\w*",
    re.IGNORECASE,
)
# A question asserts nothing: "Was kworkerd started by cron?"
_QUESTION = re.compile(r"\?\s*$")
_ADVISE_AGAINST = re.compile(
    r"\b(?:do\s+not|never|avoid(?:s|ing)?|instead\s+of|rather\s+than)\b|\bdon['\u2019]t\b",
    re.IGNORECASE,
)
# A step only floated, not planned: "consider X", "look at X later", "maybe X".
_HEDGE = re.compile(
    r"\b(?:consider(?:s|ing)?|look(?:ing)?\s+(?:at|into)|think\s+about|maybe|perhaps"
    r"|possibly|eventually|someday|optionally|if\s+time\s+permits|in\s+the\s+future)\b",
    re.IGNORECASE,
)
_WORD = re.compile(r"\S*[A-Za-z0-9]\S*")


def _words(text: str) -> int:
    """How many words ``text`` holds (runs of non-space with a letter or digit)."""
    return len(_WORD.findall(text))


# Negation reads a few words around a match: this many characters either side is plenty,
# and bounds the work per match whatever the length of the sentence.
CONTEXT_CHARS = 300


def clause_ends(text: str) -> ClauseBreaks:
    """Starts and ends of every clause break of ``text``, found once per text."""
    starts: list[int] = []
    ends: list[int] = []
    for match in _CLAUSE_END.finditer(text):
        starts.append(match.start())
        ends.append(match.end())
    return starts, ends


def _clause_bounds(
    text: str, start: int, end: int, breaks: ClauseBreaks | None = None
) -> tuple[int, int]:
    """The clause of ``text`` around ``[start, end)``: (left, right)."""
    starts, ends = breaks if breaks is not None else clause_ends(text)
    # the last break ending at or before ``start``
    index = bisect.bisect_right(ends, start) - 1
    left = ends[index] if index >= 0 else 0
    after = bisect.bisect_left(starts, end)
    right = starts[after] if after < len(starts) else len(text)
    return left, right


def _scope(text: str, start: int, end: int, breaks: ClauseBreaks | None = None) -> tuple[str, str]:
    """The clause's text before and after ``[start, end)``, each cut at the nearest break."""
    left, right = _clause_bounds(text, start, end, breaks)
    before = text[max(left, start - CONTEXT_CHARS) : start]
    breaks_before = [*_SCOPE_BREAK.finditer(before), *_PARENTHESIS.finditer(before)]
    if breaks_before:
        before = before[max(match.end() for match in breaks_before) :]
    after = text[end : min(right, end + CONTEXT_CHARS)]
    cut = _SCOPE_BREAK.search(after)
    if cut:
        after = after[: cut.start()]
    return before, after


def _cue_within(pattern: re.Pattern[str], before: str, reach: int) -> bool:
    """Does ``pattern`` end at most ``reach`` words before the end of ``before``?"""
    cues = list(pattern.finditer(before))
    return bool(cues) and _words(before[cues[-1].end() :]) <= reach  # the nearest cue


def _is_list(pieces: list[str]) -> bool:
    """Are ``pieces`` the items of a list (a few words each, no verb)?"""
    return all(
        _words(piece) <= LIST_ITEM_WORDS and _LIST_VERB.search(piece) is None for piece in pieces
    )


def _listed_with_negation_before(text: str, start: int, end: int, left: int) -> bool:
    """Is the mention an item of a list a negation governs ("no xmrig, kworkerd or cron")?

    The whole list is negated, not only its first item: read back from the mention to
    the nearest negating cue of its clause, every piece between must be a list item (a
    few words, no verb), and so must the rest of the mention's own item.
    """
    before = text[max(left, start - CONTEXT_CHARS) : start]
    hard = [*_LIST_SCOPE_BREAK.finditer(before), *_PARENTHESIS.finditer(before)]
    if hard:
        before = before[max(match.end() for match in hard) :]
    cues = [*_NEGATING_WORD.finditer(before), *_NEGATING_PHRASE.finditer(before)]
    if not cues:
        return False
    between = before[max(cue.end() for cue in cues) :]
    pieces = _LIST_ITEM_SEPARATOR.split(between)
    if len(pieces) < 2:
        return False  # no separator: the plain reach of the cue decides
    own = _LIST_ITEM_SEPARATOR.split(text[end : min(len(text), end + CONTEXT_CHARS)], maxsplit=1)
    return _is_list(pieces[:-1]) and _words(pieces[-1]) == 0 and _is_list(own[:1])


def _listed_with_negation_after(text: str, end: int, right: int) -> bool:
    """Is the mention an item of a list denied after it ("A, B and C are not present")?"""
    after = text[end : min(right, end + CONTEXT_CHARS)]
    hard = _LIST_SCOPE_BREAK.search(after)
    if hard:
        after = after[: hard.start()]
    negation = _NEGATED_AFTER.search(after)
    if negation is None:
        return False
    pieces = _LIST_ITEM_SEPARATOR.split(after[: negation.start()])
    if len(pieces) < 2:
        return False  # no separator: the plain reach of the denial decides
    return _is_list(pieces[:-1]) and _words(pieces[-1]) <= PHRASE_REACH


def negation_at(text: str, start: int, end: int, breaks: ClauseBreaks | None = None) -> bool:
    """Is the mention ``text[start:end]`` negated (not merely supposed)?

    Negated where a scoped negation stands before it ("no xmrig") or after it ("xmrig
    is not present", "ruled out"), itself or the list it is an item of ("no xmrig,
    kworkerd or cron", "A, B, C is not present").
    """
    before, _ = _scope(text, start, end, breaks)
    if _cue_within(_NEGATING_WORD, before, NEGATION_REACH):
        return True
    if _cue_within(_NEGATING_PHRASE, before, PHRASE_REACH):
        return True
    left, _right = _clause_bounds(text, start, end, breaks)
    if _listed_with_negation_before(text, start, end, left):
        return True
    return _denied_after(text, start, end, breaks)


def negated_at(text: str, start: int, end: int, breaks: ClauseBreaks | None = None) -> bool:
    """Is the mention negated (:func:`negation_at`) or only supposed (:func:`supposed_at`)?"""
    return negation_at(text, start, end, breaks) or supposed_at(text, start, end, breaks)


def _denied_after(text: str, start: int, end: int, breaks: ClauseBreaks | None) -> bool:
    _, after = _scope(text, start, end, breaks)
    negation = _NEGATED_AFTER.search(after)
    if negation is not None and _words(after[: negation.start()]) <= PHRASE_REACH:
        return True
    _left, right = _clause_bounds(text, start, end, breaks)
    return _listed_with_negation_after(text, end, right)


def denied_at(text: str, start: int, end: int, breaks: ClauseBreaks | None = None) -> bool:
    """Is the mention denied after it ("X was not used"), itself or its list, or supposed?"""
    return _denied_after(text, start, end, breaks) or supposed_at(text, start, end, breaks)


def supposed_at(text: str, start: int, end: int, breaks: ClauseBreaks | None = None) -> bool:
    """Is the mention only supposed: is its clause conditional ("if we had looked ..."),
    possible ("may include"), or a question?"""
    left, right = _clause_bounds(text, start, end, breaks)
    clause = text[max(left, start - CONTEXT_CHARS) : min(right, end + CONTEXT_CHARS)]
    if _CONDITIONAL.search(clause) is not None:
        return True
    # The clause break after a question is its "?": a question runs to it.
    return right < len(text) and text[right] == "?" or _QUESTION.search(clause) is not None


def advised_against_at(text: str, start: int, end: int, breaks: ClauseBreaks | None = None) -> bool:
    """Is the mention ``text[start:end]`` advised against ("do not", "never", "avoid" ...)?"""
    before, _ = _scope(text, start, end, breaks)
    return _cue_within(_ADVISE_AGAINST, before, NEGATION_REACH)


def hedged_at(text: str, start: int, end: int, breaks: ClauseBreaks | None = None) -> bool:
    """Is the step ``text[start:end]`` only floated ("consider", "look at", "maybe" ...)?"""
    before, _ = _scope(text, start, end, breaks)
    return _cue_within(_HEDGE, before, PHRASE_REACH)
