"""Tokenizer: the normalised reference semantics, its shortcuts, and the fast path vs its twin."""
from __future__ import annotations

import concurrent.futures
import gc
import unicodedata

import numpy as np
import pytest
from hypothesis import example, given, settings, strategies as st
from numba import config as numba_config
from numba.core.errors import TypingError

from bloomspan.engine.templates.blocks import line_starts_batch
from bloomspan.engine.text import normalization, str_views
from bloomspan.engine.text.normalization import (
    CLASS_HARD,
    CLASS_MARK,
    CLASS_NON_STARTER,
    CLASS_SEPARATOR,
    CLASS_TOKEN,
    EXPANSION,
    build_normalization_tables,
    character_flags,
    is_mark,
    is_segment_starter,
    normalization_tables,
    normalize,
    normalized_token_spans,
)
from bloomspan.engine.text.tokenizer import (
    code_points,
    encode_batch,
    encode_batch_reference,
    joined_code_points,
    token_spans,
    tokenize,
)
from bloomspan.engine.text.vocabulary import UNKNOWN, Vocabulary

# Characters where tokenizers usually go wrong: separators that look like word characters
# (_, ©, emoji, ZWJ), letters whose case folding is special (İ, Σ, ǅ, ẞ, ß), combining marks
# alone and after letters, NFD Cyrillic, Hangul syllables and conjoining jamo, full-width and
# half-width forms, ligatures, compatibility digits and fractions, right-to-left scripts and
# marks, Devanagari vowel signs (marks of class 0), a lone surrogate.
SPECIAL = list(
    "aZ09_©İIıiΣσςΑβΩʰǅẞß\u0301\u0307\u0306\u0345 \n\t.-'Привет½٣ⅷ😀\u200d\ud800é"
    "и\u0306НАСТРОЙКИ한국\u1100\u1161\u11a8\u1112ＡＢｃ１ｶﾞﾟﬁﬂﬀ①㎏ﷺשלום\u05b8عربي\u064e\u200f"
    "हिन्दी\u093f\u0903😀👍🏽\U0001d400")
texts_strategy = st.text(alphabet=st.one_of(st.sampled_from(SPECIAL), st.characters()), max_size=40)


def _joined_code_points_reference(texts: list[str]) -> tuple[list[int], np.dtype]:
    """Code points of the joined text, one ord per character, and the width the docstring names."""
    joined = "\n".join(texts)
    widest = max(map(ord, joined), default=0)
    width = np.uint8 if widest < 0x100 else np.uint16 if widest < 0x10000 else np.uint32
    return [ord(c) for c in joined], width


@settings(derandomize=True, max_examples=300, deadline=None)
@given(st.lists(st.one_of(texts_strategy, st.text(alphabet="ab \n", max_size=8),
                          st.text(alphabet="é\xa0ü a", max_size=8)), max_size=5))
@example(["ab", "é"])  # ASCII beside latin-1: one byte a code point
@example(["ab", "Ж"])  # ASCII beside Cyrillic: joined in the wider width
@example(["é", "😀"])  # a surrogate pair in UTF-16: four bytes a code point
@example(["\ud800", "a"])  # a lone surrogate is one code unit, not a pair
def test_joined_code_points_are_the_joined_texts_code_points(texts):
    cps, width = _joined_code_points_reference(texts)
    got = joined_code_points(texts)
    assert got.dtype == width and got.tolist() == cps


def test_joined_code_points_keep_their_text_alive_and_read_only():
    """The array is the joined str's own buffer: it must outlive every other reference to it."""
    views = [joined_code_points(["Жук " * 1000 + str(i), "é"]) for i in range(20)]
    gc.collect()
    _ = ["x" * 5000 for _ in range(200)]  # memory a freed str would have been reused for
    for i, v in enumerate(views):
        assert "".join(map(chr, v.tolist())) == "Жук " * 1000 + str(i) + "\né"
        assert not v.flags.writeable


