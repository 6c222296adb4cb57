"""Benchmarks of notebook overhead and of `evalkit batch` (rules judge, no network).

    .venv/bin/python bench/batch_bench.py                 # all four, several minutes
    .venv/bin/python bench/batch_bench.py --only kernels  # or: single, batch, no-notebook
    .venv/bin/python bench/batch_bench.py --only kernels --samples   # the 15 sample evaluations

1. single: one rules-judge evaluation (`evalkit run --range ssh-miner`) against bare
   papermill running a two-cell notebook that imports pandas and matplotlib. Interleaved
   runs, medians. Target: at most 1.5 s slower.
2. batch: 30 evaluations (10 copies of runs/demo x 3 ranges) with `evalkit batch
   --workers 2` against a sequential loop of `evalkit run`. Target: at least 1.7x faster.
3. no-notebook: `evalkit batch --no-notebook` for the same 30 against the Python API
   (`evaluate` + `write_outputs`) in one process of its own. Target: within 2x.
4. kernels: the same evaluations with `evalkit batch --workers 2 --force` three ways, in
   one run, interleaved (warm kernels, the default; `--fresh-kernels`; `--no-notebook`),
   medians, as ratios to `--no-notebook`, with each notebook's own duration (kernel start
   and cells, from papermill's metadata). Target: warm within 3x of `--no-notebook`.
   `--samples` runs it on the repository's sample evaluations (runs/*/*) instead.

Every command runs in a temporary workspace; figures go to stdout and to
bench/results/batch_bench.json.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.samples import copy_samples, evalkit_command  # noqa: E402

RUNS = 10
RANGES = ("ssh-miner", "redis-exposed", "weak-baseline")
TWO_CELLS = {
    "cells": [
        {
            "cell_type": "code",
            "execution_count": None,
            "metadata": {},
            "outputs": [],
            "source": ["import pandas as pd\n", "import matplotlib.pyplot as plt"],
        },
        {
            "cell_type": "code",
            "execution_count": None,
            "metadata": {},
            "outputs": [],
            "source": ["print(pd.__version__)"],
        },
    ],
    "metadata": {
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
        "language_info": {"name": "python"},
    },
    "nbformat": 4,
    "nbformat_minor": 5,
}
API_SCRIPT = textwrap.dedent(
    """
    import sys
    import evalkit
    from evalkit import render
    judge = evalkit.make_judge("rules")
    for run in sys.argv[1:]:
        for range_id in ("ssh-miner", "redis-exposed", "weak-baseline"):
            rng = evalkit.load_range("ranges", range_id)
            submission = evalkit.load_submission("runs", run, rng)
            render.write_outputs(
                evalkit.evaluate(rng, submission, judge),
                f"api-out/{run}/{range_id}",
            )
    """
)


def workspace(into: Path) -> Path:
    copy_samples(into, runs=("demo",))
    demo = into / "runs/demo"
    for number in range(1, RUNS + 1):
        shutil.copytree(demo, into / f"runs/run-{number:02d}")
    shutil.rmtree(demo)
    return into


def timed(command: list[str], cwd: Path) -> float:
    started = time.perf_counter()
    result = subprocess.run(command, cwd=cwd, capture_output=True, text=True, env=_env())
    elapsed = time.perf_counter() - started
    if result.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed:\n{result.stderr[-2000:]}")
    return elapsed


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "ANTHROPIC_API_KEY"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    return env


def papermill_command() -> list[str]:
    script = Path(sys.executable).parent / "papermill"
    return [str(script)] if script.exists() else [sys.executable, "-m", "papermill"]


def bench_single(ws: Path, repeats: int) -> dict[str, float]:
    notebook = ws / "two-cells.ipynb"
    notebook.write_text(json.dumps(TWO_CELLS))
    bare, evalkit_run = [], []
    for _ in range(repeats):
        bare.append(
            timed(
                [*papermill_command(), "--no-progress-bar", str(notebook), str(ws / "out.ipynb")],
                ws,
            )
        )
        evalkit_run.append(
            timed(
                [*evalkit_command(), "run", "--run", "run-01", "--range", "ssh-miner", "--quiet"],
                ws,
            )
        )
    result = {
        "papermill_two_cells_s": round(statistics.median(bare), 2),
        "evalkit_run_s": round(statistics.median(evalkit_run), 2),
    }
    result["difference_s"] = round(result["evalkit_run_s"] - result["papermill_two_cells_s"], 2)
    return result


def bench_batch(ws: Path) -> dict[str, float]:
    started = time.perf_counter()
    for number in range(1, RUNS + 1):
        for range_id in RANGES:
            timed(
                [
                    *evalkit_command(), "run", "--run", f"run-{number:02d}",
                    "--range", range_id, "--quiet",
                ],
                ws,
            )  # fmt: skip
    loop = time.perf_counter() - started
    batch = timed([*evalkit_command(), "batch", "--workers", "2", "--force", "--quiet"], ws)
    return {
        "sequential_loop_s": round(loop, 1),
        "batch_2_workers_s": round(batch, 1),
        "speedup": round(loop / batch, 2),
    }


def bench_no_notebook(ws: Path, repeats: int) -> dict[str, float]:
    script = ws / "api.py"
    script.write_text(API_SCRIPT)
    runs = [f"run-{number:02d}" for number in range(1, RUNS + 1)]
    api, fast = [], []
    for _ in range(repeats):
        api.append(timed([sys.executable, str(script), *runs], ws))
        fast.append(timed([*evalkit_command(), "batch", "--no-notebook", "--force", "--quiet"], ws))
    result = {
        "python_api_s": round(statistics.median(api), 2),
        "batch_no_notebook_s": round(statistics.median(fast), 2),
    }
    result["ratio"] = round(result["batch_no_notebook_s"] / result["python_api_s"], 2)
    return result


KERNEL_PATHS = {
    "warm": ["--workers", "2"],
    "fresh": ["--workers", "2", "--fresh-kernels"],
    "no_notebook": ["--no-notebook"],
}


def notebook_seconds(ws: Path) -> list[float]:
    """Each record's notebook duration (kernel start and cells), from papermill's metadata."""
    found = []
    for path in ws.glob("runs/*/*/evaluations/rules/evaluation.ipynb"):
        meta = json.loads(path.read_text())["metadata"].get("papermill", {})
        if meta.get("duration") is not None:
            found.append(float(meta["duration"]))
    return found


def bench_kernels(ws: Path, repeats: int) -> dict[str, float]:
    """Warm, fresh and no-notebook batches of the same evaluations, interleaved."""
    times: dict[str, list[float]] = {name: [] for name in KERNEL_PATHS}
    durations: dict[str, list[float]] = {"warm": [], "fresh": []}
    for _ in range(repeats):
        for name, flags in KERNEL_PATHS.items():
            times[name].append(
                timed([*evalkit_command(), "batch", "--force", "--quiet", *flags], ws)
            )
            if name in durations:
                durations[name] += notebook_seconds(ws)
    count = len(list(ws.glob("runs/*/*/evaluations/rules/scores.json")))
    result: dict[str, float] = {"evaluations": count}
    for name, values in times.items():
        result[f"{name}_s"] = round(statistics.median(values), 2)
    for name in ("warm", "fresh"):
        result[f"{name}_ratio"] = round(result[f"{name}_s"] / result["no_notebook_s"], 2)
        result[f"{name}_notebook_median_s"] = round(statistics.median(durations[name]), 3)
    result["fresh_over_warm"] = round(result["fresh_s"] / result["warm_s"], 2)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", choices=("single", "batch", "no-notebook", "kernels"))
    parser.add_argument("--repeats", type=int, default=5, help="runs per median (default 5)")
    parser.add_argument(
        "--samples",
        action="store_true",
        help="kernels on the sample evaluations (runs/*/*) instead of ten copies of demo",
    )
    args = parser.parse_args()
    figures: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory(prefix="evalkit-bench-") as folder:
        ws = copy_samples(Path(folder)) if args.samples else workspace(Path(folder))
        if args.only in (None, "single"):
            figures["single"] = bench_single(ws, args.repeats)
            print("single:", figures["single"], flush=True)
        if args.only in (None, "batch"):
            figures["batch"] = bench_batch(ws)
            print("batch:", figures["batch"], flush=True)
        if args.only in (None, "no-notebook"):
            figures["no_notebook"] = bench_no_notebook(ws, args.repeats)
            print("no-notebook:", figures["no_notebook"], flush=True)
        if args.only in (None, "kernels"):
            figures["kernels"] = bench_kernels(ws, args.repeats)
            print("kernels:", figures["kernels"], flush=True)
    results = REPO / "bench/results"
    results.mkdir(exist_ok=True)
    name = "batch_bench_samples.json" if args.samples else "batch_bench.json"
    (results / name).write_text(json.dumps(figures, indent=2) + "\n")


if __name__ == "__main__":
    main()
