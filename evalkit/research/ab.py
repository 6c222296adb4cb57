"""A/B test of two judges against the same labels: which one agrees better, and by how much.

The inputs are two calibrations (``evalkit calibrate`` folders) of the same pairs:
their ``calibration.json`` keeps every compared item (the judge's value, the
reference label's, the reference labeller's name, the flip rate with repeats).
They must hold the same items with the same reference labels; anything else is
refused, since the difference would no longer measure the judges alone.

Per sub-score, per penalty rule and pooled (``all sub-scores``, ``all penalties``):

* each judge's Cohen's kappa with the labels, with its interval;
* the difference B - A (Δκ) with a **paired** bootstrap interval: both judges
  are measured on the same resampled clusters (whole checkpoints, or pairs then
  checkpoints from :data:`~evalkit.research.resample.MIN_PAIRS` pairs on);
* McNemar's exact test on per-item agreement with the label;
* a verdict: B (or A) agrees better when the Δκ interval excludes 0; where it
  does not but McNemar's p is below 0.05, the judge right on more items is named
  (kappa can stay put while accuracy moves, e.g. a judge that gives one class
  everywhere has kappa 0 whichever class it gives); else the target did not move
  beyond noise;
* with repeats, each judge's mean flip rate (how often two of its samples disagree).

Pure functions over plain dataclasses, apart from :func:`load_calibration` and
:func:`write_outputs`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import EvalkitError
from ..render.mdcell import escape_html, md_cell
from ..workspace import read_json
from .items import (
    TARGETS,
    members_of,
)
from .paired import McNemar, PairedDelta, excludes_zero, mcnemar, paired_metric
from .report_format import (
    Formatted,
    fmt,
    fmt_interval,
    fmt_p,
    fmt_signed,
    markdown_table,
    write_json_and_report,
)
from .resample import MIN_PAIRS, UNIT_PAIRS, Clusters, resampling_unit
from .stats import DEFAULT_RESAMPLES, DEFAULT_SEED

__all__ = [
    "CALIBRATION_JSON",
    "JSON_NAME",
    "REPORT_NAME",
    "AbItem",
    "AbTarget",
    "AbTest",
    "SavedCalibration",
    "ab_test",
    "is_calibration",
    "load_calibration",
    "pair_up",
    "report_markdown",
    "write_outputs",
]

CALIBRATION_JSON = "calibration.json"
ALPHA = 0.05  # McNemar's level for "right more often" where kappa did not move
JSON_NAME = "ab.json"
REPORT_NAME = "ab-report.md"
Key = tuple[str, str, str, str]  # run, range, chk_id, target


@dataclass(frozen=True)
class SavedItem:
    """One item of a saved calibration: the judge's value beside the reference label's."""

    run: str
    range: str
    chk_id: str
    target: str
    judge: int
    label: int
    labeller: str
    flip_rate: float | None

    @property
    def key(self) -> Key:
        return (self.run, self.range, self.chk_id, self.target)


@dataclass(frozen=True)
class SavedCalibration:
    """What an A/B test reads of one calibration folder."""

    name: str
    path: Path
    judge: Mapping[str, Any]
    pairs: tuple[str, ...]
    reference: Mapping[str, str]  # "run/range" -> labeller
    items: tuple[SavedItem, ...]

    @property
    def repeats(self) -> int:
        return int(self.judge.get("repeats") or 1)


def is_calibration(folder: str | Path) -> bool:
    return (Path(folder) / CALIBRATION_JSON).is_file()


def load_calibration(folder: str | Path, name: str | None = None) -> SavedCalibration:
    """Read ``calibration.json`` of an ``evalkit calibrate`` folder."""
    path = Path(folder) / CALIBRATION_JSON
    if not path.exists():
        raise EvalkitError(f"not a calibration folder (no {CALIBRATION_JSON})", path=Path(folder))
    # The folder was named by the user; nothing in it is read through a link out of it.
    data = read_json(path, folder, what=CALIBRATION_JSON)
    try:
        judge, pairs = data["judge"], data["pairs"]
        reference, rows = data["reference_labeller"], data.get("items")
    except (KeyError, TypeError, AttributeError) as exc:
        raise EvalkitError(f"not a readable {CALIBRATION_JSON}: {exc}", path=path) from exc
    if rows is None:
        raise EvalkitError(
            "this calibration keeps no items (written by an older evalkit): "
            "run evalkit calibrate again",
            path=path,
        )
    try:
        items = tuple(
            SavedItem(
                run=str(row["run"]),
                range=str(row["range"]),
                chk_id=str(row["chk_id"]),
                target=str(row["target"]),
                judge=int(row["judge"]),
                label=int(row["label"]),
                labeller=str(row["labeller"]),
                flip_rate=None if row.get("flip_rate") is None else float(row["flip_rate"]),
            )
            for row in rows
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise EvalkitError(f"an item of {CALIBRATION_JSON} is malformed: {exc}", path=path) from exc
    return SavedCalibration(
        name=name or Path(folder).name or str(folder),
        path=Path(folder),
        judge=dict(judge),
        pairs=tuple(str(p) for p in pairs),
        reference={str(k): str(v) for k, v in dict(reference).items()},
        items=items,
    )


# --------------------------------------------------------------------------- pairing up


@dataclass(frozen=True)
class AbItem:
    """One item both judges read: the reference label, A's value and B's."""

    run: str
    range: str
    chk_id: str
    target: str
    label: int
    a: int
    b: int
    flip_a: float | None = None
    flip_b: float | None = None

    @property
    def pair(self) -> str:
        return f"{self.run}/{self.range}"

    @property
    def checkpoint(self) -> str:
        return f"{self.run}/{self.range}/{self.chk_id}"


def _example(keys: Sequence[Key]) -> str:
    run, range_id, chk_id, target = sorted(keys)[0]
    more = f" and {len(keys) - 1} more" if len(keys) > 1 else ""
    return f"{run}/{range_id} {chk_id} {target}{more}"


def pair_up(a: SavedCalibration, b: SavedCalibration) -> list[AbItem]:
    """The items of A and B, paired; refuses calibrations of different pairs, items or labels."""
    if set(a.pairs) != set(b.pairs):
        only_a = sorted(set(a.pairs) - set(b.pairs))
        only_b = sorted(set(b.pairs) - set(a.pairs))
        parts = [f"only {a.name}: {', '.join(only_a)}"] if only_a else []
        parts += [f"only {b.name}: {', '.join(only_b)}"] if only_b else []
        raise EvalkitError(
            f"refusing the A/B: {a.name} and {b.name} calibrated different pairs "
            f"({'; '.join(parts)})"
        )
    for pair in sorted(a.pairs):
        if a.reference.get(pair) != b.reference.get(pair):
            raise EvalkitError(
                f"refusing the A/B: different labels for {pair} (reference labeller "
                f"{a.reference.get(pair)} in {a.name}, {b.reference.get(pair)} in {b.name})"
            )
    by_key_b = {item.key: item for item in b.items}
    keys_a = [item.key for item in a.items]
    only_a_keys = [key for key in keys_a if key not in by_key_b]
    only_b_keys = sorted(set(by_key_b) - set(keys_a))
    if only_a_keys or only_b_keys:
        side, keys = (a.name, only_a_keys) if only_a_keys else (b.name, only_b_keys)
        raise EvalkitError(
            f"refusing the A/B: {a.name} and {b.name} compared different items "
            f"(only in {side}: {_example(keys)}; a checkpoint the judge errored on is left "
            "out of its calibration)"
        )
    relabelled = [item.key for item in a.items if by_key_b[item.key].label != item.label]
    if relabelled:
        raise EvalkitError(
            f"refusing the A/B: the labels differ between {a.name} and {b.name} "
            f"({_example(relabelled)}); calibrate both against the same label files"
        )
    return [
        AbItem(
            run=item.run,
            range=item.range,
            chk_id=item.chk_id,
            target=item.target,
            label=item.label,
            a=item.judge,
            b=by_key_b[item.key].judge,
            flip_a=item.flip_rate,
            flip_b=by_key_b[item.key].flip_rate,
        )
        for item in a.items
    ]


# --------------------------------------------------------------------------- the test


@dataclass(frozen=True)
class AbTarget:
    """One target's A/B: both kappas, the paired difference, McNemar, flip rates, verdict."""

    target: str
    kappa: PairedDelta
    mcnemar: McNemar
    flip_a: float | None
    flip_b: float | None
    verdict: str
    moved: str | None  # the name of the judge that agrees better beyond noise, else None
    # The judge right on more items by McNemar's test (p < ALPHA) where kappa did not move.
    more_often: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "target": self.target,
            "kappa": self.kappa.to_dict(),
            "mcnemar": self.mcnemar.to_dict(),
            "flip_rate": {"a": self.flip_a, "b": self.flip_b},
            "moved": self.moved,
            "right_more_often": self.more_often,
            "verdict": self.verdict,
        }


