"""Slots (engine/text/slots.py): number tokens as one reserved id, in mining and in ingest matching."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from bloomspan.engine.templates.blocks import block_offsets_from_texts
from bloomspan.engine.templates.config import TemplateConfig
from bloomspan.engine.templates.detector import detect_templates
from bloomspan.engine.templates.phrase import TemplatePhrase
from bloomspan.engine.text.slots import (
    SLOT_ID,
    SLOT_TOKEN,
    apply_slots,
    apply_slots_reference,
    is_number_token,
    number_token_mask,
    slot_positions,
    slot_strings,
    vocabulary_number_mask,
)
from bloomspan.engine.text.tokenizer import encode_batch
from bloomspan.engine.text.vocabulary import UNKNOWN, Vocabulary
from bloomspan.ingest.match.template_matcher import TemplateMatcher


def test_number_tokens_are_ascii_digit_runs():
    assert [is_number_token(t) for t in ["2024", "0", "2nd", "v2", "½", "٣", "", "x"]] == \
        [True, True, False, False, False, False, False, False]
    assert number_token_mask(["a", "12", "b3"]).tolist() == [False, True, False]
    assert slot_strings(["showing", "1", "20", "of", "345"]) == ["showing", SLOT_TOKEN, SLOT_TOKEN, "of", SLOT_TOKEN]


def test_slot_id_is_reserved():
    assert SLOT_ID != UNKNOWN and SLOT_ID < 2**32
    assert not SLOT_TOKEN.isalnum()  # the tokenizer never produces it


@settings(derandomize=True, max_examples=80, deadline=None)
@given(st.lists(st.integers(0, 9), max_size=40), st.lists(st.booleans(), min_size=1, max_size=8))
def test_apply_slots_kernel_equals_reference(ids, mask):
    tokens = np.asarray(ids, dtype=np.uint32)
    is_number = np.asarray(mask, dtype=bool)
    got, n = apply_slots(tokens, is_number)
    ref, n_ref = apply_slots_reference(tokens, is_number)
    assert got.tolist() == ref.tolist() and n == n_ref
    assert got.dtype == np.uint32


def test_apply_slots_validates_input():
    with pytest.raises(ValueError, match="uint32"):
        apply_slots(np.array([1, 2], dtype=np.int64), np.array([True]))


def test_slot_positions():
    assert slot_positions((5, SLOT_ID, 7, SLOT_ID)) == (1, 3)
    with pytest.raises(ValueError, match="slots"):
        TemplatePhrase((5, SLOT_ID), 3, 3, slots=())


def footer_corpus():
    texts = []
    for d in range(12):
        texts.append(f"Notes on topic{d} of gardening\n"
                     f"Unique words word{d} here today\n"
                     f"© {2013 + d % 7} Acme Gardens. All rights reserved.")
    return texts


def mine(texts, slots: bool):
    vocab = Vocabulary()
    tokens, doc_offsets, starts, _ends = encode_batch(texts, vocab, with_offsets=True)
    bo = block_offsets_from_texts(texts, doc_offsets, starts)
    cfg = TemplateConfig(sigma_fraction=0.5, sigma_floor=5, block_min_length=5, run_min_length=99,
                         global_min_length=None, global_blocks=False, slots=slots, section_depth=0)
    det = detect_templates(tokens, doc_offsets, bo, cfg, [["acme"] * len(texts)], number_token_mask(vocab.tokens()))
    return det, vocab


def test_years_become_one_slotted_template():
    texts = footer_corpus()
    det, vocab = mine(texts, slots=True)
    footer = [p for p in det.phrases if p.slots]
    assert len(footer) == 1
    rec = footer[0].to_record(vocab.token)
    assert rec["tokens"] == [SLOT_TOKEN, "acme", "gardens", "all", "rights", "reserved"]
    assert rec["slots"] == [0] and rec["scope"] == "acme"
    # Without slots no single year repeats in 5 of the 12 pages.
    det_plain, _ = mine(texts, slots=False)
    assert not any(p.tokens[-1] == vocab.id_of("reserved") for p in det_plain.phrases)


def test_slotted_phrase_matches_any_year_at_ingest():
    det, vocab = mine(footer_corpus(), slots=True)
    records = [p.to_record(vocab.token) for p in det.phrases]
    matcher = TemplateMatcher(records, run_min_length=99, slots=True)
    text = "Another page\n© 2031 Acme Gardens. All rights reserved."
    m = matcher.find(text, "acme")
    found = [text[a:b] for a, b in zip(m.span_char_start, m.span_char_end)]
    assert found == ["2031 Acme Gardens. All rights reserved"]
    assert not matcher.find(text, "other-site").covered_tokens  # scoped to acme
    # "2031a" is not a number token, so the slot does not match it
    assert not matcher.find("© 2031a Acme Gardens. All rights reserved.", "acme").covered_tokens


def test_matcher_refuses_slotted_phrases_without_slots():
    det, vocab = mine(footer_corpus(), slots=True)
    records = [p.to_record(vocab.token) for p in det.phrases]
    with pytest.raises(ValueError, match="slots=True"):
        TemplateMatcher(records, slots=False)


_DIGITY = st.text(alphabet=st.sampled_from(list("0123456789ab½٣²۹\u0660 ")) | st.characters(), max_size=6)


@settings(derandomize=True, max_examples=200, deadline=None)
@given(st.lists(_DIGITY, max_size=30))
def test_number_token_mask_equals_is_number_token_per_token(tokens):
    assert number_token_mask(tokens).tolist() == [is_number_token(t) for t in tokens]
    assert number_token_mask(iter(tokens)).tolist() == [is_number_token(t) for t in tokens]


@settings(derandomize=True, max_examples=100, deadline=None)
@given(st.lists(_DIGITY.filter(bool), max_size=30, unique=True))
def test_vocabulary_number_mask_equals_number_token_mask_of_its_tokens(tokens):
    vocab = Vocabulary()
    vocab.ids_of(tokens, add_new=True)
    assert vocabulary_number_mask(vocab).tolist() == number_token_mask(vocab.tokens()).tolist()
