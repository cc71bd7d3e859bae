"""Token keys: a 64-bit key per normalised token, computed on the way through its code points.

The tokenizer kernel (:func:`scan_documents`) finds each token and computes its key on the
way, with no load from the vocabulary: a code point whose fold is one code point of the
packed alphabet ("A", "a", "Ж") gives its digit by one read of a small table
(:func:`direct_codes`); a token with any other code point gets its key from its folds
(:func:`_key_of_folds`); a document made only of letters and separators of one code point is
scanned a byte per code point, then eight code points to a 64-bit word, with no branch per code
point (:func:`simple_document`, :mod:`.words64`). The vocabulary then maps keys to ids, once per
token but with no load that depends on another
(:meth:`bloomspan.engine.text.vocabulary.Vocabulary.encode_documents`).
A key is

* **packed** (the fast path) when the token is at most :data:`PACKED_MAX_LENGTH` code points
  of :data:`PACKED_ALPHABET` (ASCII digits and letters, the Cyrillic lowercase letters): the
  7-bit digits ``1 + PACKED_ALPHABET.index(ch)`` of its code points, first one lowest, below
  2**63. Two tokens have the same packed key only if they are the same token, so the
  vocabulary looks such a token up by its key alone, with no second load to compare its text.
* **hashed** otherwise: ``HASHED | FNV-1a-64`` of its code points (the top bit set, so a
  hashed key never equals a packed one). Equal hashed keys may belong to different
  tokens, so the vocabulary compares the text of a hashed token whose key it finds.

:func:`token_key` is the plain reference of the kernels' key.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .normalization import CLASS_MARK, CLASS_NON_STARTER, CLASS_SEPARATOR, CLASS_TOKEN, EXPANSION
from .words64 import bit_length, byte_mask, bytes_at, low7_bytes, low_bytes, lowest_bit, packed7, zero_bytes

PACKED_ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyz" + "".join(map(chr, range(0x430, 0x450))) + "\u0451"
PACKED_BITS = 7  # bits per code point of a packed key: len(PACKED_ALPHABET) < 2**7
PACKED_MAX_LENGTH = 9  # 9 * 7 = 63 bits
HASHED = 1 << 63
LOW_DIGIT = (1 << PACKED_BITS) - 1
if len(PACKED_ALPHABET) >= 1 << PACKED_BITS or PACKED_BITS * PACKED_MAX_LENGTH > 63:  # pragma: no cover
    raise ImportError("packed keys must stay below 2**63")
_PACKED_CODES = np.zeros(max(map(ord, PACKED_ALPHABET)) + 1, dtype=np.uint8)
_PACKED_CODES[[ord(ch) for ch in PACKED_ALPHABET]] = np.arange(1, len(PACKED_ALPHABET) + 1, dtype=np.uint8)
_PACKED_CODES.flags.writeable = False
_PACKED_CHARS = np.array([0] + [ord(ch) for ch in PACKED_ALPHABET], dtype=np.uint32)  # digit -> code point
_PACKED_CHARS.flags.writeable = False
_FNV64_OFFSET = 0xCBF29CE484222325
_FNV64_PRIME = 0x100000001B3
_MASK64 = (1 << 64) - 1
STATUS_DONE, STATUS_HARD = 0, 2


def token_key(token: str) -> int:
    """The key of a normalised token (see the module docstring), as a Python int."""
    if 0 < len(token) <= PACKED_MAX_LENGTH and all(ch in PACKED_ALPHABET for ch in token):
        packed = 0
        for j, ch in enumerate(token):
            packed |= (PACKED_ALPHABET.index(ch) + 1) << (PACKED_BITS * j)
        return packed
    h = _FNV64_OFFSET
    for ch in token:
        h = ((h ^ ord(ch)) * _FNV64_PRIME) & _MASK64
    return HASHED | h


@njit(cache=True, nogil=True, inline="always")
def packed_code(f):
    """The packed digit of code point f: 1 + its index in PACKED_ALPHABET, else 0 (uint64)."""
    if f < _PACKED_CODES.size:
        return np.uint64(_PACKED_CODES[f])
    return np.uint64(0)


@njit(cache=True, nogil=True, inline="always")
def _digit_at(code, j):
    """The packed digit ``code`` moved to the place of a token's code point j (any shift below
    64 past PACKED_MAX_LENGTH: such a token is hashed, its packed bits unused)."""
    return code << np.uint64(PACKED_BITS * min(j, PACKED_MAX_LENGTH - 1))


@njit(cache=True, nogil=True, inline="always")
def packed_length(key):
    """Code points of the token of a packed key (its digits are not 0: the highest one ends it)."""
    return (bit_length(key) + PACKED_BITS - 1) // PACKED_BITS


@njit(cache=True, nogil=True, inline="always")
def unpack_into(key, m, out, p):
    """Write the m code points of the token of a packed key to out[p:p+m]: a packed key is
    its token, so a new token's text needs no read of the text it came from."""
    for j in range(m):
        out[p + j] = _PACKED_CHARS[(key >> np.uint64(PACKED_BITS * j)) & np.uint64(LOW_DIGIT)]


