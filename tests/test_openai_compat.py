"""The OpenAI-compatible transport's own rules: keys, local servers, the optional SDK.

The behaviour it shares with the Anthropic transport is tested in test_llm_runner.py.
"""

from __future__ import annotations

import asyncio
import builtins
import json
from pathlib import Path
from typing import Any

import pytest

from evalkit.errors import JudgeError
from evalkit.judges.llm.openai_compat import answer_of, is_local, openai_compatible_judge
from tests.fake_openai_api import FakeOpenAIAPI, OAReply
from tests.test_claude_judge import make_range, make_submission, verdict_for


def good(body: dict[str, Any], attempt: int) -> OAReply:
    item = body["messages"][1]["content"]
    shim = {"messages": [{"content": [{}, {"text": item[item.index("Checkpoint to score") :]}]}]}
    return OAReply.text(json.dumps(verdict_for(shim)))


@pytest.fixture(autouse=True)
def no_openai_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)


def judge(base_url: str, tmp_path: Path, **kwargs: Any) -> Any:
    return openai_compatible_judge(
        "local-model", base_url=base_url, cache_dir=tmp_path / "cache", timeout_s=5, **kwargs
    )


@pytest.mark.parametrize(
    ("url", "local"),
    [
        ("http://127.0.0.1:8000/v1", True),
        ("http://localhost:11434/v1", True),
        ("http://[::1]:8080/v1", True),
        ("https://api.openai.com/v1", False),
        ("http://10.0.0.5:8000/v1", False),
        (None, False),
    ],
)
def test_what_counts_as_a_local_server(url: str | None, local: bool) -> None:
    assert is_local(url) is local


def test_a_local_server_without_a_key_gets_a_placeholder(tmp_path: Path) -> None:
    with FakeOpenAIAPI(good) as api:
        result = asyncio.run(judge(api.url, tmp_path).judge(make_range(2), make_submission()))
        assert [v.status for v in result.verdicts] == ["scored", "scored"]
        assert all(h["has-authorization"] == "True" for h in api.headers_seen)


def test_a_remote_server_without_a_key_stops_before_any_call(tmp_path: Path) -> None:
    remote = judge("https://judge.example.invalid/v1", tmp_path)
    with pytest.raises(JudgeError, match="OPENAI_API_KEY is not set"):
        remote.preflight(make_range(1), make_submission())


def test_the_model_is_required() -> None:
    with pytest.raises(JudgeError, match="--model is required"):
        openai_compatible_judge(None, base_url="http://127.0.0.1:1/v1")


def test_without_the_sdk_the_error_says_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    real_import = builtins.__import__

    def no_openai(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "openai" or name.startswith("openai."):
            raise ImportError("No module named 'openai'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_openai)
    with pytest.raises(JudgeError, match=r"pip install 'evalkit\[openai\]'"):
        asyncio.run(
            judge("http://127.0.0.1:1/v1", tmp_path).judge(make_range(1), make_submission())
        )


def test_usage_and_stop_reasons_are_read_from_the_completion() -> None:
    raw = {
        "choices": [{"finish_reason": "length", "message": {"content": '{"a"', "refusal": None}}],
        "usage": {
            "prompt_tokens": 1000,
            "completion_tokens": 20,
            "prompt_tokens_details": {"cached_tokens": 768},
        },
    }
    answer = answer_of(raw)
    assert answer.stop == "max_tokens" and answer.stop_label == "finish_reason=length"
    assert answer.usage == {
        "input_tokens": 232,
        "output_tokens": 20,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 768,
    }
    refused = answer_of({"choices": [{"finish_reason": "stop", "message": {"refusal": "no"}}]})
    assert refused.stop == "refusal" and refused.text == ""
    assert answer_of({}).usage["input_tokens"] == 0  # an odd body is not a crash
