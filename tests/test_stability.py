"""Stability of repeated verdicts: the statistics, and where they show up."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from evalkit.judges.llm.repeats import combine_samples
from evalkit.model import PenaltyFlag, SubScoreVerdict, Verdict
from evalkit.stability import (
    agreement_rate,
    flag_kept,
    flip_rate,
    majority,
    stability_of,
)


def test_majority_ties_go_to_zero() -> None:
    assert majority([1, 1, 0]) == 1
    assert majority([1, 0]) == 0
    assert majority([1, 0, 1, 0]) == 0
    assert majority([]) == 0


def test_agreement_and_flip_rate_by_hand() -> None:
    assert agreement_rate([1, 1, 0]) == pytest.approx(2 / 3)
    # 3 samples, counts 2 and 1: 1 - (2*1 + 1*0) / (3*2) = 2/3 of pairs disagree.
    assert flip_rate([1, 1, 0]) == pytest.approx(2 / 3)
    # 4 samples 2/2: 1 - (2 + 2) / 12 = 2/3.
    assert flip_rate([1, 0, 1, 0]) == pytest.approx(2 / 3)
    assert agreement_rate([1, 0, 1, 0]) == 0.5  # kept value 0 (tie)
    assert flip_rate([1, 1, 1]) == 0 and agreement_rate([1, 1, 1]) == 1
    assert flip_rate([1]) == 0 and flip_rate([]) == 0


def test_a_flag_is_kept_when_at_least_half_raise_it() -> None:
    assert flag_kept(1, 2) and flag_kept(2, 3) and not flag_kept(1, 3) and not flag_kept(0, 0)


def verdict(values: tuple[int, int, int], *, flags: tuple[str, ...] = ()) -> Verdict:
    names = ("discovery", "evidence", "attribution")
    return Verdict(
        chk_id="CHK-01",
        detection={
            n: SubScoreVerdict(v, ("q",) if v else (), f"v={v}")
            for n, v in zip(names, values, strict=True)
        },
        plan=None,
        penalties=tuple(PenaltyFlag(rule=r, detail="d", quote="q") for r in flags),  # type: ignore[arg-type]
    )


def test_combining_samples() -> None:
    samples = [
        verdict((1, 0, 1), flags=("fabrication",)),
        verdict((1, 1, 0)),
        verdict((0, 0, 1), flags=("fabrication",)),
    ]
    kept = combine_samples(samples)
    assert {n: s.value for n, s in kept.detection.items()} == {
        "discovery": 1,
        "evidence": 0,
        "attribution": 1,
    }
    assert kept.detection["evidence"].rationale == "v=0"  # from a sample that voted 0
    assert [f.rule for f in kept.penalties] == ["fabrication"]  # 2 of 3
    errored = Verdict.failed("CHK-01", "boom")
    assert combine_samples([errored, samples[1]]) == samples[1]
    assert combine_samples([errored, errored]).status == "error"


def test_stability_of_samples() -> None:
    assert stability_of({"CHK-01": [verdict((1, 1, 1))]}) is None  # K = 1
    found = stability_of({"CHK-01": [verdict((1, 0, 1)), verdict((1, 1, 1)), verdict((1, 0, 1))]})
    assert found is not None and found.repeats == 3
    (item,) = found.items
    evidence = next(s for s in item.subscores if s.subscore == "evidence")
    assert evidence.values == (0, 1, 0) and evidence.kept == 0
    assert evidence.agreement == pytest.approx(2 / 3) and evidence.flip == pytest.approx(2 / 3)
    assert found.unstable == ("CHK-01",)


@pytest.mark.e2e
def test_repeats_reach_scores_json_and_the_report(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import threading
    from dataclasses import replace

    import evalkit
    from evalkit.judges.claude import ClaudeJudge
    from evalkit.render import write_outputs
    from evalkit.render.scores_json import validate_scores
    from tests.fake_messages_api import FakeMessagesAPI, Reply
    from tests.test_claude_judge import KEY, MODEL, make_range, make_submission, verdict_for

    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.setenv("ANTHROPIC_CONFIG_DIR", str(tmp_path / "none"))
    lock, count = threading.Lock(), {"n": 0}

    def responder(body: dict[str, Any], attempt: int) -> Reply:
        with lock:
            count["n"] += 1
            value = 0 if count["n"] % 3 == 0 else 1  # one sample in three dissents
        return Reply.text(json.dumps(verdict_for(body, value)))

    with FakeMessagesAPI(responder) as api:
        judge = ClaudeJudge(MODEL, base_url=api.url, cache_dir=None, repeats=3, concurrency=1)
        ev = evalkit.evaluate(replace(make_range(2), sha256="0" * 64), make_submission(), judge)
    assert ev.stability is not None and ev.stability.repeats == 3
    assert ev.stability.unstable == ("CHK-01", "CHK-02")
    out = write_outputs(ev, tmp_path / "out")
    scores = json.loads((tmp_path / "out" / "scores.json").read_text())
    validate_scores(scores)
    assert scores["stability"]["repeats"] == 3
    assert scores["stability"]["unstable"] == ["CHK-01", "CHK-02"]
    report = (tmp_path / "out" / "evaluation-report.md").read_text()
    assert "## Judge stability" in report and "**Unstable:**" in report
    assert out is not None
