"""Read a range checklist (``ranges/<range>/checklist.md``) into a :class:`Range`.

The format is specified in ``checklist-format.md``: YAML-like front matter,
optional ``## Capabilities`` and ``## Facts`` sections, and a ``## Checkpoints``
section written either as one ``### CHK-NN Name`` sub-section per item
(form A) or as one Markdown table (form B). Both forms are first reduced to
the same raw item (fields with the line they came from) and then validated by
one code path, so they cannot drift apart.

Checklists are written by people, so the parser reports every problem it finds
in one pass (:class:`ChecklistErrors`), each with the line it concerns.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path

from .bounded import MAX_NAME_BYTES, MAX_TEXT_BYTES, shown
from .checklist_fields import CANONICAL_FIELDS, SCOPES, normalize_name, unknown_field_warnings
from .errors import ChecklistError, ChecklistErrors, RunError
from .fileio import read_confined
from .markdown import MarkdownDocument
from .markdown import parse as parse_markdown
from .model import REPORT_KINDS, Capability, Checkpoint, Range, Scope
from .workspace import POINT_ELSEWHERE

__all__ = [
    "CHECKLIST_FILENAME",
    "list_ranges",
    "load_checklist",
    "load_range",
    "natural_key",
    "parse_checklist",
]

CHECKLIST_FILENAME = "checklist.md"

RANGE_ID = re.compile(r"[a-z0-9][a-z0-9_-]*")
# At most 9 digits: a checkpoint number, not a number of 5,000 digits int() refuses.
_CHK_ID = re.compile(r"CHK-\d{1,9}")

# ATX headings need a space after the hashes ("#tag" is text); a closing "##" run is dropped.
_SECTION = re.compile(r"#{1,2}(?!#)(?:\s+(.*?))?(?:\s+#+)?\s*$")
_ITEM = re.compile(r"###(?!#)(?:\s+(.*?))?(?:\s+#+)?\s*$")
# "CHK-01 Name", "CHK-01: Name", "CHK-01 — Name", "CHK-01 - Name".
_ITEM_TITLE = re.compile(r"(?P<id>[^\s:—–]*)\s*(?:[:—–]|-(?=\s))?\s*(?P<name>.*)$")
_FIELD = re.compile(r"\s*[-*+]\s+(?P<name>[*_]*[A-Za-z][^:`]{0,40}?[*_]*)\s*:\s*(?P<value>.*)$")
_FRONT_KEY = re.compile(r"(?P<key>[A-Za-z_][\w-]*)\s*:\s*(?P<value>.*)$")
_TABLE_SEPARATOR = re.compile(r":?-+:?")
_BACKTICKED = re.compile(r"`([^`]*)`")

_NOTES = "Notes"


# --------------------------------------------------------------------------- public API


def natural_key(chk_id: str) -> tuple[tuple[str | tuple[int, str], ...], str]:
    """Sort key that orders digit runs by value, so ``CHK-2`` sorts before ``CHK-10``.

    Text parts compare case-insensitively; the original string breaks ties
    (``CHK-1`` vs ``CHK-01``) so the order is total and stable. A digit run is
    compared by its length, then its digits (leading zeros dropped): its value,
    without converting it, so a name of any length sorts.
    """
    parts = re.split(r"(\d+)", chk_id)
    # re.split with a group alternates text/digits, so positions never mix types.
    key = tuple(
        (len(digits := part.lstrip("0")), digits) if index % 2 else part.lower()
        for index, part in enumerate(parts)
    )
    return key, chk_id


def parse_checklist(
    text: str, path: str = "<checklist>", *, expected_range: str | None = None
) -> Range:
    """Parse checklist ``text``; raise :class:`ChecklistErrors` listing every problem."""
    errors = _Errors(path)
    lines = _split_lines(text)
    for number, line in enumerate(lines, start=1):
        if "\x00" in line:
            # A NUL byte is never text a person wrote; reading on would hide it.
            raise ChecklistErrors(
                [ChecklistError("contains a NUL byte (\\x00)", path=path, line=number)]
            )
    front, body_start = _parse_front_matter(lines, errors, expected_range)
    sections = _split_sections(lines, body_start, _read_body(lines, body_start))

    capabilities: list[Capability] | None = None
    facts: list[str] = []
    raw_items: list[_RawItem] = []
    checkpoint_headings: list[int] = []
    for section in sections:
        if section.title == "capabilities":
            capabilities = (capabilities or []) + _parse_capabilities(section, errors)
        elif section.title == "facts":
            facts += _parse_facts(section)
        elif section.title == "checkpoints":
            checkpoint_headings.append(section.line)
            raw_items += _parse_checkpoints_section(section, errors)

    if not checkpoint_headings:
        errors.add("no '## Checkpoints' section", 1)
    elif not raw_items:
        errors.add("the Checkpoints section holds no checkpoint", checkpoint_headings[0])

    declared = None if capabilities is None else {cap.id for cap in capabilities}
    checkpoints = _build_checkpoints(raw_items, declared, errors)
    errors.raise_if_any()

    return Range(
        id=front["range"],
        title=front["title"],
        report=front["report"],
        checkpoints=tuple(sorted(checkpoints, key=lambda c: natural_key(c.id))),
        capabilities=tuple(capabilities or ()),
        facts=tuple(facts),
        path=path,
        sha256=hashlib.sha256(text.encode("utf-8")).hexdigest(),
        warnings=tuple(str(w) for w in sorted(errors.warnings, key=lambda w: w.line or 0)),
    )


def list_ranges(ranges_dir: str | Path) -> list[str]:
    """Names of the folders of ``ranges_dir`` that hold a checklist, in natural order.

    A missing ``ranges_dir`` has no ranges: ``[]``, not an error, so callers can
    use this to build "available: ..." hints.
    """
    root = Path(ranges_dir)
    if not root.is_dir():
        return []
    names = [entry.name for entry in root.iterdir() if (entry / CHECKLIST_FILENAME).is_file()]
    return sorted(names, key=natural_key)


def load_range(ranges_dir: str | Path, range_id: str, *, allow_outside: bool = False) -> Range:
    """Read and parse ``<ranges_dir>/<range_id>/checklist.md``, which must resolve inside
    ``ranges_dir`` (unless ``allow_outside``)."""
    checklist = Path(ranges_dir) / range_id / CHECKLIST_FILENAME
    # A range id is a folder name, never a path: refuse "../x" before touching disk.
    if not RANGE_ID.fullmatch(range_id) or len(range_id) > MAX_NAME_BYTES:
        raise ChecklistError(
            f"invalid range id {shown(range_id)}: expected [a-z0-9][a-z0-9_-]*, at most"
            f" {MAX_NAME_BYTES} characters{_available_hint(ranges_dir)}",
            path=Path(ranges_dir),
        )
    if not checklist.is_file():
        raise ChecklistError(
            f"range {range_id!r} not found: {checklist} does not exist"
            f"{_available_hint(ranges_dir)}",
            path=checklist,
        )
    return load_checklist(
        checklist, expected_range=range_id, root=ranges_dir, allow_outside=allow_outside
    )


def load_checklist(
    path: str | Path,
    *,
    expected_range: str | None = None,
    root: str | Path | None = None,
    allow_outside: bool = False,
) -> Range:
    """Read and parse one checklist file (its bytes are hashed as stored).

    The file is read only if it resolves inside ``root`` (default: the path itself,
    which the caller named); a link leading out of it is refused.
    """
    checklist = Path(path)
    try:
        data = read_confined(
            checklist, root or checklist, allow_outside=allow_outside, max_bytes=MAX_TEXT_BYTES
        )
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ChecklistError(
            f"not valid UTF-8 (byte {exc.start}): {exc.reason}", path=checklist
        ) from exc
    except RunError as exc:
        raise ChecklistError(exc.message, path=checklist) from None
    except OSError as exc:
        raise ChecklistError(f"cannot read checklist: {exc.strerror}", path=checklist) from exc
    return parse_checklist(text, str(checklist), expected_range=expected_range)


# --------------------------------------------------------------------------- plumbing


class _Errors:
    """Collects errors so one pass reports them all."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.items: list[ChecklistError] = []
        self.warnings: list[ChecklistError] = []

    def add(self, message: str, line: int, item: str | None = None) -> None:
        self.items.append(ChecklistError(message, path=self.path, line=line, item=item))

    def warn(self, message: str, line: int, item: str | None = None) -> None:
        """Something kept and used as written, which the author may not have meant."""
        self.warnings.append(ChecklistError(message, path=self.path, line=line, item=item))

    def raise_if_any(self) -> None:
        if self.items:
            # Sorted so the summary line points at the first problem in the file.
            raise ChecklistErrors(sorted(self.items, key=lambda e: e.line or 0))


