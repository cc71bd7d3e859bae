"""Tokens carried across strip passes (ingest/base/batch_tokens.py): equal to tokenizing the stripped text."""
from __future__ import annotations

import numpy as np
from hypothesis import given, settings, strategies as st

from bloomspan.ingest.base.batch_tokens import tokenize_batch, tokens_after_strip
from bloomspan.ingest.clean.cleaner import strip_spans_with_junctions
from bloomspan.ingest.match.spans import MatchResult

# Letters, digits, marks, NFKC expansions, separators, sentence ends, every kind of line break.
_CHARS = list("ab1¼㍱ǅﷺ⑴Σςßﬁ\u0301\u0327ＡＢ\uac00\u1100\u1161.!?…,;:|/-–—·•»>()[]\"' \t\n\r\u00a0\u2028\u3000\n\n")
_word = st.text(alphabet=st.sampled_from(list("ab1Σßﬁ¼㍱ﷺＡ\uac00\u0301")), min_size=1, max_size=4)
_gap = st.text(alphabet=st.sampled_from(list(".!?…,;:|-—»>()\" \t\n\r\u00a0\u2028")), min_size=1, max_size=4)
# Word-like texts (tokens between punctuation and line breaks), and raw code points.
_text = (st.lists(st.tuples(_word, _gap), max_size=12).map(lambda ps: "".join(w + g for w, g in ps))
         | st.text(alphabet=st.sampled_from(_CHARS) | st.characters(codec="utf-8"), max_size=60))


def _match(tokens, row, text, spans):
    """A MatchResult of text ``row`` covering the merged token ``spans`` (as the template matcher builds them)."""
    a, b = int(tokens.doc_offsets[row]), int(tokens.doc_offsets[row + 1])
    cs, ce, n = tokens.char_starts[a:b], tokens.char_ends[a:b], b - a
    if not spans:
        return MatchResult.no_match(cs, ce)
    s = np.asarray([x for x, _ in spans], dtype=np.int64)
    e = np.asarray([y for _, y in spans], dtype=np.int64)
    gap_start = np.where(s > 0, ce[np.maximum(s - 1, 0)], 0).astype(np.int64)
    gap_end = np.where(e < n, cs[np.minimum(e, n - 1)], len(text)).astype(np.int64)
    k = np.arange(s.shape[0], dtype=np.int64)
    return MatchResult(n, int((e - s).sum()), cs, ce, s, e, np.zeros(s.shape[0], dtype=np.int32), k, s, e, cs[s],
                       ce[e - 1], gap_start, gap_end)


@st.composite
def _spans(draw, n):
    """Disjoint, never adjacent token spans of a text of n tokens."""
    cuts = sorted(draw(st.sets(st.integers(0, n), max_size=6)))
    spans, last = [], -1
    for x, y in zip(cuts[::2], cuts[1::2]):
        if x > last + 1 or (last < 0 and x >= 0):
            if y > x and (not spans or x > spans[-1][1]):
                spans.append((x, y))
                last = y
    return spans


def test_a_removed_region_between_lines_starts_a_line():
    texts = ["a\nb c d"]  # "b" removed: "a\nc d", so "c" now starts a line
    tokens = tokenize_batch(texts)
    m = _match(tokens, 0, texts[0], [(1, 2)])
    out, joins = strip_spans_with_junctions(texts[0], m)
    assert out == "a\nc d"
    assert tokens_after_strip(tokens, [0], [m], [joins]).line_starts.tolist() == [1, 1, 0]


@settings(derandomize=True, max_examples=400, deadline=None)
@given(st.lists(_text, min_size=1, max_size=4), st.data())
def test_tokens_after_strip_equal_the_stripped_texts_tokens(texts, data):
    tokens = tokenize_batch(texts)
    rows = data.draw(st.lists(st.integers(0, len(texts) - 1), unique=True, max_size=len(texts)))
    matches, stripped, joins = [], [], []
    for r in rows:
        n = int(tokens.doc_offsets[r + 1] - tokens.doc_offsets[r])
        m = _match(tokens, r, texts[r], data.draw(_spans(n)))
        out, j = strip_spans_with_junctions(texts[r], m)
        matches.append(m)
        stripped.append(out)
        joins.append(j)
    derived = tokens_after_strip(tokens, rows, matches, joins)
    again = tokenize_batch(stripped)
    if derived is None:  # only where a span's edge splits one character's tokens
        split = [(tokens.char_ends[int(tokens.doc_offsets[r]) + x - 1] > tokens.char_starts[int(tokens.doc_offsets[r]) + x])
                 for r, m in zip(rows, matches) for x in np.concatenate([m.span_token_start, m.span_token_end]).tolist()
                 if 0 < x < tokens.doc_offsets[r + 1] - tokens.doc_offsets[r]]
        assert any(split)
        return
    names, again_names = derived.words.tokens(), again.words.tokens()
    assert [names[i] for i in derived.ids.tolist()] == [again_names[i] for i in again.ids.tolist()]
    assert derived.doc_offsets.tolist() == again.doc_offsets.tolist()
    assert derived.char_starts.tolist() == again.char_starts.tolist()
    assert derived.char_ends.tolist() == again.char_ends.tolist()
    assert derived.line_starts.tolist() == again.line_starts.tolist()
    assert derived.ids.dtype == np.uint32 and derived.line_starts.dtype == np.uint8


def test_tokens_without_line_starts_carry_none_across_a_strip():
    """A reader of phrases only (PhraseMatcher.tokenize) asks for no line starts: the same tokens,
    line_starts None, and None again after a strip."""
    texts = ["a\nb c d", "e f"]
    full, bare = tokenize_batch(texts), tokenize_batch(texts, with_lines=False)
    assert bare.line_starts is None
    for name in ("ids", "doc_offsets", "char_starts", "char_ends"):
        assert getattr(bare, name).tolist() == getattr(full, name).tolist(), name
    m = _match(bare, 0, texts[0], [(1, 2)])
    _, joins = strip_spans_with_junctions(texts[0], m)
    after, with_lines = tokens_after_strip(bare, [0], [m], [joins]), tokens_after_strip(full, [0], [m], [joins])
    assert after.line_starts is None
    assert after.char_starts.tolist() == with_lines.char_starts.tolist() and after.ids.tolist() == with_lines.ids.tolist()
