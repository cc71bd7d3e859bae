"""Emerging boilerplate: frequent new shingles in the ingest stream, found in fixed memory.

Every document the ingest hook sees is tokenized (:mod:`bloomspan.engine.text.tokenizer`)
and cut into k-token *shingles* (k = ``shingle_tokens`` consecutive tokens). Each distinct
shingle of a document is put, one slice, into an
:class:`~bloomspan.engine.sketches.forgetful_bloom.IncrementalForgetfulBloom`. A shingle that becomes
*full* (all its bits set) recurs faster than the sweeper forgets: it is frequent in the
recent stream. If the current phrase set does not already cover it, it is reported as
*emerging* with an example of the original text.

Hashes: a token's hash is the first 8 bytes (little-endian) of ``blake2b(token UTF-8)``;
a shingle's hash chains SplitMix64 over its token hashes in order, so it is the same in
every process. :func:`known_shingles` derives the covered set from phrases (records with a
``tokens`` attribute, token sequences, or texts): every k-shingle of every phrase of at
least k tokens. Phrases shorter than k cover nothing.

Memory is fixed: the filter (``filter_bits / 8`` bytes), at most ``max_tracked`` emerging
shingles, and an LRU cache of 65,536 token hashes.

When the number of tracked emerging shingles reaches ``threshold``, ``on_threshold`` is
called with them, at most once per ``cooldown_seconds`` (by ``clock``); after re-mining,
:meth:`EmergingDetector.set_known` drops the ones the new phrase set covers.

:func:`measure_emerging` measures detection delay and false triggers on synthetic Zipfian
streams.
"""
from __future__ import annotations

import dataclasses
import functools
import hashlib
import logging
import math
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from bloomspan.engine.mining.config import ConfigError
from bloomspan.engine.sketches.forgetful_bloom import ForgetfulBloomConfig, IncrementalForgetfulBloom, splitmix64
from bloomspan.engine.text.tokenizer import token_spans, tokenize

from ..base.errors import IngestConfigError

log = logging.getLogger(__name__)

_SHINGLE_SEED = np.uint64(0x5EED_B100_5A9A_0001)


# --------------------------------------------------------------------------- hashing


@functools.lru_cache(maxsize=1 << 16)
def token_hash(token: str) -> int:
    """64-bit hash of one token string (blake2b, first 8 bytes little-endian)."""
    return int.from_bytes(hashlib.blake2b(token.encode("utf-8", "surrogatepass"), digest_size=8).digest(), "little")


def shingle_hashes(tokens: Sequence[str], k: int) -> np.ndarray:
    """uint64 (max(0, T - k + 1),): hash of each run of ``k`` consecutive tokens, in order."""
    n = len(tokens) - k + 1
    if n <= 0:
        return np.empty(0, dtype=np.uint64)
    th = np.fromiter((token_hash(t) for t in tokens), dtype=np.uint64, count=len(tokens))
    h = np.full(n, _SHINGLE_SEED, dtype=np.uint64)
    for j in range(k):
        h = splitmix64(h ^ th[j: j + n])
    return h


def known_shingles(phrases: Iterable[Any], k: int) -> set[int]:
    """Shingle hashes covered by ``phrases``: objects with ``.tokens``, token sequences, or texts."""
    out: set[int] = set()
    for p in phrases:
        toks = getattr(p, "tokens", p)
        if isinstance(toks, str):
            toks = tokenize(toks)
        out.update(int(h) for h in shingle_hashes(list(toks), k))
    return out


# --------------------------------------------------------------------------- config & results