@dataclass
class _Section:
    title: str  # lower-cased heading text
    line: int
    body: list[tuple[int, str]]
    fenced: set[int] = field(default_factory=set)  # line numbers inside code blocks


@dataclass
class _Field:
    name: str  # as written
    value: str
    line: int


@dataclass
class _RawItem:
    """One checkpoint before validation, whichever form it was written in."""

    id: str
    line: int
    name: str = ""
    fields: dict[str, _Field] = field(default_factory=dict)  # canonical key -> field
    extra: dict[str, str] = field(default_factory=dict)
    unknown: list[_Field] = field(default_factory=list)  # fields evalkit does not know


def _split_lines(text: str) -> list[str]:
    # Not str.splitlines(): it also breaks on \f, \x1c, \u2028..., which editors
    # do not, and the line numbers we report must match what the author sees.
    text = text.removeprefix("\ufeff")
    return [line.removesuffix("\r") for line in text.split("\n")]


def _available_hint(ranges_dir: str | Path) -> str:
    available = list_ranges(ranges_dir)
    if available:
        return f" (available ranges: {', '.join(available)})"
    return f" (no ranges in {ranges_dir}: {POINT_ELSEWHERE})"


def _join(parts: list[str]) -> str:
    return " ".join(part.strip() for part in parts if part.strip())


