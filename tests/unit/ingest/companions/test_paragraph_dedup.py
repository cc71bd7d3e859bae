"""Exact paragraph dedup: the reference's hand example, split rules, the set oracle at every
filter size, the "\\n\\n" join of partly duplicated documents, statistics and the spool's cleanup."""
from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from bloomspan.engine.sketches.bloom_filter import bloom_bits
from bloomspan.ingest.base.errors import FieldTypeError, IngestConfigError, InvalidDocumentError
from bloomspan.ingest.companions import paragraph_dedup as pd
from bloomspan.ingest.companions.paragraph_dedup import (
    PARAGRAPH_JOINER,
    STATS_KEYS,
    DedupConfig,
    DedupStats,
    ParagraphDeduper,
    dedup_documents,
    paragraph_hash,
    paragraph_spans,
    paragraphs,
    rebuild_text,
    sort_merge,
)

P1, P2, P3 = "The cat sat.", "The dog ran.", "A bird sang."


def run(docs, b=10.0, **kw):
    stats = DedupStats()
    out = list(dedup_documents(docs, "text", b, stats=stats, **kw))
    return out, stats


# ----------------------------------------------------------------------------- hand example


def test_hand_example_three_documents():
    a = {"id": "s:0", "text": f"{P1}\n\n{P2}"}
    b = {"id": "s:1", "text": f"{P2}\n\n{P3}"}
    c = {"id": "s:2", "text": P1}
    out, st = run([a, b, c])
    assert out == [a, {"id": "s:1", "text": P3}]
    assert st.as_dict() == {
        "documents_in": 3, "documents_out": 2, "documents_modified": 1, "documents_dropped": 1,
        "paragraphs": 5, "filter_bits": 400, "filter_hashes": 55, "candidates": 2,
        "false_positives": 0, "duplicate_paragraphs": 2,
    }


def test_paragraph_hash_is_sha256_of_utf8():
    assert paragraph_hash(P1).hex().startswith("84549cfa")
    assert paragraph_hash(P2).hex().startswith("0ea960d6")
    assert len(paragraph_hash("\ud800 lone surrogate")) == 32  # hashed, not an error


# ----------------------------------------------------------------------------- split rules


@pytest.mark.parametrize(
    "text, expected",
    [
        ("a\n\nb", ["a", "b"]),
        ("a\n \t \nb", ["a", "b"]),  # a blank line may hold spaces and tabs
        ("a\nb", ["a\nb"]),  # a single line break stays inside
        ("  a  \n\n\n\n  b\t", ["a", "b"]),  # stripped; runs of blank lines
        ("\n\n  \n", []),
        ("", []),
        ("a\r\n\r\nb\r\nc", ["a", "b\r\nc"]),  # CRLF line endings
        ("a\n\x0b\nb", ["a\n\x0b\nb"]),  # a vertical tab is not a space or tab: no boundary
        ("x\n\n\x0b\n\ny", ["x", "y"]),  # a piece that strips to nothing is skipped
        ("a\u00a0\n\nb", ["a", "b"]),  # str.strip removes the no-break space at the end
    ],
)
def test_paragraph_split_rules(text, expected):
    assert paragraphs(text) == expected
    for (s, e), p in zip(paragraph_spans(text), expected, strict=True):
        assert text[s:e] == p


def test_hand_example_with_a_tiny_filter_gives_the_same_output():
    # The reference: with B = 0.25 the filter has ceil(5 * 2) = 10 bits; a unique paragraph may
    # become a candidate, its confirm run has length 1, and it is kept.
    a = {"id": "s:0", "text": f"{P1}\n\n{P2}"}
    b = {"id": "s:1", "text": f"{P2}\n\n{P3}"}
    c = {"id": "s:2", "text": P1}
    out, st_ = run([a, b, c], 0.25)
    assert out == [a, {"id": "s:1", "text": P3}]
    assert st_.filter_bits == 10 and st_.duplicate_paragraphs == 2 and st_.documents_dropped == 1
    assert st_.candidates == 2 + st_.false_positives


def test_partly_duplicated_documents_are_joined_by_a_blank_line():
    # Original separators (a blank line holding spaces and tabs, runs of blank lines) and the
    # white space around paragraphs do not survive a rewrite: each paragraph stripped, "\n\n".
    first = {"text": "Shared footer."}
    doc = {"text": "\n  Intro line one\nline two  \n \t\nShared footer.\n\n\n\t Body. \n"}
    out, _ = run([first, doc])
    assert out == [first, {"text": "Intro line one\nline two\n\nBody."}]
    assert PARAGRAPH_JOINER == "\n\n"


def test_rebuild_joins_the_kept_stripped_paragraphs():
    text = "\n A\n\n  \nB\n\n\nC \n"
    spans = paragraph_spans(text)
    assert [text[s:e] for s, e in spans] == ["A", "B", "C"]
    assert rebuild_text(text, spans, [True, False, True]) == "A\n\nC"
    assert rebuild_text(text, spans, [False, True, True]) == "B\n\nC"
    assert rebuild_text(text, spans, [True, True, False]) == "A\n\nB"
    assert rebuild_text(text, spans, [False, False, False]) == ""