@dataclass(frozen=True)
class EmergingConfig:
    """Detector settings.

    ``shingle_tokens``: k; ``filter_bits``: forgetful filter size (memory = bits / 8);
    ``bits_per_shingle``: K bits per shingle; ``slice_bits``: bits set per sighting, so a
    shingle needs about ``K / slice_bits`` sightings within one sweep to become full;
    ``max_fill``: fill ratio the sweeper holds; ``threshold``: emerging shingles that fire
    the callback; ``cooldown_seconds``: least time between two callbacks; ``max_tracked``:
    most emerging shingles kept; ``example_chars``: longest example text kept.
    """

    shingle_tokens: int = 8
    filter_bits: int = 1 << 22
    bits_per_shingle: int = 64
    slice_bits: int = 8
    max_fill: float = 0.5
    threshold: int = 16
    cooldown_seconds: float = 600.0
    max_tracked: int = 4096
    example_chars: int = 300

    def __post_init__(self) -> None:
        def pos_int(name: str, lo: int, fix: str) -> None:
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < lo:
                raise IngestConfigError(name, v, fix)

        pos_int("shingle_tokens", 2, "must be an integer >= 2 (8 keeps ordinary word runs from looking frequent)")
        pos_int("threshold", 1, "must be an integer >= 1")
        pos_int("max_tracked", 1, "must be an integer >= 1")
        pos_int("example_chars", 1, "must be an integer >= 1")
        if self.threshold > self.max_tracked:
            raise IngestConfigError("threshold", self.threshold, f"must be <= max_tracked={self.max_tracked}")
        c = self.cooldown_seconds
        if isinstance(c, bool) or not isinstance(c, (int, float)) or not math.isfinite(c) or c < 0:
            raise IngestConfigError("cooldown_seconds", c, "must be a finite number >= 0")
        try:
            self.filter_config()
        except ConfigError as e:
            name = {"num_bits": "filter_bits", "bits_per_element": "bits_per_shingle"}.get(e.field, e.field)
            raise IngestConfigError(name, e.value, str(e).split(": ", 1)[1]) from None

    def filter_config(self) -> ForgetfulBloomConfig:
        return ForgetfulBloomConfig(self.filter_bits, self.bits_per_shingle, self.slice_bits, self.max_fill)


@dataclass
class EmergingShingle:
    """A frequent shingle no known phrase covers.

    ``hash``: shingle hash; ``tokens``: its k tokens; ``example``: the original text it was
    cut from (at most ``example_chars``); ``first_document``: detector document number
    (1-based) when it became full; ``hits``: documents in which it was seen full.
    """

    hash: int
    tokens: tuple[str, ...]
    example: str
    first_document: int
    hits: int = 1


@dataclass
class EmergingCounters:
    """Monotonic counters for metrics."""

    documents: int = 0
    shingles: int = 0  # shingle puts (distinct shingles per document)
    full_hits: int = 0  # puts after which the shingle was full
    known_hits: int = 0  # full hits covered by the known phrases
    emerging_reported: int = 0  # distinct emerging shingles reported
    emerging_untracked: int = 0  # emerging shingles not kept: max_tracked reached
    callbacks_fired: int = 0
    callback_errors: int = 0


# --------------------------------------------------------------------------- detector


KnownSpec = Callable[[int], bool] | set | frozenset | np.ndarray | None


