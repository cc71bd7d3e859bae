"""What ``--help`` of every ``bloomspan`` command offers: each option's flags, default, type
and help, as plain data. ``test_flag_snapshot.py`` compares it with ``flag_snapshot.json``,
written from the commands as they were before their options came from config fields:
``python -m tests.unit.sidecar.cli.flag_snapshot --write`` rewrites it (only for a flag
meant to change)."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import click

SNAPSHOT = Path(__file__).with_name("flag_snapshot.json")


def _option(param: click.Option) -> dict:
    default = param.default
    if type(default).__name__ == "Sentinel":  # click's UNSET: no default given
        default = None
    elif callable(default):
        default = "<callable>"
    elif isinstance(default, tuple):
        default = list(default)
    return {"opts": list(param.opts), "secondary_opts": list(param.secondary_opts), "param": param.name,
            "default": default, "type": param.type.name, "is_flag": bool(param.is_flag),
            "multiple": bool(param.multiple), "required": bool(param.required), "help": param.help,
            "show_default": param.show_default, "metavar": param.metavar,
            "choices": list(getattr(param.type, "choices", None) or []) or None}


def command_flags(group: click.Group, prefix: str = "") -> dict[str, list[dict]]:
    """``"mine"``, ``"runs list"``, ...: the options of every command under ``group``."""
    found = {}
    for name, command in sorted(group.commands.items()):
        path = f"{prefix}{name}"
        if isinstance(command, click.Group):
            found.update(command_flags(command, f"{path} "))
        found[path] = sorted((_option(p) for p in command.params if isinstance(p, click.Option)),
                             key=lambda o: o["opts"][0])
    return found


def current() -> dict[str, list[dict]]:
    from bloomspan.sidecar.cli.main import cli

    return json.loads(json.dumps(command_flags(cli)))  # tuples and the like as JSON reads them back


if __name__ == "__main__":
    if sys.argv[1:] == ["--write"]:
        SNAPSHOT.write_text(json.dumps(current(), indent=1, sort_keys=True) + "\n")
    else:
        print(json.dumps(current(), indent=1, sort_keys=True))
