"""Hypothesis profiles: the suite is deterministic unless asked to explore.

* ``ci`` (the default, and what ``CI=true`` runs): ``derandomize=True``, so every run of
  ``make test``, both passes (JIT and ``NUMBA_DISABLE_JIT=1``), tries the same examples on
  every machine; no example database, no deadline (timing on a shared runner is not a
  property of the code), and the timing-based health check off for the same reason.
* ``explore`` (``HYPOTHESIS_PROFILE=explore``, ``make test-explore``): fresh random examples
  on every run, ``HYPOTHESIS_EXPLORE_FACTOR`` (default 10) times each test's own
  ``max_examples``, failures kept in the example database so that a rerun replays them.
  Every case it finds becomes an ``@example(...)`` on its test, which ``ci`` then runs.

Hypothesis keeps its files (the example database, caches) under ``.hypothesis`` in the working
directory by default; they go to the user cache instead
(``$XDG_CACHE_HOME/bloomspan/hypothesis``, else ``~/.cache/bloomspan/hypothesis``), never
into the checkout.
"""
from __future__ import annotations

import os
from pathlib import Path

from hypothesis import HealthCheck, settings
from hypothesis.configuration import set_hypothesis_home_dir
from hypothesis.database import DirectoryBasedExampleDatabase

PROFILE_VARIABLE = "HYPOTHESIS_PROFILE"
FACTOR_VARIABLE = "HYPOTHESIS_EXPLORE_FACTOR"
DETERMINISTIC, EXPLORE = "ci", "explore"


def hypothesis_home() -> Path:
    cache = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(cache) / "bloomspan" / "hypothesis"


def load_profile() -> str:
    """Register both profiles, load the one ``HYPOTHESIS_PROFILE`` names (default ``ci``)
    and return its name. Called by tests/conftest.py before any test module is imported, so
    each test's own ``@settings`` inherits from it."""
    home = hypothesis_home()
    set_hypothesis_home_dir(home)
    settings.register_profile(DETERMINISTIC, derandomize=True, database=None, deadline=None,
                              suppress_health_check=[HealthCheck.too_slow], print_blob=True)
    settings.register_profile(EXPLORE, derandomize=False, deadline=None, print_blob=True,
                              database=DirectoryBasedExampleDatabase(home / "examples"))
    name = os.environ.get(PROFILE_VARIABLE) or DETERMINISTIC
    if name not in (DETERMINISTIC, EXPLORE):
        raise SystemExit(f"{PROFILE_VARIABLE}={name}: unknown Hypothesis profile; use {DETERMINISTIC} or {EXPLORE}")
    if name == EXPLORE:
        explore_factor()  # a bad factor is refused now, in one line, not halfway through collection
    settings.load_profile(name)
    return name


def explore_factor() -> int:
    raw = os.environ.get(FACTOR_VARIABLE, "10")
    try:
        factor = int(raw)
    except ValueError:
        factor = 0
    if factor < 1:
        raise SystemExit(f"{FACTOR_VARIABLE}={raw}: give a whole number of at least 1")
    return factor


def widen_for_exploration(items) -> None:
    """Under ``explore``: every Hypothesis test draws random examples (a test's own
    ``derandomize=True`` included) and FACTOR times its ``max_examples``.

    A test's ``@settings`` outrank any profile, so this rewrites the settings Hypothesis reads
    when the test runs (the attribute ``@settings`` itself sets on the test function)."""
    factor = explore_factor()
    for item in items:
        test = getattr(item.obj, "__func__", item.obj)
        if item.get_closest_marker("hypothesis") is None:
            continue
        own = getattr(test, "_hypothesis_internal_use_settings", None)
        if own is None:
            raise SystemExit(f"{item.nodeid}: this Hypothesis version keeps no per-test settings where "
                             "tests/support/hypothesis_profiles.py looks; update widen_for_exploration")
        test._hypothesis_internal_use_settings = settings(
            own, derandomize=False, max_examples=own.max_examples * factor,
            database=settings.get_profile(EXPLORE).database)
