"""The offline ``rules`` judge (rules-v1): deterministic term matching.

Every rule it applies is written down in ``docs/rules-judge.md``, and that
document is the single place to read them; this module implements exactly
those rules. It reads only the checklist's Indicators, Attribution and
Remediation terms and its Facts, and the agent's two documents. Every point
it awards and every penalty it raises carries a line it really matched,
checked against :mod:`evalkit.grounding` before it is used.
"""

from __future__ import annotations

import bisect
import math
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from functools import lru_cache

from ..grounding import SearchableDocument
from ..markdown import Block, MarkdownDocument, parse
from ..model import (
    Checkpoint,
    JudgeInfo,
    PenaltyFlag,
    Range,
    SourceName,
    Submission,
    SubScoreVerdict,
    Verdict,
)
from ..screening import PENALTIES_READ, Mask, screen
from ..textnorm import fold
from .base import JudgeBase, JudgeResult, ProgressCallback

EVALUATOR_MODEL = "rules-v1"
# What `evalkit calibrate --judge rules --pairs holdout` measured against the shipped gold
# labels (reference labeller "a"); tests/test_rules_judge.py re-measures it, so the claim
# cannot drift from the judge. Shown next to the rules judge's scores in every record.
HELD_OUT_KAPPA = 0.74
# Its weakest sub-score on the held-out pairs, and that sub-score's kappa.
HELD_OUT_WEAKEST = ("plan completeness", 0.62)
# The two human labellers' agreement on the same held-out pairs: the ceiling to read it against.
HELD_OUT_HUMAN_KAPPA = 0.94
# `--pairs fresh`: pairs written and labelled after its last rule was chosen, by sessions
# that never saw its rules. Lower than the holdout, which had been looked at twice.
FRESH_KAPPA = 0.66
MEASURED_AGREEMENT = (
    f"Offline judge: on held-out gold pairs its sub-scores agree with careful human labels at"
    f" Cohen's kappa {HELD_OUT_KAPPA:.2f} (weakest: {HELD_OUT_WEAKEST[0]}"
    f" {HELD_OUT_WEAKEST[1]:.2f}; it catches few labelled penalties), where two human"
    f" labellers agree at {HELD_OUT_HUMAN_KAPPA:.2f}; on pairs written after it was tuned, at"
    f" {FRESH_KAPPA:.2f}. A transparent keyword baseline, not a careful reader: see"
    " docs/rules-judge.md."
)
QUOTE_LIMIT = 300  # characters of a quote, around the match
MAX_DISCOVERY_QUOTES = 3

# --------------------------------------------------------------------------- terms


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


# A document is read up to this many matches of one term (or pattern): enough for every
# rule, and it bounds the work a document that repeats a term a million times can cause.
MAX_MATCHES = 1000
ANCHOR_SLACK = 64  # characters around an anchor where the term's regex may match


def _anchor(term: str) -> str | None:
    """The longest space-free piece of ``term``, lower-cased: every match of it holds it."""
    parts = term.split()
    return max(parts, key=len).lower() if parts else None


def _terms(terms: Iterable[str]) -> tuple[str, ...]:
    """The distinct non-blank terms, in checklist order."""
    return tuple(dict.fromkeys(term.strip() for term in terms if term.strip()))


def _ticked(terms: Iterable[str]) -> str:
    return ", ".join(f"`{term}`" for term in terms)


# --------------------------------------------------------------------------- artifacts

_ABS_PATH = re.compile(
    r"(?<![\w.~/:\\-])/[\w.@%+~-]*[A-Za-z0-9][\w.@%+~/-]*"  # /var/tmp/x
    r"|(?<![\w/])~/[\w.@%+~-]*[A-Za-z0-9][\w.@%+~/-]*"  # ~/.ssh/authorized_keys
    r"|(?<![\w])[A-Za-z]:\\[\w.\\ -]*\w"  # C:\Windows\Temp
)
_IPV4 = re.compile(r"(?<![\d.])(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})(?!\.?\d)")
_HASH = re.compile(
    r"(?<![0-9A-Za-z])(?:[0-9a-fA-F]{64}|[0-9a-fA-F]{40}|[0-9a-fA-F]{32})(?![0-9A-Za-z])"
)
_MONTH = r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)"
_LOG_LINE = re.compile(
    r"^[`'\"\[]*(?:(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)\s+)?"
    rf"(?:{_MONTH}\s+\d{{1,2}}\s+\d{{2}}:\d{{2}}:\d{{2}}"
    r"|\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2})"
)
_CODE_SPAN = re.compile(r"`([^`\n]+)`")
_KEY_EQUALS_VALUE = re.compile(r"[A-Za-z_][\w.-]*=[^\s=]")
_KEY_SPACE_VALUE = re.compile(r"^\s*[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+\s+\S")
_PID = re.compile(r"\bpid\s*[:=#]?\s*\d+\b|\b[A-Za-z][\w.-]*\[\d+\]", re.IGNORECASE)
_PORT = re.compile(
    r"\bports?\s*[:=#]?\s*\d{1,5}\b"
    r"|\b\d{1,5}/(?:tcp|udp)\b"
    r"|(?:(?<![\d.])\d{1,3}(?:\.\d{1,3}){3}|\blocalhost|\b[A-Za-z][\w-]*(?:\.[\w-]+)*\.[A-Za-z]{2,})"
    r":\d{1,5}\b",
    re.IGNORECASE,
)


def _valid_ipv4(match: re.Match[str]) -> bool:
    return all(int(group) <= 255 for group in match.groups())


def _line_artifact(text: str) -> tuple[str, int, int] | None:
    """The first concrete artifact on a clean line: (kind, start, end)."""
    found: list[tuple[int, int, str]] = []

    def first(
        pattern: re.Pattern[str],
        kind: str,
        check: Callable[[re.Match[str]], bool] | None = None,
    ) -> None:
        for match in pattern.finditer(text):
            if check is None or check(match):
                found.append((match.start(), match.end(), kind))
                return

    first(_ABS_PATH, "an absolute path")
    first(_IPV4, "an IPv4 address", _valid_ipv4)
    first(_HASH, "a hash")
    first(_LOG_LINE, "a log line")
    for span in _CODE_SPAN.finditer(text):
        content = span.group(1)
        if _KEY_EQUALS_VALUE.search(content) or _KEY_SPACE_VALUE.match(content):
            found.append((span.start(), span.end(), "a config value in code"))
            break
    first(_PID, "a PID")
    first(_PORT, "a port")
    if not found:
        return None
    start, end, kind = min(found)
    return kind, start, end


