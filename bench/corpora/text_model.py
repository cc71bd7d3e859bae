"""Natural-like running text from generated words: vocabulary, token sampler, renderer.

The content of the web corpus is not real language but has its statistical shape:

* **Vocabulary.** Pronounceable pseudo-words built from syllables (onset consonants +
  one vowel, optional final coda), Latin or Cyrillic. A word's index is its frequency
  rank; frequent ranks get short words (one syllable), the tail gets two and three.
  Words are distinct *by construction*: a word is the mixed-radix spelling of a distinct
  code, and every syllable ends in its only vowel, so the spelling decodes uniquely.
  About 0.5% of ranks are numerals ("17", "2021"); about 3% are proper nouns (always
  capitalised). All words are ``str.isalnum()`` runs, so each is exactly one token.
* **Token sampler** (numba kernel + Python twin). Each position draws a word from a
  Zipf-Mandelbrot law (``p(rank) ~ 1/(rank + 1 + shift)**exponent``), or, with
  probability ``p_colloc``, one of the ``n_succ`` fixed "collocates" of the previous word
  (a pseudo-random but fixed function of the previous word: repeated bigrams and
  trigrams as in real text), or, with probability ``p_topic``, one of the document's
  topic words (bursty repetition inside a document; half of them shared by the site).
* **Layout** (same kernel). Sentences of 3-40 words (mean about 17) ended by a hazard
  table; capitalised first word, commas, occasional dashes, colons and semicolons,
  "." "?" "!" ends; a paragraph ends after a sentence with probability 0.25 (blank line).

Calibration. With the defaults of :class:`TextModel` the content of the web corpus has
LZ78 phrases per token 0.44 at 100 k tokens, 0.39 at 476 k, 0.37 at 1 M and 0.34 at
5 M; real English prose (Gutenberg fiction, Norvig's big.txt) gives 0.42 at 100 k and
0.39 at 476 k; the article reports 0.27 for 3 G tokens of books (Part 5). c/n keeps falling with
size, so always compare equal sizes.
"""
from __future__ import annotations

import contextlib
import math
from bisect import bisect_right
from dataclasses import dataclass

import numpy as np
from numba import config as numba_config, njit

_MASK64 = (1 << 64) - 1

# --- syllable inventories -------------------------------------------------------------
# Onsets are consonant runs; index 0 is the empty onset (allowed in a word's first
# syllable only). Vowels are single letters. Every syllable therefore ends at its only
# vowel, which makes the concatenation uniquely decodable.
_LATIN = (
    ("", "b", "c", "d", "f", "g", "h", "j", "k", "l", "m", "n", "p", "r", "s", "t", "v",
     "w", "z", "br", "cr", "dr", "st", "tr", "pl", "gr", "sh", "ch", "th", "sp", "fl", "kr"),
    ("a", "e", "i", "o", "u"),
    ("", "n", "s", "r", "t", "l", "nd", "st", "m", "ck"),
)
_CYRILLIC = (
    ("", "б", "в", "г", "д", "ж", "з", "к", "л", "м", "н", "п", "р", "с", "т", "ф", "х",
     "ц", "ч", "ш", "ст", "пр", "кр", "тр", "зв", "сл", "бр", "гр", "дв", "ск", "пл", "вл"),
    ("а", "е", "и", "о", "у", "ы", "я", "ю"),
    ("", "н", "с", "т", "й", "к", "м", "л", "ть", "ск"),
)
INVENTORIES = {"en": _LATIN, "ru": _CYRILLIC}


@dataclass(frozen=True)
class Vocabulary:
    """Words of one language ordered by frequency rank.

    words:       object ndarray (V,) of str, lowercase surface forms; index = rank.
    capitalized: object ndarray (V,) of str, the form used at a sentence start (and
                 always, for proper nouns).
    proper:      bool ndarray (V,), True for proper nouns (always capitalised).
    cdf:         float64 ndarray (V,), cumulative Zipf probabilities, cdf[-1] == 1.0.
    """

    lang: str
    words: np.ndarray
    capitalized: np.ndarray
    proper: np.ndarray
    cdf: np.ndarray

    @property
    def size(self) -> int:
        return int(self.words.shape[0])


def _spell(codes: np.ndarray, n_syll: int, inventory) -> list[str]:
    """Spell codes (int64 (m,)) as words of ``n_syll`` syllables plus a coda."""
    onsets, vowels, codas = (np.asarray(x, dtype=object) for x in inventory)
    n_on, n_v, n_c = len(onsets), len(vowels), len(codas)
    c = codes.astype(np.int64).copy()
    coda = c % n_c
    c //= n_c
    parts = []
    for s in range(n_syll):
        v = c % n_v
        c //= n_v
        if s == 0:
            o = c % n_on
            c //= n_on
        else:  # no empty onset inside a word
            o = c % (n_on - 1) + 1
            c //= n_on - 1
        parts.append(onsets[o] + vowels[v])
    out = parts[0]
    for p in parts[1:]:
        out = out + p
    out = out + codas[coda]
    return out.tolist()


