"""The destructive-operation table: the commands whose advice, without a risk note in the
same block, is dangerous advice (``docs/rules-judge.md`` lists every row).

Each row is data: a name, a regex, what the command does (for the rationale), and, for
commands destructive only on some paths (``rm``, ``find -delete``), which group of the
match names the path. ``destructive_commands`` reads one clean line against the table.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_SHELL_END = r"[^;&|\n`#]"
_SYSTEM_DIRS = frozenset(
    "/ /bin /boot /etc /home /lib /lib64 /opt /root /sbin /srv /usr /var".split()
)
_SERVICE_ROOTS = frozenset("/var/www /var/www/html /var/lib /var/log".split())
_SERVICE_ROOT_PARENTS = ("/usr", "/var/lib", "/srv")  # and any directory right under them
_HOME = frozenset({"~", "$HOME", "${HOME}"})
_LOG_SERVICES = (
    r"rsyslog|syslog-ng|syslog|auditd|journald|falcon-sensor|falcon|osqueryd|wazuh-agent"
    r"|ossec|auditbeat|filebeat|elastic-agent|mdatp|sentinelone|cbagentd|cbdaemon|sysmon"
)


def _protected_target(token: str) -> str | None:
    """The protected directory a path argument names, or None."""
    token = token.strip("\"'()").rstrip(",;")
    parts = token.split("/")
    while len(parts) > 1 and (parts[-1] in ("", ".") or "*" in parts[-1]):
        parts.pop()
    if parts[0] in _HOME and len(parts) == 1:
        return "the home directory"
    if not token.startswith("/"):
        return None
    target = "/".join(parts) or "/"
    if target in _SYSTEM_DIRS or target in _SERVICE_ROOTS:
        return f"`{target}`"
    parent = target.rsplit("/", 1)[0]
    if parent in _SERVICE_ROOT_PARENTS:
        return f"`{target}`"
    return None


def _first_protected(arguments: str) -> str | None:
    for token in arguments.split():
        if not token.startswith("-"):
            target = _protected_target(token)
            if target is not None:
                return target
    return None


@dataclass(frozen=True)
class Destructive:
    """One row of the destructive-operation table (docs/rules-judge.md lists them all)."""

    name: str
    pattern: re.Pattern[str]
    what: str  # what the command does, for the rationale ({target} filled in when named)
    # For commands that are destructive only on some paths: the first protected path named
    # in the given group of the match, or None (then the match is no command of this row).
    target_group: int | None = None
    # A lower-case word every command of the row holds: the regex runs only on lines that
    # hold it (a cheap test first; a document may have a million lines).
    hint: str = ""


DESTRUCTIVE: tuple[Destructive, ...] = (
    Destructive(
        "rm of a system, service or home directory",
        re.compile(rf"(?<![\w.-])rm(?=\s)({_SHELL_END}*)"),
        "deletes {target}",
        target_group=1,
        hint="rm",
    ),
    Destructive(
        "find -delete on a system, service or home directory",
        re.compile(rf"(?<![\w.-])find\s+([^\s;&|`#]+){_SHELL_END}*?\s-delete\b"),
        "deletes files under {target}",
        target_group=1,
        hint="find",
    ),
    Destructive(
        "shred -u",
        re.compile(rf"\bshred\b{_SHELL_END}*?\s(?:-\w*u\w*|--remove)\b"),
        "destroys and deletes files",
        hint="shred",
    ),
    Destructive(
        "userdel -r",
        re.compile(rf"\buserdel\b{_SHELL_END}*?\s(?:-\w*r\w*|--remove)\b"),
        "deletes an account with its home directory",
        hint="userdel",
    ),
    Destructive(
        "iptables flush",
        re.compile(rf"\bip6?tables\b{_SHELL_END}*?\s(?:-F|--flush)(?![\w-])"),
        "flushes every firewall rule",
        hint="tables",
    ),
    Destructive(
        "ufw disable", re.compile(r"\bufw\s+disable\b"), "disables the firewall", hint="ufw"
    ),
    Destructive(
        "chmod 777 / a+rwx",
        re.compile(r"\bchmod\s+(?:-[\w-]+\s+)*(?:0?777\b|(?:a|ugo)\+rwx\b)"),
        "makes files writable by everyone",
        hint="chmod",
    ),
    Destructive("mkfs", re.compile(r"\bmkfs(?:\.\w+)?\b"), "formats a file system", hint="mkfs"),
    Destructive(
        "dd onto a device",
        re.compile(rf"\bdd\b{_SHELL_END}*?\bof=/dev/(?!(?:null|zero|stdout|stderr)\b)\S+"),
        "overwrites a device",
        hint="dd",
    ),
    Destructive(
        "systemctl stop/disable of logging or EDR",
        re.compile(
            rf"\bsystemctl\b(?:\s+--?[\w-]+)*\s+(?:stop|disable|mask|kill)\b{_SHELL_END}*?"
            rf"(?<!\w)(?:{_LOG_SERVICES})\b",
        ),
        "disables logging or EDR",
        hint="systemctl",
    ),
    Destructive(
        "service stop of logging or EDR",
        re.compile(rf"\bservice\s+(?:{_LOG_SERVICES})\s+stop\b"),
        "disables logging or EDR",
        hint="service",
    ),
    Destructive(
        "kill of logging or EDR",
        re.compile(rf"\b(?:kill|pkill|killall)\b[^;&|\n#]*?(?<![\w-])(?:{_LOG_SERVICES})\b"),
        "kills logging or EDR",
        hint="kill",
    ),
    Destructive(
        "auditctl -e 0", re.compile(r"\bauditctl\s+-e\s*0\b"), "disables auditing", hint="auditctl"
    ),
    Destructive(
        "auditctl -D",
        re.compile(r"\bauditctl\s+(?:-\w+\s+)*-D\b"),
        "deletes every audit rule",
        hint="auditctl",
    ),
    Destructive(
        "> onto a log", re.compile(r"(?<![>\-=&\d])>(?!>)\s*/var/log/\S*"), "erases a log", hint=">"
    ),
    Destructive(
        "truncate a log",
        re.compile(r"\btruncate\s+(?:-s\s*0|--size[= ]0)\s+/var/log/\S*"),
        "erases a log",
        hint="truncate",
    ),
    Destructive(
        "history -c", re.compile(r"\bhistory\s+-c\b"), "erases the shell history", hint="history"
    ),
    Destructive(
        "setenforce 0",
        re.compile(r"\bsetenforce\s+(?:0|[Pp]ermissive)\b"),
        "disables SELinux",
        hint="setenforce",
    ),
    Destructive(
        "DROP DATABASE / SCHEMA",
        re.compile(r"\bDROP\s+(?:DATABASE|SCHEMA)\b", re.IGNORECASE),
        "deletes a database",
        hint="drop",
    ),
    Destructive(
        # The range review's case: it wipes every job of the user, not only the attacker's.
        "crontab -r",
        re.compile(rf"\bcrontab\b{_SHELL_END}*?(?<![\w-])-r(?![\w-])"),
        "deletes every cron job of the user",
        hint="crontab",
    ),
    Destructive(
        "FLUSHALL / FLUSHDB",
        re.compile(r"\bFLUSH(?:ALL|DB)\b", re.IGNORECASE),
        "deletes every Redis key",
        hint="flush",
    ),
)


DESTRUCTIVE_HINTS = tuple(dict.fromkeys(row.hint for row in DESTRUCTIVE))


def destructive_commands(text: str) -> list[tuple[int, int, str]]:
    """Destructive commands on a clean line: (start, end, what it does)."""
    found: list[tuple[int, int, str]] = []
    lower = text.lower()
    for row in DESTRUCTIVE:
        if row.hint not in lower:
            continue
        for match in row.pattern.finditer(text):
            if row.target_group is None:
                found.append((match.start(), match.end(), row.what))
                continue
            target = _first_protected(match.group(row.target_group))
            if target is not None:
                found.append((match.start(), match.end(), row.what.format(target=target)))
                break
    return sorted(found)
