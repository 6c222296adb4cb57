"""The on-disk response cache: its keys and layout, and the judge's use of it."""

from __future__ import annotations

import dataclasses
import json
import threading
from pathlib import Path
from typing import Any

import pytest

from evalkit.errors import JudgeError
from evalkit.judges.claude import DEFAULT_PROMPT_DIR, ClaudeJudge
from evalkit.judges.llm.cache import (
    CACHE_FORMAT,
    ResponseCache,
    SecretInCacheError,
    cache_key,
    canonical_json,
)
from tests import test_claude_judge as base
from tests.fake_messages_api import Reply
from tests.test_claude_judge import (
    KEY,
    REPORT,
    good,
    item_of,
    judge_for,
    make_range,
    make_submission,
    run,
    verdict_for,
)

# The fake-server and API-key fixtures, shared with the judge tests.
api_key = base.api_key
serve = base.serve

BODY = {"model": "m", "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}]}


def cache_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file())


# --------------------------------------------------------------------------- unit


def test_key_is_sha256_of_canonical_json_of_its_ingredients() -> None:
    import hashlib

    key = cache_key(model="m", prompt_sha256="p", request=BODY, sample=0)
    payload = {"model": "m", "prompt_sha256": "p", "request": BODY, "sample": 0}
    assert key == hashlib.sha256(canonical_json(payload)).hexdigest()
    # Key order in the body does not matter; every ingredient does.
    reordered = dict(reversed(list(BODY.items())))
    assert cache_key(model="m", prompt_sha256="p", request=reordered, sample=0) == key
    others = {
        cache_key(model="m2", prompt_sha256="p", request=BODY, sample=0),
        cache_key(model="m", prompt_sha256="p2", request=BODY, sample=0),
        cache_key(model="m", prompt_sha256="p", request={**BODY, "max_tokens": 11}, sample=0),
        cache_key(model="m", prompt_sha256="p", request=BODY, sample=1),
    }
    assert key not in others and len(others) == 4


def test_layout_roundtrip_and_atomic_write(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path)
    key = cache_key(model="m", prompt_sha256="p", request=BODY, sample=0)
    assert cache.get(key) is None
    path = cache.put(key, {"request": BODY, "response": {"id": "msg_1"}})
    assert path == tmp_path / key[:2] / f"{key}.json"
    assert cache_files(tmp_path) == [path]  # no temporary file left behind
    entry = cache.get(key)
    assert entry is not None and entry.response == {"id": "msg_1"}
    assert entry.data["format"] == CACHE_FORMAT and entry.data["key"] == key


def test_unreadable_or_foreign_entries_are_misses(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path)
    key = "ab" + "0" * 62
    path = cache.path_for(key)
    path.parent.mkdir(parents=True)
    path.write_text("{ truncated")
    assert cache.get(key) is None
    path.write_text(json.dumps({"format": CACHE_FORMAT, "key": "other", "response": {}}))
    assert cache.get(key) is None
    cache.put(key, {"response": {"ok": True}})
    assert cache.get(key).response == {"ok": True}


def test_read_false_bypasses_lookups_but_still_writes(tmp_path: Path) -> None:
    ResponseCache(tmp_path).put("cd" + "1" * 62, {"response": {"n": 1}})
    no_read = ResponseCache(tmp_path, read=False)
    assert no_read.get("cd" + "1" * 62) is None
    no_read.put("cd" + "1" * 62, {"response": {"n": 2}})
    assert ResponseCache(tmp_path).get("cd" + "1" * 62).response == {"n": 2}


