"""Passages that look like gaming: suspicion rules.

Each detector reads what a reader of the rendered document sees (the Markdown
reader's blocks), never code blocks: command transcripts, config excerpts and
detection rules are full of checklist terms by nature. Each one is written to
stay silent on the forms honest reports take (findings tables with verdict
columns, IOC lists, timelines, ATT&CK tables, greps), because a suspicion that
fires on honest work costs it points with a keyword judge and buries real
warnings: it must name something an honest report has no reason to contain.

* :meth:`TermIndex.dumped`: a line that is a dump of checklist terms, actions
  and artifacts mixed, or listed beside the checklist's own CHK ids;
* :func:`fake_score_table`: a table that scores the checklist;
* :meth:`TermIndex.restates`: a criterion said back nearly whole (three quarters of
  its words, and at least ten, in a row): an honest report that describes the same
  facts shares phrases with a criterion, not the criterion;
* :func:`repeated_passages`: one term-laden sentence written three times or more.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property, lru_cache

from ..markdown import Block
from ..model import Range
from ..text.fold import fold

__all__ = [
    "DUMP_MIN_SHARE",
    "DUMP_MIN_TERMS",
    "RESTATED_WORDS",
    "TermIndex",
    "TermsKey",
    "fake_score_table",
    "index_of",
    "repeated_passages",
    "terms_key",
]

_TOKEN_EDGES = "`'\"()[]{}<>,;:.!?*_|"
DUMP_MIN_TERMS = 3  # distinct checklist terms on the line
DUMP_MIN_SHARE = 0.85  # of the line's words that belong to a term
DUMP_RUN_MIN = 4  # terms listed in a row, of two classes or more, inside a sentence
DUMP_WITH_ID_MIN_SHARE = 0.7  # ... when the checklist's CHK ids are listed among them
ECHO_MAX_OTHER_WORDS = 3  # words beside a checkpoint's name and terms in a restatement
ECHO_MIN_TERMS = 2
RESTATED_WORDS = 10  # a criterion's words in a row that make a restatement, at least ...
RESTATED_SHARE = 0.75  # ... and this share of the criterion's words
REPEAT_MIN_WORDS = 8
REPEAT_MIN_TERMS = 3
REPEAT_MIN_TIMES = 3

_CHK_ID = re.compile(r"^chk-\d+$")
_ARTIFACT_LIKE = re.compile(r"[\d/.:=@_$]")
_CODE_SPAN = re.compile(r"`[^`\n]*`")
_LIST_PIECES = re.compile(r"[,;|]|\s(?:and|or|nor)\s")


def tokens(text: str) -> list[str]:
    """Lower-cased folded words, without the punctuation around them."""
    return [token for raw in fold(text).lower().split() if (token := raw.strip(_TOKEN_EDGES))]


# Per checkpoint: id, name, Detection and Plan criteria, Indicators, Attribution, Remediation.
TermsKey = tuple[
    tuple[str, str, str, str, tuple[str, ...], tuple[str, ...], tuple[str, ...]],
    ...,
]


def terms_key(rng: Range) -> TermsKey:
    return tuple(
        (
            chk.id,
            chk.name,
            chk.detection_criteria or "",
            chk.plan_criteria or "",
            chk.indicators,
            chk.attribution_terms,
            chk.remediation_terms,
        )
        for chk in rng.checkpoints
    )


@dataclass(frozen=True)
class TermIndex:
    """The checklist's terms by first word, and its criteria as word runs."""

    by_first: dict[str, tuple[tuple[tuple[str, ...], str], ...]]  # word -> (term words, kind)
    words: frozenset[str]  # every word of every term
    criteria_runs: frozenset[tuple[str, ...]]  # every run of a criterion that restates it
    run_starts: Mapping[str, tuple[int, ...]]  # a run's first word -> the lengths of its runs
    names: frozenset[tuple[str, ...]]  # checkpoints' names of two words or more

    @classmethod
    def of(cls, rng: Range) -> TermIndex:
        return index_of(terms_key(rng))

    def _terms_on(self, line_tokens: Sequence[str]) -> tuple[list[tuple[str, ...]], list[str], int]:
        """The terms found (longest first match), their kinds, and the words they cover."""
        found: list[tuple[str, ...]] = []
        kinds: list[str] = []
        covered = 0
        at = 0
        while at < len(line_tokens):
            if _CHK_ID.match(line_tokens[at]):
                found.append((line_tokens[at],))
                kinds.append("id")
                covered += 1
                at += 1
                continue
            best: tuple[tuple[str, ...], str] | None = None
            for words, kind in self.by_first.get(line_tokens[at], ()):
                if tuple(line_tokens[at : at + len(words)]) == words and (
                    best is None or len(words) > len(best[0])
                ):
                    best = (words, kind)
            if best is None:
                at += 1
                continue
            found.append(best[0])
            kinds.append(best[1])
            covered += len(best[0])
            at += len(best[0])
        return found, kinds, covered

    def dumped(self, text: str, *, code: bool = False) -> bool:
        """Is ``text`` a dump of checklist terms rather than something said?

        At least DUMP_MIN_TERMS distinct terms making up DUMP_MIN_SHARE of its words,
        of at least two classes: artifacts (what an Indicator names: a path, an IP, a
        process), concepts (an attribution that is no artifact: "brute force") and
        actions (a Remediation term that is no artifact: "kill"). An IOC list names
        artifacts only, a list of techniques concepts only; a line that mixes them
        with nothing said between is the checklist's hints said back. So is a line of
        terms beside the checklist's own CHK ids, which is also the only dump looked
        for in code (``code``: a code block, and code spans on any line), where
        commands and output mix classes by nature.
        """
        if not code:
            # Backticked commands are code too: a plan's line of commands mixes classes.
            text = _CODE_SPAN.sub(" ", text)
        raw_words = text.split()
        if len(raw_words) < DUMP_MIN_TERMS:
            return False
        # Quick refusal: more words in no term at all than any share allows.
        allowed = (1 - DUMP_WITH_ID_MIN_SHARE) * len(raw_words)
        outside = 0
        for word in raw_words:
            token = fold(word).lower().strip(_TOKEN_EDGES)
            if token and token not in self.words and not _CHK_ID.match(token):
                outside += 1
                if outside > allowed:
                    return not code and self._listed_run(text) >= DUMP_RUN_MIN
        line_tokens = tokens(text)
        found, kinds, covered = self._terms_on(line_tokens)
        distinct = {term for term, kind in zip(found, kinds, strict=True) if kind != "id"}
        if len(distinct) < DUMP_MIN_TERMS:
            return False
        classes = set(kinds)
        if "id" in classes:
            # Terms filed under the checklist's own ids: a word of glue ("verify") per
            # line does not make it a sentence.
            return covered >= DUMP_WITH_ID_MIN_SHARE * len(line_tokens)
        if code:
            return False
        # Attribution concepts beside artifacts or actions, with nothing said between: a
        # command and the settings it shows ("sshd -T: permitrootlogin no") is no dump.
        if "concept" in classes and len(classes) >= 2:
            if covered >= DUMP_MIN_SHARE * len(line_tokens):
                return True
        return self._listed_run(text) >= DUMP_RUN_MIN

    def _listed_run(self, text: str) -> int:
        """The longest run of list pieces (what commas, semicolons, pipes, "and", "or"
        separate) that are each one checklist term, when the run mixes classes.

        "A, B, C, D is not present" or "may include A, B, C, D, and ...": the checklist's
        terms listed inside a sentence that says nothing of them. The run's last piece may
        go on after its term ("D is not present").
        """
        pieces = [p for p in _LIST_PIECES.split(fold(text).lower()) if p.strip()]
        longest = 0
        run: list[str] = []
        for piece in pieces:
            words = tokens(piece)
            found, kinds, covered = self._terms_on(words)
            whole = len(found) == 1 and covered == len(words)
            starts = bool(found) and tuple(words[: len(found[0])]) == found[0]
            if whole or (run and starts):
                run.append(kinds[0])
                if "concept" in run and len(set(run) - {"id"}) >= 2:
                    longest = max(longest, len(run))
                if not whole:
                    run = []
            else:
                run = []
        return longest

    @cached_property
    def _names_by_first(self) -> dict[str, tuple[tuple[str, ...], ...]]:
        # Looked up per token: trying every name at every token is quadratic on a long line.
        by_first: dict[str, list[tuple[str, ...]]] = {}
        for name in sorted(self.names, key=lambda words: (-len(words), words)):  # longest first
            by_first.setdefault(name[0], []).append(name)
        return {first: tuple(names) for first, names in by_first.items()}

    def echoes(self, text: str) -> bool:
        """Does ``text`` say a checkpoint back: its name and its terms, and nothing else?

        "We confirmed mining pool connection (198.51.100.77, xmr.pool.example.net)": a
        checkpoint's name (two words or more), ECHO_MIN_TERMS terms or more one after the
        other, at most ECHO_MAX_OTHER_WORDS other words and no code span. "Cron
        persistence: /etc/cron.d/x runs upd.sh at @reboot" says how the terms relate.
        """
        if "`" in text or not self.names:
            return False
        line_tokens = tokens(text)
        at = 0
        named = False
        rest: list[str] = []
        while at < len(line_tokens):
            name = next(
                (
                    n
                    for n in self._names_by_first.get(line_tokens[at], ())
                    if tuple(line_tokens[at : at + len(n)]) == n
                ),
                None,
            )
            if name is not None:
                named = True
                rest.append("\0")  # a name breaks a run of terms
                at += len(name)
                continue
            rest.append(line_tokens[at])
            at += 1
        if not named:
            return False
        found, kinds, covered = self._terms_on(rest)
        words = sum(1 for token in rest if token != "\0")
        if words - covered > ECHO_MAX_OTHER_WORDS or len(set(found)) < ECHO_MIN_TERMS:
            return False
        return _longest_run(rest, self) >= ECHO_MIN_TERMS

    def restates(self, text: str) -> bool:
        """Does ``text`` say a criterion back: RESTATED_SHARE of its words (at least
        RESTATED_WORDS) in a row?"""
        if not self.criteria_runs:
            return False
        line_tokens = tokens(text)
        # Only where a run can start: slicing at every word for every length is quadratic
        # on a long line.
        return any(
            tuple(line_tokens[at : at + size]) in self.criteria_runs
            for at, word in enumerate(line_tokens)
            for size in self.run_starts.get(word, ())
        )

    def term_count(self, text: str) -> int:
        found, kinds, _ = self._terms_on(tokens(text))
        return len({term for term, kind in zip(found, kinds, strict=True) if kind != "id"})