@njit(cache=True, nogil=True, inline="always")
def _fnv(h, f):
    return (h ^ np.uint64(f)) * np.uint64(_FNV64_PRIME)


@njit(cache=True, nogil=True, inline="always")
def key_of(buf, a, m):
    """The key of the token buf[a:a+m] (code points), as uint64."""
    packed = np.uint64(0)
    packable = m > 0 and m <= PACKED_MAX_LENGTH
    for i in range(a, a + m):
        code = packed_code(buf[i])
        packable &= code != 0
        packed |= _digit_at(code, i - a)
    if packable:
        return packed
    h = np.uint64(_FNV64_OFFSET)
    for i in range(a, a + m):
        h = _fnv(h, buf[i])
    return h | np.uint64(HASHED)


@njit(cache=True, nogil=True, inline="always")
def _key_of_folds(cps, s, e, fold, expansions):
    """The key of the normalised text of the token at cps[s:e] (see :func:`fold_into`)."""
    packed = np.uint64(0)
    packable = True
    m = np.int64(0)
    h = np.uint64(_FNV64_OFFSET)
    for i in range(s, e):
        f = fold[cps[i]]
        if f < EXPANSION:
            code = packed_code(f)
            packable &= code != 0
            packed |= _digit_at(code, m)
            h = _fnv(h, f)
            m += 1
        else:
            x = f - EXPANSION
            for q in range(expansions[x]):
                g = expansions[x + 1 + q]
                code = packed_code(g)
                packable &= code != 0
                packed |= _digit_at(code, m + q)
                h = _fnv(h, g)
            m += expansions[x]
    if packable and m <= PACKED_MAX_LENGTH:
        return packed
    return h | np.uint64(HASHED)


def direct_codes(fold: np.ndarray) -> np.ndarray:
    """uint8 (len(_PACKED_CODES),): for a code point c below it, the packed digit of its fold
    when that fold is one code point of PACKED_ALPHABET ("A" and "a" give the digit of "a"),
    else 0. ``fold`` is normalization_tables()[1]."""
    head = np.asarray(fold[:_PACKED_CODES.size], dtype=np.int64)
    single = head < EXPANSION
    codes = np.zeros(_PACKED_CODES.size, dtype=np.uint8)
    inside = single & (head < _PACKED_CODES.size)
    codes[inside] = _PACKED_CODES[head[inside]]
    return codes


@njit(cache=True, nogil=True, inline="always")
def _single(cps, i, e_doc, char_class):
    """Whether the segment starting at cps[i] is that one code point."""
    return i + 1 >= e_doc or char_class[cps[i + 1]] != CLASS_NON_STARTER


@njit(cache=True, nogil=True, inline="always")
def _pure_separator(cps, i, e_doc, char_class):
    return char_class[cps[i]] == CLASS_SEPARATOR and _single(cps, i, e_doc, char_class)


# lead_codes() values beside a packed digit (1..len(PACKED_ALPHABET)): a token character whose
# fold is not one code point of the packed alphabet ("é", "ß", "中"), a separator, and "\n" (a
# separator that starts a line), each when it is a segment of its own; 0: none of these.
LEAD_LETTER = 0x7F  # all ones in a packed digit (PACKED_BITS): no digit of PACKED_ALPHABET is
LEAD_SEPARATOR = 0x80
LEAD_NEWLINE = 0x81
if LEAD_LETTER != (1 << PACKED_BITS) - 1 or len(PACKED_ALPHABET) >= LEAD_LETTER:  # pragma: no cover
    raise ImportError("LEAD_LETTER must be the all-ones digit, above every packed digit")
LEAD_SIZE = 0x10000  # the BMP: every code point of a uint8 or uint16 batch


