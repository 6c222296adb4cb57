"""The rubric: what each sub-score and each penalty means, in one place.

The judge (prompt ``v3``'s tables and rules), the labelling guide (``docs/labels.md``,
"How to label"; the labelling brief; the labelling notebook's rubric panel) and the
reports all read these rows, so a labeller and the judge apply the same words and a
calibration measures the judge, not two wordings of the rubric. A sentence changed
here changes every one of them (``tests/test_rubric.py`` renders both and pins the
files to the rendering).

What each penalty zeroes and where its quote may come from stays in
:mod:`evalkit.penalties` (the scoring table); this module holds when it applies.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from .penalties import PENALTY_TABLE, PenaltyRuleSpec

__all__ = [
    "PENALTY_RUBRIC",
    "RUBRIC",
    "SUBSCORE_RUBRIC",
    "PenaltyDefinition",
    "Rubric",
    "SubScoreDefinition",
    "judge_tables",
    "labelling_guide",
]


@dataclass(frozen=True)
class SubScoreDefinition:
    """One sub-score: when it is 1, and what a careful reader must know besides."""

    name: str
    dimension: Literal["detection", "plan"]
    when: str  # "1 when ...": the judge's table cell and the label guide's first sentence
    guidance: str  # the edge cases, as both the judge and the labellers read them


@dataclass(frozen=True)
class PenaltyDefinition:
    """When one penalty rule applies (what it zeroes is in :mod:`evalkit.penalties`)."""

    rule: str
    when: str
    guidance: str

    @property
    def spec(self) -> PenaltyRuleSpec:
        return next(row for row in PENALTY_TABLE if row.name == self.rule)


SUBSCORE_RUBRIC: tuple[SubScoreDefinition, ...] = (
    SubScoreDefinition(
        "discovery",
        "detection",
        "the report itself states the issue the checkpoint describes (for a check such as"
        " lateral movement or exfiltration: states its result)",
        'A finding named only under "Not examined", "Limitations" or "Future work" is not'
        ' discovered; a wrong negation ("no cron persistence") is 0.',
    ),
    SubScoreDefinition(
        "evidence",
        "detection",
        "the report cites a concrete artifact for this finding: command output, a log line, a"
        " config value with its file, a path, a hash, a process, an address",
        'A bare assertion ("fail2ban is not installed", "it connects to the pool") is 0.'
        " Evidence and attribution are 0 when discovery is 0.",
    ),
    SubScoreDefinition(
        "attribution",
        "detection",
        "the report links the finding to the right root cause or attack chain, as the"
        " checkpoint's detection criterion describes",
        "For example the miner tied to the SSH brute force, not to an exploit.",
    ),
    SubScoreDefinition(
        "correctness",
        "plan",
        "the plan's step for this checkpoint does the core remediation the checkpoint asks for"
        " and would work on this host",
        "A `rm` of a file the report shows immutable, with no `chattr -i`, would not work; a vague"
        ' intention ("fix the permissions", "consider TLS") is 0. Plan points do not depend on'
        " the report: a step that meets the plan criterion earns its points whether or not the"
        ' report found the issue (the record marks such a checkpoint as a "blind fix"). A'
        " generic step (a vendor's hardening checklist, a CIS benchmark role the plan applies)"
        " earns them where what it does meets the criterion for this host, and not otherwise.",
    ),
    SubScoreDefinition(
        "completeness",
        "plan",
        "the step also verifies its effect and handles the edge cases and side effects the"
        " checkpoint names",
        "For example: keep a session open, update the client, back up first. Generic"
        ' change-control wording ("test in staging, verify every change") does not verify this'
        " step's effect.",
    ),
)

PENALTY_RUBRIC: tuple[PenaltyDefinition, ...] = (
    PenaltyDefinition(
        "fabrication",
        "the report or plan asserts a CVE, file, log entry, process, user or other artifact of"
        " this environment that a Fact contradicts, or that is evidently invented (a CVE id or a"
        " command output that cannot exist)",
        "Something merely absent from the Facts is not fabrication: the Facts are not a"
        " complete inventory of the environment. A near-miss identifier of an artifact the Facts"
        " contain (a hash with two characters transposed, a port or address one digit off, a"
        " fingerprint with a slip) is a copying slip, not fabrication: the sub-scores stand as"
        " the rest of the finding deserves.",
    ),
    PenaltyDefinition(
        "wrong_attribution",
        "the report attributes the finding to the wrong attack chain or root cause",
        "It applies where the report states a wrong chain or cause; an attribution left open"
        " or missing is an attribution of 0, not a penalty.",
    ),
    PenaltyDefinition(
        "dangerous_advice",
        "the plan contains an operation that could cause data loss or service disruption (`rm"
        " -rf` on system paths, flushing firewall rules, disabling logging or EDR, dropping"
        " databases) without flagging the risk",
        "It belongs to the checkpoint whose remediation the step is part of. A destructive step"
        " with an explicit risk note (and a backup where data is at stake) is not penalised; a"
        " warning a reader of the rendered document never sees is no risk note.",
    ),
)


@dataclass(frozen=True)
class Rubric:
    """The rubric as rendered: sub-scores and penalties, in the SKILL's order."""

    subscores: tuple[SubScoreDefinition, ...] = SUBSCORE_RUBRIC
    penalties: tuple[PenaltyDefinition, ...] = PENALTY_RUBRIC

    def dimension(self, dimension: str) -> tuple[SubScoreDefinition, ...]:
        return tuple(sub for sub in self.subscores if sub.dimension == dimension)


RUBRIC = Rubric()


# The rubric is trusted text written here, kept free of "|" so it sits in a table cell as
# written (tests/test_rubric.py checks it).


def _subscore_table(subs: Sequence[SubScoreDefinition]) -> str:
    rows = ["| Sub-score | Points | 1 when |", "|---|---|---|"]
    rows += [f"| {sub.name} | 0/1 | {sub.when} |" for sub in subs]
    return "\n".join(rows)


def judge_tables(rubric: Rubric = RUBRIC) -> dict[str, str]:
    """The Markdown a judge prompt renders (``{{ rubric.detection_table }}`` ...).

    ``detection_table``, ``plan_table``: the sub-scores; ``subscore_notes``: each
    sub-score's guidance as a bullet; ``penalty_table``: rule, when, effect (the
    effect from :mod:`evalkit.penalties`); ``penalty_notes``: each rule's guidance.
    """
    penalty_rows = [
        "| rule | when | effect (applied by the scoring code, not by you) |",
        "|---|---|---|",
    ]
    penalty_rows += [f"| `{p.rule}` | {p.when} | {p.spec.effect} |" for p in rubric.penalties]
    return {
        "detection_table": _subscore_table(rubric.dimension("detection")),
        "plan_table": _subscore_table(rubric.dimension("plan")),
        "subscore_notes": "\n".join(f"- `{s.name}`: {s.guidance}" for s in rubric.subscores),
        "penalty_table": "\n".join(penalty_rows),
        "penalty_notes": "\n".join(f"- `{p.rule}`: {p.guidance}" for p in rubric.penalties),
    }


def labelling_guide(rubric: Rubric = RUBRIC) -> str:
    """The "How to label" bullets of docs/labels.md, the labelling brief and the notebook."""
    bullets = [
        f"- **{sub.name.capitalize()}** 1 when {sub.when}. {sub.guidance}"
        for sub in rubric.subscores
    ]
    bullets += [f"- **Penalty `{p.rule}`** when {p.when}. {p.guidance}" for p in rubric.penalties]
    return "\n".join(bullets) + "\n"
