"""Knobs declared once on config fields: flag names, nested building from flag values, errors
that name section.field, and the click options made from them."""
from __future__ import annotations

from dataclasses import dataclass

import click
import pytest
from click.testing import CliRunner

from bloomspan.sidecar.cli.config_flags import FlagBinding, section_options
from bloomspan.sidecar.errors import ClusterConfigError
from bloomspan.sidecar.knobs import flag_for, from_flags, knob, leaves, section


@dataclass(frozen=True)
class Reading:
    index: str = knob(help="Source index.", flag_default=None)
    batch: int = knob(100, "Documents per page.", show_default=True)

    def __post_init__(self):
        if self.batch < 1:
            raise ClusterConfigError("batch", self.batch, "must be >= 1")


@dataclass(frozen=True)
class Keeping:
    keep: int = knob(3, "Runs kept.", param="keep_runs")
    token: str | None = knob(None, "A secret.", secret=True)
    bins: int = knob(10, no_flag="fixed")


@dataclass(frozen=True)
class Job:
    reading: Reading = section(Reading, required=True)
    keeping: Keeping = section(Keeping, factory=lambda: Keeping(keep=5))


def test_leaves_walk_the_sections_with_their_params_and_defaults():
    found = {leaf.path: (leaf.param, leaf.default) for leaf in leaves(Job)}
    assert found["reading.batch"] == ("batch", 100)
    assert found["keeping.keep"] == ("keep_runs", 5)  # the composite's default section
    assert found["keeping.bins"] == ("bins", 10)


def test_from_flags_nests_and_leaves_unset_flags_at_their_default():
    job = from_flags(Job, {"index": "src", "keep_runs": 7, "token": "t0p-s3cret", "unknown": 1})
    assert job.reading == Reading(index="src") and job.keeping.keep == 7 and job.keeping.bins == 10
    assert "t0p-s3cret" not in repr(job)
    assert from_flags(Job, {"index": "src"}).keeping.keep == 5
    with pytest.raises(TypeError):  # --index unset: the required knob is missing
        from_flags(Job, {"index": None})


def test_an_invalid_knob_names_section_and_field_and_its_flag():
    with pytest.raises(ClusterConfigError) as info:
        from_flags(Job, {"index": "src", "batch": 0})
    assert info.value.field == "reading.batch" and str(info.value) == "reading.batch=0: must be >= 1"
    assert flag_for(Job, "reading.batch") == "--batch" and flag_for(Job, "keeping.keep") == "--keep"


def test_section_options_make_the_flags_and_the_binding_builds_the_config():
    seen = {}

    @click.command()
    @section_options(Reading)
    @section_options(Keeping, defaults={"keep": 5})
    def job(**params):
        seen["job"] = FlagBinding(Job).build(params)

    assert FlagBinding(Job).mismatches(job) == []
    res = CliRunner().invoke(job, ["--index", "src", "--keep", "2"])
    assert res.exit_code == 0, res.output
    assert seen["job"].keeping.keep == 2 and seen["job"].reading.batch == 100
    res = CliRunner().invoke(job, ["--index", "src", "--batch", "0"])
    assert res.exit_code == 2 and "--batch" in res.output and "reading.batch=0" in res.output
    assert "--bins" not in CliRunner().invoke(job, ["--help"]).output
