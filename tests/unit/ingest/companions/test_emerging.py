"""Emerging-boilerplate detector: shingle hashing, known-phrase coverage, the threshold
callback and its cooldown, bounded state, and the detection / false-trigger measurement."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

from bloomspan.ingest.base.errors import IngestConfigError
from bloomspan.ingest.companions.emerging import (
    EmergingConfig,
    EmergingDetector,
    known_shingles,
    measure_emerging,
    shingle_hashes,
    token_hash,
    zipf_words,
)

# small filter so that a test stream of ~100 short documents sweeps it several times
SMALL = dict(filter_bits=1 << 14, threshold=8)
TEMPLATE = (
    "This article was originally published by the Example Tribune and is republished "
    "here under a Creative Commons licence; subscribe to our newsletter for more stories"
)


class FakeClock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def filler(rng: np.random.Generator, n: int = 30) -> str:
    return " ".join(zipf_words(rng, n, 5000, 1.1))


def with_template(rng: np.random.Generator) -> str:
    return filler(rng, 15) + ". " + TEMPLATE + ". " + filler(rng, 15)


# ----------------------------------------------------------------------------- hashing


def test_shingle_hashes_are_positional_and_stable():
    toks = ["a", "b", "c", "d"]
    h = shingle_hashes(toks, 3)
    assert h.dtype == np.uint64 and h.shape == (2,)
    assert h[0] != h[1]
    assert shingle_hashes(["b", "c", "d"], 3)[0] == h[1]  # depends only on the k tokens
    assert shingle_hashes(["c", "b", "a"], 3)[0] != h[0]  # order matters
    assert shingle_hashes(["a", "b"], 3).shape == (0,)
    assert token_hash("share") == int.from_bytes(__import__("hashlib").blake2b(b"share", digest_size=8).digest(), "little")


@dataclass
class Record:  # the shape of ingest.phrase_set.PhraseRecord: lowercased token strings
    tokens: tuple[str, ...]


def test_known_shingles_from_records_sequences_and_texts():
    k = 3
    rec = Record(("share", "this", "article", "now"))
    from_rec = known_shingles([rec], k)
    assert from_rec == known_shingles([["share", "this", "article", "now"]], k)
    assert from_rec == known_shingles(["Share this ARTICLE, now!"], k)
    assert from_rec == {int(h) for h in shingle_hashes(list(rec.tokens), k)}
    assert known_shingles([("too", "short")], k) == set()


# ----------------------------------------------------------------------------- detection


def test_a_new_template_is_detected_with_an_example_and_tokens():
    rng = np.random.default_rng(0)
    fired: list[list] = []
    det = EmergingDetector(EmergingConfig(**SMALL), on_threshold=fired.append, clock=FakeClock())
    for _ in range(40):
        assert det.observe(filler(rng)) == []
    seen_at = None
    for i in range(30):
        det.observe(with_template(rng) if i % 2 == 0 else filler(rng))
        if fired and seen_at is None:
            seen_at = i
    assert seen_at is not None and seen_at <= 16  # within 8 template documents
    assert len(fired) == 1  # cooldown: the clock did not move
    emerging = det.emerging()
    assert len(emerging) >= 8
    template_text = TEMPLATE.split()
    for e in emerging:
        assert len(e.tokens) == 8
        assert e.example in TEMPLATE  # the original text, case and punctuation kept
        assert " ".join(e.tokens) in " ".join(w.strip(";,").lower() for w in template_text)
    m = det.metrics()
    assert m["emerging_tracked"] == len(emerging) and m["callbacks_fired"] == 1
    assert m["documents"] == 70 and m["filter_bytes"] == (1 << 14) // 8
    assert m["filter_fill_ratio"] == pytest.approx(0.5)


def test_known_phrases_are_not_reported():
    rng = np.random.default_rng(1)
    known = known_shingles([TEMPLATE], 8)
    det = EmergingDetector(EmergingConfig(**SMALL), known=known)
    for i in range(60):
        det.observe(with_template(rng) if i % 2 else filler(rng))
    assert det.counters.known_hits > 0
    assert det.emerging() == []
    # a callable works the same way
    det2 = EmergingDetector(EmergingConfig(**SMALL), known=lambda h: h in known)
    det2.observe_many(with_template(rng) for _ in range(10))
    assert det2.emerging() == [] and det2.counters.known_hits > 0


def test_set_known_drops_covered_shingles():
    rng = np.random.default_rng(2)
    det = EmergingDetector(EmergingConfig(**SMALL))
    det.observe_many(with_template(rng) for _ in range(10))
    n = det.emerging_count
    assert n > 0
    assert det.set_known(np.array(sorted(known_shingles([TEMPLATE], 8)), dtype=np.uint64)) == n
    assert det.emerging_count == 0
    det.observe(with_template(rng))
    assert det.emerging_count == 0 and det.counters.known_hits > 0


def test_callback_fires_once_per_cooldown():
    rng = np.random.default_rng(3)
    clock = FakeClock()
    calls: list[int] = []
    det = EmergingDetector(EmergingConfig(**SMALL, cooldown_seconds=60), on_threshold=lambda e: calls.append(len(e)), clock=clock)
    det.observe_many(with_template(rng) for _ in range(10))
    assert len(calls) == 1 and calls[0] >= 8
    clock.t = 59.0
    det.observe(with_template(rng))
    assert len(calls) == 1
    clock.t = 60.0
    det.observe(filler(rng))  # still above the threshold: fires again after the cooldown
    assert len(calls) == 2
    det.acknowledge()
    clock.t = 1000.0
    det.observe(filler(rng))
    assert len(calls) == 2 and det.emerging_count == 0


def test_a_failing_callback_is_counted_not_raised():
    rng = np.random.default_rng(4)

    def boom(_):
        raise RuntimeError("listener down")

    det = EmergingDetector(EmergingConfig(**SMALL, cooldown_seconds=0), on_threshold=boom)
    det.observe_many(with_template(rng) for _ in range(10))
    assert det.counters.callback_errors >= 1
    assert det.counters.callback_errors == det.counters.callbacks_fired


def test_tracked_shingles_are_bounded():
    rng = np.random.default_rng(5)
    det = EmergingDetector(EmergingConfig(filter_bits=1 << 14, threshold=2, max_tracked=3))
    det.observe_many(with_template(rng) for _ in range(10))
    assert det.emerging_count == 3
    assert det.counters.emerging_untracked > 0
    assert det.counters.emerging_reported == 3


def test_short_documents_are_counted_but_put_nothing():
    det = EmergingDetector(EmergingConfig(**SMALL))
    assert det.observe("too short to shingle") == []
    assert det.observe("") == []
    assert det.counters.documents == 2 and det.counters.shingles == 0 and det.filter.bits_set == 0


@pytest.mark.parametrize(
    "kw, field",
    [
        ({"shingle_tokens": 1}, "shingle_tokens"),
        ({"threshold": 0}, "threshold"),
        ({"threshold": 10, "max_tracked": 5}, "threshold"),
        ({"cooldown_seconds": -1}, "cooldown_seconds"),
        ({"filter_bits": 10}, "filter_bits"),
        ({"bits_per_shingle": 0}, "bits_per_shingle"),
        ({"slice_bits": 100}, "slice_bits"),
        ({"max_fill": 2.0}, "max_fill"),
    ],
)
def test_config_errors_name_the_field(kw, field):
    with pytest.raises(IngestConfigError, match=field) as e:
        EmergingConfig(**kw)
    assert e.value.field == field


def test_known_must_be_a_supported_type():
    with pytest.raises(IngestConfigError, match="known"):
        EmergingDetector(EmergingConfig(**SMALL), known=42)


# ----------------------------------------------------------------------------- measurement


def test_measurement_detects_template_and_zipf_content_does_not_trigger():
    m = measure_emerging(
        EmergingConfig(**SMALL), n_docs=100, template_start=50, template_rate=0.5, doc_tokens=(20, 40), seed=0
    )
    # measured (seeds 0-3): delay 5-11 documents, 5 template sightings; 0 false triggers
    assert m.detection_delay_docs is not None and 0 <= m.detection_delay_docs <= 20
    assert m.template_sightings <= 8  # 64 bits / 8 per sighting
    assert m.first_report_delay_docs <= m.detection_delay_docs
    assert m.false_triggers == 0 and m.false_trigger_rate == 0.0 and m.false_emerging == 0
    assert m.filter_bytes == (1 << 14) // 8  # fixed memory


def test_measurement_reports_false_triggers_when_content_really_repeats():
    # negative control: with a 2-word vocabulary the common 8-grams are frequent, so the
    # "ordinary" stream must trigger; the measurement is able to fail
    m = measure_emerging(
        EmergingConfig(**SMALL), n_docs=40, template_start=20, doc_tokens=(20, 30), vocab_size=2, exponent=1.0
    )
    assert m.false_triggers > 0 and m.false_emerging >= 8
