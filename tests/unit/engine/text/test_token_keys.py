"""Token keys: the scan kernel's keys against the plain reference, packed keys exact, prefetch a no-op."""
from __future__ import annotations

import numpy as np
from hypothesis import example, given, settings, strategies as st
from numba import njit

from bloomspan.engine.text.normalization import (
    CLASS_SEPARATOR,
    CLASS_TOKEN,
    EXPANSION,
    normalization_tables,
)
from bloomspan.engine.text.prefetch import prefetch_row
from bloomspan.engine.text.token_keys import (
    HASHED,
    LEAD_LETTER,
    LEAD_NEWLINE,
    LEAD_SEPARATOR,
    LEAD_SIZE,
    PACKED_ALPHABET,
    PACKED_MAX_LENGTH,
    STATUS_DONE,
    direct_codes,
    key_of,
    lead_codes,
    packed_length,
    scan_documents,
    scan_tables,
    simple_document,
    simple_scratch,
    token_key,
    unpack_into,
)
from bloomspan.engine.text.tokenizer import code_points, encode_batch, encode_batch_reference, token_spans
from bloomspan.engine.text.vocabulary import Vocabulary

# Letters of the packed alphabet in both cases, letters that fold into it from elsewhere
# (full-width, the ligature "ﬁ", Kelvin sign), letters that never do (é, Greek, CJK), a
# combining mark, digits and separators: tokens of every length around PACKED_MAX_LENGTH.
# Inside the scan's lead table too: "ſ" folds to "s", "ª" to "a", "İ" expands, "µ" folds to
# Greek, "½" is hard, and the marks after a separator or a letter make a stretch hard.
KEY_CHARS = list("abcxyzABCXYZ0189абвяАБВЯёЁйЙ" "ＡｂﬁK" "éΣσ中\u0301" "ſªİµ½\u0306" "  .-\n")
key_texts = st.text(alphabet=st.sampled_from(KEY_CHARS), max_size=60)


@njit
def keys_of(buf, starts, ends, out):
    """out[t] = the kernel's key of buf[starts[t]:ends[t]] (the scan computes them inline)."""
    for t in range(starts.size):
        out[t] = key_of(buf, starts[t], ends[t] - starts[t])


def _kernel_keys(tokens: list[str]) -> list[int]:
    cps = code_points("".join(tokens)).astype(np.uint32)
    lengths = np.fromiter(map(len, tokens), dtype=np.int64, count=len(tokens))
    ends = np.cumsum(lengths)
    out = np.zeros(len(tokens), dtype=np.uint64)
    keys_of(cps, ends - lengths, ends, out)
    return [int(k) for k in out]


@settings(derandomize=True, max_examples=300, deadline=None)
@given(st.lists(st.text(alphabet=st.one_of(st.sampled_from(KEY_CHARS), st.characters()), min_size=1,
                        max_size=14), max_size=8))
def test_kernel_key_equals_reference(tokens):
    assert _kernel_keys(tokens) == [token_key(t) for t in tokens]


@settings(derandomize=True, max_examples=300, deadline=None)
@given(st.text(alphabet=PACKED_ALPHABET, min_size=1, max_size=PACKED_MAX_LENGTH),
       st.text(alphabet=PACKED_ALPHABET, min_size=1, max_size=PACKED_MAX_LENGTH))
def test_packed_keys_are_exact(a, b):
    """A packed key stands for its token alone: the vocabulary trusts it without comparing."""
    ka, kb = token_key(a), token_key(b)
    assert ka < HASHED and kb < HASHED
    assert (ka == kb) == (a == b)


def test_which_tokens_are_packed():
    assert token_key("a") == 1 + PACKED_ALPHABET.index("a")
    assert token_key("ёж") < HASHED and token_key("9" * PACKED_MAX_LENGTH) < HASHED
    for hashed in ("a" * (PACKED_MAX_LENGTH + 1), "café", "σ", "a\u0301", "中"):
        assert token_key(hashed) >= HASHED, hashed


@njit
def _unpacked(key, out):
    m = packed_length(key)
    unpack_into(key, m, out, 0)
    return m


@settings(derandomize=True, max_examples=300, deadline=None)
@given(st.text(alphabet=PACKED_ALPHABET, min_size=1, max_size=PACKED_MAX_LENGTH))
@example("a")
@example("ё" * PACKED_MAX_LENGTH)
def test_a_packed_key_unpacks_to_its_token(token):
    """A new token of a packed key is written to the pool from its key alone."""
    out = np.zeros(PACKED_MAX_LENGTH, dtype=np.uint32)
    m = _unpacked(np.uint64(token_key(token)), out)
    assert "".join(map(chr, out[:m])) == token


