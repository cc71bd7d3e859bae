"""TemplateConfig and SkeletonConfig refuse integer knobs beyond int64: the detector's kernels
take int64 arguments, and a larger value failed inside numba with a traceback after mining."""
from __future__ import annotations

import pytest

from bloomspan.engine.mining.config import ConfigError
from bloomspan.engine.templates.config import TemplateConfig

HUGE = 10**20  # above 2**63 - 1


@pytest.mark.parametrize("field", ["line_shape_gap", "section_line_length", "middle_content_tokens",
                                   "block_min_length", "sigma_floor", "global_min_sites"])
def test_an_integer_knob_above_int64_names_its_field_and_range(field):
    with pytest.raises(ConfigError) as exc:
        TemplateConfig(**{field: HUGE})
    assert exc.value.field == field and "2**63-1" in str(exc.value) and str(HUGE) in str(exc.value)


def test_a_pass_length_above_int64_says_none_switches_it_off():
    with pytest.raises(ConfigError) as exc:
        TemplateConfig(scoped_min_length=HUGE)
    assert exc.value.field == "scoped_min_length" and "2**63-1, or None" in str(exc.value)


def test_a_skeleton_knob_above_int64_names_its_nested_field():
    with pytest.raises(ConfigError) as exc:
        TemplateConfig.from_dict({"skeleton": {"line_length": HUGE}})
    assert exc.value.field == "skeleton.line_length" and "2**63-1" in str(exc.value)


def test_the_largest_int64_knob_is_accepted():
    assert TemplateConfig(line_shape_gap=2**63 - 1).line_shape_gap == 2**63 - 1
