"""Size benchmarks of the offline path: reading, screening, the rules judge, grounding, scoring.

    .venv/bin/python bench/size_bench.py                  # all three cases
    .venv/bin/python bench/size_bench.py --only paragraph # or: checkpoints, line
    .venv/bin/python bench/size_bench.py --scale 0.1      # smaller documents, for a quick look

1. paragraph: a 30 MB analysis report written as one paragraph (wrapped lines, no blank
   line), judged against the sample ssh-miner range with its sample plan.
2. checkpoints: a checklist of 5,000 checkpoints (form A), parsed, then judged against
   the sample ssh-miner documents.
3. line: a 2 MB analysis report on one single line, against ssh-miner.

Each case runs in a fresh Python process (``evalkit.pipeline.evaluate`` with the rules
judge, everything from loading the files to the Evaluation) and reports its wall time
its CPU time, and its peak RSS (``resource.getrusage(RUSAGE_SELF)``): on a
busy machine the wall time grows while the CPU time does not. Target: each under
60 s and 1 GB. Figures go to stdout and to bench/results/size_bench.json.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TARGET_SECONDS = 60.0
TARGET_BYTES = 2**30

SENTENCES = (
    "At 03:14:07 the process kworkerd (PID 4127) ran from /var/tmp/.cache/kworkerd and "
    "connected to 198.51.100.23:3333, which is the xmrig pool named in its config.",
    "The SSH brute force against deploy came from 203.0.113.45; no fail2ban throttled it.",
    "We did not find CVE-2024-6387 in use, and the operator never ran rm -rf /var/www.",
    "Cron and systemd persistence were both present; the unit file is kworkerd.service.",
    "Nothing here is a finding on its own, it is only filler text to make a big paragraph.",
)


def _paragraph(size: int, *, wrap: bool) -> str:
    parts: list[str] = []
    total = 0
    index = 0
    while total < size:
        sentence = SENTENCES[index % len(SENTENCES)]
        parts.append(sentence)
        total += len(sentence) + 1
        index += 1
    if not wrap:
        return " ".join(parts)
    return "\n".join(parts)  # one sentence a line, no blank line: one paragraph


def _checklist(count: int) -> str:
    lines = [
        "---",
        "range: ssh-miner",
        "title: Generated checklist",
        "report: intrusion-report",
        "---",
        "",
        "## Facts",
        "",
        "- No CVE is involved.",
        "",
        "## Checkpoints",
        "",
    ]
    for number in range(1, count + 1):
        lines += [
            f"### CHK-{number:04d} Generated item {number}",
            "- Scope: both",
            "- Detection: finds the miner",
            "- Plan: removes the miner",
            f"- Indicators: `kworkerd`, `/var/tmp/.cache/kworkerd`, `marker{number}`",
            "- Attribution: `brute force`, `SSH`",
            f"- Remediation: `kill`, `rm`, `step{number}`",
            "",
        ]
    return "\n".join(lines)


def _write_case(root: Path, case: str, scale: float) -> tuple[Path, Path]:
    """(ranges dir, runs dir) holding the case's inputs."""
    ranges = root / "ranges"
    runs = root / "runs"
    sample_ranges = REPO / "ranges" / "ssh-miner"
    sample_run = REPO / "runs" / "demo" / "ssh-miner"
    (ranges / "ssh-miner").mkdir(parents=True)
    (runs / "bench" / "ssh-miner").mkdir(parents=True)
    checklist = (sample_ranges / "checklist.md").read_text(encoding="utf-8")
    report = (sample_run / "intrusion-report.md").read_text(encoding="utf-8")
    plan = (sample_run / "remediation-plan.md").read_text(encoding="utf-8")
    if case == "paragraph":
        report = "# Intrusion report\n\n## Findings\n\n" + _paragraph(
            int(30 * 2**20 * scale), wrap=True
        )
    elif case == "line":
        report = "# Intrusion report\n\n## Findings\n\n" + _paragraph(
            int(2 * 2**20 * scale), wrap=False
        )
    elif case == "checkpoints":
        checklist = _checklist(max(1, int(5000 * scale)))
    (ranges / "ssh-miner" / "checklist.md").write_text(checklist, encoding="utf-8")
    (runs / "bench" / "ssh-miner" / "intrusion-report.md").write_text(report, encoding="utf-8")
    (runs / "bench" / "ssh-miner" / "remediation-plan.md").write_text(plan, encoding="utf-8")
    return ranges, runs


CHILD = """
import json, resource, sys, time
sys.path.insert(0, {repo!r})
start = time.perf_counter()
from evalkit.checklist import load_range
from evalkit.judges.rules import RulesJudge
from evalkit.pipeline import evaluate
from evalkit.runs import load_submission
rng = load_range({ranges!r}, "ssh-miner")
sub = load_submission({runs!r}, "bench", rng)
ev = evaluate(rng, sub, RulesJudge())
seconds = time.perf_counter() - start
usage = resource.getrusage(resource.RUSAGE_SELF)
rss = usage.ru_maxrss * 1024  # KiB on Linux
print(json.dumps({{
    "seconds": round(seconds, 2),
    "cpu_seconds": round(usage.ru_utime + usage.ru_stime, 2),
    "peak_rss_bytes": rss,
    "report_bytes": len(sub.report.text.encode()),
    "checkpoints": len(rng.checkpoints),
    "detection": [ev.summary.detection.score, ev.summary.detection.max],
    "plan": [ev.summary.plan.score, ev.summary.plan.max],
    "errored": len(ev.summary.errored),
    "warnings": len(ev.summary.warnings),
}}))
"""


def run_case(case: str, scale: float) -> dict[str, object]:
    with tempfile.TemporaryDirectory(prefix=f"evalkit-size-{case}-") as tmp:
        ranges, runs = _write_case(Path(tmp), case, scale)
        code = CHILD.format(repo=str(REPO), ranges=str(ranges), runs=str(runs))
        done = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=False
        )
        if done.returncode != 0:
            raise SystemExit(f"{case}: failed\n{done.stderr}")
        result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    result["case"] = case
    result["within_target"] = (
        float(result["seconds"]) < TARGET_SECONDS  # type: ignore[arg-type]
        and int(result["peak_rss_bytes"]) < TARGET_BYTES  # type: ignore[call-overload]
    )
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=("paragraph", "checkpoints", "line"))
    parser.add_argument("--scale", type=float, default=1.0)
    args = parser.parse_args()
    cases = [args.only] if args.only else ["paragraph", "checkpoints", "line"]
    results = []
    for case in cases:
        result = run_case(case, args.scale)
        results.append(result)
        rss_mb = int(result["peak_rss_bytes"]) / 2**20  # type: ignore[call-overload]
        print(
            f"{case:12s} {result['seconds']:>7} s ({result['cpu_seconds']} s CPU)  "
            f"{rss_mb:5.0f} MB peak RSS  "
            f"report {int(result['report_bytes']) / 2**20:.1f} MB, "  # type: ignore[call-overload]
            f"{result['checkpoints']} checkpoints, detection {result['detection']}, "
            f"plan {result['plan']}, {result['warnings']} warnings  "
            f"{'OK' if result['within_target'] else 'OVER TARGET'}",
            flush=True,
        )
    out = REPO / "bench" / "results"
    out.mkdir(exist_ok=True)
    (out / "size_bench.json").write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    return 0 if all(r["within_target"] for r in results) else 1


if __name__ == "__main__":
    raise SystemExit(main())
