"""Compare evaluations of the same runs: two prompts, two models, rules vs an LLM.

Each input is an *evaluation set*: one evaluation folder (it holds a
``scores.json``) or a folder holding many (every ``scores.json`` below it,
one per (run, range)), e.g. ``runs/demo/ssh-miner/evaluations/rules`` or the
output folder of ``evalkit calibrate``. The first set is the baseline; every
other set is compared with it:

* per checkpoint and sub-score, what changed (sub-scores as ``scores.json``
  holds them: after grounding and penalties), which penalties came or went;
* checkpoints and pairs added or removed, and checkpoints that errored in one
  set or recovered in the other (an errored checkpoint has no score to compare);
* deltas of the detection and plan percentages per (run, range), per CAP and
  per range (a range's percentage pools the score and max of its runs, with the
  scoring core's own rounding);
* which diagnostic modes changed;
* Cohen's kappa between the two sets over the sub-scores both scored;
* a leaderboard over every set: run x range, detection %, plan %, mode, cost.

Sets that evaluated one (run, range) from different inputs (a checklist, report
or plan whose sha256 in ``meta.inputs`` differs) are refused: their numbers
would not measure the judge alone.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import EvalkitError
from ..model import SUBSCORES
from ..render.mdcell import md_cell
from ..scoring import diagnose, tally
from ..workspace import read_json
from .ab import AbTest, SavedCalibration, ab_test, is_calibration, load_calibration, report_lines
from .report_format import display_frame, markdown_table
from .stats import DEFAULT_RESAMPLES, DEFAULT_SEED, Agreement, agreement

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure

__all__ = [
    "Comparison",
    "EvaluationSet",
    "compare",
    "load_sets",
    "write_outputs",
]

SCORES_NAME = "scores.json"
JSON_NAME = "compare.json"
REPORT_NAME = "compare-report.md"
DELTA_PNG = "delta-bars.png"
SLOPE_PNG = "slope-chart.png"
ALL_SUBSCORES = "all sub-scores"
INPUT_KEYS = ("checklist_sha256", "report_sha256", "plan_sha256")
CHANGE_COLUMNS = ("set", "run", "range", "chk_id", "change", "target", "before", "after")

Pair = tuple[str, str]  # (run_id, range)


# --------------------------------------------------------------------------- loading


@dataclass(frozen=True)
class EvaluationSet:
    """The ``scores.json`` files of one input folder, by (run, range)."""

    name: str
    path: Path
    scores: Mapping[Pair, Mapping[str, Any]]
    files: Mapping[Pair, Path]
    # An ``evalkit calibrate`` folder's items and labels (for the A/B test), else None;
    # or why its calibration.json cannot be A/B tested.
    calibration: SavedCalibration | None = None
    calibration_problem: str | None = None


def _scores_files(folder: Path) -> list[Path]:
    if (folder / SCORES_NAME).is_file():
        return [folder / SCORES_NAME]
    found = [
        path
        for path in sorted(folder.rglob(SCORES_NAME))
        # Hidden folders hold staged, retired or kept-aside evaluations, not this set's.
        if not any(part.startswith(".") for part in path.relative_to(folder).parts)
    ]
    return found


def load_set(path: str | Path, name: str | None = None) -> EvaluationSet:
    """Read every ``scores.json`` of ``path``; two for the same (run, range) are refused."""
    folder = Path(path)
    if not folder.is_dir():
        raise EvalkitError("evaluation folder is missing", path=folder)
    files = _scores_files(folder)
    if not files:
        raise EvalkitError(f"no {SCORES_NAME} in or below this folder", path=folder)
    scores: dict[Pair, Mapping[str, Any]] = {}
    where: dict[Pair, Path] = {}
    for file in files:
        # The folder was named by the user; a scores.json leading out of it is not read.
        data = read_json(file, folder, what="scores.json")
        try:
            pair = (str(data["meta"]["run_id"]), str(data["meta"]["range"]))
            if not isinstance(data["checkpoints"], list) or not isinstance(data["summary"], dict):
                raise TypeError("checkpoints must be a list and summary an object")
        except (KeyError, TypeError) as exc:
            raise EvalkitError(f"not a readable scores.json: {exc}", path=file) from exc
        if pair in scores:
            raise EvalkitError(
                f"two evaluations of {'/'.join(pair)} ({where[pair]} and {file}); "
                "give each evaluation set its own folder",
                path=folder,
            )
        scores[pair] = data
        where[pair] = file
    label = name or str(path)
    calibration, problem = None, None
    if is_calibration(folder):
        try:
            calibration = load_calibration(folder, label)
        except EvalkitError as exc:
            problem = exc.message
    return EvaluationSet(
        name=label,
        path=folder,
        scores=scores,
        files=where,
        calibration=calibration,
        calibration_problem=problem,
    )


def check_same_inputs(sets: Sequence[EvaluationSet]) -> None:
    """Refuse sets that evaluated one (run, range) from different checklist or documents."""
    seen: dict[Pair, tuple[str, Mapping[str, Any]]] = {}
    for evaluation_set in sets:
        for pair, data in evaluation_set.scores.items():
            inputs = data["meta"].get("inputs") or {}
            if pair not in seen:
                seen[pair] = (evaluation_set.name, inputs)
                continue
            first_name, first = seen[pair]
            differ = [key for key in INPUT_KEYS if first.get(key) != inputs.get(key)]
            if differ:
                raise EvalkitError(
                    f"refusing to mix: {first_name} and {evaluation_set.name} evaluated "
                    f"{'/'.join(pair)} from different inputs ({', '.join(differ)} differs)"
                )


def load_sets(paths: Sequence[str | Path], names: Sequence[str] = ()) -> list[EvaluationSet]:
    """Load and check the sets to compare; the first is the baseline."""
    if len(paths) < 2:
        raise EvalkitError("compare needs at least two evaluation folders")
    given = list(names) + [str(p) for p in paths[len(names) :]]
    unique = [
        name if given.count(name) == 1 else f"{name} #{i + 1}" for i, name in enumerate(given)
    ]
    sets = [load_set(path, name) for path, name in zip(paths, unique, strict=True)]
    check_same_inputs(sets)
    return sets


# --------------------------------------------------------------------------- cells


def _cells(data: Mapping[str, Any]) -> dict[tuple[str, str], int | str]:
    """(chk_id, target) -> 0/1, or ``"error"`` (target ``status``) for an errored item.

    Targets: the five sub-scores, and ``penalty:<rule>`` for every rule applied.
    """
    cells: dict[tuple[str, str], int | str] = {}
    for item in data["checkpoints"]:
        chk_id = item["chk_id"]
        if item.get("status") == "error":
            cells[(chk_id, "status")] = "error"
            continue
        cells[(chk_id, "status")] = "scored"
        for dimension, names in SUBSCORES.items():
            block = item.get(dimension)
            if block:
                for name in names:
                    cells[(chk_id, name)] = int(block[name])
        for penalty in item.get("penalties") or []:
            cells[(chk_id, f"penalty:{penalty['rule']}")] = 1
    return cells


def _pct(block: Mapping[str, Any] | None) -> float | None:
    return None if not block else block.get("pct")


def _delta(before: float | None, after: float | None) -> float | None:
    return None if before is None or after is None else round(after - before, 1)


# --------------------------------------------------------------------------- comparing


@dataclass(frozen=True)
class Comparison:
    """What :func:`compare` found; :meth:`to_dict` is ``compare.json``."""

    sets: tuple[Mapping[str, Any], ...]  # name, path, pairs
    baseline: str
    changes: tuple[Mapping[str, Any], ...]  # one row per changed cell or item
    pairs: tuple[Mapping[str, Any], ...]  # per (set, run, range) vs baseline: deltas, modes
    capabilities: tuple[Mapping[str, Any], ...]
    ranges: tuple[Mapping[str, Any], ...]
    kappa: Mapping[str, Mapping[str, Agreement]]  # set -> sub-score -> Agreement vs baseline
    leaderboard: tuple[Mapping[str, Any], ...]
    resamples: int
    seed: int
    # set -> its A/B test against the baseline's labels (both calibration folders), or why
    # there is none; empty when no set is a calibration.
    ab: Mapping[str, AbTest | str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "baseline": self.baseline,
            "summary": summary_lines(self),
            "sets": [dict(s) for s in self.sets],
            "bootstrap": {"resamples": self.resamples, "seed": self.seed, "level": 0.95},
            "changes": [dict(row) for row in self.changes],
            "pairs": [dict(row) for row in self.pairs],
            "capabilities": [dict(row) for row in self.capabilities],
            "ranges": [dict(row) for row in self.ranges],
            "kappa": {
                name: {target: value.to_dict() for target, value in targets.items()}
                for name, targets in self.kappa.items()
            },
            "leaderboard": [dict(row) for row in self.leaderboard],
            "ab": {
                name: (test.to_dict() if isinstance(test, AbTest) else {"skipped": test})
                for name, test in self.ab.items()
            },
        }

    def frame(self, table: str) -> pd.DataFrame:
        """``changes``, ``pairs``, ``capabilities``, ``ranges`` or ``leaderboard`` as a frame
        (numbers rounded, undefined as n/a)."""
        return display_frame(getattr(self, table))

    def kappa_frame(self) -> pd.DataFrame:
        return display_frame(kappa_rows(self))


def _item_changes(
    name: str, pair: Pair, before: Mapping[str, Any], after: Mapping[str, Any]
) -> list[dict[str, Any]]:
    old, new = _cells(before), _cells(after)
    old_items = {chk for chk, _ in old}
    new_items = {chk for chk, _ in new}
    key = {"set": name, "run": pair[0], "range": pair[1]}
    rows: list[dict[str, Any]] = []
    order = [chk for chk in dict.fromkeys([*(c for c, _ in old), *(c for c, _ in new)])]
    for chk in order:
        if chk not in new_items:
            rows.append({**key, "chk_id": chk, "change": "removed", "target": None})
            continue
        if chk not in old_items:
            rows.append({**key, "chk_id": chk, "change": "added", "target": None})
            continue
        was, now = old[(chk, "status")], new[(chk, "status")]
        if was != now or was == "error":
            change = {"error": "errored", "scored": "recovered"}[str(now)]
            if was == now:
                change = "errored in both"
            rows.append({**key, "chk_id": chk, "change": change, "target": None})
            continue
        targets = dict.fromkeys(t for c, t in [*old, *new] if c == chk and t != "status")
        for target in targets:
            a, b = old.get((chk, target), 0), new.get((chk, target), 0)
            if a != b:
                kind = "penalty" if target.startswith("penalty:") else "sub-score"
                rows.append(
                    {
                        **key,
                        "chk_id": chk,
                        "change": kind,
                        "target": target,
                        "before": a,
                        "after": b,
                    }
                )
    return rows


def _pair_row(
    name: str, pair: Pair, before: Mapping[str, Any] | None, after: Mapping[str, Any]
) -> dict[str, Any]:
    old = before["summary"] if before else None
    new = after["summary"]
    row: dict[str, Any] = {"set": name, "run": pair[0], "range": pair[1]}
    for dimension in ("detection", "plan"):
        a = _pct(old[dimension]) if old else None
        b = _pct(new[dimension])
        row[f"{dimension}_before"] = a
        row[f"{dimension}_after"] = b
        row[f"{dimension}_delta"] = _delta(a, b)
    row["mode_before"] = old["diagnosis"] if old else None
    row["mode_after"] = new["diagnosis"]
    row["mode_changed"] = bool(old) and row["mode_before"] != row["mode_after"]
    row["status"] = "both" if before else "added"
    return row


def _capability_rows(
    name: str, pair: Pair, before: Mapping[str, Any], after: Mapping[str, Any]
) -> list[dict[str, Any]]:
    old = before["summary"].get("capabilities") or {}
    new = after["summary"].get("capabilities") or {}
    rows = []
    for cap in dict.fromkeys([*old, *new]):
        row: dict[str, Any] = {"set": name, "run": pair[0], "range": pair[1], "cap": cap}
        for dimension in ("detection", "plan"):
            a = _pct((old.get(cap) or {}).get(dimension))
            b = _pct((new.get(cap) or {}).get(dimension))
            row[f"{dimension}_before"], row[f"{dimension}_after"] = a, b
            row[f"{dimension}_delta"] = _delta(a, b)
        rows.append(row)
    return rows


def _range_totals(
    scores: Mapping[Pair, Mapping[str, Any]], pairs: Sequence[Pair]
) -> dict[str, dict[str, Any]]:
    """Per range: detection and plan pooled over ``pairs`` (score and max summed)."""
    totals: dict[str, dict[str, list[int]]] = {}
    for pair in pairs:
        summary = scores[pair]["summary"]
        entry = totals.setdefault(pair[1], {"detection": [0, 0], "plan": [0, 0]})
        for dimension in ("detection", "plan"):
            entry[dimension][0] += int(summary[dimension]["score"])
            entry[dimension][1] += int(summary[dimension]["max"])
    out: dict[str, dict[str, Any]] = {}
    for range_id, entry in totals.items():
        detection, plan = tally(*entry["detection"]), tally(*entry["plan"])
        out[range_id] = {
            "detection": detection.pct,
            "plan": plan.pct,
            "mode": diagnose(detection.level, plan.level),
        }
    return out


def _subscore_pairs(
    before: Mapping[str, Any], after: Mapping[str, Any]
) -> dict[str, tuple[list[int], list[int]]]:
    old, new = _cells(before), _cells(after)
    out: dict[str, tuple[list[int], list[int]]] = {}
    for (chk, target), value in old.items():
        if target.startswith("penalty:") or target == "status":
            continue
        other = new.get((chk, target))
        if isinstance(value, int) and isinstance(other, int):
            a, b = out.setdefault(target, ([], []))
            a.append(value)
            b.append(other)
    return out


def compare(
    sets: Sequence[EvaluationSet],
    *,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> Comparison:
    """Compare every set with the first; pure (the sets are already loaded and checked)."""
    if len(sets) < 2:
        raise EvalkitError("compare needs at least two evaluation sets")
    check_same_inputs(sets)
    base = sets[0]
    changes: list[dict[str, Any]] = []
    pair_rows: list[dict[str, Any]] = []
    cap_rows: list[dict[str, Any]] = []
    range_rows: list[dict[str, Any]] = []
    kappa: dict[str, dict[str, Agreement]] = {}
    for other in sets[1:]:
        shared = [pair for pair in base.scores if pair in other.scores]
        for pair in base.scores:
            if pair not in other.scores:
                changes.append(
                    {
                        "set": other.name,
                        "run": pair[0],
                        "range": pair[1],
                        "chk_id": None,
                        "change": "pair removed",
                        "target": None,
                    }
                )
        for pair in other.scores:
            if pair not in base.scores:
                changes.append(
                    {
                        "set": other.name,
                        "run": pair[0],
                        "range": pair[1],
                        "chk_id": None,
                        "change": "pair added",
                        "target": None,
                    }
                )
                pair_rows.append(_pair_row(other.name, pair, None, other.scores[pair]))
        reference: dict[str, list[int]] = {}
        predicted: dict[str, list[int]] = {}
        for pair in shared:
            before, after = base.scores[pair], other.scores[pair]
            changes.extend(_item_changes(other.name, pair, before, after))
            pair_rows.append(_pair_row(other.name, pair, before, after))
            cap_rows.extend(_capability_rows(other.name, pair, before, after))
            for target, (a, b) in _subscore_pairs(before, after).items():
                reference.setdefault(target, []).extend(a)
                predicted.setdefault(target, []).extend(b)
        targets = [name for names in SUBSCORES.values() for name in names]
        kappa[other.name] = {
            target: agreement(
                reference.get(target, []), predicted.get(target, []), resamples=resamples, seed=seed
            )
            for target in targets
        }
        kappa[other.name][ALL_SUBSCORES] = agreement(
            [v for t in targets for v in reference.get(t, [])],
            [v for t in targets for v in predicted.get(t, [])],
            resamples=resamples,
            seed=seed,
        )
        before_ranges = _range_totals(base.scores, shared)
        after_ranges = _range_totals(other.scores, shared)
        for range_id, old in before_ranges.items():
            new = after_ranges[range_id]
            range_rows.append(
                {
                    "set": other.name,
                    "range": range_id,
                    "runs": sum(1 for pair in shared if pair[1] == range_id),
                    "detection_before": old["detection"],
                    "detection_after": new["detection"],
                    "detection_delta": _delta(old["detection"], new["detection"]),
                    "plan_before": old["plan"],
                    "plan_after": new["plan"],
                    "plan_delta": _delta(old["plan"], new["plan"]),
                    "mode_before": old["mode"],
                    "mode_after": new["mode"],
                }
            )
    return Comparison(
        sets=tuple(
            {"name": s.name, "path": str(s.path), "pairs": ["/".join(p) for p in s.scores]}
            for s in sets
        ),
        baseline=base.name,
        changes=tuple(changes),
        pairs=tuple(pair_rows),
        capabilities=tuple(cap_rows),
        ranges=tuple(range_rows),
        kappa=kappa,
        leaderboard=tuple(_leaderboard(sets)),
        resamples=resamples,
        seed=seed,
        ab=_ab_tests(sets, resamples, seed),
    )


def _ab_tests(sets: Sequence[EvaluationSet], resamples: int, seed: int) -> dict[str, AbTest | str]:
    """Each set's A/B test against the baseline, when both are calibration folders."""
    base = sets[0]
    if not any(s.calibration or s.calibration_problem for s in sets):
        return {}
    out: dict[str, AbTest | str] = {}
    for other in sets[1:]:
        problem = base.calibration_problem or other.calibration_problem
        if problem:
            out[other.name] = f"no A/B test: {problem}"
        elif base.calibration is None or other.calibration is None:
            out[other.name] = "no A/B test: both sets must be evalkit calibrate folders"
        else:
            try:
                out[other.name] = ab_test(
                    base.calibration, other.calibration, resamples=resamples, seed=seed
                )
            except EvalkitError as exc:
                out[other.name] = f"no A/B test: {exc.message}"
    return out