def _split_row(line: str) -> list[str]:
    """Cells of a ``| a | b |`` row; ``\\|`` is a literal pipe inside a cell."""
    body = line.strip()
    body = body.removeprefix("|")
    if body.endswith("|") and not body.endswith("\\|"):
        body = body[:-1]
    cells = re.split(r"(?<!\\)\|", body)
    return [cell.replace("\\|", "|").strip() for cell in cells]


def _is_table_line(line: str) -> bool:
    return line.lstrip().startswith("|")


# --------------------------------------------------------------------------- front matter


def _unquote(value: str) -> str:
    """Strip a trailing ``# comment`` or surrounding quotes, as YAML would."""
    value = value.strip()
    if value[:1] in {"'", '"'}:
        end = value.find(value[0], 1)
        if end > 0:
            return value[1:end]
    # YAML only treats "#" as a comment after whitespace: "C#" stays intact.
    return re.sub(r"(?:^|\s)#.*$", "", value).strip()


def _parse_front_matter(
    lines: list[str], errors: _Errors, expected_range: str | None
) -> tuple[dict[str, str], int]:
    """Return the front matter values and the index of the first body line."""
    start = next((i for i, line in enumerate(lines) if line.strip()), None)
    if start is None or lines[start].strip() != "---":
        errors.add("missing front matter: the file must start with a '---' block", 1)
        return {}, 0
    end = next(
        (i for i in range(start + 1, len(lines)) if lines[i].strip() in {"---", "..."}), None
    )
    if end is None:
        errors.add("front matter is not closed by a '---' line", start + 1)
        return {}, start + 1

    values: dict[str, str] = {}
    key_lines: dict[str, int] = {}
    for index in range(start + 1, end):
        raw = lines[index]
        lineno = index + 1
        if not raw.strip() or raw.lstrip().startswith("#"):
            continue
        match = _FRONT_KEY.fullmatch(raw.strip())
        if match is None or raw[:1].isspace():
            errors.add(f"front matter line is not 'key: value': {raw.strip()!r}", lineno)
            continue
        key = match["key"].lower()
        if key in key_lines:
            errors.add(
                f"duplicate front matter key {key!r} (first at line {key_lines[key]})", lineno
            )
            continue
        values[key] = _unquote(match["value"])
        key_lines[key] = lineno

    for key in ("range", "title", "report"):
        if not values.get(key):
            errors.add(f"front matter is missing {key!r}", key_lines.get(key, start + 1))

    range_id = values.get("range")
    if range_id:
        if not RANGE_ID.fullmatch(range_id):
            errors.add(
                f"invalid range id {range_id!r}: expected [a-z0-9][a-z0-9_-]*", key_lines["range"]
            )
        elif expected_range is not None and range_id != expected_range:
            errors.add(
                f"front matter range {range_id!r} does not match the folder {expected_range!r}",
                key_lines["range"],
            )
    report = values.get("report")
    if report and report not in REPORT_KINDS:
        errors.add(
            f"unknown report {report!r}: expected one of {', '.join(REPORT_KINDS)}",
            key_lines["report"],
        )
    return values, end + 1


