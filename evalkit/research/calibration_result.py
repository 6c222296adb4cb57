"""What a calibration measured (:class:`Calibration`): plain data, and its tables."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .calibration_tables import agreement_frame, band_frame, rows_frame
from .resample import MIN_PAIRS
from .stats import Agreement

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["Calibration"]


@dataclass(frozen=True)
class Calibration:
    """Everything :func:`calibrate` measured; :meth:`to_dict` is ``calibration.json``."""

    judge: Mapping[str, Any]
    pairs: tuple[tuple[str, str], ...]
    resamples: int
    seed: int
    # scope ("pooled", "range:<id>", "run:<id>") -> target -> Agreement (judge vs reference)
    agreement: Mapping[str, Mapping[str, Agreement]]
    # "judge vs <labeller>" / "<a> vs <b>" -> target -> Agreement
    band: Mapping[str, Mapping[str, Agreement]]
    per_pair: tuple[Mapping[str, Any], ...]
    disagreements: tuple[Mapping[str, Any], ...]
    judge_errors: tuple[Mapping[str, Any], ...]
    reference: Mapping[str, str] = field(default_factory=dict)  # "run/range" -> labeller
    # Per pair, every other labeller's final scores against the reference: the human band.
    per_pair_band: tuple[Mapping[str, Any], ...] = ()
    # Every compared item, judge beside reference label (what an A/B test pairs up).
    items: tuple[Mapping[str, Any], ...] = ()
    min_pairs: int = MIN_PAIRS

    def to_dict(self) -> dict[str, Any]:
        def table(block: Mapping[str, Mapping[str, Agreement]]) -> dict[str, Any]:
            return {
                scope: {target: value.to_dict() for target, value in targets.items()}
                for scope, targets in block.items()
            }

        return {
            "judge": dict(self.judge),
            "pairs": ["/".join(pair) for pair in self.pairs],
            "reference_labeller": dict(self.reference),
            "bootstrap": {
                "resamples": self.resamples,
                "seed": self.seed,
                "level": 0.95,
                "min_pairs_for_pair_resampling": self.min_pairs,
            },
            "agreement": table(self.agreement),
            "human_band": table(self.band),
            "per_pair": [dict(row) for row in self.per_pair],
            "per_pair_human_band": [dict(row) for row in self.per_pair_band],
            "disagreements": [dict(row) for row in self.disagreements],
            "judge_errors": [dict(row) for row in self.judge_errors],
            "items": [dict(row) for row in self.items],
        }

    # ----- tables for the notebook and the report (numbers rounded, undefined as n/a)

    def frame(self, scope: str = "pooled") -> pd.DataFrame:
        """One row per target of ``scope``: n, every metric and its 95 % interval."""
        return agreement_frame(self.agreement.get(scope, {}))

    def scopes(self, prefix: str) -> list[str]:
        return [scope for scope in self.agreement if scope.startswith(prefix)]

    def band_frame(self, metric: str = "kappa") -> pd.DataFrame:
        """Sub-score x comparison: ``metric`` with its interval, HealthBench style."""
        return band_frame(self.band, metric)

    def reference_line(self) -> str:
        """Which labeller every pair is measured against, in words (not a raw mapping)."""
        by_labeller: dict[str, list[str]] = {}
        for pair, labeller in sorted(self.reference.items()):
            by_labeller.setdefault(labeller, []).append(pair)
        parts = [f"{labeller} ({', '.join(pairs)})" for labeller, pairs in by_labeller.items()]
        return "reference labeller: " + ("; ".join(parts) if parts else "none")

    def pairs_frame(self) -> pd.DataFrame:
        return rows_frame(self.per_pair)

    def pairs_band_frame(self) -> pd.DataFrame:
        return rows_frame(self.per_pair_band)

    def disagreements_frame(self) -> pd.DataFrame:
        return rows_frame(self.disagreements)