def _leaderboard(sets: Sequence[EvaluationSet]) -> list[dict[str, Any]]:
    rows = []
    for evaluation_set in sets:
        for (run_id, range_id), data in evaluation_set.scores.items():
            summary, meta = data["summary"], data["meta"]
            rows.append(
                {
                    "set": evaluation_set.name,
                    "run": run_id,
                    "range": range_id,
                    "detection_pct": _pct(summary["detection"]),
                    "plan_pct": _pct(summary["plan"]),
                    "mode": summary["diagnosis"],
                    "complete": summary["complete"],
                    "judge": meta.get("judge"),
                    "evaluator_model": meta.get("evaluator_model"),
                    "cost_usd": (meta.get("usage") or {}).get("cost_usd"),
                }
            )
    return sorted(rows, key=lambda row: (row["run"], row["range"]))


# --------------------------------------------------------------------------- outputs


def summary_lines(result: Comparison) -> list[str]:
    """One line per compared set: what moved against the baseline."""
    lines = []
    for name, targets in result.kappa.items():
        rows = [row for row in result.changes if row["set"] == name]
        moved = [row for row in rows if row["change"] == "sub-score"]
        by_target: dict[str, int] = {}
        for row in moved:
            by_target[row["target"]] = by_target.get(row["target"], 0) + 1
        kinds = {
            kind: sum(1 for row in rows if row["change"] == kind)
            for kind in ("added", "removed", "errored", "recovered", "pair added", "pair removed")
        }
        modes = sum(1 for row in result.pairs if row["set"] == name and row["mode_changed"])
        pooled = targets[ALL_SUBSCORES]
        kappa = "n/a" if pooled.kappa is None else f"{pooled.kappa:.2f}"
        moved_text = ", ".join(f"{t} {n}" for t, n in by_target.items()) or "none"
        extra = ", ".join(f"{k} {n}" for k, n in kinds.items() if n)
        lines.append(
            f"{name} vs {result.baseline}: {len(moved)} sub-score(s) changed ({moved_text}); "
            f"kappa {kappa}; {modes} mode(s) changed" + (f"; {extra}" if extra else "")
        )
        test = result.ab.get(name)
        if test is not None:
            lines.append(
                f"A/B against the labels: {test.headline() if isinstance(test, AbTest) else test}"
            )
    return lines