# ----------------------------------------------------------------------------- behaviour


def test_a_repeat_inside_one_document_is_removed():
    footer = "Share this article."
    doc = {"text": f"Intro.\n\n{footer}\n\nBody.\n\n{footer}"}
    out, st = run([doc])
    assert out == [{"text": f"Intro.\n\n{footer}\n\nBody."}]
    assert st.duplicate_paragraphs == 1 and st.documents_dropped == 0


def test_untouched_documents_keep_their_exact_text_and_meta():
    doc = {"id": 7, "text": "  Line one\r\nline two  \n \t\n\nSecond\t \n", "meta": {"tags": ("a", "b"), "n": 1.5}}
    other = {"id": 8, "text": "Second", "meta": None}
    out, _ = run([doc, other])
    assert out == [doc]  # `other` repeats "Second" only: dropped
    assert out[0]["text"] == doc["text"] and out[0]["meta"]["tags"] == ("a", "b")


def test_documents_without_the_field_pass_through():
    docs = [{"id": 1}, {"id": 2, "text": None}, {"id": 3, "text": ""}, {"id": 4, "text": " \n\n "}]
    out, st = run(docs)
    assert out == docs and st.paragraphs == 0 and st.documents_out == 4


def test_bad_documents_raise_with_their_position():
    with pytest.raises(FieldTypeError, match="#1") as e:
        run([{"text": "ok"}, {"_id": "x", "text": 5}])
    assert e.value.field == "text" and e.value.doc_id == "x"
    with pytest.raises(InvalidDocumentError, match="#0"):
        run(["not a dict"])


@pytest.mark.parametrize(
    "kw, field",
    [
        ({"field": ""}, "field"),
        ({"field": "t", "bloom_bytes_per_item": 0}, "bloom_bytes_per_item"),
        ({"field": "t", "bloom_bytes_per_item": float("nan")}, "bloom_bytes_per_item"),
        ({"field": "t", "expected_items": 0}, "expected_items"),
        ({"field": "t", "spool_dir": "/nonexistent/dir"}, "spool_dir"),
    ],
)
def test_config_errors_name_the_field(kw, field):
    with pytest.raises(IngestConfigError, match=field) as e:
        DedupConfig(**kw)
    assert e.value.field == field


def test_dedup_documents_validates_before_iteration():
    with pytest.raises(IngestConfigError):
        dedup_documents([], "text", -1)


# ----------------------------------------------------------------------------- oracle


def random_corpus(seed: int, n_docs: int = 60):
    rng = np.random.default_rng(seed)
    pool = [f"Shared paragraph {i}.\nWith a second line {i}." for i in range(12)]
    seps = ["\n\n", "\n \t\n", "\n\n\n", " \n\t\n  ", "\r\n\r\n"]
    docs = []
    for d in range(n_docs):
        paras = []
        for j in range(int(rng.integers(0, 7))):
            if rng.random() < 0.4:
                paras.append(pool[int(rng.integers(len(pool)))])
            else:
                paras.append(f"Unique {seed}-{d}-{j} {int(rng.integers(1 << 30))}")
        text = ""
        for j, p in enumerate(paras):
            text += (seps[int(rng.integers(len(seps)))] if j else rng.choice(["", "\n", "  "])) + p
        docs.append({"id": d, "text": text + rng.choice(["", "\n", " \n\n"])})
    return docs


def oracle(docs):
    """Set-based dedup: (expected docs as (id, surviving paragraphs, untouched), repeated digests)."""
    seen, counts, out = set(), {}, []
    for doc in docs:
        paras = paragraphs(doc["text"])
        keep = []
        for p in paras:
            counts[p] = counts.get(p, 0) + 1
            keep.append(p not in seen)
            seen.add(p)
        if paras and not any(keep):
            continue
        out.append((doc["id"], [p for p, k in zip(paras, keep, strict=True) if k], all(keep)))
    return out, sum(1 for c in counts.values() if c > 1)


@pytest.mark.parametrize("b", [0.1, 1.0, 10.0])
@pytest.mark.parametrize("seed", range(8))
def test_random_corpora_match_the_set_oracle(b, seed):
    docs = random_corpus(seed)
    out, st = run(docs, b)
    expected, repeated = oracle(docs)
    by_id = {d["id"]: d for d in docs}
    assert [d["id"] for d in out] == [e[0] for e in expected]
    for d, (doc_id, kept, untouched) in zip(out, expected, strict=True):
        assert paragraphs(d["text"]) == kept
        if untouched:
            assert d is not by_id[doc_id] and d == by_id[doc_id]
        else:
            assert d["text"] == "\n\n".join(kept)
    assert st.candidates == repeated + st.false_positives
    assert st.filter_bits == bloom_bits(st.paragraphs, b)


