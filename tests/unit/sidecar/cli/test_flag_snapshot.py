"""The flags users type stay what they were: every command's options (flags, defaults, types,
help) equal the snapshot taken before the options came from config fields."""
from __future__ import annotations

import json

from tests.unit.sidecar.cli.flag_snapshot import SNAPSHOT, current


def test_every_command_offers_the_flags_of_the_snapshot():
    before = json.loads(SNAPSHOT.read_text())
    now = current()
    assert sorted(now) == sorted(before), "commands were added or removed"
    for command, options in before.items():
        assert now[command] == options, f"bloomspan {command}: its flags changed"