def kappa_rows(result: Comparison) -> list[dict[str, Any]]:
    """Per set and sub-score: kappa with the baseline, and how many sub-scores changed."""
    return [
        {
            "set": name,
            "target": target,
            "n": value.n,
            "accuracy": value.accuracy,
            "kappa": value.kappa,
            "kappa_ci95": value.intervals.get("kappa"),
            "changed": value.confusion.fn + value.confusion.fp,
        }
        for name, targets in result.kappa.items()
        for target, value in targets.items()
    ]


def report_markdown(result: Comparison) -> str:
    """``compare-report.md``; numbers rounded (2 decimals, percentages 1), undefined n/a."""
    lines = [
        f"# Comparison against {md_cell(result.baseline)}",
        "",
        *[f"- {md_cell(line)}" for line in summary_lines(result)],
        "",
        "Sub-scores are those of `scores.json` (after grounding and penalties). Kappa is "
        f"Cohen's, with a percentile bootstrap 95 % interval ({result.resamples} resamples, "
        f"seed {result.seed}); see docs/calibration.md.",
        "",
        "## Kappa between the evaluations",
        "",
        markdown_table(kappa_rows(result)),
        "",
        "## Deltas per (run, range) and diagnostic modes",
        "",
        markdown_table(result.pairs),
        "",
        "## Deltas per range",
        "",
        markdown_table(result.ranges),
        "",
        "## Deltas per CAP",
        "",
        markdown_table(result.capabilities),
        "",
        "## What changed, per checkpoint and sub-score",
        "",
        markdown_table(result.changes, CHANGE_COLUMNS),
        "",
        "## Leaderboard",
        "",
        markdown_table(result.leaderboard),
        "",
    ]
    for name, test in result.ab.items():
        if isinstance(test, AbTest):
            lines += [*report_lines(test), ""]
        else:
            lines += [f"## A/B against the labels: {md_cell(name)}", "", md_cell(test), ""]
    return "\n".join(lines).rstrip() + "\n"


