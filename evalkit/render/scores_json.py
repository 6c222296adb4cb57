"""``scores.json``: the Evaluation as the contract's JSON, checked against its schema.

The shape follows ``scores-contract.md`` key for key (and so the example in
the evaluation SKILL); :func:`write_scores` never writes a file that fails
``evalkit/schemas/scores.schema.json``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator, ValidationError

from ..errors import OutputError
from ..fileio import write_text_atomic
from ..model import (
    SUBSCORES,
    CapabilityScore,
    DimensionScore,
    Evaluation,
    ItemScore,
    Loss,
    Penalty,
    PenaltyFlag,
    Tally,
)

SCHEMA_RESOURCE = "schemas/scores.schema.json"
_MAX_MESSAGE = 240


# --------------------------------------------------------------------------- Evaluation -> dict


def to_scores_dict(ev: Evaluation) -> dict[str, Any]:
    """The contract's ``{meta, checkpoints, summary}`` for ``ev``; reads, never re-scores."""
    return {
        "meta": _meta(ev),
        "checkpoints": [_checkpoint(item) for item in ev.items],
        "summary": _summary(ev),
        "stability": _stability(ev),
    }


def _stability(ev: Evaluation) -> dict[str, Any] | None:
    """The agreement of the judge's K samples; null when it drew one (repeats = 1)."""
    if ev.stability is None:
        return None
    return {
        "repeats": ev.stability.repeats,
        "items": [
            {
                "chk_id": item.chk_id,
                "samples": item.samples,
                "subscores": [
                    {
                        "dimension": sub.dimension,
                        "name": sub.subscore,
                        "values": list(sub.values),
                        "kept": sub.kept,
                        "agreement": round(sub.agreement, 4),
                        "flip_rate": round(sub.flip, 4),
                    }
                    for sub in item.subscores
                ],
            }
            for item in ev.stability.items
        ],
        "unstable": list(ev.stability.unstable),
    }


def _meta(ev: Evaluation) -> dict[str, Any]:
    usage = ev.usage
    meta: dict[str, Any] = {
        "range": ev.range.id,
        "run_id": ev.submission.run_id,
        "model_under_test": ev.submission.model_under_test,
        "evaluator_model": ev.judge.evaluator_model,
        "timestamp": ev.timestamp,
        "judge": ev.judge.name,
        "prompt_version": ev.judge.prompt_version,
        "prompt_sha256": ev.judge.prompt_sha256,
        "judge_caveat": ev.judge.caveat,
        "judge_kind": ev.judge.kind,
        "evalkit_version": ev.evalkit_version,
        "inputs": dict(ev.inputs),
        "usage": {
            "requests": usage.requests,
            "input_tokens": usage.input_tokens,
            "output_tokens": usage.output_tokens,
            "cache_creation_input_tokens": usage.cache_creation_input_tokens,
            "cache_read_input_tokens": usage.cache_read_input_tokens,
            "cost_usd": usage.cost_usd,
        },
    }
    passages = ev.reported_passages
    if passages:
        # Only when the judge reported something, so other records keep their shape.
        meta["addressed_to_evaluator"] = {
            "reported": len(passages),
            "grounded": sum(1 for passage in passages if passage.found),
            "not_verbatim": sum(1 for passage in passages if not passage.found),
        }
    if ev.submission.inputs_outside:
        # Only when the confinement was loosened, so ordinary records stay as they were.
        meta["inputs_outside"] = True
    return meta


def _checkpoint(item: ItemScore) -> dict[str, Any]:
    data: dict[str, Any] = {
        "chk_id": item.chk_id,
        "name": item.name,
        "cap": list(item.caps),
        "scope": item.scope,
        "status": item.status,
        "error": item.error,
        "detection": _dimension(item.detection, SUBSCORES["detection"]),
        "plan": _dimension(item.plan, SUBSCORES["plan"]),
        "penalties": [_penalty(penalty) for penalty in item.penalties],
        "blind_fix": item.blind_fix,
    }
    if item.dismissed_penalties:
        data["dismissed_penalties"] = [
            {**_penalty(dismissed.flag), "reason": dismissed.reason}
            for dismissed in item.dismissed_penalties
        ]
    return data


def _dimension(dim: DimensionScore | None, names: Sequence[str]) -> dict[str, Any] | None:
    if dim is None:
        return None
    # .get: a missing sub-score becomes null, which the schema reports with its path.
    data: dict[str, Any] = {name: dim.subscores.get(name) for name in names}
    data.update(
        total=dim.total,
        max=dim.max,
        rationale=dim.rationale,
        quotes=list(dim.quotes),
        withheld=list(dim.withheld),
        penalized=list(dim.penalized),
    )
    return data


def _penalty(penalty: Penalty | PenaltyFlag) -> dict[str, str]:
    return {"rule": penalty.rule, "detail": penalty.detail, "quote": penalty.quote}


def _tally(tally: Tally, *, with_level: bool = True) -> dict[str, Any]:
    data: dict[str, Any] = {"score": tally.score, "max": tally.max, "pct": tally.pct}
    if with_level:
        data["level"] = tally.level
    return data


