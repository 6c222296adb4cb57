"""``evalkit judges``: the registered judges, their settings and API key variables."""

from __future__ import annotations

import argparse
import json
from typing import Any

EXIT_OK = 0


def register(commands: Any) -> None:
    parser = commands.add_parser(
        "judges",
        help="list the judges (built-in and plugins) with their settings",
        description="List every registered judge: its settings (flag, type, default, help) "
        "and the environment variable holding its API key, if it needs one.",
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")
    parser.set_defaults(handler=cmd_judges)


def _default(value: Any) -> Any:
    return None if value is None else value if isinstance(value, (int, float, bool)) else str(value)


def describe() -> list[dict[str, Any]]:
    from ..judges.registry import judge_specs

    return [
        {
            "name": spec.name,
            "help": spec.help,
            "needs_key": spec.needs_key,
            "settings": [
                {
                    "name": setting.name,
                    "flag": setting.flag,
                    "type": setting.type.__name__,
                    "default": _default(setting.default),
                    "help": setting.help,
                }
                for setting in spec.settings
            ],
        }
        for spec in judge_specs()
    ]


def cmd_judges(args: argparse.Namespace) -> int:
    judges = describe()
    if args.json:
        print(json.dumps({"judges": judges}, indent=2))
        return EXIT_OK
    for judge in judges:
        key = f"  (API key: ${judge['needs_key']})" if judge["needs_key"] else ""
        print(f"{judge['name']}{key}")
        if judge["help"]:
            print(f"  {judge['help']}")
        for setting in judge["settings"]:
            default = "" if setting["default"] is None else f" (default: {setting['default']})"
            print(f"    {setting['flag']} {setting['type']}: {setting['help']}{default}")
    return EXIT_OK