def delta_bars(result: Comparison) -> Figure:
    """Detection and plan deltas per (run, range), one group of bars per compared set."""
    import matplotlib.pyplot as plt

    rows = [row for row in result.pairs if row["status"] == "both"]
    labels = list(dict.fromkeys(f"{row['run']}/{row['range']}" for row in rows))
    names = list(dict.fromkeys(row["set"] for row in rows))
    figure, axes = plt.subplots(1, 2, figsize=(11, 0.5 * max(4, len(labels)) + 1), sharey=True)
    height = 0.8 / max(1, len(names))
    for axis, dimension in zip(axes, ("detection", "plan"), strict=True):
        for index, name in enumerate(names):
            values = {
                f"{row['run']}/{row['range']}": row[f"{dimension}_delta"]
                for row in rows
                if row["set"] == name
            }
            ys = [i + (index - (len(names) - 1) / 2) * height for i in range(len(labels))]
            xs = [values.get(label) or 0.0 for label in labels]
            axis.barh(ys, xs, height=height, label=name)
        axis.axvline(0, color="grey", linewidth=0.8)
        axis.set_title(f"{dimension}: change in percentage points")
        axis.set_yticks(range(len(labels)), labels)
    axes[0].legend(fontsize=8, title=f"vs {result.baseline}")
    figure.tight_layout()
    return figure


