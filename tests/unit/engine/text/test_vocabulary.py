"""Vocabulary: ids, growth, document frequencies (kernel vs twin), text form and files."""
from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from bloomspan.engine.text.tokenizer import encode_batch
from bloomspan.engine.text.vocabulary import UNKNOWN, Vocabulary, count_df_reference

# Tokens that stress the text form: escapes, separators, surrogates, non-BMP, empty.
ODD_TOKENS = ["", "\\", "\\n", "a\tb", "line\nbreak", "cr\r", "\ud800", "😀", "i\u0307", "ς", "plain"]
tokens_strategy = st.text(alphabet=st.one_of(st.sampled_from(list("ab\\\t\n\r\ud800😀")),
                                             st.characters()), max_size=8)


def test_add_get_and_lookups():
    v = Vocabulary()
    assert v.add("cat") == 0 and v.add("dog") == 1 and v.add("cat") == 0
    assert len(v) == v.size == 2 and v.tokens() == ["cat", "dog"] and list(v) == ["cat", "dog"]
    assert v.id_of("dog") == 1 and v.get("cow") is None and v.get("cow", -1) == -1
    assert "cat" in v and "Cat" not in v and 3 not in v
    assert v.token(1) == "dog" and v.tokens([1, 0, 1]) == ["dog", "cat", "dog"]
    assert v.ids_of(["dog", "cow", "cat"]).tolist() == [1, UNKNOWN, 0]
    assert v.ids_of(["cow", "dog"], add_new=True).tolist() == [2, 1] and len(v) == 3
    assert v.df.tolist() == [0, 0, 0] and v.n_docs == 0
    with pytest.raises(KeyError):
        v.id_of("pig")
    with pytest.raises(IndexError):
        v.token(3)
    with pytest.raises(TypeError):
        v.add(b"cat")
    with pytest.raises(ValueError):
        v.df[0] = 5  # read-only view



def test_token_strings_stay_right_while_the_vocabulary_grows():
    # token() keeps the strings it decoded; the arrays behind them are reallocated as the
    # vocabulary grows, so a kept string must be the token's, not a view of old memory.
    v = Vocabulary(capacity=1, pool_capacity=1)
    first = [v.token(v.add(t)) for t in ODD_TOKENS]
    for k in range(3000):
        v.add(f"w{k}")
    assert [v.token(i) for i in range(len(ODD_TOKENS))] == first == ODD_TOKENS
    assert [v.token(i) for i in range(len(v))] == v.tokens() == v.tokens(range(len(v)))
    assert Vocabulary.from_text(v.to_text(), len(v)).tokens([0, 3000]) == [ODD_TOKENS[0], "w2989"]

@settings(derandomize=True, max_examples=40, deadline=None)
@given(st.lists(tokens_strategy, max_size=60))
def test_ids_are_first_occurrence_order(tokens):
    """Against a dict: dense ids in first-occurrence order, through many table growths."""
    v = Vocabulary(capacity=1, pool_capacity=1)
    expected: dict[str, int] = {}
    got = [v.add(t) for t in tokens]
    assert got == [expected.setdefault(t, len(expected)) for t in tokens]
    assert v.tokens() == list(expected)
    assert v.ids_of(tokens).tolist() == got


def test_growth_past_many_rehashes():
    v = Vocabulary(capacity=1, pool_capacity=1)
    words = [f"t{i}" for i in range(20000)]
    assert v.ids_of(words, add_new=True).tolist() == list(range(20000))
    assert v.ids_of(words[::-1]).tolist() == list(range(20000))[::-1]
    assert v.get("t20000") is None


@settings(derandomize=True, max_examples=40, deadline=None)
@given(st.lists(st.lists(st.integers(0, 9), max_size=12), max_size=8), st.integers(0, 3))
def test_df_kernel_equals_twins(docs, n_batches):
    """count_documents (kernel) == count_df_reference (numpy) == add_document_counts (sets)."""
    size = 10
    ids = np.asarray([i for d in docs for i in d], dtype=np.uint32)
    off = np.concatenate([[0], np.cumsum([len(d) for d in docs])]).astype(np.int64)
    fast, plain = Vocabulary(), Vocabulary()
    for v in (fast, plain):
        v.ids_of([str(i) for i in range(size)], add_new=True)
    for _ in range(n_batches):  # the same docs again: counted again (new document numbers)
        fast.count_documents(ids, off)
        plain.add_document_counts(docs)
    assert np.array_equal(fast.df, count_df_reference(ids, off, size) * n_batches)
    assert np.array_equal(fast.df, plain.df)
    assert fast.n_docs == plain.n_docs == n_batches * len(docs)


def test_df_counts_each_token_once_per_document():
    v = Vocabulary()
    encode_batch(["a a a b", "b b", "", "c a"], v)
    assert dict(zip(v.tokens(), v.df.tolist())) == {"a": 2, "b": 2, "c": 1}
    assert v.n_docs == 4


def test_count_documents_validates():
    v = Vocabulary()
    v.ids_of(["x", "y"], add_new=True)
    with pytest.raises(ValueError, match="not an id"):
        v.count_documents(np.array([0, 2], dtype=np.uint32), np.array([0, 2]))
    with pytest.raises(ValueError, match="doc_offsets"):
        v.count_documents(np.array([0, 1], dtype=np.uint32), np.array([0, 1]))
    assert v.df.tolist() == [0, 0] and v.n_docs == 0  # nothing counted on error
    v.count_documents(np.array([UNKNOWN, 1], dtype=np.uint32), np.array([0, 2]))
    assert v.df.tolist() == [0, 1]


