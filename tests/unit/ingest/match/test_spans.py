"""ingest/match/spans.py: the span mask kernel against its plain twin."""
from __future__ import annotations

import numpy as np
from hypothesis import given, settings, strategies as st

from bloomspan.ingest.match.spans import TemplateMatch, span_mask, span_mask_reference, with_batch_mask


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


@settings(derandomize=True, max_examples=200, deadline=None)
@given(st.lists(st.lists(st.booleans(), max_size=12), max_size=6), st.data())
def test_a_batch_mask_gives_each_changed_text_what_its_own_mask_gives(masks, data):
    lens = [len(m) for m in masks]
    tok_off = np.concatenate([[0], np.cumsum(lens)]).astype(np.int64)
    matches = []
    for n in lens:
        starts = np.arange(n, dtype=np.int64) * 3
        matches.append(TemplateMatch(n, starts, starts + 2, np.zeros(0, np.int64), np.zeros(0, np.int64),
                                     np.zeros(0, np.int64), np.zeros(0, np.int64), np.arange(2, dtype=np.int64)))
    changed = np.asarray(data.draw(st.lists(st.booleans(), min_size=len(masks), max_size=len(masks))), dtype=bool)
    batch = np.asarray([b for m in masks for b in m], dtype=bool)
    got = with_batch_mask(matches, batch, tok_off, changed)
    for d, (m, g) in enumerate(zip(matches, got)):
        want = m.with_mask(np.asarray(masks[d], dtype=bool)) if changed[d] else m
        if not changed[d]:
            assert g is m
        for name in ("n_tokens", "span_token_start", "span_token_end", "span_char_start", "span_char_end", "phrases"):
            assert np.array_equal(getattr(g, name), getattr(want, name)), name
            assert getattr(g, name).dtype == getattr(want, name).dtype if name != "n_tokens" else True