class EmergingDetector:
    """Watches documents for frequent shingles the known phrases do not cover (thread-safe).

    ``known``: a callable ``hash -> bool``, a set of shingle hashes (see :func:`known_shingles`),
    a uint64 array of them, or None. ``on_threshold(emerging: list[EmergingShingle])`` is
    called outside the lock; its exceptions are logged and counted, never raised.
    """

    def __init__(
        self,
        config: EmergingConfig | None = None,
        known: KnownSpec = None,
        on_threshold: Callable[[list[EmergingShingle]], None] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.config = config or EmergingConfig()
        self.filter = IncrementalForgetfulBloom(self.config.filter_config())
        self.counters = EmergingCounters()
        self.on_threshold = on_threshold
        self._clock = clock
        self._lock = threading.Lock()
        self._tracked: dict[int, EmergingShingle] = {}
        self._last_fired: float | None = None
        self._known: Callable[[int], bool] = _known_predicate(known)

    # -- phrase set -----------------------------------------------------------
    def set_known(self, known: KnownSpec) -> int:
        """Replace the known shingles; drop tracked ones now covered. Returns how many were dropped."""
        pred = _known_predicate(known)
        with self._lock:
            self._known = pred
            covered = [h for h in self._tracked if pred(h)]
            for h in covered:
                del self._tracked[h]
        return len(covered)

    # -- stream ---------------------------------------------------------------
    def observe(self, text: str) -> list[EmergingShingle]:
        """Feed one document's text; returns the shingles that became emerging with it."""
        k = self.config.shingle_tokens
        tokens = tokenize(text)
        spans = None  # character offsets, computed only when a shingle is reported
        hashes = shingle_hashes(tokens, k)
        # one sighting per document: distinct shingles in order of first occurrence
        uniq, first = np.unique(hashes, return_index=True)
        order = np.argsort(first, kind="stable")
        hashes, first = uniq[order], first[order]
        fire: list[EmergingShingle] | None = None
        new: list[EmergingShingle] = []
        with self._lock:
            c = self.counters
            c.documents += 1
            c.shingles += int(hashes.shape[0])
            full = self.filter.put_and_check(hashes) if hashes.shape[0] else np.zeros(0, dtype=bool)
            for j in np.flatnonzero(full):
                h = int(hashes[j])
                c.full_hits += 1
                tracked = self._tracked.get(h)
                if tracked is not None:
                    tracked.hits += 1
                elif self._known(h):
                    c.known_hits += 1
                elif len(self._tracked) >= self.config.max_tracked:
                    c.emerging_untracked += 1
                else:
                    p = int(first[j])
                    if spans is None:
                        spans = token_spans(text)
                    example = text[int(spans[1][p]): int(spans[2][p + k - 1])][: self.config.example_chars]
                    e = EmergingShingle(h, tuple(tokens[p: p + k]), example, c.documents)
                    self._tracked[h] = e
                    new.append(e)
                    c.emerging_reported += 1
            if self.on_threshold is not None and len(self._tracked) >= self.config.threshold:
                now = self._clock()
                if self._last_fired is None or now - self._last_fired >= self.config.cooldown_seconds:
                    self._last_fired = now
                    c.callbacks_fired += 1
                    fire = list(self._tracked.values())
        if fire is not None:
            try:
                self.on_threshold(fire)
            except Exception:  # the ingest path must not fail because of a listener
                with self._lock:
                    self.counters.callback_errors += 1
                log.exception("emerging-boilerplate callback failed")
        return new

    def observe_many(self, texts: Iterable[str]) -> list[EmergingShingle]:
        out: list[EmergingShingle] = []
        for t in texts:
            out.extend(self.observe(t))
        return out

    # -- state ------------------------------------------------------------------
    def emerging(self) -> list[EmergingShingle]:
        """Tracked emerging shingles, oldest first."""
        with self._lock:
            return sorted(self._tracked.values(), key=lambda e: (e.first_document, e.hash))

    def acknowledge(self, hashes: Iterable[int] | None = None) -> None:
        """Stop tracking the given shingles (all when None); they may be reported again."""
        with self._lock:
            if hashes is None:
                self._tracked.clear()
            else:
                for h in hashes:
                    self._tracked.pop(int(h), None)

    @property
    def emerging_count(self) -> int:
        return len(self._tracked)

    @property
    def fill_ratio(self) -> float:
        return self.filter.fill_ratio

    def metrics(self) -> dict[str, float]:
        """Counters plus gauges (``emerging_tracked``, ``filter_fill_ratio``, ``filter_bytes``)."""
        with self._lock:
            d: dict[str, float] = dict(self.counters.__dict__)
            d["emerging_tracked"] = len(self._tracked)
        d["filter_fill_ratio"] = self.filter.fill_ratio
        d["filter_bytes"] = self.filter.nbytes
        return d


def _known_predicate(known: KnownSpec) -> Callable[[int], bool]:
    if known is None:
        return lambda h: False
    if isinstance(known, np.ndarray):
        known = {int(h) for h in known.astype(np.uint64).reshape(-1)}
    if isinstance(known, (set, frozenset)):
        frozen = frozenset(int(h) for h in known)
        return frozen.__contains__
    if callable(known):
        return lambda h: bool(known(h))
    raise IngestConfigError(
        "known", type(known).__name__, "must be None, a set or uint64 array of shingle hashes, or a callable hash -> bool"
    )


# --------------------------------------------------------------------------- measurement


def zipf_words(rng: np.random.Generator, n: int, vocab_size: int, exponent: float) -> list[str]:
    """``n`` words ``"w<rank>"`` drawn from a Zipf law over ranks 1..vocab_size."""
    ranks = np.arange(1, vocab_size + 1, dtype=np.float64)
    p = ranks ** -exponent
    p /= p.sum()
    return [f"w{r}" for r in rng.choice(vocab_size, size=n, p=p) + 1]


@dataclass
class EmergingMeasurement:
    """Result of :func:`measure_emerging`.

    ``detection_delay_docs``: documents from the template's start to the first callback
    (None: never); ``first_report_delay_docs``: to the first emerging template shingle;
    ``template_sightings``: template documents up to and including the one that fired the
    callback (all of them when it never fired);
    ``false_triggers`` / ``false_trigger_rate``: callbacks (cooldown 0) on the
    template-free stream, per document; ``false_emerging``: emerging shingles there;
    ``filter_bytes``: detector memory for the filter.
    """

    detection_delay_docs: int | None
    first_report_delay_docs: int | None
    template_sightings: int
    false_triggers: int
    false_trigger_rate: float
    false_emerging: int
    documents: int
    filter_bytes: int
    extra: dict[str, Any] = field(default_factory=dict)


def measure_emerging(
    config: EmergingConfig,
    *,
    n_docs: int = 600,
    template_start: int = 300,
    template_rate: float = 0.5,
    template_tokens: int = 40,
    doc_tokens: tuple[int, int] = (40, 80),
    vocab_size: int = 5000,
    exponent: float = 1.1,
    seed: int = 0,
) -> EmergingMeasurement:
    """Run two synthetic streams of ``n_docs`` Zipfian documents through fresh detectors.

    Stream 1 has no template: every callback (cooldown forced to 0, so each document at or
    above the threshold counts) is a false trigger. Stream 2 is the same documents, but from
    document ``template_start`` on each document contains, with probability
    ``template_rate``, a fixed run of ``template_tokens`` Zipfian words at a random place.
    """
    rng = np.random.default_rng(seed)
    template = zipf_words(rng, template_tokens, vocab_size, exponent)
    docs: list[list[str]] = []
    has_template: list[bool] = []
    for d in range(n_docs):
        words = zipf_words(rng, int(rng.integers(doc_tokens[0], doc_tokens[1] + 1)), vocab_size, exponent)
        docs.append(words)
        has_template.append(d >= template_start and bool(rng.random() < template_rate))
    slots = [int(rng.integers(0, len(w) + 1)) for w in docs]
    cfg = dataclasses.replace(config, cooldown_seconds=0.0)

    fires: list[int] = []
    base = EmergingDetector(cfg, on_threshold=lambda e: fires.append(base.counters.documents))
    for words in docs:
        base.observe(" ".join(words))

    t_fires: list[int] = []
    det = EmergingDetector(cfg, on_threshold=lambda e: t_fires.append(det.counters.documents))
    template_set = set(int(h) for h in shingle_hashes(template, cfg.shingle_tokens))
    first_report: int | None = None
    sightings = 0
    for d, words in enumerate(docs):
        if has_template[d]:
            words = words[: slots[d]] + template + words[slots[d]:]
        if not t_fires:
            sightings += has_template[d]
        new = det.observe(" ".join(words))
        if first_report is None and any(e.hash in template_set for e in new):
            first_report = d
    detection = t_fires[0] - 1 - template_start if t_fires else None
    return EmergingMeasurement(
        detection_delay_docs=detection,
        first_report_delay_docs=None if first_report is None else first_report - template_start,
        template_sightings=sightings,
        false_triggers=len(fires),
        false_trigger_rate=len(fires) / n_docs,
        false_emerging=base.counters.emerging_reported,
        documents=n_docs,
        filter_bytes=base.filter.nbytes,
        extra={"base_full_hits": base.counters.full_hits, "template_fill_ratio": det.fill_ratio},
    )