def test_reference_examples():
    assert tokenize("Hello, World!") == ["hello", "world"]
    assert tokenize("hello_world ©2024") == ["hello", "world", "2024"]
    assert tokenize("İstanbul") == ["i\u0307stanbul"]  # full case folding: i + combining dot
    assert tokenize("cafe\u0301 café") == ["café", "café"]  # NFD and NFC agree
    assert tokenize("ΟΔΟΣ ΣΑΣ") == ["οδοσ", "σασ"]  # case folding has no final sigma
    assert tokenize("Привет, мир") == ["привет", "мир"]
    assert tokenize("ＡＢＣ ﬁle ① Straße") == ["abc", "file", "1", "strasse"]
    toks, s, e = token_spans("  Ab-cd ")
    assert toks == ["ab", "cd"] and s.tolist() == [2, 5] and e.tolist() == [4, 7]
    assert s.dtype == np.int64 and e.dtype == np.int64


def test_nfd_settings_word_is_one_token_with_offsets_into_the_original():
    nfd = unicodedata.normalize("NFD", "Настройки")
    assert len(nfd) == 10  # й is и + COMBINING BREVE
    toks, s, e = token_spans(f"«{nfd}»")
    assert toks == ["настройки"] and s.tolist() == [1] and e.tolist() == [11]
    assert tokenize("Настройки") == toks


def test_offsets_cover_what_the_token_came_from():
    text = "x ＡＢＣ ﬁle ｶﾞ ½"
    toks, s, e = token_spans(text)
    assert [text[a:b] for a, b in zip(s, e)] == ["x", "ＡＢＣ", "ﬁle", "ｶﾞ", "½", "½"]
    assert toks == ["x", "abc", "file", "ガ", "1", "2"]  # "½" is "1⁄2": two tokens, one span


@settings(derandomize=True, max_examples=300, deadline=None)
@given(texts_strategy, texts_strategy)
def test_normalisation_does_not_cross_a_segment_start(a, b):
    """The premise of the offsets: NFKC + case folding of a text is the concatenation of its
    segments' (a segment starts at every segment starter)."""
    text = a + b
    cut = [i for i, ch in enumerate(text) if i == 0 or is_segment_starter(ch)]
    pieces = [normalize(text[x:y]) for x, y in zip(cut, cut[1:] + [len(text)])]
    assert "".join(pieces) == normalize(text)


@settings(derandomize=True, max_examples=300, deadline=None)
@given(texts_strategy)
def test_tokens_are_those_of_the_normalised_text(text):
    """The definition against a plainer one: the token strings are the runs of letters,
    digits and attached marks of casefold(NFKC(text))."""
    norm = normalize(text)
    expected, current = [], ""
    for ch in norm:
        if ch.isalnum() or (current and unicodedata.category(ch)[0] == "M"):
            current += ch
        elif current:
            expected.append(current)
            current = ""
    if current:
        expected.append(current)
    assert normalized_token_spans(text)[0] == expected


@settings(derandomize=True, max_examples=300, deadline=None)
@given(texts_strategy)
def test_shortcuts_equal_the_definition(text):
    toks, s, e = token_spans(text)
    ref = normalized_token_spans(text)
    assert (toks, s.tolist(), e.tolist()) == ref
    nfkc = unicodedata.normalize("NFKC", text)
    toks, s, e = token_spans(nfkc)
    assert (toks, s.tolist(), e.tolist()) == normalized_token_spans(nfkc)


def test_character_flags_are_isalnum_and_is_mark_of_every_code_point():
    alnum, mark = character_flags()
    assert alnum.shape == mark.shape == (0x110000,) and not alnum.flags.writeable
    for c in range(0x110000):
        ch = chr(c)
        assert (bool(alnum[c]), bool(mark[c])) == (ch.isalnum(), is_mark(ch)), hex(c)


def test_character_flags_are_read_back_from_their_cache_file(tmp_path, monkeypatch):
    # A new process reads the flags from the file the first one saved, not from unicodedata.
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    built = normalization._cached_tables("character-flags", ("alnum", "mark"), 2,
                                         normalization.build_character_flags)
    assert [p.name for p in tmp_path.iterdir()] == [f"character-flags-u{unicodedata.unidata_version}-v{normalization.TABLES_FORMAT}.npz"]

    def no_build():
        raise AssertionError("built again although the cache file holds the flags")

    read = normalization._cached_tables("character-flags", ("alnum", "mark"), 2, no_build)
    assert all(np.array_equal(a, b) for a, b in zip(built, read))