def _class_size(n_syll: int, inventory) -> int:
    n_on, n_v, n_c = (len(x) for x in inventory)
    return n_on * n_v * ((n_on - 1) * n_v) ** (n_syll - 1) * n_c


def build_vocabulary(lang: str, size: int, exponent: float, seed: int, shift: float = 1.0) -> Vocabulary:
    """Deterministic vocabulary of ``size`` distinct words for ``lang`` ("en" or "ru").

    Word probabilities follow Zipf-Mandelbrot: ``p(rank) ~ 1/(rank + 1 + shift)**exponent``
    (shift 1, exponent 1.1: the top word ~7%, the top 10 ~26%, the top 100 ~48% of
    running text, as in English).
    """
    if lang not in INVENTORIES:
        raise ValueError(f"lang={lang!r}: must be one of {sorted(INVENTORIES)}")
    if size < 100:
        raise ValueError(f"size={size}: must be >= 100 words")
    if not exponent > 0:
        raise ValueError(f"exponent={exponent}: must be > 0 (Zipf exponent, about 1.1)")
    inv = INVENTORIES[lang]
    rng = np.random.default_rng([seed, 0x70CAB, 0 if lang == "en" else 1])
    words: list[str] = []
    n_syll = 1
    while len(words) < size:
        total = _class_size(n_syll, inv)
        need = min(size - len(words), total)
        codes = rng.choice(total, size=need, replace=False) if need < total else rng.permutation(total)
        words.extend(_spell(codes, n_syll, inv))
        n_syll += 1
    arr = np.asarray(words, dtype=object)
    # Numerals at ~0.5% of ranks >= 20: distinct numbers, so still distinct tokens.
    num_ranks = np.flatnonzero(rng.random(size) < 0.005)
    num_ranks = num_ranks[num_ranks >= 20]
    numbers = rng.choice(np.arange(1, 3000), size=min(len(num_ranks), 2999), replace=False)
    for r, x in zip(num_ranks.tolist(), numbers.tolist()):
        arr[r] = str(x)
    proper = rng.random(size) < 0.03
    proper[:50] = False  # the most frequent words are function-like
    cap = np.asarray([w[:1].upper() + w[1:] for w in arr.tolist()], dtype=object)
    if shift < 0:
        raise ValueError(f"shift={shift}: must be >= 0")
    p = 1.0 / (np.arange(1, size + 1, dtype=np.float64) + shift) ** exponent
    cdf = np.cumsum(p)
    cdf /= cdf[-1]
    cdf[-1] = 1.0
    return Vocabulary(lang=lang, words=arr, capitalized=cap, proper=proper, cdf=cdf)


# --- token sampler and layout (numba kernel + Python twin) -----------------------------

#: Separator written after a word, by code. Codes >= SENTENCE_END end a sentence;
#: 8-10 also end a paragraph (blank line); 11-13 end the text.
SEPARATORS = (" ", ", ", " — ", ": ", "; ", ". ", "? ", "! ", ".\n\n", "?\n\n", "!\n\n", ".", "?", "!")
SENTENCE_END = 5
_SEP_STR = np.asarray(SEPARATORS, dtype=object)
_INNER_CUTS = (0.064, 0.069, 0.072, 0.075)   # cumulative: ", " " — " ": " "; "
_END_CUTS = (0.93, 0.97)                      # cumulative: "." "?" (rest "!")


def sentence_hazard(max_len: int = 40, shape: float = 2.2, scale: float = 6.5) -> np.ndarray:
    """Hazard of ending a sentence at its l-th word, float64 (max_len,).

    Sentence length is ``3 + floor(G)`` capped at ``max_len`` with G ~ Gamma(shape, scale)
    (mean about 17 words, long right tail); hazard[l-1] = P(L = l | L >= l).
    """
    # Integrate the gamma density on [0, max_len - 3] (200 steps per word) and normalise
    # by its full integral Gamma(shape) * scale**shape; the tail lands on max_len.
    x = np.linspace(0.0, max_len - 3.0, (max_len - 3) * 200 + 1)
    pdf = x ** (shape - 1.0) * np.exp(-x / scale) / (math.gamma(shape) * scale**shape)
    cdf = np.concatenate([[0.0], np.cumsum((pdf[1:] + pdf[:-1]) * 0.5 * (x[1] - x[0]))])
    pmf = np.zeros(max_len, dtype=np.float64)
    pmf[2:max_len - 1] = np.diff(cdf[::200])
    pmf[max_len - 1] = max(0.0, 1.0 - pmf.sum())
    surv = 1.0 - np.concatenate([[0.0], np.cumsum(pmf)[:-1]])
    haz = np.where(surv > 1e-12, pmf / np.maximum(surv, 1e-12), 1.0)
    haz[-1] = 1.0
    return haz


