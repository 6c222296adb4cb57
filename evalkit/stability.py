"""How stable a judge is across K independent samples of one verdict (pure statistics).

Part of the core: the LLM judge's repeats keep the majority with :func:`majority` and
:func:`flag_kept`, and the pipeline records :func:`stability_of` in the Evaluation
(its dataclasses, :class:`~evalkit.model.Stability` and its parts, are in the model).

For one sub-score of one item, K samples give K values (0/1). The kept value is
the majority, ties going to 0 (the strict reading). The **agreement rate** is the
share of samples equal to the kept value; the **flip rate** is the share of the
K(K-1)/2 sample pairs that disagree, ``1 - sum_c n_c (n_c - 1) / (K (K - 1))``
(0 when K < 2). A sub-score is *unstable* when its flip rate is above 0.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

from .model import ItemStability, Stability, SubScoreStability, Verdict


def majority(values: Sequence[int]) -> int:
    """The majority of 0/1 ``values``; a tie (or no value) goes to 0."""
    ones = sum(1 for value in values if value)
    return 1 if ones * 2 > len(values) else 0


def agreement_rate(values: Sequence[int]) -> float:
    """The share of ``values`` equal to their majority (1.0 for no values)."""
    if not values:
        return 1.0
    kept = majority(values)
    return sum(1 for value in values if value == kept) / len(values)


def flip_rate(values: Sequence[object]) -> float:
    """The share of pairs of ``values`` that disagree (0.0 for fewer than two)."""
    k = len(values)
    if k < 2:
        return 0.0
    same = sum(n * (n - 1) for n in Counter(values).values())
    return 1 - same / (k * (k - 1))


def flag_kept(raised: int, samples: int) -> bool:
    """A penalty flag is kept when at least half the samples raise it."""
    return samples > 0 and raised * 2 >= samples


def subscore_stability(
    chk_id: str, dimension: str, subscore: str, values: Sequence[int]
) -> SubScoreStability:
    return SubScoreStability(
        chk_id=chk_id,
        dimension=dimension,
        subscore=subscore,
        values=tuple(values),
        kept=majority(values),
        agreement=agreement_rate(values),
        flip=flip_rate(values),
    )


def stability_of(samples: Mapping[str, Sequence[Verdict]]) -> Stability | None:
    """The stability of each item's samples (errored samples left out); None when K = 1."""
    repeats = max((len(found) for found in samples.values()), default=0)
    if repeats < 2:
        return None
    items = []
    for chk_id, found in samples.items():
        scored = [v for v in found if v.status == "scored"]
        subscores = []
        for dimension in ("detection", "plan"):
            claims = [getattr(v, dimension) for v in scored if getattr(v, dimension) is not None]
            names = list(claims[0]) if claims else []
            for name in names:
                values = [c[name].value for c in claims if name in c]
                subscores.append(subscore_stability(chk_id, dimension, name, values))
        items.append(ItemStability(chk_id, len(scored), tuple(subscores)))
    return Stability(repeats, tuple(items))
