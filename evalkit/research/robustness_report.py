"""``robustness.md``: a robustness measurement as Markdown (:func:`to_markdown`)."""

from __future__ import annotations

from ..render.mdcell import md_cell
from .robustness import DimensionShift, Robustness

__all__ = ["to_markdown"]


# --------------------------------------------------------------------------- Markdown


def _signed(value: int) -> str:
    return f"{value:+d}"


def _number(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"


def _shift_cell(shift: DimensionShift) -> str:
    pct = shift.inflation_pct
    return _signed(shift.inflation_points) + ("" if pct is None else f" ({pct:+.1f} pp)")


def _yes_no(value: bool | None, *, required: bool = True) -> str:
    """A "no" that misses a target (an instruction not flagged, a penalty not raised) is bold."""
    if value is None:
        return "n/a"
    if value:
        return "yes"
    return "**no**" if required else "no"


def to_markdown(robustness: Robustness) -> str:
    """``robustness.md``: the summary, the clean scores and one table row per attack."""
    summary = robustness.summary()
    lines = [
        f"# Robustness of the `{robustness.judge}` judge ({robustness.evaluator_model})",
        "",
        f"Corpus: `{robustness.corpus}`, {summary['attacks']} attacks"
        + (f", measured {robustness.timestamp}." if robustness.timestamp else "."),
        "",
        "Inflation is the attacked score minus the expected one: the clean score, or for an "
        "attack that must raise a penalty, the clean score with that item's points on the "
        "penalised dimension removed. Points, and in brackets percentage points.",
        "",
        f"- attacks that inflate a score: {summary['inflated']} of {summary['attacks']}",
        f"- attacks flagged: {summary['flagged']} of {summary['attacks']}"
        f" (share {summary['flagged_share']})",
        f"- instruction attacks flagged: {summary['instruction_flagged']}"
        f" of {summary['instruction_attacks']}",
        f"- expected penalties raised: {summary['penalties_raised']}"
        f" of {summary['penalty_attacks']}",
        f"- largest inflation: detection {_signed(summary['max_inflation_points']['detection'])},"
        f" plan {_signed(summary['max_inflation_points']['plan'])} points",
        f"- points gained per attack (positive inflation, both dimensions): mean"
        f" {_number(summary['points_gained_mean'])}, worst {summary['points_gained_max']},"
        f" total {summary['points_gained_total']}",
    ]
    lines += [f"- {note}" for note in robustness.notes]
    if not summary["complete"]:
        lines.append("- INCOMPLETE: some items errored; their attacks are marked below")
    lines += ["", "## Clean scores", "", "| range | detection | plan |", "|---|---|---|"]
    for range_id, evaluation in sorted(robustness.clean.items()):
        detection, plan = evaluation.summary.detection, evaluation.summary.plan
        lines.append(
            f"| {range_id} | {detection.score}/{detection.max} | {plan.score}/{plan.max} |"
        )
    lines += [
        "",
        "## Attacks",
        "",
        "| attack | family | range | Δdetection | Δplan | gained | flagged | penalty raised |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for result in robustness.results:
        attack = result.attack
        name = attack.id + ("" if result.complete else " (incomplete)")
        lines.append(
            f"| {md_cell(name)} | {md_cell(attack.family)} | {attack.range_id}"
            f" | {_shift_cell(result.detection)} | {_shift_cell(result.plan)}"
            f" | {result.points_gained}"
            f" | {_yes_no(result.flagged, required=attack.instruction)}"
            f" | {_yes_no(result.penalty_raised)} |"
        )
    return "\n".join(lines) + "\n"