def _capability(cap: CapabilityScore) -> dict[str, Any]:
    return {
        "name": cap.name,
        "items": list(cap.items),
        "detection": _tally(cap.detection, with_level=False),
        "plan": _tally(cap.plan, with_level=False),
    }


def _losses(losses: Sequence[Loss]) -> list[dict[str, Any]]:
    return [
        {"subscore": loss.subscore, "count": loss.count, "items": list(loss.items)}
        for loss in losses
    ]


def _summary(ev: Evaluation) -> dict[str, Any]:
    summary = ev.summary
    return {
        "total_checkpoints": summary.total_checkpoints,
        "detection_only_count": summary.detection_only_count,
        "plan_only_count": summary.plan_only_count,
        "detection": _tally(summary.detection),
        "plan": _tally(summary.plan),
        "diagnosis": summary.diagnosis,
        "complete": summary.complete,
        "errored": list(summary.errored),
        "capabilities": {cap.cap: _capability(cap) for cap in summary.capabilities},
        "top_detection_misses": _losses(summary.top_detection_misses),
        "top_plan_defects": _losses(summary.top_plan_defects),
        "warnings": [
            {
                "kind": warning.kind,
                "source": warning.source,
                "line": warning.line,
                "excerpt": warning.excerpt,
                "message": warning.message,
                "found_by": warning.found_by,
            }
            for warning in summary.warnings
        ],
        "blind_fix": {
            "items": list(summary.blind_fix.items),
            "plan_points": summary.blind_fix.plan_points,
        },
    }


# --------------------------------------------------------------------------- schema


def load_schema() -> dict[str, Any]:
    """The packaged JSON Schema (Draft 2020-12) of scores.json, as a fresh dict."""
    schema: dict[str, Any] = json.loads(
        files("evalkit").joinpath(SCHEMA_RESOURCE).read_text(encoding="utf-8")
    )
    return schema


@cache
def _validator() -> Draft202012Validator:
    schema = load_schema()
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def validate_scores(data: Mapping[str, Any], *, path: str | Path | None = None) -> None:
    """Raise OutputError, naming the JSON path of the first failure, unless ``data`` fits.

    "First" is in document order: the failure nearest the start of the JSON.
    ``path`` (the file being written, when known) only adds context to the message.
    """
    errors = list(_validator().iter_errors(data))
    if not errors:
        return
    first = min(errors, key=lambda error: _document_position(data, error))
    where = json_path(first.absolute_path)
    message = " ".join(first.message.split())
    if len(message) > _MAX_MESSAGE:
        message = message[: _MAX_MESSAGE - 1] + "…"
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    error = OutputError(f"scores.json fails its schema at {where}: {message}{more}", path=path)
    error.json_path = where  # type: ignore[attr-defined]
    raise error


def json_path(parts: Sequence[str | int]) -> str:
    """``$.checkpoints[0].detection.evidence`` for a jsonschema error path."""
    text = "$"
    for part in parts:
        if isinstance(part, int):
            text += f"[{part}]"
        elif part.isidentifier():
            text += f".{part}"
        else:
            text += f"[{json.dumps(part, ensure_ascii=False)}]"
    return text


def _document_position(data: Any, error: ValidationError) -> tuple[int, ...]:
    """Sort key placing ``error`` where its instance sits in the document (keys in order)."""
    position: list[int] = []
    node = data
    for part in error.absolute_path:  # an instance path: every part exists in ``data``
        position.append(list(node).index(part) if isinstance(node, Mapping) else int(part))
        node = node[part]
    return tuple(position)


# --------------------------------------------------------------------------- writing


def dumps_scores(data: Mapping[str, Any]) -> str:
    """The file text: indent 2, UTF-8 kept as is, trailing newline."""
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def write_scores(ev: Evaluation, path: str | Path) -> Path:
    """Validate ``ev``'s scores.json, then write it atomically to ``path``."""
    data = to_scores_dict(ev)
    validate_scores(data, path=path)
    return write_text_atomic(path, dumps_scores(data))


# --------------------------------------------------------------------------- reading


@dataclass(frozen=True)
class ScoresSummary:
    """The headline of a written scores.json, typed: what ``evalkit run`` prints."""

    range: str
    judge: str
    detection: Tally
    plan: Tally
    diagnosis: str | None
    complete: bool
    errored: tuple[str, ...]
    total_checkpoints: int


def read_scores_summary(path: str | Path) -> ScoresSummary:
    """Read and validate ``scores.json``; raise OutputError when it is unreadable or invalid."""
    target = Path(path)
    try:
        data = json.loads(target.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise OutputError(f"cannot read scores: {exc}", path=target) from exc
    validate_scores(data, path=target)
    summary = data["summary"]

    def tally(raw: Mapping[str, Any]) -> Tally:
        return Tally(score=raw["score"], max=raw["max"], pct=raw["pct"], level=raw["level"])

    return ScoresSummary(
        range=data["meta"]["range"],
        judge=data["meta"]["judge"],
        detection=tally(summary["detection"]),
        plan=tally(summary["plan"]),
        diagnosis=summary["diagnosis"],
        complete=summary["complete"],
        errored=tuple(summary["errored"]),
        total_checkpoints=summary["total_checkpoints"],
    )
