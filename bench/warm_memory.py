"""Memory of warm kernel workers over a long batch: flat, or growing with each record?

    .venv/bin/python bench/warm_memory.py                 # 34 copies of the 15 samples: 510
    .venv/bin/python bench/warm_memory.py --copies 4      # a quick look (60 records)

Runs `evalkit batch --force --workers N` (default 1) in a temporary workspace holding the
sample ranges and `--copies` copies of every sample run, and samples, every `--interval`
seconds: each worker's and each template's resident memory (RSS, and PSS: the pages that
are the process's own), the largest record kernel's, and how many records are done. Writes
bench/results/warm_memory.json and a figure, bench/results/warm_memory.png, and prints the
figures at a few record counts with the growth per 100 records (a least-squares slope over
the second half of the batch, once every cache is filled).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import psutil

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.samples import copy_samples, evalkit_command  # noqa: E402

TEMPLATE = "evalkit.kernels.template"
FORKSERVER = "multiprocessing.forkserver"
MB = 1024 * 1024


def workspace(into: Path, copies: int) -> tuple[Path, int]:
    copy_samples(into)
    runs = [path for path in (into / "runs").iterdir() if path.is_dir()]
    for number in range(1, copies):
        for run in runs:
            shutil.copytree(run, into / "runs" / f"{run.name}-{number:03d}")
    return into, len(list(into.glob("runs/*/*/*-report.md")))


def roles(batch: psutil.Process) -> dict[str, list[psutil.Process]]:
    """The batch's workers (forked by multiprocessing's fork server), its kernel template
    and the record kernels (forked by the template, whose command line they keep)."""
    found: dict[str, list[psutil.Process]] = {"worker": [], "template": [], "kernel": []}
    for process in batch.children(recursive=True):
        try:
            command = " ".join(process.cmdline())
            parent = process.parent()
            above = " ".join(parent.cmdline()) if parent is not None else ""
        except psutil.Error:
            continue
        if TEMPLATE in command:
            found["kernel" if TEMPLATE in above else "template"].append(process)
        elif FORKSERVER in command and FORKSERVER in above:
            found["worker"].append(process)
    return found


def memory(process: psutil.Process) -> tuple[float, float]:
    """RSS and PSS (each page shared with n processes counts 1/n: a template and its kernel
    share most of theirs), in MB."""
    try:
        info = process.memory_full_info()
    except psutil.Error:
        return (0.0, 0.0)
    return (info.rss / MB, info.pss / MB)


def sample(batch: psutil.Process, ws: Path, started: float) -> dict[str, Any] | None:
    found = roles(batch)
    if not found["template"] or not found["worker"]:
        return None
    row: dict[str, Any] = {
        "seconds": round(time.monotonic() - started, 1),
        "records": len(list(ws.glob("runs/*/*/evaluations/rules/evaluation.html"))),
    }
    for role in ("worker", "template"):
        figures = [memory(process) for process in found[role]]
        row[f"{role}_rss_mb"] = round(max(rss for rss, _ in figures), 1)
        row[f"{role}_pss_mb"] = round(max(pss for _, pss in figures), 1)
    kernels = [memory(process) for process in found["kernel"]]
    row["kernel_rss_mb"] = round(max((rss for rss, _ in kernels), default=0.0), 1)
    row["kernel_pss_mb"] = round(max((pss for _, pss in kernels), default=0.0), 1)
    return row


def slope_per_100(rows: list[dict[str, Any]], key: str) -> float:
    """MB per 100 records, least squares over the second half of the batch."""
    half = [row for row in rows if row["records"] >= rows[-1]["records"] / 2]
    xs, ys = [row["records"] for row in half], [row[key] for row in half]
    if len(set(xs)) < 2:
        return 0.0
    mean_x, mean_y = sum(xs) / len(xs), sum(ys) / len(ys)
    covariance = sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys, strict=True))
    variance = sum((x - mean_x) ** 2 for x in xs)
    return round(100 * covariance / variance, 2)


def plot(rows: list[dict[str, Any]], target: Path, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 4.2), layout="constrained")
    records = [row["records"] for row in rows]
    for key, label, style in (
        ("template_rss_mb", "template RSS", "-"),
        ("worker_rss_mb", "worker RSS", "-"),
        ("worker_pss_mb", "worker PSS", "--"),
    ):
        ax.plot(records, [row[key] for row in rows], style, label=label)
    # A record's kernel, whenever one was running at the sample: it lives for one record.
    running = [row for row in rows if row["kernel_rss_mb"] > 0]
    for key, label, marker in (
        ("kernel_rss_mb", "record kernel RSS", "."),
        ("kernel_pss_mb", "record kernel PSS", "x"),
    ):
        ax.plot([r["records"] for r in running], [r[key] for r in running], marker, ms=3,
                label=label, alpha=0.5)  # fmt: skip
    ax.set_xlabel("records done")
    ax.set_ylabel("MB")
    ax.set_ylim(bottom=0)
    ax.set_title(title)
    ax.legend(loc="lower right", fontsize=8, ncols=2)
    fig.savefig(target, dpi=100)
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--copies", type=int, default=34, help="copies of each sample run")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--interval", type=float, default=1.0, help="seconds between samples")
    parser.add_argument(
        "--plot-only", action="store_true", help="redraw the figure from the last results"
    )
    args = parser.parse_args()
    results = REPO / "bench/results"
    if args.plot_only:
        saved = json.loads((results / "warm_memory.json").read_text())
        count = saved["summary"]["evaluations"]
        title = f"evalkit batch, warm kernels: {count} records"
        plot(saved["samples"], results / "warm_memory.png", title)
        return
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="evalkit-memory-") as folder:
        ws, count = workspace(Path(folder), args.copies)
        print(f"{count} evaluations, {args.workers} worker(s)", flush=True)
        started = time.monotonic()
        command = [*evalkit_command(), "batch", "--force", "--quiet", "--workers"]
        process = subprocess.Popen([*command, str(args.workers)], cwd=ws, stdout=subprocess.DEVNULL)
        batch = psutil.Process(process.pid)
        while process.poll() is None:
            row = sample(batch, ws, started)
            if row is not None:
                rows.append(row)
                if len(rows) % 30 == 0:
                    print(row, flush=True)
            time.sleep(args.interval)
        wall = time.monotonic() - started
        if process.returncode != 0:
            raise SystemExit(f"the batch failed (exit {process.returncode})")
    summary = {
        "evaluations": count,
        "workers": args.workers,
        "wall_s": round(wall, 1),
        **{
            f"{key}_per_100_records": slope_per_100(rows, key)
            for key in ("worker_rss_mb", "worker_pss_mb", "template_rss_mb", "template_pss_mb")
        },
    }
    print("records  worker RSS/PSS MB  template RSS/PSS MB  largest kernel RSS/PSS MB")
    for mark in (10, 50, 100, 200, 300, 400, 500):
        row = next((row for row in rows if row["records"] >= mark), None)
        if row is not None:
            print(
                f"{row['records']:>7}  {row['worker_rss_mb']:>7} / {row['worker_pss_mb']:<7}"
                f"  {row['template_rss_mb']:>7} / {row['template_pss_mb']:<7}"
                f"  {row['kernel_rss_mb']:>7} / {row['kernel_pss_mb']}"
            )
    print(summary)
    results.mkdir(exist_ok=True)
    (results / "warm_memory.json").write_text(
        json.dumps({"summary": summary, "samples": rows}, indent=1) + "\n"
    )
    plot(rows, results / "warm_memory.png", f"evalkit batch, warm kernels: {count} records")
    print(f"figure: {results / 'warm_memory.png'}")


if __name__ == "__main__":
    main()
