"""The brute-force MCFP oracle on hand-made corpora whose answers are worked out by hand."""
from __future__ import annotations

import numpy as np
import pytest

from bloomspan.engine.mining.phrases import Phrase
from bloomspan.engine.oracles.naive_oracle import coverage_of, mine_naive
from bloomspan.engine.text.tokenizer import tokenize


def corpus(docs: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
    tokens = np.array([t for d in docs for t in d], dtype=np.uint32)
    offsets = np.cumsum([0] + [len(d) for d in docs]).astype(np.int64)
    return tokens, offsets


def text_corpus(texts: list[str]) -> tuple[np.ndarray, np.ndarray, dict[str, int]]:
    vocab: dict[str, int] = {}
    docs = [[vocab.setdefault(w, len(vocab)) for w in tokenize(t)] for t in texts]
    tokens, offsets = corpus(docs)
    return tokens, offsets, vocab


def ids(vocab: dict[str, int], phrase: str) -> tuple[int, ...]:
    return tuple(vocab[w] for w in phrase.split())


# The article's online-store pages (Part 2), sigma = 3.
STORE = [
    "new laptop acer swift free shipping on orders over 50 dollars",
    "case for iphone 15 free shipping on orders over 50 dollars",
    "free shipping on orders over 50 dollars sony headphones",
    "sony headphones wh 1000 free shipping",
]


def test_article_store_pages():
    tokens, offsets, vocab = text_corpus(STORE)
    found = mine_naive(tokens, offsets, sigma=3, min_length=2)
    assert found == [Phrase(ids(vocab, "free shipping on orders over 50 dollars"), df=3, occurrences=3)]


def test_article_store_pages_sigma_2_adds_sony_headphones():
    tokens, offsets, vocab = text_corpus(STORE)
    found = mine_naive(tokens, offsets, sigma=2, min_length=2)
    assert found == [
        Phrase(ids(vocab, "free shipping on orders over 50 dollars"), df=3, occurrences=3),
        Phrase(ids(vocab, "sony headphones"), df=2, occurrences=2),
    ]


def test_frequent_subphrase_with_higher_support_is_not_maximal():
    # "free shipping" has df 4 but extends to a phrase with df 3 >= sigma.
    tokens, offsets, vocab = text_corpus(STORE)
    found = mine_naive(tokens, offsets, sigma=3, min_length=2)
    assert ids(vocab, "free shipping") not in {p.tokens for p in found}
    # with sigma 4 it is the answer
    assert mine_naive(tokens, offsets, sigma=4, min_length=2) == [
        Phrase(ids(vocab, "free shipping"), df=4, occurrences=4)
    ]


def test_article_suffix_array_example():
    # The article's suffix-array example (Part 3). D1: A B C D, D2: X A B C, D3: A B C Y -> "A B C" (df 3); "B C" is not maximal.
    A, B, C, D, X, Y = range(6)
    tokens, offsets = corpus([[A, B, C, D], [X, A, B, C], [A, B, C, Y]])
    assert mine_naive(tokens, offsets, 3, 2) == [Phrase((A, B, C), df=3, occurrences=3)]
    assert mine_naive(tokens, offsets, 3, 4) == []  # the maximal phrase is too short
    assert mine_naive(tokens, offsets, 2, 2) == [Phrase((A, B, C), df=3, occurrences=3)]


def test_repeats_inside_a_document_count_once_for_df():
    tokens, offsets = corpus([[1, 2, 1, 2, 1, 2], [1, 2]])
    assert mine_naive(tokens, offsets, 2, 2) == [Phrase((1, 2), df=2, occurrences=4)]
    single = corpus([[1, 2, 1, 2, 1, 2]])
    assert mine_naive(*single, 2, 2) == []


def test_self_overlapping_run():
    # "a a a a" holds "a a a" twice (overlapping) and "a a" three times.
    tokens, offsets = corpus([[7, 7, 7, 7], [7, 7, 7]])
    assert mine_naive(tokens, offsets, 2, 2) == [Phrase((7, 7, 7), df=2, occurrences=3)]
    tokens, offsets = corpus([[7, 7, 7, 7], [7, 7, 7], [7, 7]])
    assert mine_naive(tokens, offsets, 3, 2) == [Phrase((7, 7), df=3, occurrences=3 + 2 + 1)]


def test_phrases_never_cross_document_boundaries():
    # concatenated, "2 3" would appear twice; inside documents it appears once.
    tokens, offsets = corpus([[1, 2], [3, 4], [2, 3]])
    assert mine_naive(tokens, offsets, 2, 2) == []


def test_phrases_touching_document_start_and_end():
    tokens, offsets = corpus([[1, 2, 3], [1, 2, 3], [9, 1, 2, 3, 9]])
    assert mine_naive(tokens, offsets, 3, 2) == [Phrase((1, 2, 3), df=3, occurrences=3)]
    # the left extension "9 1 2 3" is in one document only
    assert mine_naive(tokens, offsets, 2, 2) == [Phrase((1, 2, 3), df=3, occurrences=3)]


def test_empty_documents_are_allowed():
    tokens, offsets = corpus([[], [1, 2], [], [1, 2], []])
    assert mine_naive(tokens, offsets, 2, 2) == [Phrase((1, 2), df=2, occurrences=2)]
    assert mine_naive(*corpus([[], []]), 2, 2) == []
    assert mine_naive(np.zeros(0, np.uint32), np.zeros(1, np.int64), 2, 2) == []


def test_left_extension_with_different_left_tokens_keeps_phrase():
    # every occurrence of "1 2 3" has another left neighbour: maximal.
    tokens, offsets = corpus([[5, 1, 2, 3], [6, 1, 2, 3], [7, 1, 2, 3]])
    assert mine_naive(tokens, offsets, 2, 2) == [Phrase((1, 2, 3), df=3, occurrences=3)]
    # two share the left neighbour 5: "5 1 2 3" (df 2) is frequent, "1 2 3" is not maximal.
    tokens, offsets = corpus([[5, 1, 2, 3], [5, 1, 2, 3], [7, 1, 2, 3]])
    assert mine_naive(tokens, offsets, 2, 2) == [Phrase((5, 1, 2, 3), df=2, occurrences=2)]
    assert mine_naive(tokens, offsets, 3, 2) == [Phrase((1, 2, 3), df=3, occurrences=3)]


def test_ordering_psi_then_length_then_tokens():
    # ids >= 100 occur once each and keep the phrases apart
    docs = [
        [1, 2, 3, 100, 9, 8, 101, 4, 5],
        [1, 2, 3, 102, 9, 8, 103, 4, 5],
        [4, 5, 104, 9, 8, 105, 6, 7, 106, 1, 2, 3],
        [6, 7, 107, 9, 8],
    ]
    found = mine_naive(*corpus(docs), 2, 2)
    # psi: (1 2 3) 3*3=9, (9 8) 2*4=8, (4 5) 2*3=6, (6 7) 2*2=4
    assert [(p.tokens, p.df) for p in found] == [((1, 2, 3), 3), ((9, 8), 4), ((4, 5), 3), ((6, 7), 2)]
    tie = mine_naive(*corpus([[3, 4, 10, 1, 2], [1, 2, 11, 3, 4]]), 2, 2)
    assert [p.tokens for p in tie] == [(1, 2), (3, 4)]  # same psi and length: ids ascending
    longer = mine_naive(*corpus([[1, 2, 10, 5, 6, 7], [1, 2, 11, 5, 6, 7], [1, 2]]), 2, 2)
    assert [p.tokens for p in longer] == [(5, 6, 7), (1, 2)]  # psi 6 each: the longer first


def test_coverage_of_marks_every_occurrence_inside_documents():
    tokens, offsets = corpus([[1, 2, 1, 2, 9], [9, 1, 2], [2, 1]])
    mask = coverage_of(tokens, offsets, [Phrase((1, 2), df=2, occurrences=3)])
    assert mask.tolist() == [True, True, True, True, False, False, True, True, False, False]
    assert coverage_of(tokens, offsets, []).tolist() == [False] * 10


def test_coverage_of_does_not_match_across_boundaries():
    tokens, offsets = corpus([[1], [2, 1], [2]])
    assert not coverage_of(tokens, offsets, [Phrase((1, 2), df=2, occurrences=2)]).any()


@pytest.mark.parametrize("sigma,min_length", [(1, 2), (2, 1)])
def test_rejects_bad_parameters(sigma, min_length):
    with pytest.raises(ValueError, match="sigma|min_length"):
        mine_naive(*corpus([[1, 2]]), sigma, min_length)


def test_rejects_offsets_that_do_not_cover_tokens():
    with pytest.raises(ValueError, match="doc_offsets"):
        mine_naive(np.array([1, 2, 3], np.uint32), np.array([0, 2], np.int64), 2, 2)
