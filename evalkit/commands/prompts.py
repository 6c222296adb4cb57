"""``evalkit prompts``: write the exact requests the LLM judge would send, per checkpoint.

    evalkit prompts --range R --run X [--prompt-dir D] [--judge claude|openai-compatible]
                    [--model M] [--ranges-dir DIR] [--runs-dir DIR] --out DIR

A researcher reads what the model sees; a person or another model answers the
requests as a stand-in judge and replays the answers with ``--judge file``. The
request bodies come from the judge's own planning (:meth:`LLMJudge.requests_for`),
the function whose output the runner sends, so what is written is what would go
out (a test holds the two against each other through the fake Messages API).

The folder::

    system.md               the system prompt (identical for every checkpoint)
    documents.md            the first user block: Facts and both documents, delimited
    items/<CHK>.md          the second user block, one per checkpoint
    requests/<CHK>.json     the whole request body, as the transport sends it
    verdict.schema.json     the JSON Schema an answer must match
    manifest.json           range, run, judge, model, prompt version and hash, input hashes
    README.md               how to answer, for a stand-in judge

Nothing is sent anywhere and no key is needed.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from ..judges.registry import DEFAULT_CLAUDE_MODEL, prompt_dir_arg

LLM_JUDGES = ("claude", "openai-compatible")
STAND_IN_README = """\
# Requests for {range_id} / {run_id}

These are the exact requests the `{judge}` judge sends, one per checkpoint
(prompt `{prompt_version}`, sha256 `{prompt_sha256}`).

To answer as the judge: read `system.md`, then `documents.md`, then, for each
checkpoint, `items/<CHK>.md`; answer each with one JSON object matching
`verdict.schema.json`, plus `"chk_id"`. Put the answers in one JSONL file (one
object per line) and replay them:

    evalkit run --range {range_id} --run {run_id} --judge file --verdicts ANSWERS.jsonl

Checkpoints: {checkpoints}
"""


def register(commands: Any) -> None:
    from ..cli import add_workspace_arguments

    parser = commands.add_parser(
        "prompts",
        help="write the exact requests the LLM judge would send, one per checkpoint",
        description="Render the LLM judge's requests for one range and run (system prompt,"
        " documents block, one item per checkpoint, whole request bodies) without sending"
        " anything, for reading or for a stand-in judge.",
    )
    parser.add_argument("--range", dest="range_id", required=True, metavar="NAME")
    parser.add_argument("--run", dest="run_id", required=True, metavar="RUN_ID")
    add_workspace_arguments(parser)
    parser.add_argument(
        "--judge",
        default="claude",
        choices=LLM_JUDGES,
        help="whose request shape to write (default: claude)",
    )
    parser.add_argument("--model", default=DEFAULT_CLAUDE_MODEL, metavar="MODEL")
    parser.add_argument(
        "--prompt-dir",
        type=prompt_dir_arg,
        metavar="DIR",
        help="judge prompt templates (default: the packaged v3)",
    )
    parser.add_argument("--out", type=Path, required=True, metavar="DIR")
    parser.set_defaults(handler=cmd_prompts)


def write_prompts(
    *,
    range_id: str,
    run_id: str,
    out: Path,
    ranges_dir: Path = Path("ranges"),
    runs_dir: Path = Path("runs"),
    judge: str = "claude",
    model: str = DEFAULT_CLAUDE_MODEL,
    prompt_dir: Path | None = None,
) -> list[Path]:
    """Write the requests of judge ``judge`` for (``range_id``, ``run_id``) into ``out``.

    Every target is checked before the first is written (no link on the way, none
    replaced), and written by the guarded writer, following no link below ``out``.
    """
    from ..checklist import load_range
    from ..fileio import check_target
    from ..fileio import write_text_atomic as write_text
    from ..judges import make_judge
    from ..judges.llm.runner import LLMJudge
    from ..runs import load_submission

    rng = load_range(ranges_dir, range_id)
    submission = load_submission(runs_dir, run_id, rng)
    settings: dict[str, Any] = {"model": model, "cache_dir": None}
    if prompt_dir is not None:
        settings["prompt_dir"] = prompt_dir
    llm = make_judge(judge, **settings)
    assert isinstance(llm, LLMJudge)  # the choices above are LLM judges
    prompts = llm.prompts
    bodies = llm.requests_for(rng, submission)

    def dump(value: Any) -> str:
        return json.dumps(value, indent=2, ensure_ascii=False) + "\n"

    names = ["system.md", "documents.md", "verdict.schema.json", "manifest.json", "README.md"]
    for checkpoint in rng.checkpoints:
        names += [f"items/{checkpoint.id}.md", f"requests/{checkpoint.id}.json"]
    for name in names:
        check_target(out / name, out)

    def write_text_atomic(path: Path, text: str) -> Path:
        return write_text(path, text, root=out)

    written = [
        write_text_atomic(out / "system.md", prompts.system()),
        write_text_atomic(out / "documents.md", prompts.documents(rng, submission)),
        write_text_atomic(out / "verdict.schema.json", dump(prompts.verdict_schema)),
    ]
    for checkpoint, body in zip(rng.checkpoints, bodies, strict=True):
        written.append(
            write_text_atomic(out / "items" / f"{checkpoint.id}.md", prompts.item(rng, checkpoint))
        )
        written.append(write_text_atomic(out / "requests" / f"{checkpoint.id}.json", dump(body)))
    manifest = {
        "range": rng.id,
        "run_id": run_id,
        "judge": judge,
        "model": model,
        "prompt_version": prompts.version,
        "prompt_sha256": prompts.sha256,
        "inputs": {
            "checklist": rng.sha256,
            "report": submission.report.sha256,
            "plan": submission.plan.sha256,
        },
        "checkpoints": [checkpoint.id for checkpoint in rng.checkpoints],
    }
    written.append(write_text_atomic(out / "manifest.json", dump(manifest)))
    written.append(
        write_text_atomic(
            out / "README.md",
            STAND_IN_README.format(
                range_id=rng.id,
                run_id=run_id,
                judge=judge,
                prompt_version=prompts.version,
                prompt_sha256=prompts.sha256,
                checkpoints=", ".join(manifest["checkpoints"]),
            ),
        )
    )
    return written


def cmd_prompts(args: argparse.Namespace) -> int:
    from ..cli import _check_writable_folder
    from ..workspace import Workspace, absolute

    workspace = Workspace.from_args(args, args.out, args.prompt_dir)
    out = workspace.check_out(args.out)
    _check_writable_folder(out)
    written = write_prompts(
        range_id=args.range_id,
        run_id=args.run_id,
        out=out,
        ranges_dir=workspace.ranges_dir,
        runs_dir=workspace.runs_dir,
        judge=args.judge,
        model=args.model,
        prompt_dir=absolute(args.prompt_dir) if args.prompt_dir else None,
    )
    items = sum(1 for path in written if path.parent.name == "items")
    print(f"{args.range_id} / {args.run_id}: {items} requests written to {args.out}")
    return 0
