"""Tokenizer: the reference semantics, the character tables, and the fast path vs its twin."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from bloomspan.engine.text.tokenizer import (
    _TOKEN_RE, CLASS_ALNUM, CLASS_CAPITAL_SIGMA, CLASS_DOTTED_CAPITAL_I, CLASS_OTHER, char_tables,
    encode_batch, encode_batch_reference, token_spans, tokenize)
from bloomspan.engine.text.vocabulary import UNKNOWN, Vocabulary

# Characters where tokenizers usually go wrong: separators that look like word characters
# (_, ©, combining marks, emoji, ZWJ), letters whose lowercase is special (İ, Σ, ǅ, ẞ),
# modifier letters (case-ignorable, so they matter to the final-sigma rule), digits of
# other scripts, a lone surrogate.
SPECIAL = list("aZ09_©İIıiΣσςΑβΩʰǅẞß\u0301\u0307 \n\t.-'Привет½٣ⅷ😀\u200d\ud800é")
texts_strategy = st.text(alphabet=st.one_of(st.sampled_from(SPECIAL), st.characters()), max_size=40)


def test_reference_examples():
    assert tokenize("Hello, World!") == ["hello", "world"]
    assert tokenize("hello_world ©2024") == ["hello", "world", "2024"]
    assert tokenize("İstanbul") == ["i\u0307stanbul"]  # split first, then lowercase
    assert tokenize("cafe\u0301") == ["cafe"]  # a combining mark is not alnum
    assert tokenize("ΟΔΟΣ ΣΑΣ") == ["οδος", "σας"]  # final sigma inside each token
    assert tokenize("Привет, мир") == ["привет", "мир"]
    toks, s, e = token_spans("  Ab-cd ")
    assert toks == ["ab", "cd"] and s.tolist() == [2, 5] and e.tolist() == [4, 7]
    assert s.dtype == np.int64 and e.dtype == np.int64


def test_char_class_matches_the_reference_regex_everywhere():
    """The fast path's table and the reference's regex agree on every code point."""
    char_class, lower = char_tables()
    everything = "".join(map(chr, range(0x110000)))
    in_token = np.zeros(0x110000, dtype=bool)
    for m in _TOKEN_RE.finditer(everything):
        in_token[m.start():m.end()] = True
    assert np.array_equal(char_class != CLASS_OTHER, in_token)
    assert char_class[0x130] == CLASS_DOTTED_CAPITAL_I and char_class[0x3A3] == CLASS_CAPITAL_SIGMA
    assert np.count_nonzero(char_class > CLASS_ALNUM) == 2


def test_lower_table_matches_str_lower_for_every_alnum_code_point():
    char_class, lower = char_tables()
    for c in np.flatnonzero(char_class == CLASS_ALNUM).tolist():
        low = chr(c).lower()
        assert len(low) == 1 and ord(low) == lower[c], hex(c)
        # lowercase never turns a letter or digit into a separator (else split-then-lower
        # and lower-then-split would differ)
        assert low.isalnum(), hex(c)


def _check_same(texts, with_offsets=True, chunk_chars=1 << 22):
    fast_v, ref_v = Vocabulary(capacity=1, pool_capacity=1), Vocabulary()
    fast = encode_batch(texts, fast_v, with_offsets, chunk_chars=chunk_chars)
    ref = encode_batch_reference(texts, ref_v, with_offsets)
    assert len(fast) == len(ref) == (4 if with_offsets else 2)
    for a, b in zip(fast, ref):
        assert a.dtype == b.dtype and np.array_equal(a, b)
    assert fast_v.tokens() == ref_v.tokens()
    assert np.array_equal(fast_v.df, ref_v.df) and fast_v.n_docs == ref_v.n_docs == len(texts)
    ids, off = fast[0], fast[1]
    for d, text in enumerate(texts):
        toks, s, e = token_spans(text)
        assert fast_v.tokens(ids[off[d]:off[d + 1]]) == toks
        if with_offsets:
            assert np.array_equal(fast[2][off[d]:off[d + 1]], s)
            assert np.array_equal(fast[3][off[d]:off[d + 1]], e)
    return fast_v, fast


@settings(derandomize=True, max_examples=60, deadline=None)
@given(st.lists(texts_strategy, max_size=6), st.integers(1, 50))
def test_fast_path_equals_reference(texts, chunk_chars):
    _check_same(texts, chunk_chars=chunk_chars)


@settings(derandomize=True, max_examples=30, deadline=None)
@given(st.lists(st.text(alphabet=st.characters(max_codepoint=127), max_size=30), max_size=6))
def test_fast_path_equals_reference_ascii(texts):
    _check_same(texts, with_offsets=False)


@settings(derandomize=True, max_examples=40, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ΣσςΑαʰ\u0345ᾼİ1 _")), max_size=12))
def test_capital_sigma_follows_str_lower(text):
    """Σ is lowercased by context inside its token (a case-ignorable ʰ is skipped)."""
    _check_same([text, text.upper(), "x" + text])


def test_ids_do_not_depend_on_batching():
    texts = ["The cat sat.", "the CAT", "", "ΟΔΟΣ İstanbul", "dog cat 42", "Σ" * 3]
    v_all = Vocabulary()
    ids_all, off_all = encode_batch(texts, v_all)
    v = Vocabulary()
    parts = [encode_batch(texts[a:b], v)[0] for a, b in [(0, 2), (2, 3), (3, 6)]]
    assert np.array_equal(np.concatenate(parts), ids_all)
    assert v.tokens() == v_all.tokens() and np.array_equal(v.df, v_all.df)
    assert v_all.tokens()[:3] == ["the", "cat", "sat"]  # ids in first-occurrence order


def test_long_tokens_and_growth():
    texts = ["A" * 1000 + " " + "İ" * 300 + "b", " ".join(f"w{i}" for i in range(5000))]
    v, (ids, off, s, e) = _check_same(texts)
    assert v.token(int(ids[1])) == "i\u0307" * 300 + "b"
    assert len(v) == 5002


def test_frozen_vocabulary_maps_unknown_and_skips_df():
    v = Vocabulary()
    encode_batch(["red green"], v)
    ids, off = encode_batch(["green blue RED", "blue"], v, add_new=False)
    assert ids.tolist() == [1, UNKNOWN, 0, UNKNOWN]
    assert len(v) == 2 and v.df.tolist() == [2, 2] and v.n_docs == 3
    ref_ids, _ = encode_batch_reference(["green blue RED", "blue"], v, add_new=False, count_df=False)
    assert np.array_equal(ref_ids, ids)
    encode_batch(["green"], v, count_df=False)
    assert v.df.tolist() == [2, 2] and v.n_docs == 3


def test_empty_batch_and_empty_documents():
    v = Vocabulary()
    ids, off, s, e = encode_batch([], v, with_offsets=True)
    assert ids.dtype == np.uint32 and ids.size == 0 and off.tolist() == [0] and s.size == e.size == 0
    ids, off = encode_batch(["", "...", ""], v)
    assert ids.size == 0 and off.tolist() == [0, 0, 0, 0] and v.n_docs == 3


def test_rejects_non_str():
    with pytest.raises(TypeError, match=r"texts\[1\] is bytes"):
        encode_batch(["ok", b"bytes"], Vocabulary())
    with pytest.raises(ValueError, match="chunk_chars=0"):
        encode_batch(["ok"], Vocabulary(), chunk_chars=0)
