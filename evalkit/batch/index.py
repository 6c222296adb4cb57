"""What a batch leaves: ``index.csv``, ``index.json``, ``leaderboard.md`` and ``index.html``
in the runs folder, from every ``scores.json`` under it (:func:`write_index`), and the
table of its failures (:func:`failure_table`).
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..errors import EvalkitError
from ..notebook import HTML_NAME
from ..render import REPORT_FILENAME, SCORES_FILENAME
from ..render.mdcell import md_cell
from ..runs import GOLD, run_purpose
from ..workspace import read_json
from .plan import Outcome

INDEX_COLUMNS: tuple[str, ...] = (
    "run",
    "range",
    "judge",
    "model",
    "prompt_version",
    "detection_pct",
    "plan_pct",
    "mode",
    "complete",
    "errored_items",
    "cost_usd",
    "path",
    "model_under_test",
)
LEADERBOARD_RESAMPLES = 1000
INDEX_CSV, INDEX_JSON, LEADERBOARD_MD, INDEX_HTML = (
    "index.csv",
    "index.json",
    "leaderboard.md",
    "index.html",
)


def _relative(path: Path, workspace: Path) -> str:
    try:
        return path.resolve().relative_to(workspace.resolve()).as_posix()
    except ValueError:
        return str(path)


def index_rows(runs_dir: Path, workspace: Path) -> list[dict[str, Any]]:
    """One row per evaluation found under ``runs_dir`` (every judge), in run, range order."""
    rows = []
    purposes: dict[str, str] = {}
    for scores_path in sorted(runs_dir.glob(f"*/*/evaluations/*/{SCORES_FILENAME}")):
        # Hidden folders are staged, retired or kept-aside evaluations, not records; and a
        # record is read only through names that stay in the runs folder.
        if any(part.startswith(".") for part in scores_path.relative_to(runs_dir).parts):
            continue
        try:
            scores = read_json(scores_path, runs_dir, what=SCORES_FILENAME)
            meta, summary = scores["meta"], scores["summary"]
            if not isinstance(meta, dict) or not isinstance(summary, dict):
                continue
            checkpoint_scores = _checkpoint_scores(scores)
            detection_pct, plan_pct = summary["detection"]["pct"], summary["plan"]["pct"]
        except (EvalkitError, KeyError, TypeError, ValueError, AttributeError):
            continue
        folder = scores_path.parent
        html = folder / HTML_NAME
        run = scores_path.relative_to(runs_dir).parts[0]
        if run not in purposes:
            purposes[run] = run_purpose(runs_dir, run)
        rows.append(
            {
                "run": meta.get("run_id"),
                "range": meta.get("range"),
                "judge": meta.get("judge"),
                "model": meta.get("evaluator_model"),
                "prompt_version": meta.get("prompt_version"),
                "detection_pct": detection_pct,
                "plan_pct": plan_pct,
                "mode": summary.get("diagnosis"),
                "complete": summary.get("complete"),
                "errored_items": len(summary.get("errored") or ()),
                "cost_usd": (meta.get("usage") or {}).get("cost_usd"),
                "path": _relative(folder, workspace),
                "model_under_test": meta.get("model_under_test"),
                # Where index.html links: the HTML record, else the Markdown report.
                "html": str(html) if html.is_file() else None,
                "report": str(folder / REPORT_FILENAME),
                # Each scored checkpoint's (score, max) per dimension: the leaderboard's
                # bootstrap resamples them. Not an index column.
                "checkpoint_scores": checkpoint_scores,
                # run.yaml's purpose: gold pairs are not ranked among agents. Not a column.
                "purpose": purposes[run],
            }
        )
    return rows


def _checkpoint_scores(scores: Mapping[str, Any]) -> dict[str, list[tuple[int, int]]]:
    out: dict[str, list[tuple[int, int]]] = {"detection": [], "plan": []}
    for item in scores.get("checkpoints") or []:
        if not isinstance(item, dict) or item.get("status") == "error":
            continue
        for dimension, found in out.items():
            block = item.get(dimension)
            if isinstance(block, dict) and "total" in block and "max" in block:
                found.append((int(block["total"]), int(block["max"])))
    return out


def _with_interval(mean: float | None, runs: Sequence[dict[str, Any]], dimension: str) -> str:
    """``66.7 [55.0, 78.3]``: the mean with its 95 % bootstrap interval over checkpoints."""
    from ..research.agents import mean_pct_interval

    if mean is None:
        return "N/A"
    interval = mean_pct_interval(
        [(row.get("checkpoint_scores") or {}).get(dimension) or [] for row in runs],
        resamples=LEADERBOARD_RESAMPLES,
        seed=0,
    )
    return f"{mean} [{interval[0]:.1f}, {interval[1]:.1f}]" if interval else f"{mean}"


def _csv_text(rows: Sequence[dict[str, Any]]) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(INDEX_COLUMNS), extrasaction="ignore")
    writer.writeheader()
    for row in rows:
        writer.writerow({key: "" if row[key] is None else row[key] for key in INDEX_COLUMNS})
    return buffer.getvalue()


def _mean(values: Sequence[float | None]) -> float | None:
    known = [value for value in values if value is not None]
    return round(sum(known) / len(known), 1) if known else None


def leaderboard_markdown(rows: Sequence[dict[str, Any]]) -> str:
    """Agents' runs ranked per judge by mean detection %, then mean plan %: two columns,
    never merged. Gold pairs (run.yaml ``purpose: gold``) are listed apart, unranked."""
    lines = [
        "# Leaderboard",
        "",
        "Mean detection % and mean plan % over the ranges each run was evaluated on, per judge,",
        "each with a 95 % bootstrap interval (checkpoints resampled within each range,",
        f"{LEADERBOARD_RESAMPLES} resamples, seed 0). The two dimensions are never merged;",
        "runs are ordered by detection, then plan. Gold pairs (documents written to measure",
        "judges, `purpose: gold` in their run.yaml) are no agent's work: listed apart, unranked.",
        "",
    ]
    for judge in sorted({(row["judge"], row["model"]) for row in rows}, key=str):
        mine = [row for row in rows if (row["judge"], row["model"]) == judge]
        lines += [f"## Judge {judge[0]} ({judge[1]})", ""]
        agents = [row for row in mine if row.get("purpose") != GOLD]
        gold = [row for row in mine if row.get("purpose") == GOLD]
        if agents:
            lines += _run_table(agents, ranked=True)
        if gold:
            lines += ["Gold pairs, not ranked:", "", *_run_table(gold, ranked=False)]
    return "\n".join(lines)


def _run_table(rows: Sequence[dict[str, Any]], *, ranked: bool) -> list[str]:
    """One line per run of ``rows``, by mean detection %, then mean plan %."""
    lines = [
        "| rank | run | model under test | ranges | detection % | plan % | modes | complete |",
        "|---:|---|---|---:|---:|---:|---|---|",
    ]
    by_run: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        by_run.setdefault(str(row["run"]), []).append(row)
    ordered = sorted(
        by_run.items(),
        key=lambda item: (
            -(_mean([r["detection_pct"] for r in item[1]]) or -1.0),
            -(_mean([r["plan_pct"] for r in item[1]]) or -1.0),
            item[0],
        ),
    )
    for rank, (run, runs) in enumerate(ordered, start=1):
        detection = _mean([r["detection_pct"] for r in runs])
        plan = _mean([r["plan_pct"] for r in runs])
        modes = ", ".join(f"{r['range']}: {r['mode'] or 'no diagnosis'}" for r in runs)
        complete = "yes" if all(r["complete"] for r in runs) else "no"
        model = next((r["model_under_test"] for r in runs if r["model_under_test"]), "")
        lines.append(
            f"| {md_cell(rank) if ranked else 'gold'} | {md_cell(run)} | "
            f"{md_cell(model or 'unknown')} | "
            f"{len(runs)} | {_with_interval(detection, runs, 'detection')} | "
            f"{_with_interval(plan, runs, 'plan')} | {md_cell(modes)} | {complete} |"
        )
    lines.append("")
    return lines


def write_index(runs_dir: Path, workspace: Path) -> dict[str, Path]:
    """Write index.csv, index.json, leaderboard.md and index.html into ``runs_dir``."""
    from ..render import write_text_atomic
    from ..render.html import write_index_html

    rows = index_rows(runs_dir, workspace)
    public = [{key: row[key] for key in INDEX_COLUMNS} for row in rows]
    return {
        "csv": write_text_atomic(runs_dir / INDEX_CSV, _csv_text(rows)),
        "json": write_text_atomic(
            runs_dir / INDEX_JSON, json.dumps(public, indent=2, ensure_ascii=False) + "\n"
        ),
        "leaderboard": write_text_atomic(runs_dir / LEADERBOARD_MD, leaderboard_markdown(rows)),
        "html": write_index_html(rows, runs_dir / INDEX_HTML, "evalkit evaluations"),
    }


def failure_table(outcomes: Iterable[Outcome]) -> str:
    failed = [outcome for outcome in outcomes if outcome.status == "failed"]
    if not failed:
        return ""
    width_run = max(len("run"), *(len(o.run) for o in failed))
    width_range = max(len("range"), *(len(o.range) for o in failed))
    lines = [f"{'run':<{width_run}}  {'range':<{width_range}}  reason"]
    lines += [f"{o.run:<{width_run}}  {o.range:<{width_range}}  {o.reason}" for o in failed]
    return "\n".join(lines)