@settings(derandomize=True, max_examples=40, deadline=None)
@given(st.lists(tokens_strategy, unique=True, max_size=20), st.data())
def test_text_form_round_trip(tokens, data):
    plain = Vocabulary()
    plain.ids_of(tokens, add_new=True)
    df = data.draw(st.lists(st.integers(0, 10**15), min_size=len(tokens), max_size=len(tokens)))
    v = Vocabulary.from_text(plain.to_text(with_df=False), len(tokens), with_df=False, df=df)
    assert v.df.tolist() == df
    back = Vocabulary.from_text(v.to_text(), len(v), n_docs=7)
    assert back.tokens() == tokens and np.array_equal(back.df, v.df) and back.n_docs == 7
    assert back.ids_of(tokens).tolist() == list(range(len(tokens)))
    head = v.to_text(0, len(v) // 2, with_df=False)
    part = Vocabulary.from_text(head, len(v) // 2, with_df=False)
    assert part.tokens() == tokens[:len(v) // 2] and part.df.tolist() == [0] * (len(v) // 2)


def test_save_load(tmp_path):
    v = Vocabulary()
    encode_batch(["Hello hello WORLD", "world"], v)
    v.ids_of(ODD_TOKENS, add_new=True)
    path = tmp_path / "vocabulary.tsv"
    v.save(path)
    lines = path.read_bytes().split(b"\n")
    assert json.loads(lines[0]) == {"format": "bloomspan-vocabulary", "version": 1,
                                    "size": len(v), "n_docs": 2}
    assert lines[1] == b"hello\t1" and lines[2] == b"world\t2"
    back = Vocabulary.load(path)
    assert back.tokens() == v.tokens() and np.array_equal(back.df, v.df) and back.n_docs == 2
    assert back.add("new") == len(v)  # keeps growing after a load
    assert not (tmp_path / "vocabulary.tsv.tmp").exists()


@pytest.mark.parametrize("body, message", [
    (b'{"format": "other"}\n', "not a bloomspan-vocabulary"),
    (b"not json\n", "JSON header"),
    (b'{"format": "bloomspan-vocabulary", "version": 9, "size": 0, "n_docs": 0}\n', "version 9"),
    (b'{"format": "bloomspan-vocabulary", "version": 1, "size": 2, "n_docs": 0}\na\t1\n', "1 token lines"),
    (b'{"format": "bloomspan-vocabulary", "version": 1, "size": 1, "n_docs": 0}\na\t1\nb\t1\n', "more lines"),
    (b'{"format": "bloomspan-vocabulary", "version": 1, "size": 1, "n_docs": 0}\na\\x\t1\n', "bad escape"),
    (b'{"format": "bloomspan-vocabulary", "version": 1, "size": 1, "n_docs": 0}\na\tx\n', "document frequency"),
    (b'{"format": "bloomspan-vocabulary", "version": 1, "size": 1, "n_docs": 0}\na\t1', "not terminated"),
    (b'{"format": "bloomspan-vocabulary", "version": 1, "size": 2, "n_docs": 0}\na\t1\na\t1\n', "duplicates"),
])
def test_load_rejects_damaged_files(tmp_path, body, message):
    path = tmp_path / "v.tsv"
    path.write_bytes(body)
    with pytest.raises(ValueError, match=message):
        Vocabulary.load(path)


_vocab_token = st.text(alphabet=st.sampled_from(list("ab09٣²ßж\U0001f600") + [chr(47), chr(58)]) | st.characters(),
                       min_size=1, max_size=5)


@settings(derandomize=True, max_examples=150, deadline=None)
@given(st.lists(_vocab_token, max_size=40, unique=True), st.lists(_vocab_token, max_size=40, unique=True))
def test_ids_in_and_code_point_ranges_read_the_pool_as_the_strings_would(mine, theirs):
    """ids_in(other) == other.ids_of(tokens()); all_code_points_in(48, 57) == all-ASCII-digit tokens."""
    a, b = Vocabulary(capacity=2, pool_capacity=4), Vocabulary(capacity=2, pool_capacity=4)  # both grow
    a.ids_of(mine, add_new=True)
    b.ids_of(theirs, add_new=True)
    assert a.ids_in(b).tolist() == b.ids_of(a.tokens()).tolist()
    assert a.ids_in(b).dtype == np.uint32
    digits = [all("0" <= c <= "9" for c in t) for t in a.tokens()]
    assert a.all_code_points_in(48, 57).tolist() == digits


@settings(derandomize=True, max_examples=60, deadline=None)
@given(st.lists(tokens_strategy, unique=True, max_size=30))
def test_utf8_spans_are_the_packed_strings_of_the_tokens(tokens):
    from bloomspan.engine.distributed.windows import PackedStrings, _utf8_spans

    v = Vocabulary()
    v.ids_of(tokens, add_new=True)
    spans = v.utf8_spans()
    if any("\n" in t for t in tokens):
        assert spans is None  # the caller packs the decoded list instead
        return
    buf, offsets = spans
    want_buf, want_offsets = _utf8_spans(tokens) if tokens else (np.zeros(0, np.uint8), np.zeros(1, np.int64))
    assert np.array_equal(buf, want_buf) and np.array_equal(offsets, want_offsets)
    assert list(PackedStrings(buf, offsets)) == tokens
