"""What counts as a concrete artifact: the evidence sub-score's test of one line.

An absolute path, an IPv4 address, a hash (MD5, SHA-1, SHA-256), a syslog or ISO
timestamped log line, a config value in inline code (``key=value``,
``PermitRootLogin yes``), a PID or a port; in a code block, every non-empty line.
"""

from __future__ import annotations

import re
from collections.abc import Callable

_ABS_PATH = re.compile(
    r"(?<![\w.~/:\\-])/[\w.@%+~-]*[A-Za-z0-9][\w.@%+~/-]*"  # /var/tmp/x
    r"|(?<![\w/])~/[\w.@%+~-]*[A-Za-z0-9][\w.@%+~/-]*"  # ~/.ssh/authorized_keys
    r"|(?<![\w])[A-Za-z]:\\[\w.\\ -]*\w"  # C:\Windows\Temp
)
_IPV4 = re.compile(r"(?<![\d.])(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})(?!\.?\d)")
_HASH = re.compile(
    r"(?<![0-9A-Za-z])(?:[0-9a-fA-F]{64}|[0-9a-fA-F]{40}|[0-9a-fA-F]{32})(?![0-9A-Za-z])"
)
_MONTH = r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)"
_LOG_LINE = re.compile(
    r"^[`'\"\[]*(?:(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)\s+)?"
    rf"(?:{_MONTH}\s+\d{{1,2}}\s+\d{{2}}:\d{{2}}:\d{{2}}"
    r"|\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2})"
)
_CODE_SPAN = re.compile(r"`([^`\n]+)`")
_KEY_EQUALS_VALUE = re.compile(r"[A-Za-z_][\w.-]*=[^\s=]")
_KEY_SPACE_VALUE = re.compile(r"^\s*[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+\s+\S")
_PID = re.compile(r"\bpid\s*[:=#]?\s*\d+\b|\b[A-Za-z][\w.-]*\[\d+\]", re.IGNORECASE)
_PORT = re.compile(
    r"\bports?\s*[:=#]?\s*\d{1,5}\b"
    r"|\b\d{1,5}/(?:tcp|udp)\b"
    r"|(?:(?<![\d.])\d{1,3}(?:\.\d{1,3}){3}|\blocalhost|\b[A-Za-z][\w-]*(?:\.[\w-]+)*\.[A-Za-z]{2,})"
    r":\d{1,5}\b",
    re.IGNORECASE,
)


def _valid_ipv4(match: re.Match[str]) -> bool:
    return all(int(group) <= 255 for group in match.groups())


def line_artifact(text: str, *, in_code: bool = False) -> tuple[str, int, int] | None:
    """The first concrete artifact on a clean line: (kind, start, end). A line of a code
    block is one as a whole (an empty one is none)."""
    if in_code:
        return ("a fenced code block", 0, len(text)) if text else None
    found: list[tuple[int, int, str]] = []

    def first(
        pattern: re.Pattern[str],
        kind: str,
        check: Callable[[re.Match[str]], bool] | None = None,
    ) -> None:
        for match in pattern.finditer(text):
            if check is None or check(match):
                found.append((match.start(), match.end(), kind))
                return

    first(_ABS_PATH, "an absolute path")
    first(_IPV4, "an IPv4 address", _valid_ipv4)
    first(_HASH, "a hash")
    first(_LOG_LINE, "a log line")
    for span in _CODE_SPAN.finditer(text):
        content = span.group(1)
        if _KEY_EQUALS_VALUE.search(content) or _KEY_SPACE_VALUE.match(content):
            found.append((span.start(), span.end(), "a config value in code"))
            break
    first(_PID, "a PID")
    first(_PORT, "a port")
    if not found:
        return None
    start, end, kind = min(found)
    return kind, start, end