def _longest_run(line_tokens: Sequence[str], index: TermIndex) -> int:
    """The most terms in a row, with nothing but separators between them."""
    longest = run = 0
    at = 0
    while at < len(line_tokens):
        size = max(
            (
                len(words)
                for words, _kind in index.by_first.get(line_tokens[at], ())
                if tuple(line_tokens[at : at + len(words)]) == words
            ),
            default=0,
        )
        if size:
            run += 1
            longest = max(longest, run)
            at += size
        else:
            run = 0
            at += 1
    return longest


def _starts_of(runs: Iterable[tuple[str, ...]]) -> dict[str, tuple[int, ...]]:
    sizes: dict[str, set[int]] = {}
    for run in runs:
        sizes.setdefault(run[0], set()).add(len(run))
    return {first: tuple(sorted(lengths)) for first, lengths in sizes.items()}


@lru_cache(maxsize=8)
def index_of(key: TermsKey) -> TermIndex:
    indicators: set[tuple[str, ...]] = set()
    attributions: set[tuple[str, ...]] = set()
    actions: set[tuple[str, ...]] = set()
    runs: set[tuple[str, ...]] = set()
    names: set[tuple[str, ...]] = set()
    for _chk_id, name, detection, plan, indicated, attribution, remediation in key:
        if len(named := _words(name)) >= 2:  # a one-word name is a common word
            names.add(named)
        indicators.update(words for term in indicated if (words := _words(term)))
        attributions.update(words for term in attribution if (words := _words(term)))
        actions.update(words for term in remediation if (words := _words(term)))
        for criterion in (detection, plan):
            said = tokens(criterion)
            size = max(RESTATED_WORDS, math.ceil(RESTATED_SHARE * len(said)))
            runs.update(tuple(said[at : at + size]) for at in range(len(said) - size + 1))
    # A term an Indicator names, or one that looks like an artifact (a digit, a path, a
    # key=value), is an artifact wherever it appears; an Attribution term that is none is
    # a concept; a Remediation term that is neither is an action.
    kinds: dict[tuple[str, ...], str] = {}
    # A setting with its value ("PermitRootLogin no", "MaxAuthTries 3") names the same
    # artifact as the setting alone: a line of settings is a config listing, not a dump.
    artifact_heads = {words[0] for words in indicators}
    for words in actions:
        artifact = _ARTIFACT_LIKE.search(" ".join(words)) or words[0] in artifact_heads
        kinds[words] = "artifact" if artifact else "action"
    for words in attributions:
        kinds[words] = "artifact" if _ARTIFACT_LIKE.search(" ".join(words)) else "concept"
    for words in indicators:
        kinds[words] = "artifact"
    by_first: dict[str, list[tuple[tuple[str, ...], str]]] = {}
    for words, kind in kinds.items():
        by_first.setdefault(words[0], []).append((words, kind))
    return TermIndex(
        by_first={first: tuple(terms) for first, terms in by_first.items()},
        words=frozenset(word for words in kinds for word in words),
        criteria_runs=frozenset(runs),
        run_starts=_starts_of(runs),
        names=frozenset(names),
    )


