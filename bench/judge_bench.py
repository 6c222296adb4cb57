"""Benchmarks of the Claude judge against the local fake Messages API (no network, no key).

    .venv/bin/python bench/judge_bench.py            # all three, figures to stdout and JSON
    .venv/bin/python bench/judge_bench.py --only concurrency

1. concurrency: judging phase of the 23-checkpoint ssh-miner range with 0.5 s simulated
   latency per call, at concurrency 8 and 1. Target: c8 within 1.5x of ceil(23/8) x 0.5 s,
   and at least 6x faster than c1. Measured twice: with the prompt cache kept out of the
   way (a prefix the fake will not cache, so the judge sends everything at once), and
   with the default cache warm-up, which sends the first call alone so that the other 22
   read the prefix instead of each writing it.
2. caching: billed input-token equivalents (input + 1.25 x cache writes + 0.1 x cache
   reads) of the same 23 calls with the prompt cache, over what they would bill without
   it (every input token at 1.0x). Target: at most 30 %, with a prefix above the model's
   minimum cacheable length.
3. rerun: a cached re-run through the CLI and the notebook makes zero requests; its wall
   time over the offline rules judge's. Target: at most 1.2x. Median of several runs.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import evalkit  # noqa: E402
from evalkit.judges.claude import ClaudeJudge  # noqa: E402
from evalkit.judges.llm.pricing import min_cacheable_tokens  # noqa: E402
from tests.fake_messages_api import FakeMessagesAPI, Reply  # noqa: E402
from tests.samples import copy_samples, run_evalkit  # noqa: E402

MODEL = "claude-sonnet-4-6"
LATENCY_S = 0.5
RANGE_ID = "ssh-miner"
KEY = "sk-ant-bench-not-a-real-key"


def zero_verdict(body: dict[str, Any], attempt: int) -> Reply:
    item = body["messages"][0]["content"][1]["text"]
    scope = "both"
    for line in item.splitlines():
        if line.startswith("- Scope: "):
            scope = line.removeprefix("- Scope: ").strip()
    empty = {"score": 0, "quotes": [], "rationale": "bench"}
    return Reply.text(
        json.dumps(
            {
                "detection": None
                if scope == "plan-only"
                else dict.fromkeys(("discovery", "evidence", "attribution"), empty),
                "plan": None
                if scope == "detection-only"
                else dict.fromkeys(("correctness", "completeness"), empty),
                "penalties": [],
                "addressed_to_evaluator": [],
            }
        )
    )


def load_inputs() -> tuple[evalkit.Range, evalkit.Submission]:
    rng = evalkit.load_range(REPO / "ranges", RANGE_ID)
    return rng, evalkit.load_submission(REPO / "runs", "demo", rng)


def judge_once(
    api: FakeMessagesAPI, concurrency: int, warm_cache: bool | None
) -> tuple[float, Any]:
    rng, submission = load_inputs()
    judge = ClaudeJudge(
        MODEL,
        concurrency=concurrency,
        cache_dir=None,  # the response cache would turn later runs into no-ops
        base_url=api.url,
        max_retries=0,
        warm_cache=warm_cache,
    )
    started = time.perf_counter()
    result = asyncio.run(judge.judge(rng, submission))
    return time.perf_counter() - started, result


def bench_concurrency() -> dict[str, Any]:
    items = len(load_inputs()[0].checkpoints)
    ideal = math.ceil(items / 8) * LATENCY_S
    figures: dict[str, Any] = {"items": items, "latency_s": LATENCY_S, "ideal_c8_s": ideal}
    # No caching in the way: the fake caches nothing, the judge sends all calls at once.
    with FakeMessagesAPI(zero_verdict, latency=LATENCY_S, min_cacheable_tokens=10**9) as api:
        judge_once(api, 8, warm_cache=False)  # imports, templates, first connections: untimed
        c8 = statistics.median(judge_once(api, 8, warm_cache=False)[0] for _ in range(3))
        c1, _ = judge_once(api, 1, warm_cache=False)
    figures["no_cache"] = {
        "c8_s": round(c8, 3),
        "c1_s": round(c1, 3),
        "c8_over_ideal": round(c8 / ideal, 2),
        "speedup": round(c1 / c8, 2),
        "targets_met": c8 <= 1.5 * ideal and c1 / c8 >= 6,
    }
    # The default: the prefix is cacheable, the first call goes alone to write it.
    with FakeMessagesAPI(
        zero_verdict, latency=LATENCY_S, min_cacheable_tokens=min_cacheable_tokens(MODEL)
    ) as api:
        c8_runs = []
        for _ in range(3):
            api.clear_cache()
            c8_runs.append(judge_once(api, 8, warm_cache=None)[0])
        c8_warm = statistics.median(c8_runs)
        api.clear_cache()
        c1_warm, _ = judge_once(api, 1, warm_cache=None)
    warm_ideal = LATENCY_S + math.ceil((items - 1) / 8) * LATENCY_S
    figures["cache_warmup"] = {
        "c8_s": round(c8_warm, 3),
        "c1_s": round(c1_warm, 3),
        "ideal_c8_s": warm_ideal,
        "c8_over_ideal": round(c8_warm / ideal, 2),
        "speedup": round(c1_warm / c8_warm, 2),
    }
    return figures


def billed(usage: Any, *, cached: bool) -> float:
    if not cached:
        return (
            usage.input_tokens + usage.cache_creation_input_tokens + usage.cache_read_input_tokens
        )
    return (
        usage.input_tokens
        + 1.25 * usage.cache_creation_input_tokens
        + 0.1 * usage.cache_read_input_tokens
    )


def bench_caching() -> dict[str, Any]:
    minimum = min_cacheable_tokens(MODEL)
    figures: dict[str, Any] = {"model": MODEL, "min_cacheable_tokens": minimum}
    with FakeMessagesAPI(zero_verdict, latency=0.05, min_cacheable_tokens=minimum) as api:
        for label, warm in (("default_warmup", None), ("no_warmup", False)):
            api.clear_cache()
            _, result = judge_once(api, 8, warm_cache=warm)
            usage = result.usage
            prefix_tokens = result.records[0]["usage"]["cache_creation_input_tokens"]
            ratio = billed(usage, cached=True) / billed(usage, cached=False)
            figures[label] = {
                "requests": usage.requests,
                "input_tokens": usage.input_tokens,
                "cache_creation_input_tokens": usage.cache_creation_input_tokens,
                "cache_read_input_tokens": usage.cache_read_input_tokens,
                "prefix_tokens": prefix_tokens,
                "billed_ratio": round(ratio, 3),
                "cost_usd": round(usage.cost_usd, 4),
            }
    figures["default_warmup"]["target_met"] = (
        figures["default_warmup"]["billed_ratio"] <= 0.30
        and figures["default_warmup"]["prefix_tokens"] >= minimum
    )
    return figures


def _cli(workspace: Path, env: dict[str, str], *args: str) -> float:
    started = time.perf_counter()
    result = run_evalkit(*args, "--quiet", cwd=workspace, env=env)
    if result.returncode != 0:
        raise RuntimeError(f"evalkit {' '.join(args)} failed: {result.stderr.strip()}")
    return time.perf_counter() - started


def bench_rerun(repeats: int) -> dict[str, Any]:
    workspace = Path(tempfile.mkdtemp(prefix="evalkit-bench-"))
    try:
        copy_samples(workspace)
        common = ("run", "--range", RANGE_ID, "--run", "demo")
        with FakeMessagesAPI(zero_verdict, latency=LATENCY_S) as api:
            env = {**os.environ, "ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": api.url}
            first = _cli(workspace, env, *common, "--judge", "claude", "--model", MODEL)
            paid = api.request_count
            claude_times = [
                _cli(workspace, env, *common, "--judge", "claude", "--model", MODEL)
                for _ in range(repeats)
            ]
            rerun_requests = api.request_count - paid
        rules_times = [_cli(workspace, env, *common, "--judge", "rules") for _ in range(repeats)]
    finally:
        shutil.rmtree(workspace, ignore_errors=True)
    claude, rules = statistics.median(claude_times), statistics.median(rules_times)
    return {
        "first_run_s": round(first, 2),
        "first_run_requests": paid,
        "rerun_requests": rerun_requests,
        "cached_rerun_median_s": round(claude, 2),
        "rules_median_s": round(rules, 2),
        "ratio": round(claude / rules, 3),
        "repeats": repeats,
        "targets_met": rerun_requests == 0 and claude / rules <= 1.2,
    }


def main() -> int:
    os.environ.setdefault("ANTHROPIC_API_KEY", KEY)  # the fake accepts any key
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", choices=("concurrency", "caching", "rerun"))
    parser.add_argument("--repeats", type=int, default=5, help="notebook runs per judge (rerun)")
    parser.add_argument(
        "--json", type=Path, default=REPO / "bench" / "results" / "judge_bench.json"
    )
    args = parser.parse_args()
    results: dict[str, Any] = {}
    if args.only in (None, "concurrency"):
        results["concurrency"] = bench_concurrency()
        print("concurrency:", json.dumps(results["concurrency"], indent=2))
    if args.only in (None, "caching"):
        results["caching"] = bench_caching()
        print("caching:", json.dumps(results["caching"], indent=2))
    if args.only in (None, "rerun"):
        results["rerun"] = bench_rerun(args.repeats)
        print("rerun:", json.dumps(results["rerun"], indent=2))
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(results, indent=2) + "\n")
    print(f"written: {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
