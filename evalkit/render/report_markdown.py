"""``evaluation-report.md``: the Evaluation as the SKILL's human-readable report.

Python turns the Evaluation into plain rows and strings (:func:`report_context`);
the Jinja2 template ``evalkit/templates/evaluation-report.md.j2`` only lays them
out. Nothing here scores: every number comes from the Evaluation. The output
is deterministic: the only time in it is the evaluation's own timestamp.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from functools import cache
from importlib.resources import files
from pathlib import Path
from typing import Any

import jinja2

from ..fileio import write_text_atomic
from ..model import (
    MODE_GUIDANCE,
    MODES,
    STRONG_THRESHOLD_PCT,
    SUBSCORES,
    DimensionScore,
    Evaluation,
    GroundedSubScore,
    GroundedVerdict,
    ItemScore,
    Loss,
    QuoteCheck,
    Tally,
)
from ..penalties import PENALTY_TABLE
from .mdcell import escape_html as md_escape_html
from .mdcell import md_cell

TEMPLATE = "templates/evaluation-report.md.j2"

# What each penalty rule does to the scores, as the SKILL states it.
PENALTY_EFFECTS: Mapping[str, str] = {rule.name: rule.effect for rule in PENALTY_TABLE}

# One fixed piece of advice per lost sub-score and per penalty rule.
SUGGESTIONS: Mapping[str, str] = {
    "discovery": "Search more widely: enumerate processes, persistence, accounts, network "
    "connections and logs, and name every issue found in the report.",
    "evidence": "Cite concrete artifacts: paths, log lines, hashes, config values, PIDs and "
    "command output.",
    "attribution": "Tie each finding to the attack chain or root cause it belongs to, and say how.",
    "correctness": "Make each remediation step technically correct for the finding: the right "
    "command, target and order.",
    "completeness": "Add verification and rollback steps, and cover edge cases and side effects.",
    "fabrication": "Never name CVEs, files, users or log lines that were not observed; quote "
    "what the evidence shows.",
    "wrong_attribution": "Re-check the causal chain before attributing a finding; link it to a "
    "root cause only on evidence.",
    "dangerous_advice": "Flag risk and back up before destructive commands (deletions, wipes, "
    "service stops, firewall flushes).",
}

_DIMENSION_LABELS = {"detection": "Detection", "plan": "Plan"}
_NA_REASONS = {"detection": "plan-only item", "plan": "detection-only item"}


# --------------------------------------------------------------------------- public API


def render_report(ev: Evaluation) -> str:
    """The full evaluation-report.md text for ``ev``."""
    return _template().render(**report_context(ev))


def summary_markdown(ev: Evaluation) -> str:
    """The report's Summary and Diagnosis, without their headings, for a notebook cell.

    Same template, same text as in evaluation-report.md (incomplete warning
    included), so the notebook and the file never disagree.
    """
    template = _template()
    context = template.new_context(report_context(ev))
    parts = ("".join(template.blocks[name](context)).strip() for name in ("summary", "diagnosis"))
    return "\n\n".join(parts) + "\n"


def write_report(ev: Evaluation, path: str | Path) -> Path:
    """Render ``ev`` and write it atomically to ``path``; return the path."""
    return write_text_atomic(path, render_report(ev))


# --------------------------------------------------------------------------- template


def md_blockquote(text: str) -> str:
    """``text`` (HTML escaped) as a Markdown blockquote, every line of it inside the quote."""
    lines = md_escape_html(str(text)).splitlines()
    return "\n".join(f"> {line}".rstrip() for line in lines or [""])


def md_inline(text: str) -> str:
    """``text`` on one line (headings, list items), HTML escaped."""
    return " ".join(md_escape_html(str(text)).split())


@cache
def _template() -> jinja2.Template:
    env = jinja2.Environment(
        autoescape=False,  # Markdown, not HTML
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined,
    )
    env.filters.update(cell=md_cell, blockquote=md_blockquote, inline=md_inline)
    source = files("evalkit").joinpath(TEMPLATE).read_text(encoding="utf-8")
    return env.from_string(source)


# --------------------------------------------------------------------------- context


def report_context(ev: Evaluation) -> dict[str, Any]:
    """Everything the template shows, as plain strings, lists and dicts."""
    summary = ev.summary
    guidance = MODE_GUIDANCE.get(summary.diagnosis) if summary.diagnosis else None
    verdicts = {verdict.chk_id: verdict for verdict in ev.verdicts}
    unstable = _unstable_subscores(ev)
    return {
        "strong_pct": STRONG_THRESHOLD_PCT,
        "range_id": ev.range.id,
        "range_title": ev.range.title,
        "run_id": ev.submission.run_id,
        "header": _header_rows(ev),
        "judge_caveat": ev.judge.caveat,
        "incomplete": None if summary.complete else _incomplete(ev),
        "dimensions": [
            {"label": "Detection", **_tally_cells(summary.detection)},
            {"label": "Plan", **_tally_cells(summary.plan)},
        ],
        "counts": {
            "total": summary.total_checkpoints,
            "detection_only": summary.detection_only_count,
            "plan_only": summary.plan_only_count,
            "errored": len(summary.errored),
        },
        "diagnosis": summary.diagnosis,
        "diagnosis_meaning": guidance[0] if guidance else None,
        "diagnosis_direction": guidance[1] if guidance else None,
        "no_diagnosis_reason": _no_diagnosis_reason(summary.detection, summary.plan),
        "modes": [
            {
                "diagnosis": mode,
                "detection": detection_level,
                "plan": plan_level,
                "meaning": MODE_GUIDANCE[mode][0],
                "direction": MODE_GUIDANCE[mode][1],
            }
            for (detection_level, plan_level), mode in MODES.items()
        ],
        "capabilities": [
            {
                "cap": cap.cap,
                "name": cap.name,
                "items": ", ".join(cap.items),
                "detection": _tally_text(cap.detection),
                "plan": _tally_text(cap.plan),
                "diagnosis": cap.diagnosis or "—",
            }
            for cap in summary.capabilities
        ],
        "misses": _losses(summary.top_detection_misses),
        "defects": _losses(summary.top_plan_defects),
        "warnings": [
            {
                "kind": w.kind,
                "source": w.source,
                "line": w.line,
                "excerpt": w.excerpt,
                "message": w.message,
                "found_by": w.found_by,
            }
            for w in summary.warnings
        ],
        "blind_fixes": [
            {
                "chk_id": item.chk_id,
                "name": item.name,
                "points": item.plan.total if item.plan is not None else 0,
            }
            for item in ev.items
            if item.chk_id in summary.blind_fix.items
        ],
        "blind_fix_points": summary.blind_fix.plan_points,
        "suggestions": _suggestions(ev),
        "checkpoints": [
            {
                **_checkpoint(ev, item, verdicts.get(item.chk_id)),
                "unstable": unstable.get(item.chk_id),
            }
            for item in ev.items
        ],
        "stability": _stability(ev),
    }


def _unstable_subscores(ev: Evaluation) -> dict[str, str]:
    """chk_id -> "detection/evidence, plan/correctness" for every unstable item."""
    if ev.stability is None:
        return {}
    return {
        item.chk_id: ", ".join(f"{s.dimension}/{s.subscore}" for s in item.subscores if s.unstable)
        for item in ev.stability.items
        if item.unstable
    }


def _stability(ev: Evaluation) -> dict[str, Any] | None:
    if ev.stability is None:
        return None
    rows = [
        {
            "chk_id": item.chk_id,
            "subscore": f"{sub.dimension}/{sub.subscore}",
            "values": " ".join(str(v) for v in sub.values),
            "kept": sub.kept,
            "agreement": f"{sub.agreement:.0%}",
            "flip_rate": f"{sub.flip:.0%}",
        }
        for item in ev.stability.items
        for sub in item.subscores
        if sub.unstable
    ]
    return {"repeats": ev.stability.repeats, "unstable": rows}


def _header_rows(ev: Evaluation) -> list[tuple[str, str]]:
    """(label, value) pairs as finished table cells: every recorded name or id goes through
    the cell escaper (a run's ``model_under_test`` is the agent's to write); hashes and
    document names are shown as code."""
    judge, usage = ev.judge, ev.usage
    report, plan = ev.submission.report, ev.submission.plan
    inputs = ev.inputs
    if judge.prompt_version or judge.prompt_sha256:
        prompt = md_cell(judge.prompt_version or "unversioned")
        if judge.prompt_sha256:
            prompt += f" (sha256 {_code(judge.prompt_sha256)})"
    else:
        prompt = "none (this judge uses no prompt)"
    rows = [
        ("Range", md_cell(f"{ev.range.id}: {ev.range.title}")),
        ("Run", md_cell(ev.submission.run_id)),
        ("Model under test", md_cell(ev.submission.model_under_test or "not recorded")),
        ("Judge", md_cell(judge.name)),
        ("Evaluator model", md_cell(judge.evaluator_model)),
        ("Judge prompt", prompt),
        ("Timestamp", md_cell(ev.timestamp)),
        ("evalkit", md_cell(ev.evalkit_version)),
        ("Checklist sha256", _hash(inputs["checklist_sha256"])),
        (f"Report {_code(report.filename)} sha256", _hash(inputs["report_sha256"])),
        (f"Plan {_code(plan.filename)} sha256", _hash(inputs["plan_sha256"])),
    ]
    if usage.requests > 0:
        tokens = (
            f"{usage.requests} requests; {usage.input_tokens:,} input and "
            f"{usage.output_tokens:,} output tokens; cache {usage.cache_creation_input_tokens:,} "
            f"written, {usage.cache_read_input_tokens:,} read"
        )
        if usage.cached_responses:
            tokens += f"; {usage.cached_responses} responses replayed from the response cache"
        rows.append(("Judge usage", tokens))
        cost = (
            "unknown (model not in the price table)"
            if usage.cost_usd is None
            else f"${usage.cost_usd:.4f}"
        )
        rows.append(("Judge cost", cost))
    return rows


def _code(value: str) -> str:
    """A code span for a hash or a document name; text that could break out of one is
    shown escaped instead."""
    if not value or any(mark in value for mark in "`|<>&\n\r"):
        return md_cell(value)
    return f"`{value}`"


def _hash(value: str | None) -> str:
    return _code(value) if value else "not recorded"


def _incomplete(ev: Evaluation) -> dict[str, Any]:
    by_id = {item.chk_id: item for item in ev.items}
    errored = []
    for chk_id in ev.summary.errored:
        item = by_id.get(chk_id)
        errored.append(
            {
                "chk_id": chk_id,
                "name": item.name if item else "",
                "error": (item.error if item else None) or "no reason given",
            }
        )
    return {"count": len(errored), "total": ev.summary.total_checkpoints, "items": errored}


def _pct(tally: Tally) -> str:
    return "N/A" if tally.pct is None else f"{tally.pct:.1f}%"


def _tally_cells(tally: Tally) -> dict[str, str]:
    return {
        "score": f"{tally.score} / {tally.max}",
        "pct": _pct(tally),
        "level": tally.level or "N/A",
    }


def _tally_text(tally: Tally) -> str:
    if tally.max == 0:
        return "N/A"
    return f"{tally.score}/{tally.max} ({_pct(tally)}, {tally.level})"


def _no_diagnosis_reason(detection: Tally, plan: Tally) -> str:
    empty = [name for name, tally in (("detection", detection), ("plan", plan)) if tally.max == 0]
    if not empty:
        return ""
    return f"no mode applies: the {' and '.join(empty)} dimension has nothing scorable (max 0)"


def _losses(losses: Iterable[Loss]) -> list[dict[str, Any]]:
    return [
        {"subscore": loss.subscore, "count": loss.count, "items": ", ".join(loss.items)}
        for loss in losses
    ]


def _suggestions(ev: Evaluation) -> list[dict[str, str]]:
    """One suggestion per lost sub-score (most frequent first), then per penalty rule."""
    summary = ev.summary
    suggestions = [
        {
            "topic": loss.subscore,
            "kind": "lost",
            "items": ", ".join(loss.items),
            "text": SUGGESTIONS[loss.subscore],
        }
        for loss in (*summary.top_detection_misses, *summary.top_plan_defects)
        if loss.subscore in SUGGESTIONS
    ]
    by_rule: dict[str, list[str]] = {}
    for item in ev.items:
        for penalty in item.penalties:
            chk_ids = by_rule.setdefault(penalty.rule, [])
            if item.chk_id not in chk_ids:
                chk_ids.append(item.chk_id)
    for rule in PENALTY_EFFECTS:  # the SKILL's order
        if rule in by_rule:
            suggestions.append(
                {
                    "topic": rule,
                    "kind": "penalty",
                    "items": ", ".join(by_rule[rule]),
                    "text": SUGGESTIONS[rule],
                }
            )
    return suggestions


# --------------------------------------------------------------------------- one checkpoint


def _checks_by_quote(verdict: GroundedVerdict | None, dimension: str) -> dict[str, QuoteCheck]:
    """Where each quote of one dimension was found (found checks win over misses)."""
    checks: dict[str, QuoteCheck] = {}
    for sub in _grounded(verdict, dimension):
        for check in sub.quotes:
            if check.quote not in checks or (check.found and not checks[check.quote].found):
                checks[check.quote] = check
    return checks


def _grounded(verdict: GroundedVerdict | None, dimension: str) -> Sequence[GroundedSubScore]:
    if verdict is None:
        return ()
    return getattr(verdict, dimension) or ()


def _source_label(ev: Evaluation, source: str | None, line: int | None) -> str:
    if source not in ("report", "plan"):
        return "source not recorded"
    label = f"{source} `{ev.submission.document(source).filename}`"  # type: ignore[arg-type]
    return f"{label}, line {line}" if line is not None else label


def _checkpoint(ev: Evaluation, item: ItemScore, verdict: GroundedVerdict | None) -> dict[str, Any]:
    caps = ", ".join(
        cap if (name := ev.range.capability_name(cap)) == cap else f"{cap} ({name})"
        for cap in item.caps
    )
    view: dict[str, Any] = {
        "chk_id": item.chk_id,
        "name": item.name,
        "caps": caps or "none",
        # Fields the checklist format does not define are kept and shown, never dropped.
        "extra": list(ev.range.checkpoint(item.chk_id).extra.items()),
        "scope": item.scope,
        "status": item.status,
        "error": item.error,
        "rows": [],
        "dimensions": [],
        "penalties": [],
        "dismissed": [],
    }
    if item.status == "error":
        return view
    for dimension in ("detection", "plan"):
        dim: DimensionScore | None = getattr(item, dimension)
        view["rows"].extend(_score_rows(dimension, dim))
        view["dimensions"].append(_dimension_view(ev, verdict, dimension, dim))
    view["penalties"] = [
        {
            "rule": penalty.rule,
            "effect": PENALTY_EFFECTS.get(penalty.rule, ""),
            "detail": penalty.detail,
            "quote": penalty.quote,
            "source": _source_label(ev, penalty.source, penalty.line),
        }
        for penalty in item.penalties
    ]
    view["dismissed"] = [
        {
            "rule": dismissed.flag.rule,
            "detail": dismissed.flag.detail,
            "quote": dismissed.flag.quote,
            "reason": dismissed.reason,
        }
        for dismissed in item.dismissed_penalties
    ]
    return view


def _score_rows(dimension: str, dim: DimensionScore | None) -> list[dict[str, str]]:
    label = _DIMENSION_LABELS[dimension]
    if dim is None:
        return [
            {"dimension": label, "subscore": "—", "score": "N/A", "note": _NA_REASONS[dimension]}
        ]
    rows = []
    for name in SUBSCORES[dimension]:
        value = dim.subscores.get(name)
        note = ""
        if name in dim.penalized:
            note = "zeroed by a penalty"
        elif name in dim.withheld:
            note = "withheld: no verbatim quote"
        rows.append(
            {
                "dimension": label,
                "subscore": name,
                "score": "—" if value is None else str(value),
                "note": note,
            }
        )
    rows.append(
        {
            "dimension": label,
            "subscore": "**total**",
            "score": f"**{dim.total}/{dim.max}**",
            "note": "",
        }
    )
    return rows


def _dimension_view(
    ev: Evaluation, verdict: GroundedVerdict | None, dimension: str, dim: DimensionScore | None
) -> dict[str, Any]:
    label = _DIMENSION_LABELS[dimension]
    if dim is None:
        return {"label": label, "heading": label, "na": _NA_REASONS[dimension]}
    checks = _checks_by_quote(verdict, dimension)
    grounded = {sub.name: sub for sub in _grounded(verdict, dimension)}
    withheld = []
    for name in dim.withheld:
        sub = grounded.get(name)
        missing = [check.quote for check in (sub.quotes if sub else ()) if not check.found]
        if missing:
            why = "the judge's quote was not found verbatim in the agent's documents"
        elif sub is not None and not sub.quotes:
            why = "the judge gave no quote to support it"
        else:
            why = "no verbatim support was found for it"
        withheld.append({"name": name, "why": why, "missing": missing})
    return {
        "label": label,
        "heading": f"{label} ({dim.total}/{dim.max})",
        "na": None,
        "rationale": dim.rationale,
        "quotes": [_quote_view(ev, quote, checks.get(quote)) for quote in dim.quotes],
        "withheld": withheld,
        "penalized": list(dim.penalized),
    }


def _quote_view(ev: Evaluation, quote: str, check: QuoteCheck | None) -> dict[str, str]:
    source = _source_label(ev, check.source, check.line) if check else "source not recorded"
    return {"text": quote, "source": source}