@njit(cache=True)
def _mix64(x):
    """splitmix64 finaliser over uint64 (wrapping arithmetic)."""
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


@njit(cache=True)
def text_kernel(cdf, u, topic, p_colloc, p_topic, n_succ, salt, hazard, p_par, ids, seps):
    """Sample words and punctuation of running text.

    cdf:    float64 (V,) cumulative word probabilities (rank order).
    u:      float64 (4, n) uniforms in [0, 1): rows = source, pick, punctuation, end.
    topic:  int64 (K,), K >= 1, the document's topic words.
    hazard: float64 (Lmax,) sentence-end hazard by sentence length (last entry 1.0).
    ids:    int64 (n,) out: word ranks.
    seps:   int8 (n,) out: separator codes (see SEPARATORS).

    Word i > 0 is a collocate of word i-1 if u[0,i] < p_colloc (one of ``n_succ`` words
    fixed by a hash of the previous word), a topic word if u[0,i] < p_colloc + p_topic,
    otherwise a Zipf draw. A word equal to its predecessor is redrawn once.
    """
    n = ids.shape[0]
    v = cdf.shape[0]
    k_top = topic.shape[0]
    l_max = hazard.shape[0]
    inv = 1.0 / 18446744073709551616.0
    run = 0
    for i in range(n):
        r = u[0, i]
        q = u[1, i]
        if i > 0 and r < p_colloc:
            j = min(int(q * n_succ), n_succ - 1)
            h = _mix64(np.uint64(ids[i - 1]) * np.uint64(n_succ) + np.uint64(j) + np.uint64(salt))
            t = np.searchsorted(cdf, float(h) * inv, side="right")
        elif r < p_colloc + p_topic:
            t = topic[min(int(q * k_top), k_top - 1)]
        else:
            t = np.searchsorted(cdf, q, side="right")
        if i > 0 and t == ids[i - 1]:
            f = q * 1024.0
            t = np.searchsorted(cdf, f - np.floor(f), side="right")
        if t >= v:
            t = v - 1
        ids[i] = t
        run += 1
        p = u[2, i]
        e = u[3, i]
        hz = hazard[min(run, l_max) - 1]
        if p < 0.93:
            kind = 0
        elif p < 0.97:
            kind = 1
        else:
            kind = 2
        if i == n - 1:
            seps[i] = 11 + kind
        elif e < hz:
            if e / hz < p_par:
                seps[i] = 8 + kind
            else:
                seps[i] = 5 + kind
            run = 0
        elif p < 0.064:
            seps[i] = 1
        elif p < 0.069:
            seps[i] = 2
        elif p < 0.072:
            seps[i] = 3
        elif p < 0.075:
            seps[i] = 4
        else:
            seps[i] = 0


def _mix64_py(x: int) -> int:
    x &= _MASK64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _MASK64
    return x ^ (x >> 31)


def text_reference(cdf, u, topic, p_colloc, p_topic, n_succ, salt, hazard, p_par):
    """Plain-Python twin of :func:`text_kernel`; returns (ids int64 (n,), seps int8 (n,))."""
    cdf_l = cdf.tolist()
    v = len(cdf_l)
    n = u.shape[1]
    ids: list[int] = []
    seps: list[int] = []
    run = 0
    for i in range(n):
        r, q, p, e = (float(x) for x in u[:, i])
        if i > 0 and r < p_colloc:
            j = min(int(q * n_succ), n_succ - 1)
            t = bisect_right(cdf_l, float(_mix64_py(ids[-1] * n_succ + j + salt)) / 2.0**64)
        elif r < p_colloc + p_topic:
            t = int(topic[min(int(q * len(topic)), len(topic) - 1)])
        else:
            t = bisect_right(cdf_l, q)
        if i > 0 and t == ids[-1]:
            f = q * 1024.0
            t = bisect_right(cdf_l, f - np.floor(f))
        ids.append(min(t, v - 1))
        run += 1
        hz = float(hazard[min(run, len(hazard)) - 1])
        kind = 0 if p < _END_CUTS[0] else (1 if p < _END_CUTS[1] else 2)
        if i == n - 1:
            code = 11 + kind
        elif e < hz:
            code = (8 if e / hz < p_par else 5) + kind
            run = 0
        else:
            code = next((c + 1 for c, cut in enumerate(_INNER_CUTS) if p < cut), 0)
        seps.append(code)
    return np.asarray(ids, dtype=np.int64), np.asarray(seps, dtype=np.int8)