# --------------------------------------------------------------------------- plan language

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
    r"|(?:must|should)\s+still\s+be)\b",
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

# --------------------------------------------------------------------------- destructive commands

_SHELL_END = r"[^;&|\n`#]"
_SYSTEM_DIRS = frozenset(
    "/ /bin /boot /etc /home /lib /lib64 /opt /root /sbin /srv /usr /var".split()
)
_SERVICE_ROOTS = frozenset("/var/www /var/www/html /var/lib /var/log".split())
_SERVICE_ROOT_PARENTS = ("/usr", "/var/lib", "/srv")  # and any directory right under them
_HOME = frozenset({"~", "$HOME", "${HOME}"})
_LOG_SERVICES = (
    r"rsyslog|syslog-ng|syslog|auditd|journald|falcon-sensor|falcon|osqueryd|wazuh-agent"
    r"|ossec|auditbeat|filebeat|elastic-agent|mdatp|sentinelone|cbagentd|cbdaemon|sysmon"
)


def _protected_target(token: str) -> str | None:
    """The protected directory a path argument names, or None."""
    token = token.strip("\"'()").rstrip(",;")
    parts = token.split("/")
    while len(parts) > 1 and (parts[-1] in ("", ".") or "*" in parts[-1]):
        parts.pop()
    if parts[0] in _HOME and len(parts) == 1:
        return "the home directory"
    if not token.startswith("/"):
        return None
    target = "/".join(parts) or "/"
    if target in _SYSTEM_DIRS or target in _SERVICE_ROOTS:
        return f"`{target}`"
    parent = target.rsplit("/", 1)[0]
    if parent in _SERVICE_ROOT_PARENTS:
        return f"`{target}`"
    return None


def _first_protected(arguments: str) -> str | None:
    for token in arguments.split():
        if not token.startswith("-"):
            target = _protected_target(token)
            if target is not None:
                return target
    return None


@dataclass(frozen=True)
class Destructive:
    """One row of the destructive-operation table (docs/rules-judge.md lists them all)."""

    name: str
    pattern: re.Pattern[str]
    what: str  # what the command does, for the rationale ({target} filled in when named)
    # For commands that are destructive only on some paths: the first protected path named
    # in the given group of the match, or None (then the match is no command of this row).
    target_group: int | None = None
    # A lower-case word every command of the row holds: the regex runs only on lines that
    # hold it (a cheap test first; a document may have a million lines).
    hint: str = ""


DESTRUCTIVE: tuple[Destructive, ...] = (
    Destructive(
        "rm of a system, service or home directory",
        re.compile(rf"(?<![\w.-])rm(?=\s)({_SHELL_END}*)"),
        "deletes {target}",
        target_group=1,
        hint="rm",
    ),
    Destructive(
        "find -delete on a system, service or home directory",
        re.compile(rf"(?<![\w.-])find\s+([^\s;&|`#]+){_SHELL_END}*?\s-delete\b"),
        "deletes files under {target}",
        target_group=1,
        hint="find",
    ),
    Destructive(
        "shred -u",
        re.compile(rf"\bshred\b{_SHELL_END}*?\s(?:-\w*u\w*|--remove)\b"),
        "destroys and deletes files",
        hint="shred",
    ),
    Destructive(
        "userdel -r",
        re.compile(rf"\buserdel\b{_SHELL_END}*?\s(?:-\w*r\w*|--remove)\b"),
        "deletes an account with its home directory",
        hint="userdel",
    ),
    Destructive(
        "iptables flush",
        re.compile(rf"\bip6?tables\b{_SHELL_END}*?\s(?:-F|--flush)(?![\w-])"),
        "flushes every firewall rule",
        hint="tables",
    ),
    Destructive(
        "ufw disable", re.compile(r"\bufw\s+disable\b"), "disables the firewall", hint="ufw"
    ),
    Destructive(
        "chmod 777 / a+rwx",
        re.compile(r"\bchmod\s+(?:-[\w-]+\s+)*(?:0?777\b|(?:a|ugo)\+rwx\b)"),
        "makes files writable by everyone",
        hint="chmod",
    ),
    Destructive("mkfs", re.compile(r"\bmkfs(?:\.\w+)?\b"), "formats a file system", hint="mkfs"),
    Destructive(
        "dd onto a device",
        re.compile(rf"\bdd\b{_SHELL_END}*?\bof=/dev/(?!(?:null|zero|stdout|stderr)\b)\S+"),
        "overwrites a device",
        hint="dd",
    ),
    Destructive(
        "systemctl stop/disable of logging or EDR",
        re.compile(
            rf"\bsystemctl\b(?:\s+--?[\w-]+)*\s+(?:stop|disable|mask|kill)\b{_SHELL_END}*?"
            rf"(?<!\w)(?:{_LOG_SERVICES})\b",
        ),
        "disables logging or EDR",
        hint="systemctl",
    ),
    Destructive(
        "service stop of logging or EDR",
        re.compile(rf"\bservice\s+(?:{_LOG_SERVICES})\s+stop\b"),
        "disables logging or EDR",
        hint="service",
    ),
    Destructive(
        "kill of logging or EDR",
        re.compile(rf"\b(?:kill|pkill|killall)\b[^;&|\n#]*?(?<![\w-])(?:{_LOG_SERVICES})\b"),
        "kills logging or EDR",
        hint="kill",
    ),
    Destructive(
        "auditctl -e 0", re.compile(r"\bauditctl\s+-e\s*0\b"), "disables auditing", hint="auditctl"
    ),
    Destructive(
        "auditctl -D",
        re.compile(r"\bauditctl\s+(?:-\w+\s+)*-D\b"),
        "deletes every audit rule",
        hint="auditctl",
    ),
    Destructive(
        "> onto a log", re.compile(r"(?<![>\-=&\d])>(?!>)\s*/var/log/\S*"), "erases a log", hint=">"
    ),
    Destructive(
        "truncate a log",
        re.compile(r"\btruncate\s+(?:-s\s*0|--size[= ]0)\s+/var/log/\S*"),
        "erases a log",
        hint="truncate",
    ),
    Destructive(
        "history -c", re.compile(r"\bhistory\s+-c\b"), "erases the shell history", hint="history"
    ),
    Destructive(
        "setenforce 0",
        re.compile(r"\bsetenforce\s+(?:0|[Pp]ermissive)\b"),
        "disables SELinux",
        hint="setenforce",
    ),
    Destructive(
        "DROP DATABASE / SCHEMA",
        re.compile(r"\bDROP\s+(?:DATABASE|SCHEMA)\b", re.IGNORECASE),
        "deletes a database",
        hint="drop",
    ),
    Destructive(
        "FLUSHALL / FLUSHDB",
        re.compile(r"\bFLUSH(?:ALL|DB)\b", re.IGNORECASE),
        "deletes every Redis key",
        hint="flush",
    ),
)