def test_tables_match_unicodedata_on_every_code_point():
    char_class, fold, expansions = normalization_tables()
    assert np.array_equal(char_class, build_normalization_tables()[0])
    for c in range(0x110000):
        ch = chr(c)
        k = int(char_class[c])
        if not is_segment_starter(ch) and c != 0:
            assert k == CLASS_NON_STARTER, hex(c)
            continue
        m = normalize(ch)
        assert k != CLASS_NON_STARTER, hex(c)
        if k in (CLASS_TOKEN, CLASS_MARK):
            f = int(fold[c])
            if f < EXPANSION:
                got = chr(f)
            else:
                i = f - EXPANSION
                got = "".join(map(chr, expansions[i + 1:i + 1 + expansions[i]]))
            assert got == m, hex(c)
        if k == CLASS_SEPARATOR:
            assert normalized_token_spans("a" + ch + "b")[0] == ["a", "b"], hex(c)
        elif k == CLASS_TOKEN:
            assert normalized_token_spans(ch)[0] == [m], hex(c)
        elif k == CLASS_MARK:
            assert normalized_token_spans("a" + ch)[0] == ["a" + m] and normalized_token_spans(ch)[0] == [], hex(c)
        else:
            assert k == CLASS_HARD, hex(c)


def test_code_points_of_every_width():
    for text, dtype in (("abc", np.uint8), ("é©", np.uint8), ("—Ж", np.uint16), ("😀a", np.uint32),
                        ("\ud800x—", np.uint16), ("\ud83d\ude00", np.uint16)):
        cps = code_points(text)
        assert cps.dtype == dtype and cps.tolist() == [ord(c) for c in text], text


def _check_same(texts, with_offsets=True, chunk_chars=1 << 22):
    fast_v, ref_v = Vocabulary(capacity=1, pool_capacity=1), Vocabulary()
    fast = encode_batch(texts, fast_v, with_offsets, with_lines=True, chunk_chars=chunk_chars)
    ref = encode_batch_reference(texts, ref_v, with_offsets, with_lines=True)
    assert len(fast) == len(ref) == (5 if with_offsets else 3)
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
    if with_offsets:  # the kernel's line starts are those of the blocks module
        assert np.array_equal(fast[-1], line_starts_batch(texts, off, fast[2]))
    return fast_v, fast


@settings(derandomize=True, max_examples=200, deadline=None)
@given(st.lists(texts_strategy, max_size=6), st.integers(1, 50))
def test_fast_path_equals_reference(texts, chunk_chars):
    _check_same(texts, chunk_chars=chunk_chars)


@settings(derandomize=True, max_examples=30, deadline=None)
@given(st.lists(st.text(alphabet=st.characters(max_codepoint=127), max_size=30), max_size=6))
def test_fast_path_equals_reference_ascii(texts):
    _check_same(texts, with_offsets=False)


@settings(derandomize=True, max_examples=60, deadline=None)
@given(st.lists(st.text(alphabet=st.sampled_from(SPECIAL[:60] + list("\n\n  ")), max_size=30), max_size=4))
def test_fast_path_equals_reference_on_special_characters(texts):
    _check_same(texts)


# Every code point of the scan's lead table (Latin-1, Latin Extended, IPA, the combining
# marks U+0300-U+036F, Greek, Cyrillic) beside lone surrogates, astral letters, expansions.
LEAD_TEXTS = st.text(alphabet=st.one_of(st.characters(max_codepoint=0x460, exclude_categories=()),
                                        st.sampled_from(["\ud800", "\udfff", "😀", "\U0001d400", "ﬁ", "½", "\u0301",
                                                         "\u0306", " ", "\n"])), max_size=40)


@settings(derandomize=True, max_examples=200, deadline=None)
@given(st.lists(LEAD_TEXTS, max_size=5))
def test_fast_path_equals_reference_within_the_lead_table(texts):
    _check_same(texts)