def test_direct_codes_are_the_folds_packed_digits():
    _, fold, _ = normalization_tables()
    codes = direct_codes(fold)
    for c in range(codes.size):
        f = int(fold[c])
        expected = PACKED_ALPHABET.index(chr(f)) + 1 if f < EXPANSION and chr(f) in PACKED_ALPHABET else 0
        assert codes[c] == expected, hex(c)
    assert codes[ord("A")] == codes[ord("a")] and codes[ord("Ё")] == codes[ord("ё")] != 0


def _scratch(n):
    return (simple_scratch(n),)


def test_lead_codes_are_the_class_and_digit_of_one_read():
    """A lead value decides what the scan would read from char_class and direct_codes."""
    char_class, fold, _ = normalization_tables()
    lead, codes = lead_codes(char_class, fold), direct_codes(fold)
    assert lead.shape == (LEAD_SIZE,) and lead.dtype == np.uint8
    for c in range(LEAD_SIZE):
        k, v = int(char_class[c]), int(lead[c])
        code = int(codes[c]) if c < codes.size else 0
        if v in (LEAD_SEPARATOR, LEAD_NEWLINE):
            assert k == CLASS_SEPARATOR and (v == LEAD_NEWLINE) == (c == 10), hex(c)
        elif v == LEAD_LETTER:
            assert k == CLASS_TOKEN and code == 0, hex(c)
        elif v:
            assert k == CLASS_TOKEN and v == code, hex(c)
        else:
            assert k != CLASS_SEPARATOR and (k != CLASS_TOKEN or code == 0), hex(c)
    assert lead[ord(" ")] == lead[ord("\r")] == lead[ord(".")] == lead[ord("—")] == LEAD_SEPARATOR
    assert lead[ord("\n")] == LEAD_NEWLINE
    assert lead[ord("Ж")] == lead[ord("ж")] == codes[ord("ж")] and lead[0x301] == 0 and lead[ord("½")] == 0
    assert lead[ord("é")] == lead[ord("中")] == lead[ord("ß")] == LEAD_LETTER
    assert scan_tables(char_class, fold)[1] is scan_tables(char_class, fold)[1]


# Only letters and separators of one code point (ASCII, Cyrillic, "ſ" and "ª" that fold into
# the packed alphabet, letters outside it, expansions, punctuation beyond Latin-1): documents
# simple_document takes whole.
SIMPLE_CHARS = list("abcxyzABCXYZ0189абвяАБВЯёЁйЙſª" "éΣσς中ßﬁİＡK" "  .-,\n\n—“”©\t")
simple_texts = st.text(alphabet=st.sampled_from(SIMPLE_CHARS), max_size=80)


@settings(derandomize=True, max_examples=300, deadline=None)
@given(st.lists(simple_texts, max_size=5), st.sampled_from([0, 1]))
@example(["", "a", " ", "abcdefghi abcdefghij\n\nЁЁ", "\nx\n"], 1)
# Runs across the 64-code-point blocks of the pass, 8, 9 and 10 letters long, one ending the document.
@example([" " * 60 + "abcdefghi" + " " * 55 + "ЖЖЖЖЖЖЖЖ\n" + "x" * 64, "a" * 63 + "\nzyxwvutsrq " + "é" * 70 + "\n"], 0)
def test_simple_document_equals_the_reference(texts, nl):
    """The branch-free pass writes the reference tokenizer's spans, keys and line starts; a
    document with any other code point is left to the scan's loop, nothing written."""
    char_class, fold, expansions = normalization_tables()
    direct, lead = scan_tables(char_class, fold)
    for text in texts:
        cps = code_points(text)
        n = cps.size // 2 + 1
        keys, starts, ends, lines = np.zeros(n, np.uint64), np.zeros(n, np.int64), np.zeros(n, np.int64), np.zeros(n, np.uint8)
        w, nl_out, simple = simple_document(cps, 0, cps.size, 0, nl, lead, fold, expansions, *_scratch(cps.size),
                                            keys, starts, ends, lines)
        assert simple
        ref_tokens, ref_starts, ref_ends = token_spans(text)
        assert w == len(ref_tokens)
        assert starts[:w].tolist() == ref_starts.tolist() and ends[:w].tolist() == ref_ends.tolist()
        assert keys[:w].tolist() == [token_key(t) for t in ref_tokens]
        want_lines = [int(j == 0 and nl or "\n" in text[(ref_starts[j - 1] if j else 0):ref_starts[j]])
                      for j in range(w)]
        assert lines[:w].tolist() == want_lines
        assert nl_out == int(("\n" in text[ref_starts[-1]:]) if w else (nl or "\n" in text))
    for other in ("cafe\u0301", "a\u0301", "x \u0306", "½", "😀 a", "\u0915\u093f"):
        cps = code_points(other)
        out = np.zeros(cps.size + 1, np.uint64), *(np.zeros(cps.size + 1, np.int64) for _ in range(2)), \
            np.zeros(cps.size + 1, np.uint8)
        assert simple_document(cps, 0, cps.size, 3, nl, lead, fold, expansions, *_scratch(cps.size), *out) \
            == (3, nl, False), other
        assert not out[0].any()


