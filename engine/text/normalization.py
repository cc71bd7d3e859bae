"""Unicode normalisation of tokens: NFKC, then full case folding, offsets into the original.

A token's text is taken from ``casefold(NFKC(text))``, so "Настройки" typed in NFD (и +
COMBINING BREVE), full-width "ＡＢＣ", the ligature "ﬁ" and "①" give the same tokens as
"настройки", "abc", "fi" and "1". The cleaner cuts spans out of the *original* text, so
offsets must survive normalisation; they do because normalisation is applied segment by
segment:

* A **segment** starts at every character whose compatibility decomposition begins with a
  character of canonical combining class 0 that is not the second half of a canonical
  composition (:func:`is_segment_starter`), and runs up to the next such character.
  Nothing composes or reorders across that boundary, so ``NFKC(a + b) == NFKC(a) +
  NFKC(b)`` when ``b`` starts a segment (a property test checks it) and case folding is
  per character: the normalised text is the concatenation of the normalised segments.
* A **token character** of the normalised text is a letter or digit (``str.isalnum``), or a
  combining mark (category M*) that follows a token character; tokens are maximal runs of
  them. A token's span in the original text runs from the start of the segment that gave
  its first character to the end of the segment that gave its last, so ``text[start:end]``
  is what the cleaner removes. (One segment can give two tokens, "½" -> "1⁄2"; both then
  have the segment's span.)

:func:`normalization_tables` turns this into per-code-point tables for the numba kernel of
:meth:`bloomspan.engine.text.vocabulary.Vocabulary.encode_documents`: a segment of one code
point ``c`` normalises to the fixed string ``m(c)``; the kernel handles such segments from
the tables and hands every other stretch (a multi-character segment, a mapping that mixes
token and separator characters) back to the plain reference, between two boundaries where
the reference may start and stop.
"""
from __future__ import annotations

import functools
import logging
import os
import unicodedata
from collections.abc import Callable
from pathlib import Path

import numpy as np

log = logging.getLogger(__name__)

N_CODE_POINTS = 0x110000

# Classes of a code point c in the table of normalization_tables(), for a segment made of c
# alone (CLASS_NON_STARTER: c never starts a segment).
CLASS_SEPARATOR = 0    # m(c) holds no token character in any context
CLASS_TOKEN = 1        # m(c) is a letter or digit followed by letters, digits or marks
CLASS_MARK = 2         # m(c) is only marks: token characters after a token character, else none
CLASS_HARD = 3         # anything else: left to the reference (e.g. "½" -> "1⁄2")
CLASS_NON_STARTER = 4  # c continues the segment before it (a combining mark, a Hangul vowel jamo)

# fold[c] is the one code point of m(c), or EXPANSION | i: expansions[i] is len(m(c)) and
# expansions[i+1 : i+1+len] its code points ("ﬁ" -> "fi", "ß" -> "ss", "İ" -> "i̇").
EXPANSION = 0x80000000

TABLES_FORMAT = 1
# Hangul vowel (V) and trailing (T) jamo compose with the syllable before them by rule,
# not through the decomposition table.
_HANGUL_TRAILERS = (range(0x1161, 0x1176), range(0x11A8, 0x11C3))


def normalize(text: str) -> str:
    """NFKC, then full case folding: the text tokens are taken from."""
    return unicodedata.normalize("NFKC", text).casefold()


@functools.cache
def composition_trailers() -> frozenset[int]:
    """Code points that are the second half of a canonical composition (they may fuse with
    the character before them, so a segment never starts at one)."""
    trailers = {c for r in _HANGUL_TRAILERS for c in r}
    for c in range(N_CODE_POINTS):
        d = unicodedata.decomposition(chr(c))
        if not d or d.startswith("<"):
            continue
        parts = d.split()
        if len(parts) == 2 and unicodedata.normalize("NFC", chr(int(parts[0], 16)) + chr(int(parts[1], 16))) == chr(c):
            trailers.add(int(parts[1], 16))
    return frozenset(trailers)


@functools.lru_cache(maxsize=65536)
def is_segment_starter(ch: str) -> bool:
    """Whether a segment starts at ``ch`` (see the module docstring)."""
    first = unicodedata.normalize("NFKD", ch)[0]
    return unicodedata.combining(first) == 0 and ord(first) not in composition_trailers()


def is_mark(ch: str) -> bool:
    return unicodedata.category(ch)[0] == "M"


def normalized_token_spans(text: str) -> tuple[list[str], list[int], list[int]]:
    """Tokens of ``casefold(NFKC(text))`` with spans in ``text``: the definition, one
    character at a time (``tokenizer.token_spans`` takes shortcuts where they are exact)."""
    starts = [i for i, ch in enumerate(text) if i == 0 or is_segment_starter(ch)]
    bounds = starts + [len(text)]
    tokens: list[str] = []
    tok_starts: list[int] = []
    tok_ends: list[int] = []
    current: list[str] = []
    for k in range(len(starts)):
        a, b = bounds[k], bounds[k + 1]
        for ch in normalize(text[a:b]):
            if ch.isalnum() or (current and is_mark(ch)):
                if not current:
                    tok_starts.append(a)
                current.append(ch)
                end = b
            elif current:
                tokens.append("".join(current))
                tok_ends.append(end)
                current = []
    if current:
        tokens.append("".join(current))
        tok_ends.append(end)
    return tokens, tok_starts, tok_ends


