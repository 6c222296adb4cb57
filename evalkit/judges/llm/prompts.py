"""The judge prompt templates: one versioned folder, rendered with Jinja2.

A folder holds at least ``system.md`` and ``item.md``; ``documents.md`` and
``retry.md`` come from the packaged default prompt when it lacks them. The
folder's hash names the prompt in every cache key and record.

``system.md`` may render the rubric (``{{ rubric.detection_table }}`` and the
other parts of :func:`evalkit.rubric.judge_tables`): the judge then reads the
same definitions as the labellers, and the rubric's text joins the prompt's hash.
A prompt whose system prompt names ``addressed_to_evaluator`` asks for that field
in every answer (:data:`~evalkit.judges.llm.verdict.ADDRESSED_VERDICT_SCHEMA`).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jinja2

from ...errors import JudgeInputError
from ...model import Checkpoint, Document, Range, Submission
from ...rubric import RUBRIC, Rubric, judge_tables
from .verdict import ADDRESSED_FIELD, ADDRESSED_VERDICT_SCHEMA, VERDICT_SCHEMA

PROMPTS_ROOT = Path(__file__).resolve().parent.parent.parent / "prompts"
# The packaged default: v3, by the rule fixed in corpora/README.md before holdout4 was written.
DEFAULT_PROMPT_DIR = PROMPTS_ROOT / "v3"
REQUIRED_TEMPLATES: tuple[str, ...] = ("system.md", "item.md")
# Taken from the packaged default prompt when a custom prompt folder does not have them.
OPTIONAL_TEMPLATES: tuple[str, ...] = ("documents.md", "retry.md")
VERSION_FILE = "VERSION"


@dataclass(frozen=True)
class _DocumentView:
    filename: str
    text: str
    boundary: str


def _boundary(*texts: str) -> str:
    """One fence token for all ``texts``, derived from all of them.

    A document cannot contain a hash of itself, so none of the texts can contain the
    end marker; one token per document would let one document forge the other's.
    """
    joined = "\0".join(texts)
    return hashlib.sha256(joined.encode("utf-8")).hexdigest()[:16]


def _read_template(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise JudgeInputError(
            f"prompt template is not UTF-8 text (byte {exc.start}: {exc.reason})", path=path
        ) from None


def packaged_versions() -> tuple[str, ...]:
    """The prompt versions shipped with evalkit (``v1``, ``v2`` ...)."""
    return tuple(sorted(p.name for p in PROMPTS_ROOT.iterdir() if (p / "system.md").is_file()))


def resolve_prompt_dir(prompt_dir: str | Path | None) -> Path:
    """The prompt folder ``prompt_dir`` names: a folder, or the name of a packaged version
    (``v2``) when no such folder exists; None is the default, ``v3``."""
    if prompt_dir is None or str(prompt_dir) == "":
        return DEFAULT_PROMPT_DIR
    directory = Path(prompt_dir)
    if not directory.exists() and str(prompt_dir) in packaged_versions():
        return PROMPTS_ROOT / str(prompt_dir)
    return directory


@dataclass(frozen=True)
class PromptSet:
    """The judge prompt templates of one folder, with their version and hash."""

    directory: Path
    version: str
    sha256: str
    sources: dict[str, str]  # template name -> text
    _env: jinja2.Environment = field(repr=False, compare=False)
    rubric: Rubric = field(default=RUBRIC, repr=False)

    @property
    def uses_rubric(self) -> bool:
        """Whether ``system.md`` renders the rubric's definitions (v3 does)."""
        return "rubric." in self.sources["system.md"]

    @property
    def asks_addressed(self) -> bool:
        """Whether the prompt asks every answer for ``addressed_to_evaluator``."""
        return ADDRESSED_FIELD in self.sources["system.md"]

    @property
    def verdict_schema(self) -> dict[str, Any]:
        """The answer schema this prompt asks for."""
        return ADDRESSED_VERDICT_SCHEMA if self.asks_addressed else VERDICT_SCHEMA

    @classmethod
    def load(cls, prompt_dir: str | Path | None = None, *, rubric: Rubric = RUBRIC) -> PromptSet:
        directory = resolve_prompt_dir(prompt_dir)
        if not directory.is_dir():
            raise JudgeInputError("prompt folder not found", path=directory)
        sources: dict[str, str] = {}
        for name in REQUIRED_TEMPLATES:
            path = directory / name
            if not path.is_file():
                raise JudgeInputError(
                    f"prompt template {name} is missing (a prompt folder needs "
                    f"{' and '.join(REQUIRED_TEMPLATES)})",
                    path=path,
                )
            sources[name] = _read_template(path)
        for name in OPTIONAL_TEMPLATES:
            path = directory / name
            if not path.is_file():
                path = DEFAULT_PROMPT_DIR / name
            sources[name] = _read_template(path)
        version_path = directory / VERSION_FILE
        version = directory.name
        if version_path.is_file():
            text = _read_template(version_path)
            lines = text.strip().splitlines()
            version = lines[0].strip() if lines else version
            sources[VERSION_FILE] = text
        digest = hashlib.sha256()
        for name in sorted(sources):
            digest.update(name.encode("utf-8") + b"\0")
            digest.update(sources[name].encode("utf-8") + b"\0")
        if "rubric." in sources["system.md"]:
            # The rendered rubric is part of the prompt: a changed definition is a new prompt.
            for name, text in sorted(judge_tables(rubric).items()):
                digest.update(f"rubric.{name}".encode() + b"\0" + text.encode("utf-8") + b"\0")
        env = jinja2.Environment(
            loader=jinja2.DictLoader(sources),
            undefined=jinja2.StrictUndefined,
            autoescape=False,
            keep_trailing_newline=True,
        )
        for name in (*REQUIRED_TEMPLATES, *OPTIONAL_TEMPLATES):
            try:
                env.get_template(name)
            except jinja2.TemplateSyntaxError as exc:
                raise JudgeInputError(
                    f"prompt template {name}: {exc.message}", path=directory / name, line=exc.lineno
                ) from None
        return cls(
            directory=directory,
            version=version,
            sha256=digest.hexdigest(),
            sources=sources,
            _env=env,
            rubric=rubric,
        )

    def _render(self, name: str, **context: Any) -> str:
        try:
            return self._env.get_template(name).render(**context)
        except jinja2.TemplateError as exc:
            raise JudgeInputError(
                f"prompt template {name}: {exc}", path=self.directory / name
            ) from None

    def system(self) -> str:
        return self._render("system.md", rubric=judge_tables(self.rubric))

    def documents(self, rng: Range, submission: Submission) -> str:
        boundary = _boundary(submission.report.text, submission.plan.text)

        def view(doc: Document) -> _DocumentView:
            return _DocumentView(filename=doc.filename, text=doc.text, boundary=boundary)

        return self._render(
            "documents.md",
            range=rng,
            facts=list(rng.facts),
            report=view(submission.report),
            plan=view(submission.plan),
        )

    def item(self, rng: Range, checkpoint: Checkpoint) -> str:
        caps = [{"id": cap, "name": rng.capability_name(cap)} for cap in checkpoint.caps]
        return self._render(
            "item.md",
            chk=checkpoint,
            has_detection=checkpoint.has_detection,
            has_plan=checkpoint.has_plan,
            caps=caps,
            extra=list(checkpoint.extra.items()),
        )

    def retry(self, problem: str) -> str:
        return self._render("retry.md", problem=problem)