# --------------------------------------------------------------------------- sections


def _read_body(lines: list[str], body_start: int) -> MarkdownDocument:
    """The body as the Markdown reader sees it (front matter blanked, line numbers kept)."""
    return parse_markdown("\n" * body_start + "\n".join(lines[body_start:]))


def _split_sections(lines: list[str], body_start: int, body: MarkdownDocument) -> list[_Section]:
    # Headings and code come from the Markdown reader: a "# x" inside any code block
    # (fenced with ``` or ~~~, or indented) is an example, not structure.
    heading_lines = {
        section.start: section.level
        for section in body.sections
        if section.atx and section.level > 0
    }
    code_lines = body.code_lines
    sections: list[_Section] = []
    current: _Section | None = None
    for index in range(body_start, len(lines)):
        line = lines[index]
        lineno = index + 1
        heading = (
            _SECTION.fullmatch(line.strip())
            if heading_lines.get(lineno, 9) <= 2 and line.startswith("#")
            else None
        )
        if heading is not None:
            current = _Section(
                title=" ".join((heading[1] or "").split()).lower(), line=lineno, body=[]
            )
            sections.append(current)
        elif current is not None:
            current.body.append((lineno, line))
            if lineno in code_lines:
                current.fenced.add(lineno)
    return sections


def _tables(body: list[tuple[int, str]]) -> list[list[tuple[int, str]]]:
    """Runs of consecutive ``|`` lines."""
    tables: list[list[tuple[int, str]]] = []
    current: list[tuple[int, str]] = []
    for lineno, line in body:
        if _is_table_line(line):
            current.append((lineno, line))
        elif current:
            tables.append(current)
            current = []
    if current:
        tables.append(current)
    return tables


def _table_rows(
    table: list[tuple[int, str]], errors: _Errors
) -> tuple[list[str], int, list[tuple[int, list[str]]]]:
    """Header cells, header line and data rows; rows of the wrong width are reported."""
    header_line, header_text = table[0]
    header = _split_row(header_text)
    rows: list[tuple[int, list[str]]] = []
    for lineno, text in table[1:]:
        cells = _split_row(text)
        if len(cells) != len(header):
            errors.add(f"table row has {len(cells)} cells but its header has {len(header)}", lineno)
            continue
        if all(_TABLE_SEPARATOR.fullmatch(cell.replace(" ", "")) for cell in cells):
            continue
        rows.append((lineno, cells))
    return header, header_line, rows


def _parse_capabilities(section: _Section, errors: _Errors) -> list[Capability]:
    capabilities: list[Capability] = []
    seen: dict[str, int] = {}
    for table in _tables(section.body):
        header, header_line, rows = _table_rows(table, errors)
        names = [normalize_name(cell) for cell in header]
        id_col = next((i for i, n in enumerate(names) if n in {"cap", "id"}), None)
        name_col = next((i for i, n in enumerate(names) if n == "name"), None)
        if id_col is None:
            errors.add("the Capabilities table has no CAP column", header_line)
            continue
        for lineno, cells in rows:
            cap_id = cells[id_col].strip("`")
            if not cap_id:
                errors.add("capability row has no id", lineno)
                continue
            if cap_id in seen:
                errors.add(f"duplicate capability {cap_id} (first at line {seen[cap_id]})", lineno)
                continue
            seen[cap_id] = lineno
            name = cells[name_col] if name_col is not None else ""
            capabilities.append(Capability(id=cap_id, name=name or cap_id))
    return capabilities


