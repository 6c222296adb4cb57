"""A/B test of two agents: their runs on the same ranges, scored by the same judge.

Reads the existing evaluation records, ``runs/<run>/<range>/evaluations/<judge>/
scores.json`` (final scores: after grounding and penalties), and sets the two runs
side by side, checkpoint by checkpoint. Detection and plan are never merged:

* per range and pooled over the ranges, overall and per CAP: each run's
  percentage (score / max x 100 over the checkpoints both scored), the difference
  B - A in percentage points with a **paired** bootstrap interval (the same
  resampled checkpoints for both runs; pooled, checkpoints are drawn within each
  range, so every range keeps its size), and McNemar's exact test on the
  sub-score points one run earned and the other did not;
* a verdict per row: B (or A) does better when the interval excludes 0.

A CAP is pooled across ranges only under the same id and name (CAP ids are
local to a checklist). A checkpoint either run errored on is left out of both,
and listed. Two runs scored against different checklists are refused.

:func:`mean_pct_interval` is the leaderboard's interval of a run's mean
percentage over its ranges, by the same resampling of checkpoints.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..bounded import check_name
from ..errors import EvalkitError
from ..model import SUBSCORES
from ..render.mdcell import escape_html, md_cell
from ..workspace import read_json
from .paired import LEVEL, McNemar, PairedDelta, excludes_zero, mcnemar, paired_ratio
from .report_format import (
    Formatted,
    fmt,
    fmt_interval,
    fmt_p,
    markdown_table,
    write_json_and_report,
)
from .resample import stratified_weights
from .stats import DEFAULT_RESAMPLES, DEFAULT_SEED, percentile_interval

__all__ = [
    "DIMENSIONS",
    "JSON_NAME",
    "REPORT_NAME",
    "AgentComparison",
    "AgentRow",
    "Checkpoint",
    "RangeScores",
    "compare_agents",
    "load_range_scores",
    "mean_pct_interval",
    "report_markdown",
    "write_outputs",
]

JSON_NAME = "agents.json"
REPORT_NAME = "agents-report.md"
DIMENSIONS = ("detection", "plan")
POOLED = "pooled"
OVERALL = "overall"
VERBS = {"detection": "detects", "plan": "plans"}


@dataclass(frozen=True)
class Checkpoint:
    """One checkpoint's final scores in one run (None: the dimension is N/A)."""

    chk_id: str
    caps: tuple[str, ...]  # "CAP-01 Process and host forensics"
    detection: tuple[int, int] | None  # (score, max)
    plan: tuple[int, int] | None
    points: Mapping[str, int]  # sub-score -> 0/1 after penalties

    def dimension(self, name: str) -> tuple[int, int] | None:
        value: tuple[int, int] | None = getattr(self, name)
        return value


@dataclass(frozen=True)
class RangeScores:
    """One run's scores.json for one range."""

    run: str
    range: str
    checklist_sha256: str | None
    checkpoints: tuple[Checkpoint, ...]
    errored: tuple[str, ...]
    path: Path


def _tally(block: Mapping[str, Any] | None) -> tuple[int, int] | None:
    if not block:
        return None
    return (int(block["total"]), int(block["max"]))


def load_range_scores(runs_dir: str | Path, run: str, range_id: str, judge: str) -> RangeScores:
    """Read ``runs/<run>/<range>/evaluations/<judge>/scores.json``; missing is an error, and
    so is a name that is not one folder or a file that leads out of the runs folder."""
    for name, what in ((run, "run id"), (range_id, "range"), (judge, "judge")):
        check_name(name, what)
    path = Path(runs_dir) / run / range_id / "evaluations" / judge / "scores.json"
    if not path.is_file():
        raise EvalkitError(
            f"no {judge} evaluation of {run}/{range_id}: run evalkit run --run {run} "
            f"--range {range_id} --judge {judge} first",
            path=path,
        )
    data = read_json(path, runs_dir, what="scores.json")
    try:
        names = {
            cap: str(info.get("name") or "")
            for cap, info in (data["summary"].get("capabilities") or {}).items()
        }
        checkpoints, errored = [], []
        for item in data["checkpoints"]:
            if item.get("status") == "error":
                errored.append(str(item["chk_id"]))
                continue
            points = {
                name: int(block[name])
                for dimension, subs in SUBSCORES.items()
                if (block := item.get(dimension))
                for name in subs
            }
            checkpoints.append(
                Checkpoint(
                    chk_id=str(item["chk_id"]),
                    caps=tuple(f"{cap} {names.get(cap, '')}".strip() for cap in item["cap"]),
                    detection=_tally(item.get("detection")),
                    plan=_tally(item.get("plan")),
                    points=points,
                )
            )
        sha = (data["meta"].get("inputs") or {}).get("checklist_sha256")
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise EvalkitError(f"not a readable scores.json: {exc}", path=path) from exc
    return RangeScores(run, range_id, sha, tuple(checkpoints), tuple(errored), path)