def lead_codes(char_class: np.ndarray, fold: np.ndarray) -> np.ndarray:
    """uint8 (LEAD_SIZE,): what :func:`simple_document` learns from one read for a code point
    c of the BMP: its :func:`direct_codes` digit (1..69) when c is a token character whose
    fold is one code point of the packed alphabet (ASCII, Cyrillic), :data:`LEAD_LETTER` for
    any other token character, :data:`LEAD_NEWLINE` for "\\n", :data:`LEAD_SEPARATOR` for any
    other separator, else 0 (a mark, a non-starter, a character the tables cannot decide: the
    document is not simple). A letter is a value in 1..0x7F, a separator one with the high bit
    set. ``char_class`` and ``fold`` are normalization_tables()[:2]."""
    head = char_class[:LEAD_SIZE]
    lead = np.zeros(LEAD_SIZE, dtype=np.uint8)
    codes = direct_codes(fold)
    lead[head == CLASS_TOKEN] = LEAD_LETTER
    lead[:codes.size] = np.where((head[:codes.size] == CLASS_TOKEN) & (codes != 0), codes, lead[:codes.size])
    lead[head == CLASS_SEPARATOR] = LEAD_SEPARATOR
    lead[10] = LEAD_NEWLINE
    return lead


_scan_tables_memo: tuple = ()