def _parse_facts(section: _Section) -> list[str]:
    facts: list[list[str]] = []
    continuing = False
    for _, line in section.body:
        bullet = re.match(r"[-*+]\s+(.*)$", line)
        if bullet:
            facts.append([bullet[1]])
            continuing = True
        elif line[:1].isspace() and line.strip() and continuing:
            facts[-1].append(line)
        elif line.strip():
            # Prose between bullets is commentary, not a fact.
            continuing = False
    return [text for parts in facts if (text := _join(parts))]


# --------------------------------------------------------------------------- checkpoints


def _parse_checkpoints_section(section: _Section, errors: _Errors) -> list[_RawItem]:
    """Raw items from ``###`` sub-sections (form A) and leading tables (form B)."""
    preamble: list[tuple[int, str]] = []
    blocks: list[tuple[int, str, list[tuple[int, str]]]] = []
    for lineno, line in section.body:
        heading = None if lineno in section.fenced else _ITEM.fullmatch(line)
        if heading is not None:
            blocks.append((lineno, heading[1] or "", []))
        elif blocks:
            blocks[-1][2].append((lineno, line))
        else:
            preamble.append((lineno, line))

    items: list[_RawItem] = []
    for table in _tables(preamble):
        items += _parse_table_items(table, errors)
    for lineno, title, body in blocks:
        items.append(_parse_item_section(lineno, title, body, section.fenced, errors))
    return items


def _parse_table_items(table: list[tuple[int, str]], errors: _Errors) -> list[_RawItem]:
    header, header_line, rows = _table_rows(table, errors)
    columns: list[str | None] = []  # canonical key, or None for an extra column
    seen: dict[str, str] = {}
    for cell in header:
        key = CANONICAL_FIELDS.get(normalize_name(cell))
        if key is not None and key in seen:
            errors.add(f"columns {seen[key]!r} and {cell!r} name the same field", header_line)
            return []
        if key is not None:
            seen[key] = cell
        columns.append(key)
    if "id" not in seen:
        errors.add("the checkpoint table has no CHK column", header_line)
        return []

    items: list[_RawItem] = []
    for lineno, cells in rows:
        item = _RawItem(id="", line=lineno)
        for name, key, value in zip(header, columns, cells, strict=True):
            if not value:
                continue  # an empty cell is an absent field
            if key == "id":
                item.id = value.strip("`")
            elif key == "name":
                item.name = value
            elif key is not None:
                item.fields[key] = _Field(name, value, lineno)
            elif name:
                item.extra[name] = value
                item.unknown.append(_Field(name, value, header_line))
        items.append(item)
    return items


def _parse_item_section(
    lineno: int, title: str, body: list[tuple[int, str]], fenced: set[int], errors: _Errors
) -> _RawItem:
    match = _ITEM_TITLE.match(title)
    assert match is not None  # every group is optional
    item = _RawItem(id=match["id"], line=lineno, name=match["name"].strip())
    unknown: dict[str, list[str]] = {}
    collected: list[tuple[_Field, list[str]]] = []
    notes: list[str] = []
    current: list[str] | None = None
    base_indent: int | None = None

    for line_no, line in body:
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip())
        bullet = None if line_no in fenced else _FIELD.fullmatch(line)
        # A nested bullet ("  - foo: bar" under a field) continues that field.
        if bullet and (base_indent is None or indent <= base_indent):
            base_indent = indent
            name, first = bullet["name"], bullet["value"]
            if name.startswith(("*", "_")):
                # "- **Detection:** text" puts the closing emphasis after the colon.
                first = re.sub(r"^[*_]+\s*", "", first)
            current = [first]
            collected.append((_Field(name.strip("*_ "), "", line_no), current))
        elif current is not None and indent > (base_indent or 0):
            current.append(line)
        else:
            notes.append(line.strip())
            current = None

    for fld, parts in collected:
        fld.value = _join(parts)
        key = CANONICAL_FIELDS.get(normalize_name(fld.name))
        if key == "id" or (key == "name" and item.name):
            # The heading already says these; a bullet repeating them is kept, not used.
            key = None
        if key == "name":
            item.name = fld.value
        elif key is not None:
            if key in item.fields:
                first = item.fields[key]
                errors.add(
                    f"duplicate field {fld.name!r} (first at line {first.line})",
                    fld.line,
                    item.id or None,
                )
                continue
            item.fields[key] = fld
        elif fld.value:
            unknown.setdefault(fld.name, []).append(fld.value)
            item.unknown.append(fld)
    if notes:
        unknown.setdefault(_NOTES, []).extend(notes)
    item.extra = {name: _join(values) for name, values in unknown.items()}
    return item


