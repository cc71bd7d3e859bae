"""The measure of bench/agreement.py: its bit-parallel LCS equals the plain
dynamic programme, and a page's extra tokens are exactly what the pipeline removed beyond the
cleaner when both only remove."""
from __future__ import annotations

from hypothesis import given, settings, strategies as st

from bench.agreement import lcs_length, lcs_length_reference

tokens = st.lists(st.integers(0, 5), max_size=40)


@settings(max_examples=300, deadline=None)
@given(tokens, tokens)
def test_lcs_equals_its_plain_twin(a, b):
    assert lcs_length(a, b) == lcs_length_reference(a, b)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 3), min_size=1, max_size=30), st.data())
def test_extra_is_what_the_pipeline_removed_beyond_the_cleaner(original, data):
    n = len(original)
    cleaner_keeps = data.draw(st.lists(st.booleans(), min_size=n, max_size=n))
    beyond = data.draw(st.lists(st.booleans(), min_size=n, max_size=n))
    pipeline_keeps = [k and not x for k, x in zip(cleaner_keeps, beyond)]  # removes all the cleaner does, and more
    c = [t for t, k in zip(original, cleaner_keeps) if k]
    p = [t for t, k in zip(original, pipeline_keeps) if k]
    extra = len(c) - lcs_length(c, p)
    assert extra == len(c) - len(p)