def scan_tables(char_class: np.ndarray, fold: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(direct_codes(fold), lead_codes(char_class, fold))``, kept for the tables asked for
    last (normalization_tables() is one pair of arrays per process): a small batch does not
    pay for the 64 KB lead table again."""
    global _scan_tables_memo
    memo = _scan_tables_memo
    if memo and memo[0] is char_class and memo[1] is fold:
        return memo[2], memo[3]
    direct, lead = direct_codes(fold), lead_codes(char_class, fold)
    direct.flags.writeable = lead.flags.writeable = False
    _scan_tables_memo = (char_class, fold, direct, lead)
    return direct, lead


# Longest document simple_document() takes (its scratch grows with the longest document of a batch).
SIMPLE_MAX_CHARS = 1 << 16
_LEAD_LETTERS = LEAD_LETTER * 0x0101010101010101  # LEAD_LETTER in every byte
_LEAD_NEWLINES = LEAD_NEWLINE * 0x0101010101010101


def simple_scratch_words(longest: int) -> int:
    """Words of the scratch of :func:`simple_document` for documents of up to ``longest`` code
    points (:func:`_scratch_words` of at most SIMPLE_MAX_CHARS)."""
    return int(_scratch_words(min(longest, SIMPLE_MAX_CHARS)))


def simple_scratch(longest: int) -> np.ndarray:
    """uint64 scratch of :func:`simple_document` for documents of up to ``longest`` code points."""
    return np.empty(simple_scratch_words(longest), dtype=np.uint64)


@njit(cache=True, nogil=True, inline="always")
def _blocks(n):
    """64-code-point blocks of a document of n code points, at least one past its end: its
    last token ends inside them."""
    return n // 64 + 1


@njit(cache=True, nogil=True, inline="always")
def _scratch_words(n):
    # The bytes of the blocks and one word more (bytes_at reads the next word), then a letter
    # mask and a newline mask per block.
    return 10 * _blocks(n) + 1


@njit(cache=True, nogil=True)
def simple_document(cps, a, b, w, nl, lead, fold, expansions, scratch, out_keys, out_starts, out_ends, out_lines):
    """The tokens of the document cps[a:b] when every code point of it is a token character
    or a separator on its own (:func:`lead_codes` not 0), without a branch per code point.

    Every such code point is a segment of its own (no non-starter follows any), so the tokens
    are the maximal runs of letters and a token's key packs their digits (or, with a letter
    outside the packed alphabet or longer than PACKED_MAX_LENGTH, hashes their folds). Three
    passes over ``scratch`` (uint64 (>= :func:`_scratch_words` (b - a),)):

    1. the lead code of every code point, one byte each (separators after the end);
    2. eight bytes to a word: per 64-code-point block a mask of its letters and one of its
       "\\n"s (and whether a byte is 0: not simple, nothing written);
    3. the starts (a letter after a separator) and ends of the runs, lowest bit first: each
       start with its line flag (a "\\n" since the last start), each end with its token's
       key, read as the word of the token's bytes (:func:`.words64.bytes_at`).

    Writes from output token w, as :func:`scan_documents` writes them, with nl as it enters
    the document. Returns (w, nl, simple): simple False (nothing written, w and nl as given)
    when a code point of the document needs the tables.
    """
    n = b - a
    blocks = _blocks(n)
    code_bytes = scratch.view(np.uint8)
    for i in range(a, b):
        c = cps[i]
        code_bytes[i - a] = lead[c] if c < LEAD_SIZE else np.uint8(0)
    for k in range(n, 8 * (8 * blocks + 1)):
        code_bytes[k] = LEAD_SEPARATOR
    letters = scratch[8 * blocks + 1:9 * blocks + 1]
    newlines = scratch[9 * blocks + 1:10 * blocks + 1]
    other = np.uint64(0)
    for blk in range(blocks):
        lm = np.uint64(0)
        nm = np.uint64(0)
        for j in range(8):
            x = scratch[8 * blk + j]
            other |= zero_bytes(x)
            lm |= byte_mask(low7_bytes(x)) << np.uint64(8 * j)
            nm |= byte_mask(zero_bytes(x ^ np.uint64(_LEAD_NEWLINES))) << np.uint64(8 * j)
        letters[blk] = lm
        newlines[blk] = nm
    if other:
        return w, nl, False
    carry = np.uint64(0)  # whether the code point before the block is a letter
    pending = nl != 0  # a "\n" since the last token start
    ends_at = w
    for blk in range(blocks):
        lm = letters[blk]
        nm = newlines[blk]
        before = (lm << np.uint64(1)) | carry
        carry = lm >> np.uint64(63)
        base = a + 64 * blk
        starts = lm & ~before
        while starts:
            p = lowest_bit(starts)
            below = (np.uint64(1) << np.uint64(p)) - np.uint64(1)
            out_lines[w] = pending | ((nm & below) != 0)
            nm &= ~below
            pending = False
            out_starts[w] = base + p
            w += 1
            starts &= starts - np.uint64(1)
        pending |= nm != 0
        ends = ~lm & before
        while ends:
            e = base + lowest_bit(ends)
            s = out_starts[ends_at]
            out_ends[ends_at] = e
            # Written out here: the same lines as an inline="always" helper with a return per
            # branch made the whole pass ~60 % slower (19 against 12 ns/token, web crawl).
            m = e - s
            k = s - a
            x = low_bytes(bytes_at(scratch, k), m)  # the first 8 digits, first lowest
            ninth = np.uint64(code_bytes[k + PACKED_MAX_LENGTH - 1]) & (np.uint64(0) - np.uint64(m == PACKED_MAX_LENGTH))
            other_letter = (zero_bytes(x ^ np.uint64(_LEAD_LETTERS)) != 0) | (ninth == LEAD_LETTER)
            if m <= PACKED_MAX_LENGTH and not other_letter:
                out_keys[ends_at] = packed7(x) | (ninth << np.uint64(PACKED_BITS * (PACKED_MAX_LENGTH - 1)))
            else:
                out_keys[ends_at] = _key_of_folds(cps, s, e, fold, expansions)
            ends_at += 1
            ends &= ends - np.uint64(1)
    return w, np.int64(pending), True


@njit(cache=True, nogil=True)
def scan_documents(cps, doc_begin, doc_end, d, i, w, nl, char_class, fold, expansions, direct_code, lead,
                   scratch, out_keys, out_starts, out_ends, out_lines, doc_token_end):
    """Find, normalise and key the tokens of documents; resumable; no vocabulary.

    cps uint8, uint16 or uint32 (C,) code points of the joined batch; document d is
    cps[doc_begin[d]:doc_end[d]] (int64 (D,) each). Starts at document d, code point i
    (a segment start), output token w, with nl = 1 when a "\\n" lies between the last
    token's start and i (or i starts a document's first token). char_class uint8, fold
    uint32 (0x110000,) and expansions uint32 are normalization.normalization_tables(),
    direct_code uint8 is :func:`direct_codes` of fold and lead uint8 :func:`lead_codes`: a
    document of at most pos.size - 2 code points, all of them letters and separators of
    one code point (no combining sequence, nothing beyond the BMP), goes through :func:`simple_document` with pos,
    pos_keys and pos_lines its scratch (int64, uint64, uint8 (P,)), the others through the
    loop below. Writes out_keys uint64 (the key of each token's normalised text), out_starts/out_ends
    int64, out_lines uint8 (W,) (spans in cps coordinates) and doc_token_end int64 (D,)
    (tokens in documents 0..d). A token here is a run of one-code-point segments, so its
    normalised text is the concatenation of their folds (:func:`fold_into`).
    Returns (d, s, e, w, nl, status): status STATUS_DONE, or STATUS_HARD: cps[s:e] needs
    the reference tokenizer (s and e are segment starts after no token character; resume
    at e); nothing from s on is written.
    """
    n_docs = doc_begin.size
    while d < n_docs:
        e_doc = doc_end[d]
        if i == doc_begin[d] and _scratch_words(e_doc - i) <= scratch.size:
            w, nl, simple = simple_document(cps, i, e_doc, w, nl, lead, fold, expansions, scratch, out_keys,
                                            out_starts, out_ends, out_lines)
            if simple:
                i = e_doc
        while i < e_doc:
            c = cps[i]
            k = char_class[c]
            if k == CLASS_SEPARATOR or k == CLASS_MARK:  # a mark here follows no token
                if c == 10:
                    nl = 1
                i += 1
                continue
            if k != CLASS_TOKEN:
                # A character the tables cannot decide, or a non-starter: the segment it
                # continues starts at the character before it (a separator or a mark, else
                # the token before would have stopped at it).
                s = i - 1 if k == CLASS_NON_STARTER and i > doc_begin[d] else i
                e = s + 1
                while e < e_doc and not _pure_separator(cps, e, e_doc, char_class):
                    e += 1
                return d, s, e, w, nl, STATUS_HARD
            s = i
            packed = np.uint64(0)
            direct = True
            while True:
                # The fast path: a code point whose fold is one code point of the packed
                # alphabet (ASCII, Cyrillic) adds its digit; any other makes the key come
                # from the folds (_key_of_folds).
                code = np.uint64(direct_code[c]) if c < direct_code.size else np.uint64(0)
                direct &= code != 0
                packed |= _digit_at(code, i - s)
                i += 1
                if i >= e_doc:
                    break
                c = cps[i]
                k = char_class[c]
                if k != CLASS_TOKEN and k != CLASS_MARK:
                    break
            # Every character of the token is a segment of its own unless a non-starter follows.
            if i < e_doc and not _pure_separator(cps, i, e_doc, char_class):
                # The token runs into a stretch the tables cannot decide: hand it all over.
                e = i + 1
                while e < e_doc and not _pure_separator(cps, e, e_doc, char_class):
                    e += 1
                return d, s, e, w, nl, STATUS_HARD
            if direct and i - s <= PACKED_MAX_LENGTH:
                out_keys[w] = packed
            else:
                out_keys[w] = _key_of_folds(cps, s, i, fold, expansions)
            out_starts[w] = s
            out_ends[w] = i
            out_lines[w] = nl
            nl = 0
            w += 1
        doc_token_end[d] = w
        d += 1
        nl = 1
        if d < n_docs:
            i = doc_begin[d]
    return d, i, i, w, nl, STATUS_DONE


@njit(cache=True, nogil=True, inline="always")
def folded_length(cps, s, e, fold, expansions):
    """Code points of the normalised text of a token of :func:`scan_documents` at cps[s:e]."""
    m = np.int64(0)
    for i in range(s, e):
        f = fold[cps[i]]
        m += 1 if f < EXPANSION else np.int64(expansions[f - EXPANSION])
    return m


@njit(cache=True, nogil=True, inline="always")
def fold_into(cps, s, e, fold, expansions, out, p):
    """Write the normalised text of the token at cps[s:e] to out[p:]; returns its end."""
    for i in range(s, e):
        f = fold[cps[i]]
        if f < EXPANSION:
            out[p] = f
            p += 1
        else:
            x = f - EXPANSION
            for q in range(expansions[x]):
                out[p] = expansions[x + 1 + q]
                p += 1
    return p


@njit(cache=True, nogil=True, inline="always")
def folds_to(cps, s, e, fold, expansions, buf, a, m):
    """Whether the normalised text of the token at cps[s:e] is buf[a:a+m]."""
    p = a
    end = a + m
    for i in range(s, e):
        f = fold[cps[i]]
        if f < EXPANSION:
            if p >= end or buf[p] != f:
                return False
            p += 1
        else:
            x = f - EXPANSION
            for q in range(expansions[x]):
                if p >= end or buf[p] != expansions[x + 1 + q]:
                    return False
                p += 1
    return p == end