def test_ids_do_not_depend_on_batching():
    texts = ["The cat sat.", "the CAT", "", "ΟΔΟΣ İstanbul", "dog cat 42", "Σ" * 3, "½ cafe\u0301"]
    v_all = Vocabulary()
    ids_all, off_all = encode_batch(texts, v_all)
    v = Vocabulary()
    parts = [encode_batch(texts[a:b], v)[0] for a, b in [(0, 2), (2, 3), (3, 7)]]
    assert np.array_equal(np.concatenate(parts), ids_all)
    assert v.tokens() == v_all.tokens() and np.array_equal(v.df, v_all.df)
    assert v_all.tokens()[:3] == ["the", "cat", "sat"]  # ids in first-occurrence order


def test_a_batch_returns_arrays_of_its_own_not_slices_of_the_kernel_buffers():
    """The kernel's buffers hold one slot per two code points: a caller keeping a batch's ids
    (a shard's reader keeps every batch's) must not keep the rest of the buffer alive."""
    texts = ["a fairly ordinary sentence of prose with words in it"] * 50
    ids, _, starts, ends, lines = encode_batch(texts, Vocabulary(), with_offsets=True, with_lines=True)
    for a in (ids, starts, ends, lines):
        assert a.base is None or a.base.nbytes <= 2 * a.nbytes


def test_a_later_batch_leaves_an_earlier_batchs_arrays_as_they_were():
    """The kernels' buffers are kept for the thread's next batch: results are copies."""
    first = encode_batch(["alpha beta\ngamma", "delta"], Vocabulary(), with_offsets=True, with_lines=True)
    kept = [a.copy() for a in first]
    encode_batch(["zeta eta theta iota kappa lambda mu nu xi omicron"] * 30, Vocabulary(), with_offsets=True,
                 with_lines=True)
    for a, b in zip(first, kept):
        assert np.array_equal(a, b)


def test_threads_tokenize_at_once_with_buffers_of_their_own():
    texts = [f"word{i} Слово{i % 7} ｗｉｄｅ {'x' * (i % 13)}\n" * (1 + i % 5) for i in range(400)]
    want = [encode_batch(texts[k::4], Vocabulary(), with_offsets=True, with_lines=True) for k in range(4)]
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        for _ in range(10):  # a race shows in some rounds, not all
            got = list(pool.map(lambda k: encode_batch(texts[k::4], Vocabulary(), with_offsets=True,
                                                       with_lines=True), range(4)))
            for g, w in zip(got, want):
                assert all(np.array_equal(a, b) for a, b in zip(g, w))


def test_long_tokens_and_growth():
    texts = ["A" * 1000 + " " + "İ" * 300 + "b", " ".join(f"w{i}" for i in range(5000)), "ﬃ" * 100]
    v, (ids, off, s, e, lines) = _check_same(texts)
    assert v.token(int(ids[1])) == "i\u0307" * 300 + "b"
    assert v.token(int(ids[-1])) == "ffi" * 100  # an expansion per code point
    assert len(v) == 5003


def test_more_tokens_than_half_the_characters():
    """"½" gives two tokens per character: the output arrays grow past the kernel's bound."""
    _check_same(["½" * 50, "a½" * 20])


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


def test_a_numba_that_cannot_read_a_str_buffer_falls_back_to_encoding(monkeypatch):
    """The view reads numba's private str attributes; a numba without them must not break the
    tokenizer: the code points are encoded instead (the same values)."""
    def no_attributes(s):
        raise TypingError("Unknown attribute '_data' of type unicode_type")

    monkeypatch.setattr(str_views, "_buffer_of", no_attributes)
    monkeypatch.setattr(str_views, "_VIEWS_WORK", True)
    for text in ("plain ascii", "é latin", "Жук", "😀 wide", "\ud800 lone"):
        got = str_views.code_point_view(text)
        assert got.tolist() == str_views._encoded(text).tolist() and got.dtype == str_views._encoded(text).dtype
    assert str_views._VIEWS_WORK is bool(numba_config.DISABLE_JIT)  # without the JIT it never views