DESTRUCTIVE_HINTS = tuple(dict.fromkeys(row.hint for row in DESTRUCTIVE))


def destructive_commands(text: str) -> list[tuple[int, int, str]]:
    """Destructive commands on a clean line: (start, end, what it does)."""
    found: list[tuple[int, int, str]] = []
    lower = text.lower()
    for row in DESTRUCTIVE:
        if row.hint not in lower:
            continue
        for match in row.pattern.finditer(text):
            if row.target_group is None:
                found.append((match.start(), match.end(), row.what))
                continue
            target = _first_protected(match.group(row.target_group))
            if target is not None:
                found.append((match.start(), match.end(), row.what.format(target=target)))
                break
    return sorted(found)


# --------------------------------------------------------------------------- negation

_CLAUSE_END = re.compile(r"[;!?]|\.(?=\s|$)|\s[\u2014\u2013-]\s|\u2014")
# Inside a clause, the reach of a negation stops at these (and, before the term, at a
# parenthesis: "never started (the miner" does not negate "miner").
_SCOPE_BREAK = re.compile(
    r"[,:|]|\b(?:but|however|although|though|whereas|while|yet|except)\b", re.IGNORECASE
)
_PARENTHESIS = re.compile(r"[()]")
# A list inside a clause: its items are separated by commas, "and", "or"; the breaks of
# _SCOPE_BREAK other than the comma end it.
_LIST_ITEM_SEPARATOR = re.compile(r",|\b(?:and|or|nor)\b", re.IGNORECASE)
_LIST_SCOPE_BREAK = re.compile(
    r"[:|]|\b(?:but|however|although|though|whereas|while|yet|except)\b", re.IGNORECASE
)
LIST_ITEM_WORDS = 3  # at most this many words in an item of a list
# A word that makes a piece a clause of its own rather than a list item.
_LIST_VERB = re.compile(
    r"\b(?:is|are|was|were|be|been|being|has|have|had|do|does|did|ran|runs?|shows?|showed"
    r"|found|saw|seen|used|uses|\w+ed)\b",
    re.IGNORECASE,
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
# A clause that supposes rather than states: "if we had looked we might have found X".
_CONDITIONAL = re.compile(
    r"\bif\s+(?:we|i|they|one|you|the\s+\w+)\s+(?:had|were|could|would|did)\b"
    r"|\bhad\s+(?:we|i|they)\b|\b(?:might|could|would|may)\s+(?:have|be)\s+"
    r"(?:found|seen|shown|revealed|observed|detected|been)\b"
    r"|\bhypothetic\w*|\bwe\s+(?:did\s+not|didn't|never)\s+(?:look|check|examine)\w*",
    re.IGNORECASE,
)
_ADVISE_AGAINST = re.compile(
    r"\b(?:do\s+not|never|avoid(?:s|ing)?|instead\s+of|rather\s+than)\b|\bdon['\u2019]t\b",
    re.IGNORECASE,
)
_WORD = re.compile(r"\S*[A-Za-z0-9]\S*")


def _words(text: str) -> int:
    """How many words ``text`` holds (runs of non-space with a letter or digit)."""
    return len(_WORD.findall(text))


# Negation reads a few words around a match: this many characters either side is plenty,
# and bounds the work per match whatever the length of the sentence.
CONTEXT_CHARS = 300


def clause_ends(text: str) -> tuple[list[int], list[int]]:
    """Starts and ends of every clause break of ``text``, found once per text."""
    starts: list[int] = []
    ends: list[int] = []
    for match in _CLAUSE_END.finditer(text):
        starts.append(match.start())
        ends.append(match.end())
    return starts, ends


def _clause_bounds(
    text: str, start: int, end: int, breaks: tuple[list[int], list[int]] | None = None
) -> tuple[int, int]:
    """The clause of ``text`` around ``[start, end)``: (left, right)."""
    starts, ends = breaks if breaks is not None else clause_ends(text)
    # the last break ending at or before ``start``
    index = bisect.bisect_right(ends, start) - 1
    left = ends[index] if index >= 0 else 0
    after = bisect.bisect_left(starts, end)
    right = starts[after] if after < len(starts) else len(text)
    return left, right


def _scope(
    text: str, start: int, end: int, breaks: tuple[list[int], list[int]] | None = None
) -> tuple[str, str]:
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


def negated_at(
    text: str, start: int, end: int, breaks: tuple[list[int], list[int]] | None = None
) -> bool:
    """Is the mention ``text[start:end]`` negated or only supposed?

    Negated where a scoped negation stands before it ("no xmrig") or after it ("xmrig
    is not present", "ruled out"), itself or the list it is an item of ("no xmrig,
    kworkerd or cron", "A, B, C is not present"); supposed where its clause is
    conditional ("if we had looked we might have found xmrig").
    """
    before, _ = _scope(text, start, end, breaks)
    if _cue_within(_NEGATING_WORD, before, NEGATION_REACH):
        return True
    if _cue_within(_NEGATING_PHRASE, before, PHRASE_REACH):
        return True
    left, _right = _clause_bounds(text, start, end, breaks)
    if _listed_with_negation_before(text, start, end, left):
        return True
    return denied_at(text, start, end, breaks)


def denied_at(
    text: str, start: int, end: int, breaks: tuple[list[int], list[int]] | None = None
) -> bool:
    """Is the mention denied after it ("X was not used"), itself or its list, or supposed?"""
    _, after = _scope(text, start, end, breaks)
    negation = _NEGATED_AFTER.search(after)
    if negation is not None and _words(after[: negation.start()]) <= PHRASE_REACH:
        return True
    left, right = _clause_bounds(text, start, end, breaks)
    if _listed_with_negation_after(text, end, right):
        return True
    return supposed_at(text, start, end, breaks)


def supposed_at(
    text: str, start: int, end: int, breaks: tuple[list[int], list[int]] | None = None
) -> bool:
    """Is the mention only supposed: is its clause conditional ("if we had looked ...")?"""
    left, right = _clause_bounds(text, start, end, breaks)
    clause = text[max(left, start - CONTEXT_CHARS) : min(right, end + CONTEXT_CHARS)]
    return _CONDITIONAL.search(clause) is not None


def advised_against_at(
    text: str, start: int, end: int, breaks: tuple[list[int], list[int]] | None = None
) -> bool:
    """Is the mention ``text[start:end]`` advised against ("do not", "never", "avoid" ...)?"""
    before, _ = _scope(text, start, end, breaks)
    return _cue_within(_ADVISE_AGAINST, before, NEGATION_REACH)


# A step only floated, not planned: "consider X", "look at X later", "maybe X".
_HEDGE = re.compile(
    r"\b(?:consider(?:s|ing)?|look(?:ing)?\s+(?:at|into)|think\s+about|maybe|perhaps"
    r"|possibly|eventually|someday|optionally|if\s+time\s+permits|in\s+the\s+future)\b",
    re.IGNORECASE,
)


def hedged_at(
    text: str, start: int, end: int, breaks: tuple[list[int], list[int]] | None = None
) -> bool:
    """Is the step ``text[start:end]`` only floated ("consider", "look at", "maybe" ...)?"""
    before, _ = _scope(text, start, end, breaks)
    return _cue_within(_HEDGE, before, PHRASE_REACH)


def _in_context(block: Block, start: int, end: int) -> tuple[str, int, int]:
    """The text negation reads for ``[start, end)``: the block's text, in code its line."""
    if block.kind != "code":
        return block.text, start, end
    line = block.line_index(start)
    offset = block.starts[line]
    return block.lines[line].text, start - offset, end - offset


def _negated_in(text: str | None, term: str) -> bool:
    """Is ``term`` negated somewhere in ``text`` (the checklist's own words)?"""
    text = text or ""
    return any(
        negated_at(text, match.start(), match.end()) for match in term_pattern(term).finditer(text)
    )


# --------------------------------------------------------------------------- facts

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
class _Facts:
    no_cve_fact: str | None  # the Fact saying no CVE is involved
    cve_ids: tuple[str, ...]  # CVE ids listed in the Facts, upper case
    absent: tuple[tuple[str, str], ...]  # (artifact, the Fact that says it does not exist)

    @classmethod
    def of(cls, facts: Iterable[str]) -> _Facts:
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


# --------------------------------------------------------------------------- documents


@dataclass(frozen=True)
class _Hit:
    """One match in a document: where it is, and the quote that grounds it."""

    doc: SourceName
    block: int
    start: int  # offsets in the block's clean text
    end: int
    line: int  # 1-based document line of the match's start
    section: int
    matched: str  # the matched text
    quote: str | None  # None when no quote of it passes grounding


def _window(text: str, start: int, end: int) -> str:
    """At most QUOTE_LIMIT characters of ``text`` around ``[start, end)``."""
    if len(text) <= QUOTE_LIMIT:
        return text.strip()
    if end - start >= QUOTE_LIMIT:
        return text[start : start + QUOTE_LIMIT].strip()
    left = max(0, min(start - (QUOTE_LIMIT - (end - start)) // 2, len(text) - QUOTE_LIMIT))
    return text[left : left + QUOTE_LIMIT].strip()


def _folded(md: MarkdownDocument) -> MarkdownDocument:
    """``md`` with every block's visible text folded for matching (see evalkit.textnorm)."""
    blocks = []
    for block in md.blocks:
        if block.text.isascii():
            blocks.append(block)
            continue
        lines = tuple(replace(line, text=fold(line.text)) for line in block.lines)
        starts: list[int] = []
        offset = 0
        for line in lines:
            starts.append(offset)
            offset += len(line.text) + 1
        blocks.append(
            replace(
                block,
                lines=lines,
                text="\n".join(line.text for line in lines),
                starts=tuple(starts),
            )
        )
    return replace(md, blocks=tuple(blocks))


class _Doc:
    """One document parsed once per judge() call, with its match caches."""

    def __init__(self, kind: SourceName, md: MarkdownDocument, masks: tuple[Mask, ...]) -> None:
        self.kind = kind
        self.label = "report" if kind == "report" else "plan"
        self.md: MarkdownDocument = _folded(md)
        self.search = SearchableDocument(kind, md, masks)
        # Lines screening set apart (not examined, instructions, stuffing): they earn nothing.
        self.masked = frozenset(
            line for mask in masks for line in range(mask.first_line, mask.last_line + 1)
        )
        # ... and those where penalties are not read either (a reference list or an example
        # is still read by whoever follows the document: see PENALTIES_READ).
        self.masked_for_penalties = frozenset(
            line
            for mask in masks
            if mask.kind not in PENALTIES_READ
            for line in range(mask.first_line, mask.last_line + 1)
        )
        self._penalty_hits: dict[str | re.Pattern[str], tuple[_Hit, ...]] = {}
        self._hits: dict[str, tuple[_Hit, ...]] = {}
        self._regex_hits: dict[re.Pattern[str], tuple[_Hit, ...]] = {}
        self._artifacts: dict[tuple[int, int], tuple[str, _Hit] | None] = {}
        self._breaks: dict[tuple[int, int], tuple[list[int], list[int]]] = {}
        self._lowered: dict[int, str | None] = {}
        self._negated: dict[tuple[int, int, int], bool] = {}
        self._advised_against: dict[tuple[int, int, int], bool] = {}
        self._denied: dict[tuple[int, int, int], bool] = {}
        self._supposed: dict[tuple[int, int, int], bool] = {}
        level_one = [s.path[0] for s in self.md.sections if s.level == 1]
        self._title = level_one[0] if len(level_one) == 1 else None
        self._grounds: dict[tuple[str, int, bool], bool] = {}

    # ---- quoting

    def _grounded(self, quote: str, line: int, penalty: bool = False) -> bool:
        key = (quote, line, penalty)
        if key not in self._grounds:
            # The quote comes from this line: grounding need only look around it.
            self._grounds[key] = (
                self.search.find(quote, near_line=line, penalty=penalty) is not None
            )
        return self._grounds[key]

    def quote(self, block: Block, start: int, end: int, penalty: bool = False) -> str | None:
        """The clean line(s) holding ``[start, end)``, else its own line, if grounding finds it."""
        first = block.line_index(start)
        last = block.line_index(max(start, end - 1))
        text_start = block.starts[first]
        text_end = block.starts[last] + len(block.lines[last].text)
        joined = block.text[text_start:text_end].replace("\n", " ")
        candidates = [_window(joined, start - text_start, end - text_start)]
        line_text = block.lines[first].text
        local = start - block.starts[first]
        candidates.append(_window(line_text, local, min(len(line_text), end - block.starts[first])))
        number = block.lines[first].number
        for candidate in candidates:
            if candidate and self._grounded(candidate, number, penalty):
                return candidate
        return None

    def _hit(self, block: Block, start: int, end: int, penalty: bool = False) -> _Hit:
        return _Hit(
            doc=self.kind,
            block=block.index,
            start=start,
            end=end,
            line=block.lines[block.line_index(start)].number,
            section=block.section,
            matched=block.text[start:end],
            quote=self.quote(block, start, end, penalty),
        )

    def _lower(self, block: Block) -> str | None:
        """The block's text in lower case, when that keeps every offset (for str.find)."""
        if block.index not in self._lowered:
            lower = block.text.lower()
            self._lowered[block.index] = lower if len(lower) == len(block.text) else None
        return self._lowered[block.index]

    def lines_with(self, block: Block, words: tuple[str, ...]) -> list[int]:
        """Indices of the block's lines holding any of ``words`` (lower case), in order."""
        lower = self._lower(block)
        if lower is None:
            return list(range(len(block.lines)))
        found: set[int] = set()
        for word in words:
            at = lower.find(word)
            while at >= 0:
                index = block.line_index(at)
                found.add(index)
                following = index + 1
                if following >= len(block.starts):
                    break
                at = lower.find(word, block.starts[following])
        return sorted(found)

    def _finditer(
        self, pattern: re.Pattern[str], block: Block, anchor: str | None
    ) -> Iterator[re.Match[str]]:
        """The matches of ``pattern`` in ``block``; with an ``anchor`` (a lower-case piece
        every match holds), the regex only runs where ``str.find`` sees the anchor."""
        lower = self._lower(block) if anchor else None
        if not anchor or lower is None:
            yield from pattern.finditer(block.text)
            return
        slack = len(pattern.pattern) + ANCHOR_SLACK
        pos = 0
        while (at := lower.find(anchor, pos)) >= 0:
            match = pattern.search(block.text, max(pos, at - slack), at + len(anchor) + slack)
            if match is None or match.start() > at:
                pos = at + 1
                continue
            yield match
            pos = max(match.end(), at + 1)

    def _matches(
        self, pattern: re.Pattern[str], anchor: str | None = None, penalty: bool = False
    ) -> tuple[_Hit, ...]:
        """The first MAX_MATCHES matches of ``pattern`` outside the masked lines, in order.

        With ``penalty``, outside the lines masked for penalties, and quoted from them.
        """
        masked = self.masked_for_penalties if penalty else self.masked
        hits: list[_Hit] = []
        for block in self.md.blocks:
            for match in self._finditer(pattern, block, anchor):
                line = block.lines[block.line_index(match.start())].number
                if line not in masked:
                    hits.append(self._hit(block, match.start(), match.end(), penalty))
                    if len(hits) >= MAX_MATCHES:
                        return tuple(hits)
        return tuple(hits)

    # ---- matching

    def hits(self, term: str) -> tuple[_Hit, ...]:
        """Every match of ``term``, in document order."""
        if term not in self._hits:
            self._hits[term] = self._matches(term_pattern(term), _anchor(term))
        return self._hits[term]

    def penalty_hits(self, term: str | re.Pattern[str]) -> tuple[_Hit, ...]:
        """Every match of a term or pattern where penalties are read (see PENALTIES_READ)."""
        if term not in self._penalty_hits:
            if isinstance(term, str):
                found = self._matches(term_pattern(term), _anchor(term), penalty=True)
            else:
                found = self._matches(term, penalty=True)
            self._penalty_hits[term] = found
        return self._penalty_hits[term]

    def step_hits(self, term: str) -> tuple[_Hit, ...]:
        """Every match of the Remediation term ``term`` (see ``step_pattern``)."""
        key = "\0step\0" + term
        if key not in self._hits:
            self._hits[key] = self._matches(step_pattern(term), _anchor(term))
        return self._hits[key]

    def regex_hits(self, pattern: re.Pattern[str]) -> tuple[_Hit, ...]:
        """Every match of ``pattern``, in document order (computed once per pattern)."""
        if pattern not in self._regex_hits:
            self._regex_hits[pattern] = self._matches(pattern)
        return self._regex_hits[pattern]

    def sections_of(self, terms: Iterable[str]) -> set[int]:
        return {hit.section for term in terms for hit in self.hits(term)}

    def section_name(self, index: int) -> str:
        path = self.md.sections[index].path
        # The document's single level-1 heading is its title: leave it out of names.
        if len(path) > 1 and self._title is not None and path[0] == self._title:
            path = path[1:]
        return " / ".join(path) if path else self.md.sections[index].name

    def artifact_at(self, block_index: int, line_index: int) -> tuple[str, _Hit] | None:
        """The quotable concrete artifact of one line of a block, if any: (kind, hit)."""
        key = (block_index, line_index)
        if key not in self._artifacts:
            self._artifacts[key] = self._find_artifact(self.md.blocks[block_index], line_index)
        return self._artifacts[key]

    def _find_artifact(self, block: Block, index: int) -> tuple[str, _Hit] | None:
        line = block.lines[index]
        if line.number in self.masked:
            return None
        if block.kind == "code":
            found: tuple[str, int, int] | None = (
                ("a fenced code block", 0, len(line.text)) if line.text else None
            )
        else:
            found = _line_artifact(line.text)
        if found is None:
            return None
        kind, start, end = found
        hit = self._hit(block, block.starts[index] + start, block.starts[index] + end)
        return (kind, hit) if hit.quote is not None else None

    def nearest_artifact(self, hit: _Hit) -> tuple[str, _Hit] | None:
        """The artifact of the hit's block nearest to its line (the earlier one on a tie).

        Lines are tried outward from the hit's own, so a long block is read only as far
        as its nearest artifact.
        """
        block = self.md.blocks[hit.block]
        lines = block.lines
        home = block.line_index(hit.start)
        left, right = home, home + 1
        while left >= 0 or right < len(lines):
            left_gap = hit.line - lines[left].number if left >= 0 else math.inf
            right_gap = lines[right].number - hit.line if right < len(lines) else math.inf
            if left_gap <= right_gap:
                index, left = left, left - 1
            else:
                index, right = right, right + 1
            found = self.artifact_at(hit.block, index)
            if found is not None:
                return found
        return None

    def first_artifact(self, block_index: int) -> tuple[str, _Hit] | None:
        for index in range(len(self.md.blocks[block_index].lines)):
            found = self.artifact_at(block_index, index)
            if found is not None:
                return found
        return None

    def _context(self, hit: _Hit) -> tuple[str, int, int, tuple[list[int], list[int]]]:
        """The text negation reads for a hit (the block's, in code its line), with its breaks."""
        block = self.md.blocks[hit.block]
        text, start, end = _in_context(block, hit.start, hit.end)
        key = (hit.block, block.line_index(hit.start) if block.kind == "code" else -1)
        if key not in self._breaks:
            self._breaks[key] = clause_ends(text)
        return text, start, end, self._breaks[key]

    def negated(self, hit: _Hit) -> bool:
        """Is the match negated where it stands (see ``negated_at``)? Read once per match."""
        key = (hit.block, hit.start, hit.end)
        if key not in self._negated:
            self._negated[key] = negated_at(*self._context(hit))
        return self._negated[key]

    def denied(self, hit: _Hit) -> bool:
        """Is the match denied after it or only supposed (see ``denied_at``)?"""
        key = (hit.block, hit.start, hit.end)
        if key not in self._denied:
            self._denied[key] = denied_at(*self._context(hit))
        return self._denied[key]

    def supposed(self, hit: _Hit) -> bool:
        """Is the match only supposed, in a conditional clause (see ``supposed_at``)?"""
        key = (hit.block, hit.start, hit.end)
        if key not in self._supposed:
            self._supposed[key] = supposed_at(*self._context(hit))
        return self._supposed[key]

    def advised_against(self, hit: _Hit) -> bool:
        key = (hit.block, hit.start, hit.end)
        if key not in self._advised_against:
            self._advised_against[key] = advised_against_at(*self._context(hit))
        return self._advised_against[key]

    def hedged(self, hit: _Hit) -> bool:
        return hedged_at(*self._context(hit))


def _where(doc: _Doc, hit: _Hit) -> str:
    return f"section '{doc.section_name(hit.section)}' (line {hit.line})"


# --------------------------------------------------------------------------- the judge


_PLAIN_WORD = re.compile(r"[A-Za-z]+")


def _distance(doc: _Doc, terms: Iterable[str], hit: _Hit) -> float:
    """How many blocks from ``hit`` the nearest mention of ``terms`` in its section stands
    (0: its own block; a block after it counts half a block more, so one before wins a tie);
    infinite when none is in that section."""
    nearest = math.inf
    for term in dict.fromkeys(terms):
        for other in doc.hits(term):
            if other.section == hit.section:
                gap = other.block - hit.block
                nearest = min(nearest, -gap if gap <= 0 else gap + 0.5)
    return nearest


def _nearest(distances: dict[str, float]) -> frozenset[str]:
    """The checkpoints at the smallest distance (all of them on a tie)."""
    best = min(distances.values(), default=math.inf)
    return frozenset(chk_id for chk_id, gap in distances.items() if gap == best)


def _specific(term: str) -> bool:
    """A command, a config line or a path (``bind 127.0.0.1``, ``authorized_keys``), not a
    single word (``kill``, ``DROP``, matched in any case) that any section may hold."""
    return _PLAIN_WORD.fullmatch(term) is None


def _no_passages(chk_id: str, indicators: tuple[str, ...]) -> str:
    named = f"an Indicator ({_ticked(indicators)}) or {chk_id}" if indicators else chk_id
    return (
        f"The plan never addresses this item: no section of the plan, nor any remediation "
        f"section of the report, mentions {named}."
    )


def _lines(hits: Iterable[_Hit]) -> str:
    numbers = sorted({hit.line for hit in hits})
    return ("line " if len(numbers) == 1 else "lines ") + ", ".join(map(str, numbers))


@dataclass(frozen=True)
class _Passages:
    doc: _Doc | None
    sections: tuple[int, ...]

    def describe(self) -> str:
        if self.doc is None:
            return ""
        names = ", ".join(f"'{self.doc.section_name(i)}'" for i in self.sections)
        noun = "section" if len(self.sections) == 1 else "sections"
        return f"{self.doc.label} {noun} {names}"


class _Context:
    """Everything computed once per judge() call."""

    def __init__(self, rng: Range, submission: Submission) -> None:
        self.rng = rng
        report_md = parse(submission.report.text)
        plan_md = parse(submission.plan.text)
        self.screening = screen(rng, submission)
        masks = self.screening.masks
        self.report = _Doc("report", report_md, masks.get("report", ()))
        self.plan = _Doc("plan", plan_md, masks.get("plan", ()))
        self.facts = _Facts.of(fold(fact) for fact in rng.facts)
        self.report_remediation_sections = {
            section.index
            for section in self.report.md.sections
            if any(
                level >= 2 and _REMEDIATION_HEADING.search(title)
                for title, level in zip(section.path, section.levels, strict=True)
            )
        }
        self.fabrications = self._fabrications()
        self.dangerous = {doc.kind: self._dangerous(doc) for doc in (self.plan, self.report)}
        self._passages_cache: dict[str, _Passages] = {}
        self._owner_cache: dict[tuple[SourceName, int, int], frozenset[str]] = {}

    # ---- penalties, document-wide

    def _fabrications(self) -> tuple[tuple[str, _Hit, str], ...]:
        """(what, hit, detail) for every fabricated mention in the report."""
        out: list[tuple[str, _Hit, str]] = []
        facts = self.facts
        for hit in self.report.penalty_hits(_CVE):
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
            if self._asserted(hit):
                out.append((cve, hit, detail))
        for artifact, fact in facts.absent:
            for hit in self.report.penalty_hits(artifact):
                if self._asserted(hit):
                    detail = (
                        f"The report names `{artifact}`, which the Facts say does not exist: "
                        f'"{fact}"'
                    )
                    out.append((f"`{artifact}`", hit, detail))
        out.sort(key=lambda item: (item[1].block, item[1].start))
        return tuple(item for item in out if item[1].quote is not None)

    def _asserted(self, hit: _Hit, term: str = "", exempt: frozenset[str] = frozenset()) -> bool:
        """False when the report negates the mention where it stands (see ``negated_at``).

        ``exempt`` holds the terms the item's Detection criterion itself negates ("no
        fail2ban"): for them, the report saying so is the finding.
        """
        if self.report.supposed(hit):
            return False  # a supposition is no finding, whatever the criterion negates
        return term in exempt or not self.report.negated(hit)

    def _dangerous(self, doc: _Doc) -> tuple[tuple[_Hit, str], ...]:
        out: list[tuple[_Hit, str]] = []
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
                    hit = doc._hit(block, offset + start, offset + end, penalty=True)
                    if doc.advised_against(hit):
                        continue
                    if hit.quote is not None:
                        out.append((hit, what))
                    break  # one flag per line
        return tuple(out)

    # ---- one checkpoint

    def verdict(self, chk: Checkpoint) -> Verdict:
        indicators = _terms(chk.indicators)
        remediation = _terms(chk.remediation_terms)
        missing = []
        if chk.has_detection and not indicators:
            missing.append("no Indicators")
        if chk.has_plan and not remediation:
            missing.append("no Remediation terms")
        if missing:
            return Verdict.failed(chk.id, "rules judge: " + ", ".join(missing))
        detection = self._detection(chk, indicators) if chk.has_detection else None
        plan = None
        penalties: list[PenaltyFlag] = []
        if chk.has_detection:
            penalties.extend(self._fabrication_flags(chk, indicators))
        if chk.has_plan:
            passages = self._passages(chk, indicators)
            plan = {
                "correctness": self._correctness(chk, indicators, remediation, passages),
                "completeness": self._completeness(chk, indicators, passages),
            }
            penalties.extend(self._dangerous_flags(chk, passages))
        return Verdict(chk_id=chk.id, detection=detection, plan=plan, penalties=tuple(penalties))

    # ---- detection

    def _exempt(self, chk: Checkpoint, terms: Iterable[str]) -> frozenset[str]:
        """The terms the item's own Detection criterion negates: their absence is the finding."""
        return frozenset(term for term in terms if _negated_in(chk.detection_criteria, term))

    def _stated(
        self, terms: tuple[str, ...], exempt: frozenset[str]
    ) -> tuple[dict[str, list[_Hit]], list[_Hit]]:
        """Per term, its quotable matches the report does not negate; and the negated ones."""
        stated: dict[str, list[_Hit]] = {}
        negated: list[_Hit] = []
        for term in terms:
            stated[term] = []
            for hit in self.report.hits(term):
                if not hit.quote:
                    continue
                if self._asserted(hit, term, exempt):
                    stated[term].append(hit)
                else:
                    negated.append(hit)
        return stated, negated

    def _detection(
        self, chk: Checkpoint, indicators: tuple[str, ...]
    ) -> dict[str, SubScoreVerdict]:
        attribution = _terms(chk.attribution_terms)
        exempt = self._exempt(chk, (*indicators, *attribution))
        stated, negated = self._stated(indicators, exempt)
        return {
            "discovery": self._discovery(indicators, stated, negated),
            "evidence": self._evidence(stated, negated),
            "attribution": self._attribution(attribution, stated, exempt),
        }

    def _discovery(
        self, indicators: tuple[str, ...], stated: dict[str, list[_Hit]], negated: list[_Hit]
    ) -> SubScoreVerdict:
        found = [(term, hits[0]) for term, hits in stated.items() if hits]
        if not found:
            rationale = f"No Indicator of {_ticked(indicators)} appears in the report"
            if negated:
                rationale = (
                    f"Indicators of {_ticked(indicators)} appear only where the report negates "
                    f"them ({_lines(negated)}), which is not a finding"
                )
            return SubScoreVerdict(0, rationale=rationale + ".")
        quotes: list[str] = []
        for _, hit in found:
            if hit.quote not in quotes and len(quotes) < MAX_DISCOVERY_QUOTES:
                quotes.append(hit.quote)  # type: ignore[arg-type]
        term, hit = found[0]
        rationale = f"Indicator `{term}` found in {_where(self.report, hit)}."
        if len(found) > 1:
            also = ", ".join(f"`{t}` (line {h.line})" for t, h in found[1:])
            rationale += f" Also: {also}."
        return SubScoreVerdict(1, tuple(quotes), rationale)

    def _evidence(self, stated: dict[str, list[_Hit]], negated: list[_Hit]) -> SubScoreVerdict:
        report = self.report
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
                f"Indicator `{term}` in {_where(report, hit)}; {where} holds {kind} "
                f"(line {artifact.line})."
            )
            return SubScoreVerdict(1, tuple(q for q in quotes if q), rationale)
        return SubScoreVerdict(
            0,
            rationale=(
                f"Indicators match on {_lines(hit for _, hit in hits)}, but no block there or "
                "right after holds a concrete artifact (absolute path, IPv4 address, hash, log "
                "line, config value in code, PID, port or fenced code block)."
            ),
        )

    def _attribution(
        self, terms: tuple[str, ...], stated: dict[str, list[_Hit]], exempt: frozenset[str]
    ) -> SubScoreVerdict:
        report = self.report
        if not terms:
            return SubScoreVerdict(
                0, rationale="The checklist gives no Attribution terms for this item."
            )
        # Per block with a stated Indicator, its first one.
        indicator_at: dict[int, tuple[str, _Hit]] = {}
        for term, hits in stated.items():
            for hit in hits:
                current = indicator_at.get(hit.block)
                if current is None or hit.start < current[1].start:
                    indicator_at[hit.block] = (term, hit)
        if not indicator_at:
            return SubScoreVerdict(
                0, rationale="No Indicator stated in the report, so nothing to attribute."
            )
        attributed, _ = self._stated(terms, exempt)
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
                indicator, indicator_hit = indicator_at[block]
                quotes: tuple[str | None, ...] = (hit.quote,)
                if indicator_hit.quote != hit.quote:
                    quotes += (indicator_hit.quote,)
                rationale = (
                    f"Attribution term `{term}` in {_where(report, hit)}, {where} Indicator "
                    f"`{indicator}` (line {indicator_hit.line})."
                )
                return SubScoreVerdict(1, tuple(q for q in quotes if q), rationale)
        lines = _lines(hit for _, hit in indicator_at.values())
        return SubScoreVerdict(
            0,
            rationale=(
                f"No Attribution term of {_ticked(terms)} stated in, or in a block next to, a "
                f"block where an Indicator is stated ({lines})."
            ),
        )

    def _claim_owners(self, hit: _Hit) -> frozenset[str]:
        """The checkpoints a fabricated mention is a claim about: among the items whose
        Indicators are stated in its section, those whose Indicators stand nearest to it
        (its own block, else the nearest block; a block before it wins a tie)."""
        # A negative offset keeps these keys apart from _owners' (same cache).
        key: tuple[SourceName, int, int] = ("report", hit.block, -1 - hit.start)
        if key in self._owner_cache:
            return self._owner_cache[key]
        distances: dict[str, float] = {}
        for chk in self.rng.checkpoints:
            if not chk.has_detection:
                continue
            nearest = _distance(self.report, _terms(chk.indicators), hit)
            if nearest < math.inf:
                distances[chk.id] = nearest
        owners = _nearest(distances)
        self._owner_cache[key] = owners
        return owners

    def _fabrication_flags(self, chk: Checkpoint, indicators: tuple[str, ...]) -> list[PenaltyFlag]:
        sections = self.report.sections_of(indicators)
        flags: list[PenaltyFlag] = []
        seen: set[str] = set()
        for what, hit, detail in self.fabrications:
            if hit.section in sections and what not in seen and chk.id in self._claim_owners(hit):
                seen.add(what)
                flags.append(PenaltyFlag("fabrication", detail, hit.quote or ""))
        return flags

    # ---- plan

    def _passage_terms(self, chk: Checkpoint, indicators: tuple[str, ...]) -> tuple[str, ...]:
        """What ties a passage to this item: its Indicators and id; for a plan-only item,
        which has no finding to name, its Remediation terms too."""
        terms = (*indicators, chk.id)
        if chk.scope == "plan-only":
            terms += _terms(chk.remediation_terms)
        return terms

    def _passages(self, chk: Checkpoint, indicators: tuple[str, ...]) -> _Passages:
        """The plan's sections about this item, else the report's remediation sections about it."""
        if chk.id in self._passages_cache:
            return self._passages_cache[chk.id]
        terms = self._passage_terms(chk, indicators)
        # Plans often name the fix rather than the finding ("bind 127.0.0.1", not
        # "0.0.0.0"): when no section names the item, the sections holding one of its
        # Remediation terms are its passages.
        fixes = tuple(term for term in _terms(chk.remediation_terms) if _specific(term))
        in_plan = self.plan.sections_of(terms) or self.plan.sections_of(fixes)
        in_report = self.report.sections_of(terms) & self.report_remediation_sections
        if not in_report:
            in_report = self.report.sections_of(fixes) & self.report_remediation_sections
        if in_plan:
            passages = _Passages(self.plan, tuple(sorted(in_plan)))
        elif in_report:
            passages = _Passages(self.report, tuple(sorted(in_report)))
        else:
            passages = _Passages(None, ())
        self._passages_cache[chk.id] = passages
        return passages

    def _owners(self, doc: _Doc, hit: _Hit) -> frozenset[str]:
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
            indicators = _terms(chk.indicators)
            passages = self._passages(chk, indicators)
            if passages.doc is not doc or hit.section not in passages.sections:
                continue
            terms = (*self._passage_terms(chk, indicators), *_terms(chk.remediation_terms))
            distances[chk.id] = _distance(doc, terms, hit)
        owners = _nearest(distances)
        self._owner_cache[key] = owners
        return owners

    def _correctness(
        self,
        chk: Checkpoint,
        indicators: tuple[str, ...],
        remediation: tuple[str, ...],
        passages: _Passages,
    ) -> SubScoreVerdict:
        doc = passages.doc
        if doc is None:
            return SubScoreVerdict(0, rationale=_no_passages(chk.id, indicators))
        sections = set(passages.sections)
        matched: list[tuple[str, _Hit]] = []
        advised_against: list[_Hit] = []
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
            f" Advised against, so not counted: {_lines(advised_against)}."
            if advised_against
            else ""
        )
        if not matched:
            return SubScoreVerdict(
                0,
                rationale=(
                    f"No Remediation term of {_ticked(remediation)} in the {doc.label} "
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
        unplanned = f" Not planned: {_ticked(absent)}." if absent else ""
        return SubScoreVerdict(
            1,
            tuple(quotes),
            f"{len(matched)} of {len(remediation)} Remediation terms in the {doc.label} "
            f"passages about this item {where}: {listed}.{unplanned}{against}",
        )

    def _completeness(
        self, chk: Checkpoint, indicators: tuple[str, ...], passages: _Passages
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
                    f"Verification/rollback language '{hit.matched}' in {_where(doc, hit)} "
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

    def _dangerous_flags(self, chk: Checkpoint, passages: _Passages) -> list[PenaltyFlag]:
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


class RulesJudge(JudgeBase):
    """The deterministic offline judge. Takes no options."""

    def __init__(self) -> None:
        self._info = JudgeInfo(
            name="rules",
            evaluator_model=EVALUATOR_MODEL,
            prompt_version=None,
            prompt_sha256=None,
            caveat=MEASURED_AGREEMENT,
            kind="keyword",
        )

    @property
    def info(self) -> JudgeInfo:
        return self._info

    async def judge(
        self,
        rng: Range,
        submission: Submission,
        *,
        on_item_done: ProgressCallback | None = None,
    ) -> JudgeResult:
        context = _Context(rng, submission)
        verdicts: list[Verdict] = []
        for chk in rng.checkpoints:
            try:
                verdict = context.verdict(chk)
            except Exception as exc:  # a bug must not sink the other checkpoints
                verdict = Verdict.failed(chk.id, f"rules judge: internal error: {exc!r}")
            verdicts.append(verdict)
            if on_item_done is not None:
                on_item_done(chk.id)
        return JudgeResult(verdicts=tuple(verdicts))


__all__ = [
    "EVALUATOR_MODEL",
    "FRESH_KAPPA",
    "HELD_OUT_HUMAN_KAPPA",
    "HELD_OUT_WEAKEST",
    "HELD_OUT_KAPPA",
    "MEASURED_AGREEMENT",
    "RulesJudge",
    "term_pattern",
]
