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
from typing import TYPE_CHECKING, Any

from ..arguments import add_judge_arguments, add_workspace_arguments

if TYPE_CHECKING:
    from ..judges.config import JudgeConfig
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
    # The judge flags `evalkit run` takes: whose requests (an LLM judge), its model, prompts.
    add_judge_arguments(parser, default="claude")
    parser.add_argument("--out", type=Path, required=True, metavar="DIR")
    parser.set_defaults(handler=cmd_prompts)


def write_prompts(
    *,
    range_id: str,
    run_id: str,
    out: Path,
    ranges_dir: Path = Path("ranges"),
    runs_dir: Path = Path("runs"),
    config: JudgeConfig,
) -> list[Path]:
    """Write the requests of the LLM judge ``config`` for (``range_id``, ``run_id``) into
    ``out`` (its response cache is neither read nor written: nothing is sent).

    Every target is checked before the first is written (no link on the way, none
    replaced), and written by the guarded writer, following no link below ``out``.
    """
    from ..checklist import load_range
    from ..errors import EvalkitError
    from ..fileio import check_target
    from ..fileio import write_text_atomic as write_text
    from ..judges.config import JudgeConfig
    from ..judges.llm.runner import LLMJudge
    from ..runs import load_submission

    if "cache_dir" in config.settings:
        config = JudgeConfig(config.judge, {**config.settings, "cache_dir": None})
    llm = config.build()
    if not isinstance(llm, LLMJudge):
        raise EvalkitError(
            f"evalkit prompts writes an LLM judge's requests; the {config.judge} judge sends"
            " none (choose --judge claude or openai-compatible)"
        )
    judge, model = config.judge, llm.model
    rng = load_range(ranges_dir, range_id)
    submission = load_submission(runs_dir, run_id, rng)
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
    from ..arguments import check_writable_folder, given_paths, judge_config
    from ..workspace import Workspace

    workspace = Workspace.from_args(args, args.out, *given_paths(args))
    out = workspace.check_out(args.out)
    check_writable_folder(out)
    written = write_prompts(
        range_id=args.range_id,
        run_id=args.run_id,
        out=out,
        ranges_dir=workspace.ranges_dir,
        runs_dir=workspace.runs_dir,
        config=judge_config(args, workspace),
    )
    items = sum(1 for path in written if path.parent.name == "items")
    print(f"{args.range_id} / {args.run_id}: {items} requests written to {args.out}")
    return 0
