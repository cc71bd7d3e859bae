"""ingest/match/spans.py: the span mask kernel against its plain twin."""
from __future__ import annotations

import numpy as np
from hypothesis import given, settings, strategies as st

from bloomspan.ingest.match.spans import span_mask, span_mask_reference


@settings(derandomize=True, max_examples=300, deadline=None)
@given(st.integers(0, 40), st.data())
def test_span_mask_equals_plain_twin(n, data):
    # overlapping, nested, empty and unordered spans, as the rules' matches are
    spans = data.draw(st.lists(st.integers(0, n).flatmap(lambda s: st.tuples(st.just(s), st.integers(s, n))),
                               max_size=12))
    starts = np.asarray([s for s, _ in spans], dtype=np.int64)
    ends = np.asarray([e for _, e in spans], dtype=np.int64)
    got = span_mask(starts, ends, n)
    assert got.dtype == np.bool_ and got.shape == (n,)
    assert got.tolist() == span_mask_reference(spans, n)
    # the difference-array construction it replaced gives the same mask
    diff = np.zeros(n + 1, dtype=np.int64)
    np.add.at(diff, starts, 1)
    np.add.at(diff, ends, -1)
    assert got.tolist() == (np.cumsum(diff[:-1]) > 0).tolist()