_PARAGRAPH = st.sampled_from(["Alpha.", "Beta beta.", "Gamma\nsecond line.", "  Delta  ", "\tEps."])
_SEPARATOR = st.sampled_from(["\n\n", "\n \t\n", "\n\n\n", "\r\n\r\n", " \n\t\n "])


@st.composite
def _documents(draw):
    docs = []
    for i in range(draw(st.integers(0, 12))):
        paras = draw(st.lists(_PARAGRAPH, max_size=5))
        seps = draw(st.lists(_SEPARATOR, min_size=len(paras), max_size=len(paras)))
        docs.append({"id": i, "text": "".join(s + p for s, p in zip(seps, paras, strict=True))})
    return docs


@settings(max_examples=150, deadline=None)
@given(docs=_documents(), b=st.sampled_from([0.05, 1.0, 10.0]))
def test_output_is_the_set_oracle_joined_in_input_order(docs, b):
    out, _ = run(docs, b)
    expected, _ = oracle(docs)
    assert [d["id"] for d in out] == [i for i, _, _ in expected]  # input order, dropped ones gone
    by_id = {d["id"]: d for d in docs}
    for d, (i, kept, untouched) in zip(out, expected, strict=True):
        assert d["text"] == (by_id[i]["text"] if untouched else "\n\n".join(kept))


def test_zero_false_drops_with_a_tiny_filter():
    docs = random_corpus(99, n_docs=150)
    out, st = run(docs, 0.01)  # m = ceil(0.08 N) bits, k = 1: most unique paragraphs are candidates
    expected, repeated = oracle(docs)
    assert st.false_positives > 50
    assert [(d["id"], paragraphs(d["text"])) for d in out] == [(i, kept) for i, kept, _ in expected]
    assert st.candidates == repeated + st.false_positives


def test_block_boundaries_do_not_shift_positions(monkeypatch):
    monkeypatch.setattr(pd, "_BLOCK", 7)  # screen and confirm read the digests 7 at a time
    docs = random_corpus(5)
    out, _ = run(docs, 1.0)
    monkeypatch.undo()
    assert out == run(docs, 1.0)[0]


def test_expected_items_sizes_the_filter():
    _, st = run(random_corpus(1), 2.0, expected_items=1000)
    assert st.filter_bits == 16_000 and st.filter_hashes == 11


def test_sort_merge_keeps_first_and_counts_singletons():
    d = lambda c: np.frombuffer(bytes([c]) * 32, dtype=np.uint8)  # noqa: E731
    digests = np.stack([d(9), d(1), d(9), d(5), d(1), d(9)])
    removed, fp = sort_merge(digests, np.array([0, 1, 2, 3, 4, 5]))
    assert removed.tolist() == [2, 4, 5] and fp == 1
    removed, fp = sort_merge(np.empty((0, 32), np.uint8), np.empty(0, np.int64))
    assert removed.size == 0 and fp == 0


# ----------------------------------------------------------------------------- stats and spool


def test_stats_name_every_key_also_for_empty_input():
    out, st = run([])
    assert out == []
    assert tuple(st.as_dict()) == STATS_KEYS
    assert all(v == 0 for k, v in st.as_dict().items() if k not in ("filter_bits", "filter_hashes"))
    assert st.filter_bits == bloom_bits(0, 10.0)  # sized for max(N, 1)


def test_deduper_object_exposes_stats():
    dd = ParagraphDeduper(DedupConfig("text", 1.0))
    out = list(dd.run([{"text": "x\n\nx"}]))
    assert out == [{"text": "x"}] and dd.stats.duplicate_paragraphs == 1


def test_the_spool_is_removed_after_a_full_read(tmp_path):
    list(dedup_documents(random_corpus(2), "text", 1.0, spool_dir=tmp_path))
    assert os.listdir(tmp_path) == []


def test_the_spool_is_removed_on_early_close(tmp_path):
    gen = dedup_documents(random_corpus(3), "text", 1.0, spool_dir=tmp_path)
    next(gen)
    assert len(os.listdir(tmp_path)) == 1  # the spool exists while the stage runs
    files = os.listdir(tmp_path / os.listdir(tmp_path)[0])
    assert sorted(files) == ["digests.bin", "docs.pickle"]
    gen.close()
    assert os.listdir(tmp_path) == []


def test_the_spool_is_removed_when_the_input_fails(tmp_path):
    def broken():
        yield {"text": "a"}
        raise RuntimeError("source failed")

    with pytest.raises(RuntimeError, match="source failed"):
        list(dedup_documents(broken(), "text", 1.0, spool_dir=tmp_path))
    assert os.listdir(tmp_path) == []


def test_nothing_is_spooled_before_the_first_next(tmp_path):
    gen = dedup_documents([{"text": "a"}], "text", 1.0, spool_dir=tmp_path)
    assert os.listdir(tmp_path) == []
    gen.close()
    assert os.listdir(tmp_path) == []