def _id_number(chk_id: str) -> int:
    return int(chk_id.removeprefix("CHK-"))


def _backticked_list(value: str) -> tuple[str, ...]:
    spans = _BACKTICKED.findall(value)
    parts = spans if "`" in value else value.split(",")
    return tuple(dict.fromkeys(part.strip() for part in parts if part.strip()))


def _build_checkpoints(
    raw_items: list[_RawItem], declared: set[str] | None, errors: _Errors
) -> list[Checkpoint]:
    checkpoints: list[Checkpoint] = []
    first_seen: dict[int, tuple[str, int]] = {}  # by number: CHK-1 and CHK-01 are one id
    for raw in raw_items:
        valid_id = bool(_CHK_ID.fullmatch(raw.id))
        item = raw.id if valid_id else None
        if not raw.id:
            errors.add("checkpoint has no id", raw.line)
        elif not valid_id:
            errors.add(
                f"invalid checkpoint id {shown(raw.id)}: expected CHK- followed by 1 to 9 digits",
                raw.line,
            )
        elif _id_number(raw.id) in first_seen:
            first_id, first_line = first_seen[_id_number(raw.id)]
            same = "" if first_id == raw.id else f" {first_id}, the same number,"
            errors.add(
                f"duplicate checkpoint id ({'first defined' if not same else 'as'}{same}"
                f" at line {first_line})",
                raw.line,
                item,
            )
            continue  # the first definition stands; checking a duplicate adds noise
        else:
            first_seen[_id_number(raw.id)] = (raw.id, raw.line)
        checkpoint = _build_checkpoint(raw, item, declared, errors)
        for message, line in unknown_field_warnings(raw.unknown):
            errors.warn(message, line, item)
        if valid_id and checkpoint is not None:
            checkpoints.append(checkpoint)
    return checkpoints


def _build_checkpoint(
    raw: _RawItem, item: str | None, declared: set[str] | None, errors: _Errors
) -> Checkpoint | None:
    ok = True

    def fail(message: str, line: int) -> None:
        nonlocal ok
        ok = False
        errors.add(message, line, item)

    def value(key: str) -> str | None:
        fld = raw.fields.get(key)
        return fld.value if fld is not None and fld.value else None

    if not raw.name:
        fail("checkpoint has no name", raw.line)

    scope: Scope = "both"
    if (scope_text := value("scope")) is not None:
        spelled = " ".join(scope_text.strip("`").split()).lower()
        if spelled in SCOPES:
            scope = SCOPES[spelled]
        else:
            fail(
                f"unknown scope {scope_text!r}: expected both, detection-only or plan-only",
                raw.fields["scope"].line,
            )

    caps: tuple[str, ...] = ()
    if (caps_text := value("caps")) is not None:
        caps = tuple(dict.fromkeys(c.strip().strip("`") for c in caps_text.split(",") if c.strip()))
        if declared is not None:
            for cap in caps:
                if cap not in declared:
                    fail(f"{cap} is not declared under Capabilities", raw.fields["caps"].line)

    detection = value("detection")
    plan = value("plan")
    if detection is None and scope != "plan-only":
        fail("missing Detection criteria (required unless scope is plan-only)", raw.line)
    if plan is None and scope != "detection-only":
        fail("missing Plan criteria (required unless scope is detection-only)", raw.line)

    if not ok:
        return None
    return Checkpoint(
        id=raw.id,
        name=raw.name,
        scope=scope,
        caps=caps,
        detection_criteria=detection,
        plan_criteria=plan,
        indicators=_backticked_list(value("indicators") or ""),
        attribution_terms=_backticked_list(value("attribution") or ""),
        remediation_terms=_backticked_list(value("remediation") or ""),
        extra=raw.extra,
        line=raw.line,
    )