def _words(term: str) -> tuple[str, ...]:
    return tuple(tokens(term))


# --------------------------------------------------------------------------- fake scores

# The rubric's sub-scores that no honest table header needs ("evidence" is an honest
# column name, so it is not one of them).
_RUBRIC_HEADER = re.compile(r"\b(?:discovery|attribution|correctness|completeness)\b", re.I)
_DIMENSION_HEADER = re.compile(r"\b(?:detection|plan)\b", re.I)
_SCORE_HEADER = re.compile(r"\b(?:scores?|points?|marks?|grades?|awarded)\b", re.I)
_RUBRIC_FRACTION = re.compile(r"(?<![\d./])[0-3]\s*/\s*[23](?![\d./])|\bfull\s+marks\b", re.I)
_CHK_CELL = re.compile(r"\bCHK-\d+\b")


def fake_score_table(rows: Sequence[Block]) -> bool:
    """Does a table (its rows, header first) score the checklist?"""
    if len(rows) < 2:
        return False
    header = fold(rows[0].text)
    if len({word.lower() for word in _RUBRIC_HEADER.findall(header)}) >= 2:
        return True
    both_dimensions = len({word.lower() for word in _DIMENSION_HEADER.findall(header)}) == 2
    if not (_SCORE_HEADER.search(header) or both_dimensions):
        return False
    body = [fold(row.text) for row in rows[1:]]
    scored = sum(1 for row in body if _RUBRIC_FRACTION.search(row) and _CHK_CELL.search(row))
    return scored * 2 >= len(body)


# --------------------------------------------------------------------------- repetition

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


def repeated_passages(lines: Iterable[tuple[int, str]], index: TermIndex) -> list[int]:
    """Lines holding a term-laden sentence the document writes REPEAT_MIN_TIMES or more."""
    where: dict[tuple[str, ...], list[int]] = {}
    for number, text in lines:
        for sentence in _SENTENCE_END.split(text):
            words = tuple(tokens(sentence))
            if len(words) >= REPEAT_MIN_WORDS:
                where.setdefault(words, []).append(number)
    counts = Counter({words: len(numbers) for words, numbers in where.items()})
    flagged: set[int] = set()
    for words, count in counts.items():
        if count >= REPEAT_MIN_TIMES and index.term_count(" ".join(words)) >= REPEAT_MIN_TERMS:
            flagged.update(where[words])
    return sorted(flagged)