def slope_chart(result: Comparison) -> Figure:
    """Per (run, range), detection and plan percentage in every set, left to right."""
    import matplotlib.pyplot as plt

    names = [s["name"] for s in result.sets]
    board: dict[str, dict[str, dict[str, float | None]]] = {}
    for row in result.leaderboard:
        label = f"{row['run']}/{row['range']}"
        board.setdefault(label, {})[row["set"]] = {
            "detection": row["detection_pct"],
            "plan": row["plan_pct"],
        }
    figure, axes = plt.subplots(1, 2, figsize=(11, 4.5), sharey=True)
    for axis, dimension in zip(axes, ("detection", "plan"), strict=True):
        for label, by_set in board.items():
            points = [
                (i, by_set[name][dimension])
                for i, name in enumerate(names)
                if name in by_set and by_set[name][dimension] is not None
            ]
            if points:
                axis.plot([p[0] for p in points], [p[1] for p in points], marker="o", label=label)
        axis.axhline(70, color="grey", linestyle="--", linewidth=0.8)
        axis.set_xticks(range(len(names)), [Path(n).name or n for n in names], rotation=15)
        axis.set_title(f"{dimension} % (>= 70 strong)")
        axis.set_ylim(-2, 102)
    axes[1].legend(fontsize=7, loc="lower right")
    figure.tight_layout()
    return figure


def write_outputs(result: Comparison, out_dir: str | Path) -> dict[str, Path]:
    import matplotlib.pyplot as plt

    from ..fileio import write_text_atomic
    from ..render.plots import save_figure

    folder = Path(out_dir)
    paths = {
        "json": folder / JSON_NAME,
        "report": folder / REPORT_NAME,
        "delta_bars": folder / DELTA_PNG,
        "slope_chart": folder / SLOPE_PNG,
    }
    write_text_atomic(
        paths["json"], json.dumps(result.to_dict(), indent=2, ensure_ascii=False) + "\n"
    )
    write_text_atomic(paths["report"], report_markdown(result))
    for name, figure in (("delta_bars", delta_bars(result)), ("slope_chart", slope_chart(result))):
        save_figure(figure, paths[name], dpi=110)
        plt.close(figure)
    return paths