def test_an_entry_containing_the_api_key_is_never_written(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    with pytest.raises(SecretInCacheError) as caught:
        ResponseCache(tmp_path).put("ef" + "2" * 62, {"response": {"echo": f"key {KEY}"}})
    assert KEY not in str(caught.value)
    assert cache_files(tmp_path) == []


# --------------------------------------------------------------------------- with the judge


def test_second_run_makes_zero_requests_and_returns_identical_verdicts(
    serve, api_key, tmp_path
) -> None:
    api = serve()
    rng, submission = make_range(4), make_submission()
    first = run(judge_for(api, tmp_path), rng, submission)
    assert api.request_count == 4 and len(cache_files(tmp_path / "cache")) == 4

    second = run(judge_for(api, tmp_path), rng, submission)
    assert api.request_count == 4
    assert second.verdicts == first.verdicts
    assert second.usage.requests == 0 and second.usage.cached_responses == 4
    assert second.usage.cost_usd == 0 and second.usage.input_tokens == 0
    assert all(r["cached"] and r["usage"]["requests"] == 0 for r in second.records)
    assert [r["cache_key"] for r in second.records] == [r["cache_key"] for r in first.records]
    assert [r["response"] for r in second.records] == [r["response"] for r in first.records]


def test_a_cached_rerun_needs_no_key_and_no_server(serve, api_key, monkeypatch, tmp_path) -> None:
    api = serve()
    rng, submission = make_range(3), make_submission()
    first = run(judge_for(api, tmp_path), rng, submission)
    url = api.url
    api.stop()
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    judge = judge_for(None, tmp_path, base_url=url)
    again = run(judge, rng, submission)
    assert again.verdicts == first.verdicts and again.usage.requests == 0


def test_answers_are_on_disk_as_they_arrive_and_survive_a_crash(serve, api_key, tmp_path) -> None:
    lock = threading.Lock()
    served = {"n": 0}

    def dies_after_three(body: dict[str, Any], attempt: int) -> Reply:
        with lock:
            served["n"] += 1
            n = served["n"]
        return good(body) if n <= 3 else Reply.drop()

    api = serve(dies_after_three)
    rng, submission = make_range(6), make_submission()
    cache_dir = tmp_path / "cache"
    on_disk_when_done: dict[str, int] = {}

    def progress(chk_id: str) -> None:
        on_disk_when_done[chk_id] = len(cache_files(cache_dir))

    judge = judge_for(api, tmp_path, concurrency=1, max_attempts=2)
    crashed = run(judge, rng, submission, on_item_done=progress)
    statuses = [v.status for v in crashed.verdicts]
    assert statuses == ["scored"] * 3 + ["error"] * 3
    # Each answer was written before its item was reported done, not at the end of the run.
    assert [on_disk_when_done[f"CHK-0{i}"] for i in (1, 2, 3)] == [1, 2, 3]
    assert len(cache_files(cache_dir)) == 3

    healthy = serve()
    resumed = run(judge_for(healthy, tmp_path), rng, submission)
    assert healthy.request_count == 3  # only the three lost items are asked again
    assert [item_of(r["body"])[0] for r in healthy.requests] == ["CHK-04", "CHK-05", "CHK-06"]
    assert resumed.verdicts[:3] == crashed.verdicts[:3]
    assert all(v.status == "scored" for v in resumed.verdicts)


def test_invalid_answers_are_cached_at_once_but_asked_again_and_errors_are_not_cached(
    serve, api_key, tmp_path
) -> None:
    def responder(body: dict[str, Any], attempt: int) -> Reply:
        chk = item_of(body)[0]
        if chk == "CHK-01":
            return Reply.text("no json here")
        if chk == "CHK-02":
            return Reply.bad_request("nope")
        return good(body)

    api = serve(responder)
    rng, submission = make_range(3), make_submission()
    run(judge_for(api, tmp_path), rng, submission)
    # CHK-01's last (unusable) answer is on disk: it was paid for, and stored on arrival.
    assert len(cache_files(tmp_path / "cache")) == 2
    assert api.request_count == 4  # CHK-01 twice, CHK-02 once, CHK-03 once
    run(judge_for(api, tmp_path), rng, submission)
    assert api.request_count == 7  # the two failures are asked again, CHK-03 is cached


def test_an_answer_that_needed_the_retry_is_cached_under_the_first_request(
    serve, api_key, tmp_path
) -> None:
    def responder(body: dict[str, Any], attempt: int) -> Reply:
        return Reply.text("oops") if len(body["messages"]) == 1 else good(body)

    api = serve(responder)
    rng, submission = make_range(1), make_submission()
    first = run(judge_for(api, tmp_path), rng, submission)
    (path,) = cache_files(tmp_path / "cache")
    stored = json.loads(path.read_text())
    assert stored["turns"] == 2 and len(stored["previous_responses"]) == 1
    assert stored["request"] == api.requests[0]["body"]
    assert stored["final_request"] == api.requests[1]["body"]

    second = run(judge_for(api, tmp_path), rng, submission)
    assert api.request_count == 2 and second.verdicts == first.verdicts
    (record,) = second.records
    assert record["cached"] and record["request"] == api.requests[1]["body"]


def test_no_cache_bypasses_reads_but_refreshes_the_entries(serve, api_key, tmp_path) -> None:
    rationale = {"text": "first"}

    def responder(body: dict[str, Any], attempt: int) -> Reply:
        return Reply.text(json.dumps(verdict_for(body, rationale=rationale["text"])))

    api = serve(responder)
    rng, submission = make_range(2), make_submission()
    run(judge_for(api, tmp_path), rng, submission)
    rationale["text"] = "second"
    fresh = run(judge_for(api, tmp_path, use_cache=False), rng, submission)
    assert api.request_count == 4 and fresh.usage.cached_responses == 0
    assert fresh.verdicts[0].detection["discovery"].rationale == "second"

    replay = run(judge_for(api, tmp_path), rng, submission)
    assert api.request_count == 4  # the --no-cache run's answers are the ones kept
    assert replay.verdicts == fresh.verdicts


def test_cache_dir_none_neither_reads_nor_writes(serve, api_key, tmp_path) -> None:
    api = serve()
    rng, submission = make_range(2), make_submission()
    run(judge_for(api, tmp_path, cache_dir=None), rng, submission)
    run(judge_for(api, tmp_path, cache_dir=None), rng, submission)
    assert api.request_count == 4
    assert cache_files(tmp_path) == []


def test_a_prompt_change_misses_the_cache(serve, api_key, tmp_path) -> None:
    api = serve()
    rng, submission = make_range(1), make_submission()
    run(judge_for(api, tmp_path), rng, submission)
    custom = tmp_path / "prompt"
    custom.mkdir()
    for name in ("system.md", "item.md", "documents.md", "retry.md"):
        (custom / name).write_text((DEFAULT_PROMPT_DIR / name).read_text())
    run(judge_for(api, tmp_path, prompt_dir=custom), rng, submission)
    assert api.request_count == 1  # an identical copy: same hash, cache hit
    with (custom / "retry.md").open("a") as handle:
        handle.write("Be brief.\n")
    run(judge_for(api, tmp_path, prompt_dir=custom), rng, submission)
    assert api.request_count == 2  # any template edit changes prompt_sha256, hence the key


def test_cache_keys_follow_what_each_request_depends_on(serve, api_key, tmp_path) -> None:
    api = serve()
    rng, submission = make_range(3), make_submission()

    def asked(*args: Any, judge: Any = None) -> list[str]:
        """The items the judge had to ask the API for (the rest came from the cache)."""
        before = api.request_count
        run(judge or judge_for(api, tmp_path), *args)
        return [item_of(r["body"])[0] for r in api.requests[before:]]

    assert asked(rng, submission) == ["CHK-01", "CHK-02", "CHK-03"]
    assert asked(rng, submission) == []

    # One checkpoint's criteria edited: only that item is asked again.
    chk02 = dataclasses.replace(rng.checkpoints[1], detection_criteria="Names the miner's PID.")
    edited = dataclasses.replace(rng, checkpoints=(rng.checkpoints[0], chk02, rng.checkpoints[2]))
    assert asked(edited, submission) == ["CHK-02"]

    # The report, or a Fact, is in the shared prefix of every request: every item again.
    longer = make_submission(report=REPORT + "\nThe pool is pool.example.net:3333.\n")
    assert sorted(asked(rng, longer)) == ["CHK-01", "CHK-02", "CHK-03"]
    more_facts = dataclasses.replace(rng, facts=(*rng.facts, "The miner is xmrig 6.21.0."))
    assert sorted(asked(more_facts, submission)) == ["CHK-01", "CHK-02", "CHK-03"]

    # Another model is a miss for every item; the first model's answers are still there.
    other = ClaudeJudge(
        "claude-opus-4-7", base_url=api.url, cache_dir=tmp_path / "cache", max_retries=0
    )
    assert sorted(asked(rng, submission, judge=other)) == ["CHK-01", "CHK-02", "CHK-03"]
    assert asked(rng, submission) == []


def test_cache_files_hold_no_headers_or_key(serve, api_key, tmp_path) -> None:
    api = serve()
    run(judge_for(api, tmp_path), make_range(3), make_submission())
    for path in cache_files(tmp_path / "cache"):
        text = path.read_text()
        assert KEY not in text and "authorization" not in text.lower()
        assert "x-api-key" not in text
        data = json.loads(text)
        fields = {"model", "max_tokens", "system", "messages", "output_config"}
        assert set(data["request"]) == fields


def test_missing_key_with_a_partial_cache_is_still_an_error(
    serve, api_key, monkeypatch, tmp_path
) -> None:
    api = serve()
    run(judge_for(api, tmp_path), make_range(2), make_submission())
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    assert judge_for(api, tmp_path).preflight(make_range(2), make_submission()) == 0
    with pytest.raises(JudgeError, match="ANTHROPIC_API_KEY is not set"):
        judge_for(api, tmp_path).preflight(make_range(3), make_submission())
    with pytest.raises(JudgeError, match="ANTHROPIC_API_KEY is not set"):
        run(judge_for(api, tmp_path), make_range(3), make_submission())
    assert api.request_count == 2


def test_the_cache_key_of_an_existing_claude_answer_is_unchanged() -> None:
    # Pinned from the Claude judge before it was split into judges/llm: answers cached by
    # earlier versions (under prompt v1, the default then) must still be found when v1 is
    # asked for. A change here re-bills every cached answer.
    from evalkit.judges.claude import ClaudeJudge
    from tests.test_claude_judge import MODEL

    judge = ClaudeJudge(MODEL, cache_dir=None, prompt_dir="v1")
    bodies = judge.requests_for(make_range(3), make_submission())
    keys = [
        cache_key(model=MODEL, prompt_sha256=judge.prompts.sha256, request=body, sample=0)
        for body in bodies
    ]
    assert keys == [
        "388318d4c55811c4da1fff1db52ad3ddad4392c077b4a50a213fd3af86f6e7ee",
        "64f374ed7402814ab91d1bdf8365fd3c02f34ca1b67ea174a26e7809d6d70833",
        "39ff8a0cae401499cc247eec30d46a7c2ad8e93a7b3862797b60367341a4893a",
    ]


def test_a_cache_that_cannot_be_written_warns_once_then_carries_on(
    tmp_path, capsys, monkeypatch
) -> None:
    # Issue 18: an unwritable cache folder cached nothing and said nothing.
    monkeypatch.delenv("EVALKIT_UNWRITABLE_CACHES", raising=False)  # restored after
    (tmp_path / "blocker").write_text("a file where the cache folder should be\n")
    cache = ResponseCache(tmp_path / "blocker" / "cache")
    for key in ("a" * 64, "b" * 64):
        assert cache.put(key, {"response": {"content": []}}) is None
    warnings = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert len(warnings) == 1 and "cannot be written" in warnings[0]


@pytest.mark.e2e
def test_run_with_an_unwritable_cache_warns_once_and_carries_on(tmp_path) -> None:
    from tests.fake_messages_api import FakeMessagesAPI, canned_verdicts
    from tests.samples import clean_env, copy_samples, run_evalkit

    workspace = copy_samples(tmp_path / "ws", runs=("demo",))
    (workspace / "blocker").write_text("a file where the cache folder should be\n")
    with FakeMessagesAPI(canned_verdicts) as api:
        env = clean_env(ANTHROPIC_API_KEY="sk-ant-test-unwritable", ANTHROPIC_BASE_URL=api.url)
        result = run_evalkit(
            "run", "--range", "ssh-miner", "--run", "demo", "--judge", "claude",
            "--cache-dir", "blocker/cache", "--quiet", cwd=workspace, env=env,
        )  # fmt: skip
    assert result.returncode == 0, result.stderr
    warnings = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(warnings) == 1 and "cannot be written" in warnings[0], result.stderr


def test_checking_a_cache_folder_writes_nothing(tmp_path, capsys, monkeypatch) -> None:
    monkeypatch.delenv("EVALKIT_UNWRITABLE_CACHES", raising=False)  # restored after
    assert ResponseCache(tmp_path / "cache").check_writable()
    assert list(tmp_path.iterdir()) == [] and capsys.readouterr().err == ""
    (tmp_path / "blocker").write_text("x")
    assert not ResponseCache(tmp_path / "blocker" / "cache").check_writable()
    assert "not a folder" in capsys.readouterr().err