# --------------------------------------------------------------------------- comparing


@dataclass(frozen=True)
class AgentRow:
    """One scope x group x dimension: both runs' percentages and the paired difference."""

    scope: str  # a range id, or "pooled"
    group: str  # "overall", or a CAP ("CAP-01 Process and host forensics")
    dimension: str  # "detection" or "plan"
    pct: PairedDelta
    mcnemar: McNemar
    better: str | None  # the run that does better beyond noise, else None
    verdict: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "scope": self.scope,
            "group": self.group,
            "dimension": self.dimension,
            "checkpoints": self.pct.n,
            "a_pct": self.pct.a,
            "b_pct": self.pct.b,
            "delta_pp": self.pct.delta,
            "a_ci95": None if self.pct.a_interval is None else list(self.pct.a_interval),
            "b_ci95": None if self.pct.b_interval is None else list(self.pct.b_interval),
            "delta_ci95": (
                None if self.pct.delta_interval is None else list(self.pct.delta_interval)
            ),
            "mcnemar": self.mcnemar.to_dict(),
            "better": self.better,
            "verdict": self.verdict,
        }


@dataclass(frozen=True)
class AgentComparison:
    """Two runs compared; :meth:`to_dict` is ``agents.json``."""

    a: str
    b: str
    judge: str
    ranges: tuple[str, ...]
    rows: tuple[AgentRow, ...]
    left_out: tuple[Mapping[str, str], ...]  # checkpoints either run errored on
    resamples: int
    seed: int

    def headline(self) -> list[str]:
        """One line per dimension, pooled over the ranges."""
        return [row.verdict for row in self.rows if row.scope == POOLED and row.group == OVERALL]

    def to_dict(self) -> dict[str, Any]:
        return {
            "a": self.a,
            "b": self.b,
            "judge": self.judge,
            "ranges": list(self.ranges),
            "bootstrap": {
                "resamples": self.resamples,
                "seed": self.seed,
                "level": LEVEL,
                "unit": "checkpoints (within each range)",
            },
            "headline": self.headline(),
            "rows": [row.to_dict() for row in self.rows],
            "left_out": [dict(row) for row in self.left_out],
        }


def _signed_pp(value: float | None) -> str:
    return "n/a" if value is None else f"{value:+.1f} pp"


def _verdict(row_scope: str, group: str, dimension: str, a: str, b: str, pct: PairedDelta) -> str:
    scope = "all ranges" if row_scope == POOLED else row_scope
    where = scope if group == OVERALL else f"{scope}, {group}"
    change = f"Δ {_signed_pp(pct.delta)} {fmt_interval(pct.delta_interval, 1)}"
    if pct.delta is None:
        return f"{where}, {dimension}: no verdict (nothing scorable)"
    if excludes_zero(pct.delta_interval):
        better = b if pct.delta > 0 else a
        return f"{better} {VERBS[dimension]} better on {where}: {change}"
    return f"{where}, {dimension}: no difference beyond noise, {change}"