@settings(derandomize=True, max_examples=300, deadline=None)
@given(st.lists(key_texts, max_size=5))
@example(["ABCDEFGHI abcdefghij ＡＢＣ ﬁle Ёлка ЁЛКАЁЛКАЁЛ"])
@example(["ab \u0301cd", "Ж.\u0306x", "ſs ﬁ\u0301 ª", "x \u0306", "и\u0306 ok", "a\u0301 b"])
def test_scan_keys_are_the_keys_of_the_reference_tokens(texts):
    """Every token the scan keys itself has the key of the reference tokenizer's token."""
    char_class, fold, expansions = normalization_tables()
    for text in texts:
        cps = code_points(text)
        n = cps.size // 2 + 1
        keys, starts, ends = np.zeros(n, np.uint64), np.zeros(n, np.int64), np.zeros(n, np.int64)
        lines, doc_end = np.zeros(n, np.uint8), np.zeros(1, np.int64)
        d, s, e, w, nl, status = scan_documents(
            cps, np.zeros(1, np.int64), np.full(1, cps.size, np.int64), 0, 0, 0, 1, char_class, fold,
            expansions, direct_codes(fold), lead_codes(char_class, fold), *_scratch(cps.size), keys, starts, ends,
            lines, doc_end)
        ref_tokens, ref_starts, ref_ends = token_spans(text)
        if status == STATUS_DONE:
            assert w == len(ref_tokens)
        got = list(zip(starts[:w].tolist(), ends[:w].tolist(), keys[:w].tolist()))
        want = [(a, b, token_key(t)) for t, a, b in zip(ref_tokens, ref_starts.tolist(), ref_ends.tolist())][:w]
        assert got == want


@settings(derandomize=True, max_examples=150, deadline=None)
@given(st.lists(key_texts, max_size=6))
def test_fast_path_equals_reference_on_packed_and_hashed_tokens(texts):
    fast_v, ref_v = Vocabulary(capacity=1, pool_capacity=1), Vocabulary()
    fast = encode_batch(texts, fast_v, True, with_lines=True)
    ref = encode_batch_reference(texts, ref_v, True, with_lines=True)
    for a, b in zip(fast, ref):
        assert np.array_equal(a, b)
    assert fast_v.tokens() == ref_v.tokens() and np.array_equal(fast_v.df, ref_v.df)
    frozen = encode_batch(texts + ["unseen words АБВГДЕЁЖЗИЙ"], fast_v, add_new=False, count_df=False)
    assert [fast_v.get(t, Vocabulary.UNKNOWN) for x in texts + ["unseen words АБВГДЕЁЖЗИЙ"]
            for t in token_spans(x)[0]] == frozen[0].tolist()


@njit(cache=True)
def _gather(table, rows):
    total = np.uint64(0)
    for t in range(rows.size):
        if t + 4 < rows.size:
            prefetch_row(table, rows[t + 4])
        total += table[rows[t], 0]
    return total


@njit(cache=True)
def _gather_1d(values, rows):
    total = np.uint64(0)
    for t in range(rows.size):
        prefetch_row(values, rows[(t + 4) % rows.size])
        total += values[rows[t]]
    return total


def test_prefetch_changes_no_value():
    rng = np.random.default_rng(0)
    table = rng.integers(0, 1 << 40, size=(1000, 2)).astype(np.uint64)
    rows = rng.integers(0, 1000, size=5000)
    assert int(_gather(table, rows)) == int(table[rows, 0].sum())
    assert int(_gather_1d(table[:, 1].copy(), rows)) == int(table[rows, 1].sum())


def test_equal_hashed_keys_of_different_tokens_get_their_own_ids():
    """A hashed key may be shared: the vocabulary compares the text before it answers (keys
    forged equal here, as a 64-bit collision would make them)."""
    from bloomspan.engine.text.vocabulary import _resolve

    _, fold, expansions = normalization_tables()
    cps = code_points("CAFÉ thé café")
    starts, ends = np.array([0, 5, 9], dtype=np.int64), np.array([4, 8, 13], dtype=np.int64)
    keys = np.full(3, HASHED | 12345, dtype=np.uint64)
    v = Vocabulary()
    ids = np.zeros(3, dtype=np.uint32)
    t, status = _resolve(cps, starts, ends, keys, 0, 3, fold, expansions, True, v._pool, v._rec, v._table,
                         v._shift, v._state, ids)
    assert (t, status) == (3, 0)
    assert ids.tolist() == [0, 1, 0] and v.tokens() == ["café", "thé"]
    ids[:] = 7
    _resolve(cps, starts, ends, keys, 0, 3, fold, expansions, False, v._pool, v._rec, v._table, v._shift,
             v._state, ids)
    assert ids.tolist() == [0, 1, 0]
