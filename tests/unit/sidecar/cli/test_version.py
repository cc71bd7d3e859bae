"""--version reads the installed metadata only when asked; every other command starts without it."""
from __future__ import annotations

import subprocess
import sys
from importlib.metadata import version

from click.testing import CliRunner

from bloomspan.sidecar.cli.main import cli


def test_version_prints_the_installed_version():
    res = CliRunner().invoke(cli, ["--version"])
    assert res.exit_code == 0 and res.output == f"bloomspan, version {version('bloomspan')}\n"


def test_a_command_starts_without_reading_package_metadata():
    out = subprocess.run([sys.executable, "-c", "import sys; from bloomspan.sidecar.cli.main import cli; "
                          "cli(['mine', '--help'], standalone_mode=False); "
                          "print('importlib.metadata' in sys.modules)"],
                         capture_output=True, text=True, check=True, timeout=120)
    assert "--jsonl" in out.stdout and out.stdout.strip().endswith("False")
