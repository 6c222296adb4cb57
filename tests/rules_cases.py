"""Cases for the rules judge's tests: checkpoints, ranges and submissions built in a line,
judged with every quote checked against grounding (``judge``, ``one``)."""

from __future__ import annotations

import asyncio

from evalkit.grounding import DETECTION_SOURCES, PENALTY_SOURCES, PLAN_SOURCES, Sources
from evalkit.judges.rules import RulesJudge
from evalkit.model import Checkpoint, Document, Range, Submission, Verdict


def chk(
    chk_id: str = "CHK-01",
    *,
    scope: str = "both",
    indicators: tuple[str, ...] = ("kworkerd",),
    attribution: tuple[str, ...] = ("SSH", "brute force"),
    remediation: tuple[str, ...] = ("kill", "rm"),
) -> Checkpoint:
    return Checkpoint(
        id=chk_id,
        name=f"{chk_id} name",
        scope=scope,  # type: ignore[arg-type]
        indicators=indicators,
        attribution_terms=attribution,
        remediation_terms=remediation,
    )


def make_range(*checkpoints: Checkpoint, facts: tuple[str, ...] = ()) -> Range:
    return Range(
        id="t",
        title="Test range",
        report="intrusion-report",
        checkpoints=checkpoints or (chk(),),
        facts=facts,
    )


def submission(report: str, plan: str = "# Plan\n") -> Submission:
    return Submission(
        run_id="run",
        range_id="t",
        report=Document("report", "intrusion-report.md", report),
        plan=Document("plan", "remediation-plan.md", plan),
    )


def assert_grounded(verdicts: tuple[Verdict, ...], sub: Submission) -> None:
    """Every quote passes grounding, 0s carry no quotes, 1s carry some, quotes are clean."""
    sources = Sources.of(sub)
    for verdict in verdicts:
        for dimension, allowed in (
            (verdict.detection, DETECTION_SOURCES),
            (verdict.plan, PLAN_SOURCES),
        ):
            for name, claim in (dimension or {}).items():
                assert claim.value in (0, 1)
                assert claim.rationale, (verdict.chk_id, name)
                if claim.value == 0:
                    assert claim.quotes == (), (verdict.chk_id, name)
                    continue
                assert claim.quotes, (verdict.chk_id, name)
                for quote in claim.quotes:
                    assert sources.check(quote, allowed).found, (verdict.chk_id, name, quote)
                    assert_clean(quote)
        for flag in verdict.penalties:
            assert sources.check(flag.quote, PENALTY_SOURCES[flag.rule]).found, flag
            assert_clean(flag.quote)


def assert_clean(quote: str) -> None:
    assert quote == quote.strip()
    assert len(quote) <= 300
    # (A "#" may start a quote: a heading's text never holds its marker, so it is code, a
    # comment line of a script.)
    assert not quote.startswith(("- ", "* ", "> ", "|")), quote
    assert not quote.endswith("|"), quote


def judge(rng: Range, sub: Submission) -> dict[str, Verdict]:
    result = asyncio.run(RulesJudge().judge(rng, sub))
    assert [v.chk_id for v in result.verdicts] == [c.id for c in rng.checkpoints]
    assert_grounded(result.verdicts, sub)
    return {v.chk_id: v for v in result.verdicts}


def one(report: str, plan: str = "# Plan\n", **kwargs) -> Verdict:
    checkpoint = chk(**kwargs)
    return judge(make_range(checkpoint), submission(report, plan))[checkpoint.id]


def det(verdict: Verdict, name: str) -> int:
    assert verdict.detection is not None
    return verdict.detection[name].value


def pln(verdict: Verdict, name: str) -> int:
    assert verdict.plan is not None
    return verdict.plan[name].value


def plan_with(body: str) -> str:
    return f"# Plan\n\n## Miner kworkerd\n\nkill kworkerd and rm the binary.\n\n{body}\n"


# --------------------------------------------------------------------------- a rich sample


RICH_REPORT = """\
# Intrusion report

| Field | Value |
|---|---|
| Host | web-01 |

## Findings

### Miner

- **kworkerd** (PID 4127) runs from `/var/tmp/.cache/kworkerd`; it came in after an
  SSH brute force from 203.0.113.45.
- at 03:18 the service kworkerd started... ok
> kworkerd was flagged by the EDR; attacker used SSH

```
$ ps aux | grep kworkerd
root  4127  392  2.4 /var/tmp/.cache/kworkerd --config=config.json
```

### Persistence

1. [x] `/etc/systemd/system/kworkerd.service` enabled, ExecStart=/var/tmp/.cache/kworkerd

{long}

## Recommendations

- kill 4127, rm /var/tmp/.cache/kworkerd, then verify with ps.
"""


RICH_PLAN = """\
# Remediation plan

## CHK-01 kworkerd

1. `kill -9 4127`
2. `chattr -i /var/tmp/.cache/kworkerd && rm -f /var/tmp/.cache/kworkerd`
3. Confirm with `ps aux | grep kworkerd` that nothing runs.

## CHK-02 persistence

```
systemctl disable --now kworkerd.service
rm -f /etc/systemd/system/kworkerd.service
systemctl stop auditd
```

## CHK-04

Nothing about the firewall yet... see above.
"""


def rich_range() -> Range:
    return make_range(
        chk("CHK-01", remediation=("kill", "rm", "chattr", "ps aux")),
        chk(
            "CHK-02",
            indicators=("kworkerd.service",),
            attribution=("miner",),
            remediation=("systemctl disable", "rm"),
        ),
        chk("CHK-03", scope="detection-only", indicators=("started",), attribution=("ok",)),
        chk("CHK-04", scope="plan-only", indicators=("firewall",), remediation=("ufw",)),
        chk("CHK-05", indicators=("203.0.113.45",), remediation=("DROP",)),
        facts=("No CVE is involved.", "There is no `config.json` outside /var/tmp/.cache."),
    )


def rich_submission() -> Submission:
    long_line = "Long line " + "x " * 200 + "kworkerd in the middle " + "y " * 200
    return submission(RICH_REPORT.replace("{long}", long_line), RICH_PLAN)
