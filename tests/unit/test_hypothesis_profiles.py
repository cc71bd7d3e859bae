"""The Hypothesis profile reaches every property test: deterministic and without a database by
default (CI, both passes of ``make test``), random and widened under ``explore``; Hypothesis'
files never land in the checkout."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from hypothesis import given, settings, strategies as st
from hypothesis.configuration import storage_directory

from tests.support import hypothesis_profiles

ROOT = Path(__file__).resolve().parents[2]
OWN_EXAMPLES = 3


@settings(max_examples=OWN_EXAMPLES, derandomize=True)
@given(st.integers())
def test_the_profile_reaches_a_test_with_its_own_settings(_):
    own = test_the_profile_reaches_a_test_with_its_own_settings._hypothesis_internal_use_settings
    if os.environ.get(hypothesis_profiles.PROFILE_VARIABLE) == hypothesis_profiles.EXPLORE:
        assert not own.derandomize
        assert own.max_examples == OWN_EXAMPLES * hypothesis_profiles.explore_factor()
        assert own.database is not None
    else:
        assert own.derandomize and own.database is None and own.deadline is None
        assert own.max_examples == OWN_EXAMPLES


def test_the_default_profile_is_deterministic():
    if os.environ.get(hypothesis_profiles.PROFILE_VARIABLE, "ci") == hypothesis_profiles.DETERMINISTIC:
        assert settings.default.derandomize and settings.default.database is None


def test_hypothesis_files_stay_out_of_the_checkout():
    home = storage_directory("examples", intent_to_write=False).home_directory.resolve()
    assert not home.is_relative_to(ROOT), home
    assert home == hypothesis_profiles.hypothesis_home().resolve()


def _pytest(env_extra: dict, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != hypothesis_profiles.PROFILE_VARIABLE}
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args],
                          cwd=ROOT, env={**env, **env_extra}, capture_output=True, text=True, timeout=300)


def test_explore_widens_and_randomizes_and_ci_stays_deterministic(tmp_path):
    target = f"{Path(__file__).relative_to(ROOT)}::test_the_profile_reaches_a_test_with_its_own_settings"
    cache = {"XDG_CACHE_HOME": str(tmp_path)}
    before = _files_under(ROOT / ".hypothesis")
    explore = _pytest({**cache, "HYPOTHESIS_PROFILE": "explore", "HYPOTHESIS_EXPLORE_FACTOR": "4"}, target)
    assert explore.returncode == 0, explore.stdout[-3000:]
    assert "1 passed" in explore.stdout
    ci = _pytest({**cache, "CI": "true"}, target)
    assert ci.returncode == 0, ci.stdout[-3000:]
    assert "1 passed" in ci.stdout
    assert _files_under(ROOT / ".hypothesis") == before  # nothing written into the checkout


def _files_under(folder: Path) -> dict[str, float]:
    return {str(p): p.stat().st_mtime for p in folder.rglob("*")} if folder.exists() else {}


def test_an_unknown_profile_is_one_line_naming_the_variable():
    run = _pytest({"HYPOTHESIS_PROFILE": "fast"}, "--collect-only", "tests/unit/test_hypothesis_profiles.py")
    assert run.returncode != 0
    assert "HYPOTHESIS_PROFILE=fast: unknown Hypothesis profile; use ci or explore" in run.stdout + run.stderr
    assert "Traceback" not in run.stdout + run.stderr


def test_a_bad_explore_factor_is_one_line_naming_the_variable():
    run = _pytest({"HYPOTHESIS_PROFILE": "explore", "HYPOTHESIS_EXPLORE_FACTOR": "0"}, "--collect-only",
                  "tests/unit/test_hypothesis_profiles.py")
    assert run.returncode != 0
    assert "HYPOTHESIS_EXPLORE_FACTOR=0: give a whole number of at least 1" in run.stdout + run.stderr
    assert "Traceback" not in run.stdout + run.stderr and "SystemExit" not in run.stdout + run.stderr
