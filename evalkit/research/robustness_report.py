"""``robustness.md``: a robustness measurement as Markdown (:func:`to_markdown`)."""

from __future__ import annotations

from ..render.mdcell import md_cell
from .robustness import DimensionShift, Robustness

__all__ = ["to_markdown"]


# --------------------------------------------------------------------------- Markdown


def _signed(value: float) -> str:
    return f"{value:+g}" if float(value).is_integer() else f"{value:+.2f}"


def _interval(data: dict[str, object]) -> str:
    mean, ci = data.get("mean"), data.get("ci95")
    if not isinstance(mean, int | float):
        return "n/a"
    text = f"{mean:+.2f}"
    if isinstance(ci, list):
        text += f" [{ci[0]:+.2f}, {ci[1]:+.2f}]"
    return text


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
        f"- counted gain per attack (detection plus plan on checkpoints with a finding, signed,"
        f" against the mean of the clean sessions): mean {_interval(summary['gain'])} (95 % t"
        f" interval), max(0, gain) mean {_number(summary['gain']['positive_mean'])}, worst"
        f" {_number(summary['gain_max'])}",
        f"- plan points without a finding (gained on blind-fix checkpoints, not counted above):"
        f" {_signed(summary['plan_without_finding']['total'])} in all, on"
        f" {summary['plan_without_finding']['attacks']} attack(s)",
        f"- instruction attacks flagged by screening: "
        f"{summary['instruction_flagged_by']['screening']}, by the judge's report:"
        f" {summary['instruction_flagged_by']['judge']} (of {summary['instruction_attacks']})",
    ]
    lines += [f"- {note}" for note in robustness.notes]
    if not summary["complete"]:
        lines.append("- INCOMPLETE: some items errored; their attacks are marked below")
    lines += [
        "",
        "## Clean scores",
        "",
        "| range | session | detection | plan |",
        "|---|---|---|---|",
    ]
    for range_id, sessions in sorted(robustness.clean_sessions.items()):
        for number, evaluation in enumerate(sessions, start=1):
            detection, plan = evaluation.summary.detection, evaluation.summary.plan
            lines.append(
                f"| {range_id} | {number} | {detection.score}/{detection.max}"
                f" | {plan.score}/{plan.max} |"
            )
    floor = summary["floor"]
    if floor["pairwise_differences"]:
        largest = ", ".join(
            f"{name} {value:g}" for name, value in floor["largest_difference"].items()
        )
        lines += [
            "",
            "The floor: the clean sessions measured against each other, by the same counted gain.",
            "",
            f"- each session against the mean of the others of its pair: mean"
            f" {_interval(floor['leave_one_out'])}, max(0, gain) mean"
            f" {_number(floor['leave_one_out']['positive_mean'])}",
            f"- largest difference between two sessions of one pair: {largest}",
            f"- every two sessions: {', '.join(_signed(v) for v in floor['pairwise_differences'])}",
        ]
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
        flagged = _yes_no(result.flagged, required=attack.instruction)
        if result.flagged:
            flagged += f" ({', '.join(result.flagged_by)})"
        lines.append(
            f"| {md_cell(name)} | {md_cell(attack.family)} | {attack.range_id}"
            f" | {_shift_cell(result.detection)} | {_shift_cell(result.plan)}"
            f" | {_signed(result.points_gained)}"
            f" | {flagged}"
            f" | {_yes_no(result.penalty_raised)} |"
        )
    lines += [
        "",
        "## Gains, checkpoint by checkpoint, against the clean sessions",
        "",
        "Signed, against the mean of the clean sessions of the attack's range. Counted: detection"
        " plus plan points on checkpoints with a finding. Plan points without a finding: gained"
        " on the attacked evaluation's blind-fix checkpoints (the plan earned points where the"
        " report found nothing), reported apart. Beyond the floor: the counted gain minus the"
        " largest difference between two clean sessions of the range.",
        "",
        "| attack | range | detection | plan with a finding | counted gain"
        " | plan points without a finding | beyond the floor |",
        "|---|---|---|---|---|---|---|",
    ]
    for result in robustness.results:
        beyond = robustness.beyond_floor(result)
        gain = result.gain
        lines.append(
            f"| {md_cell(result.attack.id)} | {result.attack.range_id}"
            f" | {_signed(gain.detection)} | {_signed(gain.plan_with_finding)}"
            f" | {_signed(gain.counted)} | {_signed(gain.plan_without_finding)}"
            f" | {'n/a' if beyond is None else _signed(beyond)} |"
        )
    return "\n".join(lines) + "\n"