@dataclass(frozen=True)
class TextModel:
    """Parameters of the content generator (defaults calibrated, see module docstring)."""

    vocab_size: int = 400_000
    exponent: float = 1.15
    shift: float = 1.0
    p_colloc: float = 0.5
    p_topic: float = 0.1
    n_succ: int = 4
    n_topic: int = 24
    p_paragraph: float = 0.25
    #: Seed of the "language" (vocabulary and collocations); the same for every corpus
    #: seed, as real crawls share one language.
    vocab_seed: int = 0

    def __post_init__(self) -> None:
        if not 0.0 <= self.p_colloc < 1.0:
            raise ValueError(f"p_colloc={self.p_colloc}: must be in [0, 1)")
        if not 0.0 <= self.p_topic < 1.0 - self.p_colloc:
            raise ValueError(f"p_topic={self.p_topic}: must be in [0, 1 - p_colloc)")
        if self.n_succ < 1 or self.n_topic < 2:
            raise ValueError(f"n_succ={self.n_succ}, n_topic={self.n_topic}: need n_succ >= 1, n_topic >= 2")
        if not 0.0 < self.p_paragraph <= 1.0:
            raise ValueError(f"p_paragraph={self.p_paragraph}: must be in (0, 1]")


_HAZARD = sentence_hazard()
_QUIET_OVERFLOW = (lambda: np.errstate(over="ignore")) if numba_config.DISABLE_JIT else contextlib.nullcontext


@dataclass(frozen=True)
class Body:
    """Running text before rendering.

    ids:  int64 (n,) word ranks.
    seps: int8 (n,) separator code after each word (see SEPARATORS).
    """

    ids: np.ndarray
    seps: np.ndarray


def sample_topic(vocab: Vocabulary, u: np.ndarray) -> np.ndarray:
    """Topic words from uniforms ``u`` (float64 (k,)): int64 (k,) Zipf ranks beyond rank 100."""
    lo = vocab.cdf[min(100, vocab.size - 1)]
    return np.minimum(np.searchsorted(vocab.cdf, lo + (1.0 - lo) * u, side="right"),
                      vocab.size - 1).astype(np.int64)


def sample_body(vocab: Vocabulary, model: TextModel, u: np.ndarray, topic: np.ndarray, salt: int) -> Body:
    """Running text from uniforms ``u`` (float64 (4, n)) about ``topic`` (int64 (K,))."""
    if u.ndim != 2 or u.shape[0] != 4:
        raise ValueError(f"u.shape={u.shape}: must be (4, n)")
    n = u.shape[1]
    ids = np.empty(n, dtype=np.int64)
    seps = np.empty(n, dtype=np.int8)
    # With NUMBA_DISABLE_JIT the hash runs on numpy scalars, whose (intended) uint64
    # wrap-around would warn; compiled, there is nothing to silence.
    with _QUIET_OVERFLOW():
        text_kernel(vocab.cdf, np.ascontiguousarray(u, dtype=np.float64),
                    np.ascontiguousarray(topic, dtype=np.int64), model.p_colloc, model.p_topic,
                    model.n_succ, salt, _HAZARD, model.p_paragraph, ids, seps)
    return Body(ids, seps)


def render(vocab: Vocabulary, body: Body) -> str:
    """The text of ``body``: words with separators, capitalised at sentence starts."""
    n = int(body.ids.shape[0])
    if n == 0:
        return ""
    ids = body.ids
    words = vocab.words[ids]
    up = vocab.proper[ids]
    up[0] = True
    up[1:] |= body.seps[:-1] >= SENTENCE_END
    words[up] = vocab.capitalized[ids[up]]
    inter = np.empty(2 * n, dtype=object)
    inter[0::2] = words
    inter[1::2] = _SEP_STR[body.seps]
    return "".join(inter.tolist())


def render_title(vocab: Vocabulary, ids: np.ndarray) -> str:
    """A title: words separated by spaces, the first capitalised, no final period."""
    if ids.shape[0] == 0:
        return ""
    words = vocab.words[ids]
    up = vocab.proper[ids]
    up[0] = True
    words[up] = vocab.capitalized[ids[up]]
    return " ".join(words.tolist())