@dataclass(frozen=True)
class AbTest:
    """An A/B test of two judges on the same items; :meth:`to_dict` is ``ab.json``."""

    a: str
    b: str
    judges: tuple[Mapping[str, Any], Mapping[str, Any]]
    paths: tuple[str, str]
    pairs: tuple[str, ...]
    reference: Mapping[str, str]
    repeats: tuple[int, int]
    targets: tuple[AbTarget, ...]
    resamples: int
    seed: int
    min_pairs: int

    @property
    def unit(self) -> str:
        pairs = tuple(self.pairs)
        return resampling_unit(Clusters(pairs, pairs), self.min_pairs)

    def headline(self) -> str:
        """One line: the targets that moved beyond noise, and that nothing else did."""
        moved = [target for target in self.targets if target.moved or target.more_often]
        if not moved:
            return f"{self.b} vs {self.a}: no target moved beyond noise"
        parts = [
            f"{t.moved} agrees better on {t.target}: Δκ {fmt_signed(t.kappa.delta)} "
            f"{fmt_interval(t.kappa.delta_interval)}"
            if t.moved
            else f"{t.more_often} is right more often on {t.target} "
            f"(McNemar p {fmt_p(t.mcnemar.p_value)})"
            for t in moved
        ]
        rest = "no other target moved beyond noise" if len(moved) < len(self.targets) else ""
        return "; ".join([*parts, *([rest] if rest else [])])

    def to_dict(self) -> dict[str, Any]:
        return {
            "a": {"name": self.a, "path": self.paths[0], "judge": dict(self.judges[0])},
            "b": {"name": self.b, "path": self.paths[1], "judge": dict(self.judges[1])},
            "pairs": list(self.pairs),
            "reference_labeller": dict(self.reference),
            "repeats": {"a": self.repeats[0], "b": self.repeats[1]},
            "bootstrap": {
                "resamples": self.resamples,
                "seed": self.seed,
                "level": 0.95,
                "unit": self.unit,
                "min_pairs_for_pair_resampling": self.min_pairs,
            },
            "headline": self.headline(),
            "targets": [target.to_dict() for target in self.targets],
        }