def _classify(m: str) -> int:
    """Class of a one-code-point segment that normalises to ``m``."""
    if not any(ch.isalnum() for ch in m) and not is_mark(m[0]):
        return CLASS_SEPARATOR
    if m[0].isalnum() and all(ch.isalnum() or is_mark(ch) for ch in m):
        return CLASS_TOKEN
    if all(is_mark(ch) for ch in m):
        return CLASS_MARK
    return CLASS_HARD


def _code_points(s: str) -> np.ndarray:
    return np.frombuffer(s.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)


def build_normalization_tables() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The tables of :func:`normalization_tables`, computed from ``unicodedata`` (~2 s)."""
    everything = "".join(map(chr, range(1, N_CODE_POINTS)))
    # "\x00" starts a segment and maps to itself: one normalize call for all code points.
    mapped = ["\x00"] + normalize("\x00".join(everything)).split("\x00")
    decomposed = ["\x00"] + unicodedata.normalize("NFKD", "\x00".join(everything)).split("\x00")
    if len(mapped) != N_CODE_POINTS or len(decomposed) != N_CODE_POINTS:
        raise RuntimeError("normalising all code points joined by NUL did not keep them apart")
    everything = "\x00" + everything
    alnum = np.fromiter(map(str.isalnum, everything), dtype=bool, count=N_CODE_POINTS)
    mark = np.fromiter((unicodedata.category(ch)[0] == "M" for ch in everything), dtype=bool,
                       count=N_CODE_POINTS)
    first = _code_points("".join(m[0] for m in mapped))
    char_class = np.where(alnum[first], CLASS_TOKEN,
                          np.where(mark[first], CLASS_MARK, CLASS_SEPARATOR)).astype(np.uint8)
    fold = first.astype(np.uint32)
    expansions: list[int] = []
    lengths = np.fromiter(map(len, mapped), dtype=np.int64, count=N_CODE_POINTS)
    for c in np.flatnonzero(lengths > 1).tolist():
        m = mapped[c]
        char_class[c] = _classify(m)
        if char_class[c] in (CLASS_TOKEN, CLASS_MARK):
            fold[c] = EXPANSION | len(expansions)
            expansions.append(len(m))
            expansions.extend(map(ord, m))
    trailers = np.zeros(N_CODE_POINTS, dtype=bool)
    trailers[list(composition_trailers())] = True
    combining = np.fromiter(map(unicodedata.combining, (d[0] for d in decomposed)), dtype=np.int64,
                            count=N_CODE_POINTS)
    first_decomposed = _code_points("".join(d[0] for d in decomposed))
    starter = (combining == 0) & ~trailers[first_decomposed]
    char_class[~starter] = CLASS_NON_STARTER
    return char_class, fold, np.asarray(expansions if expansions else [0], dtype=np.uint32)


def _cache_file(stem: str) -> Path:
    base = os.environ.get("NUMBA_CACHE_DIR")
    folder = Path(base) if base else Path(__file__).resolve().parent / "__pycache__"
    return folder / f"{stem}-u{unicodedata.unidata_version}-v{TABLES_FORMAT}.npz"


def _cached_tables(stem: str, names: tuple[str, ...], per_code_point: int,
                   build: Callable[[], tuple[np.ndarray, ...]]) -> tuple[np.ndarray, ...]:
    """The arrays ``names`` read from ``stem``'s cache file (the first ``per_code_point`` of them
    one entry per code point), else ``build()`` and saved there; read-only."""
    path = _cache_file(stem)
    tables = None
    try:
        with np.load(path) as f:
            tables = tuple(f[name] for name in names)
        if any(t.shape != (N_CODE_POINTS,) for t in tables[:per_code_point]):
            tables = None
    except (OSError, KeyError, ValueError):
        tables = None
    if tables is None:
        tables = build()
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp.npz")
            np.savez(tmp, **dict(zip(names, tables)))
            os.replace(tmp, path)
        except OSError as exc:  # a read-only package folder: rebuild in every process
            log.debug("%s not cached at %s: %s", stem, path, exc)
    for t in tables:
        t.flags.writeable = False
    return tables


@functools.cache
def normalization_tables() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-code-point tables of the tokenizer kernel, read-only.

    Returns ``(char_class, fold, expansions)``:
      char_class: uint8 (0x110000,)  CLASS_* of a segment made of that code point alone
      fold:       uint32 (0x110000,) its normalised code point, or EXPANSION | index
      expansions: uint32 (E,)        length-prefixed normalised strings
    Built from ``unicodedata`` once (~2 s) and cached next to the numba kernels
    (``NUMBA_CACHE_DIR`` when set), keyed by the Unicode version of this Python.
    """
    return _cached_tables("normalization-tables", ("char_class", "fold", "expansions"), 2,
                          build_normalization_tables)


def build_character_flags() -> tuple[np.ndarray, np.ndarray]:
    """The flags of :func:`character_flags`, computed from ``unicodedata`` (~0.3 s)."""
    everything = "".join(map(chr, range(N_CODE_POINTS)))
    alnum = np.fromiter(map(str.isalnum, everything), dtype=bool, count=N_CODE_POINTS)
    mark = np.fromiter(map(is_mark, everything), dtype=bool, count=N_CODE_POINTS)
    return alnum, mark


@functools.cache
def character_flags() -> tuple[np.ndarray, np.ndarray]:
    """``(alnum, mark)``: bool (0x110000,) each, read-only, ``str.isalnum`` and :func:`is_mark`
    of every code point; cached on disk beside :func:`normalization_tables` (a process that
    tokenizes non-ASCII text needs them, and computing them costs ~0.3 CPU s)."""
    return _cached_tables("character-flags", ("alnum", "mark"), 2, build_character_flags)
