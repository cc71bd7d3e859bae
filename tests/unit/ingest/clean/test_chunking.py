"""RAG chunking: size/overlap bounds, coverage, preferred boundaries."""
from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from bloomspan.ingest.base.errors import IngestConfigError
from bloomspan.ingest.clean.chunking import chunk_text, validate_chunking

_pieces = st.sampled_from(["word", "Слово", "a", "longerword", "x" * 30, ".", "!", "?", ",", " ", "  ", "\n", "\n\n", "\t"])


@settings(derandomize=True, max_examples=200, deadline=None)
@given(st.lists(_pieces, max_size=80).map("".join), st.integers(1, 60), st.data())
def test_chunk_invariants(text, size, data):
    overlap = data.draw(st.integers(0, size - 1))
    chunks = chunk_text(text, size, overlap)
    covered = [False] * len(text)
    for c in chunks:
        assert c.text == text[c.start:c.end]
        assert 1 <= c.end - c.start <= size
        assert not c.text[0].isspace() and not c.text[-1].isspace()
        for i in range(c.start, c.end):
            covered[i] = True
    assert all(covered[i] or text[i].isspace() for i in range(len(text)))
    for a, b in zip(chunks, chunks[1:]):
        assert a.start < b.start and a.end < b.end
        assert b.start >= a.end - overlap  # at most `overlap` characters shared
        if overlap == 0:  # disjoint, only whitespace (or nothing, after a hard cut) between
            assert text[a.end:b.start].strip() == "" and a.end <= b.start


def test_empty_and_whitespace_text_have_no_chunks():
    assert chunk_text("", 10) == []
    assert chunk_text(" \n\n\t ", 10) == []


def test_short_text_is_one_chunk_without_outer_whitespace():
    [c] = chunk_text("  hello world \n", 100)
    assert (c.start, c.end, c.text) == (2, 13, "hello world")


def test_prefers_paragraph_then_sentence_then_word_boundaries():
    para = "First sentence here. Second one.\n\nNext paragraph goes on and on."
    assert [c.text for c in chunk_text(para, 45)] == [
        "First sentence here. Second one.", "Next paragraph goes on and on."]  # fmt: skip
    sent = "First sentence here. Second one goes on. Third"
    assert chunk_text(sent, 44)[0].text == "First sentence here. Second one goes on."
    words = "alpha beta gamma delta epsilon"
    assert chunk_text(words, 20)[0].text == "alpha beta gamma"
    # No boundary in the window: a hard cut at exactly `size` characters.
    assert [c.text for c in chunk_text("abcdefghij", 4)] == ["abcd", "efgh", "ij"]


def test_closing_quote_after_sentence_end_stays_in_the_chunk():
    text = 'He said "stop." Then the other person left the room quietly'
    assert chunk_text(text, 30)[0].text == 'He said "stop."'


def test_overlap_starts_at_a_word():
    text = "one two three four five six seven eight nine ten"
    chunks = chunk_text(text, 20, 8)
    for c in chunks[1:]:
        assert c.start == 0 or text[c.start - 1].isspace()
    assert chunks[0].text == "one two three four"
    assert chunks[1].text.startswith("four")


@pytest.mark.parametrize("size, overlap, field", [(0, 0, "chunk_size"), (True, 0, "chunk_size"), (10, 10, "chunk_overlap"),
                                                  (10, -1, "chunk_overlap"), (None, 3, "chunk_overlap")])  # fmt: skip
def test_validation_names_the_field(size, overlap, field):
    with pytest.raises(IngestConfigError) as ei:
        validate_chunking(size, overlap)
    assert ei.value.field == field