def _of(items: Sequence[AbItem], target: str) -> list[AbItem]:
    members = members_of(target)
    return [item for item in items if item.target in members]


def _mean(values: Sequence[float | None]) -> float | None:
    known = [value for value in values if value is not None]
    return sum(known) / len(known) if known else None


def _right_more_often(a: str, b: str, test: McNemar) -> str | None:
    if test.p_value is None or test.p_value >= ALPHA:
        return None
    return b if test.b_only > test.a_only else a


def _verdict(target: str, a: str, b: str, kappa: PairedDelta, test: McNemar) -> str:
    p = f"McNemar p {fmt_p(test.p_value)}" if test.discordant else "no item differs"
    delta = f"Δκ {fmt_signed(kappa.delta)} {fmt_interval(kappa.delta_interval)}"
    if kappa.delta is None:
        which = " and ".join(name for name, value in ((a, kappa.a), (b, kappa.b)) if value is None)
        return f"{target}: no verdict, kappa is undefined for {which} ({p})"
    if excludes_zero(kappa.delta_interval):
        better = b if kappa.delta > 0 else a
        return f"{better} agrees better on {target}: {delta} ({p})"
    more = _right_more_often(a, b, test)
    if more is not None:
        count = abs(test.b_only - test.a_only)
        # One conclusion: the judge right more often, by the paired test on the items;
        # kappa, which could not separate them here, is given as what it measured.
        return (
            f"{more} is right more often on {target}: on {count} more item(s) ({p});"
            f" kappa does not separate them here ({delta})"
        )
    return f"{target}: no difference beyond noise, {delta} ({p})"


def ab_test(
    a: SavedCalibration,
    b: SavedCalibration,
    *,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    min_pairs: int = MIN_PAIRS,
) -> AbTest:
    """The A/B test of ``b`` against ``a`` (see the module docstring); refuses as
    :func:`pair_up` does."""
    items = pair_up(a, b)
    targets = []
    for target in TARGETS:
        chosen = _of(items, target)
        kappa = paired_metric(
            [item.label for item in chosen],
            [item.a for item in chosen],
            [item.b for item in chosen],
            Clusters(tuple(i.checkpoint for i in chosen), tuple(i.pair for i in chosen)),
            resamples=resamples,
            seed=seed,
            min_pairs=min_pairs,
        )
        test = mcnemar(
            [item.a == item.label for item in chosen], [item.b == item.label for item in chosen]
        )
        moved = None
        if kappa.delta is not None and excludes_zero(kappa.delta_interval):
            moved = b.name if kappa.delta > 0 else a.name
        targets.append(
            AbTarget(
                target=target,
                kappa=kappa,
                mcnemar=test,
                flip_a=_mean([item.flip_a for item in chosen]),
                flip_b=_mean([item.flip_b for item in chosen]),
                verdict=_verdict(target, a.name, b.name, kappa, test),
                moved=moved,
                more_often=None if moved else _right_more_often(a.name, b.name, test),
            )
        )
    return AbTest(
        a=a.name,
        b=b.name,
        judges=(a.judge, b.judge),
        paths=(str(a.path), str(b.path)),
        pairs=tuple(sorted(a.pairs)),
        reference=dict(a.reference),
        repeats=(a.repeats, b.repeats),
        targets=tuple(targets),
        resamples=resamples,
        seed=seed,
        min_pairs=min_pairs,
    )