def compare_agents(
    a: Sequence[RangeScores],
    b: Sequence[RangeScores],
    *,
    judge: str,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> AgentComparison:
    """Run B against run A, range by range (``a[i]`` and ``b[i]`` are the same range)."""
    if not a or len(a) != len(b):
        raise EvalkitError("compare_agents needs the same ranges for both runs")
    run_a, run_b = a[0].run, b[0].run
    # (range, checkpoint A, checkpoint B) for every checkpoint both scored
    paired: list[tuple[str, Checkpoint, Checkpoint]] = []
    left_out: list[dict[str, str]] = []
    for first, second in zip(a, b, strict=True):
        if first.range != second.range:
            raise EvalkitError("compare_agents needs the ranges in the same order")
        if first.checklist_sha256 != second.checklist_sha256:
            raise EvalkitError(
                f"refusing to compare: {run_a} and {run_b} were scored against different "
                f"checklists of {first.range} (checklist_sha256 differs)"
            )
        by_id = {c.chk_id: c for c in second.checkpoints}
        errored = set(first.errored) | set(second.errored)
        for chk_id in sorted(errored):
            runs = [r.run for r in (first, second) if chk_id in r.errored]
            left_out.append({"range": first.range, "chk_id": chk_id, "errored_in": ", ".join(runs)})
        for checkpoint in first.checkpoints:
            other = by_id.get(checkpoint.chk_id)
            if other is not None and checkpoint.chk_id not in errored:
                paired.append((first.range, checkpoint, other))
    ranges = tuple(r.range for r in a)
    scopes: list[tuple[str, list[tuple[str, Checkpoint, Checkpoint]]]] = [
        (range_id, [p for p in paired if p[0] == range_id]) for range_id in ranges
    ]
    scopes.append((POOLED, paired))
    rows: list[AgentRow] = []
    for scope, members in scopes:
        caps = list(dict.fromkeys(cap for _, c, _ in members for cap in c.caps))
        for group in (OVERALL, *caps):
            chosen = [m for m in members if group == OVERALL or group in m[1].caps]
            for dimension in DIMENSIONS:
                rows.append(_row(scope, group, dimension, chosen, run_a, run_b, resamples, seed))
    return AgentComparison(
        a=run_a,
        b=run_b,
        judge=judge,
        ranges=ranges,
        rows=tuple(rows),
        left_out=tuple(left_out),
        resamples=resamples,
        seed=seed,
    )


def _row(
    scope: str,
    group: str,
    dimension: str,
    members: Sequence[tuple[str, Checkpoint, Checkpoint]],
    run_a: str,
    run_b: str,
    resamples: int,
    seed: int,
) -> AgentRow:
    scored = [
        (range_id, first.dimension(dimension), second.dimension(dimension), first, second)
        for range_id, first, second in members
    ]
    scored = [s for s in scored if s[1] is not None and s[2] is not None and s[1][1] > 0]
    pct = paired_ratio(
        [s[1][0] for s in scored if s[1]],
        [s[2][0] for s in scored if s[2]],
        [s[1][1] for s in scored if s[1]],
        [s[0] for s in scored],
        resamples=resamples,
        seed=seed,
    )
    names = SUBSCORES[dimension]
    a_points = [s[3].points.get(n, 0) == 1 for s in scored for n in names]
    b_points = [s[4].points.get(n, 0) == 1 for s in scored for n in names]
    test = mcnemar(a_points, b_points)
    better = None
    if pct.delta is not None and excludes_zero(pct.delta_interval):
        better = run_b if pct.delta > 0 else run_a
    return AgentRow(
        scope=scope,
        group=group,
        dimension=dimension,
        pct=pct,
        mcnemar=test,
        better=better,
        verdict=_verdict(scope, group, dimension, run_a, run_b, pct),
    )


# --------------------------------------------------------------------------- leaderboard


def mean_pct_interval(
    ranges: Sequence[Sequence[tuple[int, int]]],
    *,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> tuple[float, float] | None:
    """95 % interval of the mean over ranges of each range's percentage (score / max x
    100 over its checkpoints, one (score, max) each), resampling checkpoints within each
    range; ranges with nothing scorable are left out, as the mean leaves them out."""
    kept = [list(r) for r in ranges if sum(m for _, m in r) > 0]
    if not kept or resamples <= 0:
        return None
    strata = [str(i) for i, r in enumerate(kept) for _ in r]
    weights = stratified_weights(strata, resamples=resamples, seed=seed).astype(np.float64)
    scores = np.array([s for r in kept for s, _ in r], dtype=np.float64)
    maxes = np.array([m for r in kept for _, m in r], dtype=np.float64)
    per_range = []
    start = 0
    for r in kept:
        end = start + len(r)
        got, out_of = (
            weights[:, start:end] @ scores[start:end],
            weights[:, start:end] @ maxes[start:end],
        )
        ratio = np.full(resamples, np.nan)
        np.divide(got * 100.0, out_of, out=ratio, where=out_of != 0)
        per_range.append(ratio)
        start = end
    # A range drawn with only max-0 checkpoints has no percentage in that resample.
    with np.errstate(invalid="ignore"):
        mean = np.nanmean(np.vstack(per_range), axis=0) if per_range else np.array([])
    return percentile_interval(mean, LEVEL)


# --------------------------------------------------------------------------- outputs


def table_rows(result: AgentComparison, scope: str) -> list[dict[str, Any]]:
    rows = []
    for row in result.rows:
        if row.scope != scope:
            continue
        rows.append(
            {
                "group": row.group,
                "dimension": row.dimension,
                "checkpoints": row.pct.n,
                f"{result.a} %": Formatted(
                    f"{fmt(row.pct.a, 1)} {fmt_interval(row.pct.a_interval, 1)}"
                    if row.pct.a is not None
                    else "n/a"
                ),
                f"{result.b} %": Formatted(
                    f"{fmt(row.pct.b, 1)} {fmt_interval(row.pct.b_interval, 1)}"
                    if row.pct.b is not None
                    else "n/a"
                ),
                "Δ pp": Formatted(
                    f"{_signed_pp(row.pct.delta)} {fmt_interval(row.pct.delta_interval, 1)}"
                    if row.pct.delta is not None
                    else "n/a"
                ),
                f"points only {result.a}": row.mcnemar.a_only,
                f"points only {result.b}": row.mcnemar.b_only,
                "McNemar p": Formatted(fmt_p(row.mcnemar.p_value)),
            }
        )
    return rows


def report_markdown(result: AgentComparison) -> str:
    """``agents-report.md``."""
    lines = [
        f"# Agents A/B: {md_cell(result.b)} vs {md_cell(result.a)} (judge {md_cell(result.judge)})",
        "",
        *[f"**{escape_html(line)}**  " for line in result.headline()],
        "",
        f"Ranges: {', '.join(result.ranges)}. Detection and plan are never merged. "
        "Percentages are score / max x 100 over the checkpoints both runs scored; Δ is "
        f"{md_cell(result.b)} minus {md_cell(result.a)} in percentage points, with a paired "
        f"percentile bootstrap 95 % interval ({result.resamples} resamples, seed "
        f"{result.seed}; checkpoints resampled within each range, the same for both runs). "
        "A row moved beyond noise when its Δ interval excludes 0. McNemar's exact test "
        "counts the sub-score points only one run earned (it takes them as independent).",
        "",
    ]
    for scope in (POOLED, *result.ranges):
        lines += [
            f"## {'Pooled over the ranges' if scope == POOLED else md_cell(scope)}",
            "",
            *[
                f"- {escape_html(row.verdict)}"
                for row in result.rows
                if row.scope == scope and row.group == OVERALL
            ],
            "",
            markdown_table(table_rows(result, scope)),
            "",
        ]
    if result.left_out:
        lines += ["## Checkpoints left out (errored in either run)", ""]
        lines += [markdown_table(result.left_out), ""]
    return "\n".join(lines).rstrip() + "\n"


def write_outputs(result: AgentComparison, out_dir: str | Path) -> dict[str, Path]:
    """``agents.json`` and ``agents-report.md`` in ``out_dir``."""
    return write_json_and_report(
        out_dir,
        result.to_dict(),
        report_markdown(result),
        json_name=JSON_NAME,
        report_name=REPORT_NAME,
    )