# --------------------------------------------------------------------------- outputs


def _with(text: str, point: float | None, interval: tuple[float, float] | None) -> Formatted:
    """``0.74 [0.67, 0.79]``; ``n/a`` alone when the point is undefined."""
    if point is None:
        return Formatted("n/a")
    return Formatted(text + (f" {fmt_interval(interval)}" if interval else ""))


def table_rows(result: AbTest) -> list[dict[str, Any]]:
    """One row per target, formatted; flip rates only when either judge drew repeats."""
    repeats = max(result.repeats) > 1
    rows = []
    for t in result.targets:
        row: dict[str, Any] = {
            "target": t.target,
            "n": t.kappa.n,
            f"κ {result.a}": _with(fmt(t.kappa.a), t.kappa.a, t.kappa.a_interval),
            f"κ {result.b}": _with(fmt(t.kappa.b), t.kappa.b, t.kappa.b_interval),
            "Δκ": _with(fmt_signed(t.kappa.delta), t.kappa.delta, t.kappa.delta_interval),
            f"only {result.a} right": t.mcnemar.a_only,
            f"only {result.b} right": t.mcnemar.b_only,
            "McNemar p": Formatted(fmt_p(t.mcnemar.p_value)),
        }
        if repeats:
            row[f"flip rate {result.a}"] = t.flip_a
            row[f"flip rate {result.b}"] = t.flip_b
        rows.append(row)
    return rows


def describe(judge: Mapping[str, Any]) -> str:
    parts = [str(judge.get("name")), str(judge.get("evaluator_model"))]
    if judge.get("prompt_version") or judge.get("prompt_sha256"):
        sha = str(judge.get("prompt_sha256") or "")[:12]
        parts.append(f"prompt {judge.get('prompt_version') or 'unversioned'} {sha}".strip())
    parts.append(f"repeats {judge.get('repeats') or 1}")
    return ", ".join(parts)


def report_lines(result: AbTest, level: str = "##") -> list[str]:
    """The A/B section: headline, verdicts, the table (used by ``ab-report.md`` and by
    ``compare-report.md``)."""
    unit = result.unit
    why = (
        f"{len(result.pairs)} pair(s), fewer than {result.min_pairs}: checkpoints only, so "
        "the interval does not carry the variation between documents"
        if unit != UNIT_PAIRS
        else f"{len(result.pairs)} pairs"
    )
    labels = ", ".join(f"{pair}: {labeller}" for pair, labeller in result.reference.items())
    return [
        f"{level} A/B against the labels: {md_cell(result.b)} vs {md_cell(result.a)}",
        "",
        f"**{escape_html(result.headline())}**",
        "",
        *[f"- {escape_html(t.verdict)}" for t in result.targets],
        "",
        f"- {md_cell(result.a)}: {md_cell(describe(result.judges[0]))}",
        f"- {md_cell(result.b)}: {md_cell(describe(result.judges[1]))}",
        f"- reference labels: {md_cell(labels)}",
        f"- intervals: paired percentile bootstrap 95 %, {result.resamples} resamples, seed "
        f"{result.seed}; resampled: {unit} ({why}). A target moved beyond noise when the "
        "Δκ interval excludes 0. McNemar's exact test counts the items only one judge got "
        "right (it takes items as independent); where Δκ stays within noise but its p is "
        "below 0.05, the judge right on more items is named.",
        "",
        markdown_table(table_rows(result)),
    ]


def report_markdown(result: AbTest) -> str:
    """``ab-report.md``."""
    lines = [f"# A/B test of two judges: {md_cell(result.b)} vs {md_cell(result.a)}", ""]
    lines += report_lines(result)[2:]
    return "\n".join(lines).rstrip() + "\n"


def write_outputs(result: AbTest, out_dir: str | Path) -> dict[str, Path]:
    """``ab.json`` and ``ab-report.md`` in ``out_dir``."""
    return write_json_and_report(
        out_dir,
        result.to_dict(),
        report_markdown(result),
        json_name=JSON_NAME,
        report_name=REPORT_NAME,
    )
