"""Tests of bloomspan.corpora: generators, truth, known answers, c/n, scoring."""
from __future__ import annotations

import itertools
import json
import math
import re
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from bloomspan.corpora import (
    CORPUS_NAMES,
    SYNTHETIC1_PHRASES,
    corpus_by_name,
    doc_counts,
    evaluate_template_recovery,
    generate_synthetic1,
    generate_synthetic2,
    generate_web,
    lz78_parse,
    lz78_phrases_per_token,
    read_jsonl,
    spans_from_token_mask,
    synthetic1_expected,
    synthetic2_expected,
    token_labels,
    write_jsonl,
)
from bloomspan.corpora.templates import POOLS
from bloomspan.corpora.text_model import (
    SEPARATORS,
    TextModel,
    build_vocabulary,
    sentence_hazard,
    text_kernel,
    text_reference,
)
from bloomspan.corpora.unique_words import UniqueWords, encode
from bloomspan.engine.text.tokenizer import token_spans, tokenize

WEB_DOCS = 300
WEB_SEED = 20240611


@pytest.fixture(scope="module")
def web_docs() -> list[dict]:
    return list(generate_web(WEB_DOCS, WEB_SEED, n_sites=6))


# --- reference implementations used only by the tests -----------------------------------

def brute_force_mcfp(docs_tokens: list[list[str]], sigma: int, min_length: int) -> dict[tuple, tuple[int, int]]:
    """MCFPs by counting every n-gram: {tokens: (df, occurrences)}."""
    frequent: dict[tuple, tuple[int, int]] = {}
    n = 1
    while True:
        docs: dict[tuple, set[int]] = {}
        occ: Counter = Counter()
        for d, toks in enumerate(docs_tokens):
            for i in range(len(toks) - n + 1):
                g = tuple(toks[i:i + n])
                docs.setdefault(g, set()).add(d)
                occ[g] += 1
        level = {g: (len(ds), occ[g]) for g, ds in docs.items() if len(ds) >= sigma}
        if not level:
            break
        frequent.update(level)
        n += 1
    return {g: v for g, v in frequent.items()
            if len(g) >= min_length and not any((h[1:] == g or h[:-1] == g) for h in frequent if len(h) == len(g) + 1)}


def naive_lz78(tokens: list) -> int:
    phrases: set[tuple] = set()
    cur: tuple = ()
    c = 0
    for t in tokens:
        cur = cur + (t,)
        if cur not in phrases:
            phrases.add(cur)
            c += 1
            cur = ()
    return c + (1 if cur else 0)


# --- text model ---------------------------------------------------------------------------

@pytest.mark.parametrize("seed", [1, 2, 3])
def test_text_kernel_matches_python_twin(seed):
    rng = np.random.default_rng(seed)
    p = 1.0 / np.arange(1, 301) ** 1.1
    cdf = np.cumsum(p) / p.sum()
    cdf[-1] = 1.0
    u = rng.random((4, 3000))
    topic = rng.integers(0, 300, size=7).astype(np.int64)
    hazard = sentence_hazard()
    ids = np.empty(3000, dtype=np.int64)
    seps = np.empty(3000, dtype=np.int8)
    with np.errstate(over="ignore"):   # uint64 wrap-around is intended (NUMBA_DISABLE_JIT runs numpy scalars)
        text_kernel(cdf, u, topic, 0.45, 0.1, 4, 12345 + seed, hazard, 0.25, ids, seps)
    ref_ids, ref_seps = text_reference(cdf, u, topic, 0.45, 0.1, 4, 12345 + seed, hazard, 0.25)
    np.testing.assert_array_equal(ids, ref_ids)
    np.testing.assert_array_equal(seps, ref_seps)
    assert ids.min() >= 0 and ids.max() < 300
    # Immediate repeats are redrawn once: i.i.d. draws from this law repeat ~6% of the time.
    assert np.mean(ids[1:] == ids[:-1]) < 0.015
    assert seps[-1] in (11, 12, 13) and np.all(seps[:-1] < 11)
    # Sentence lengths follow the hazard: between 3 and 40 words, mean near 17.
    ends = np.flatnonzero(seps >= 5)
    lengths = np.diff(np.concatenate([[-1], ends]))[:-1]
    assert lengths.min() >= 3 and lengths.max() <= 40 and 13 < lengths.mean() < 21


def test_sentence_hazard_is_a_distribution():
    h = sentence_hazard()
    assert h.shape == (40,) and h[0] == h[1] == 0.0 and h[-1] == 1.0
    assert np.all((h >= 0) & (h <= 1))


@pytest.mark.parametrize("lang, alphabet", [("en", r"[a-z]"), ("ru", r"[а-яё]")])
def test_vocabulary_words_are_distinct_single_tokens(lang, alphabet):
    v = build_vocabulary(lang, 5000, 1.1, seed=5)
    words = v.words.tolist()
    assert len(set(words)) == len(words)
    assert all(tokenize(w) == [w] for w in words)
    assert all(tokenize(c) == [w] for c, w in zip(v.capitalized.tolist(), words))
    letters = [w for w in words if not w.isdigit()]
    assert sum(bool(re.fullmatch(alphabet + "+", w)) for w in letters) == len(letters)
    assert len(v.words[0]) <= 5 and v.cdf[-1] == 1.0 and np.all(np.diff(v.cdf) > 0)


# --- web corpus ---------------------------------------------------------------------------

def test_web_is_deterministic_and_prefix_stable(web_docs):
    again = list(itertools.islice(generate_web(WEB_DOCS, WEB_SEED, n_sites=6), 120))
    assert again == web_docs[:120]
    assert list(generate_web(40, WEB_SEED, n_sites=6)) == web_docs[:40]
    other = list(generate_web(40, WEB_SEED + 1, n_sites=6))
    assert [d["text"] for d in other] != [d["text"] for d in web_docs[:40]]
    assert len({d["id"] for d in web_docs}) == WEB_DOCS


def test_web_truth_spans_are_exactly_template_text(web_docs):
    fixed_pool = [s for lang in POOLS.values() for key in ("cookie", "newsletter", "disclaimer")
                  for s in lang[key]] + [POOLS["en"]["not_found"], POOLS["ru"]["not_found"],
                                         "All rights reserved", "Все права защищены"]
    for d in web_docs:
        text = d["text"]
        spans = d["truth"]["template_spans"]
        assert spans == sorted(spans)
        for (_a, b), (c, _e) in zip(spans, spans[1:]):
            assert b < c, f"{d['id']}: template spans overlap or touch"
        for a, b in spans:
            assert 0 <= a < b <= len(text)
            assert text[a:b] == text[a:b].strip()
            # A template string never cuts a token: its ends sit at token boundaries.
            assert a == 0 or not text[a - 1].isalnum()
            assert b == len(text) or not text[b].isalnum()
        inside = np.zeros(len(text), dtype=bool)
        for a, b in spans:
            inside[a:b] = True
        for a, b in d["truth"]["variable_spans"]:
            assert inside[a:b].all(), f"{d['id']}: variable part outside a template span"
        # Every occurrence of shared boilerplate lies inside a template span ...
        for s in fixed_pool:
            for m in re.finditer(re.escape(s), text):
                assert inside[m.start():m.end()].all(), f"{d['id']}: {s!r} outside the truth"
    # ... and every span's fixed text (variable parts blanked) recurs on another page.
    fixed = Counter()
    for d in web_docs:
        chars = list(d["text"])
        for a, b in d["truth"]["variable_spans"]:
            chars[a:b] = ["\0"] * (b - a)
        for a, b in d["truth"]["template_spans"]:
            fixed["".join(chars[a:b])] += 1
    pool_strings = {s for lang in POOLS.values() for v in lang.values() for s in ([v] if isinstance(v, str) else v)}
    singles = [t for t, c in fixed.items() if c == 1 and "\0" not in t and t not in pool_strings]
    assert not singles, singles[:3]


def test_web_corpus_shape(web_docs):
    sites = Counter(d["site"] for d in web_docs)
    assert len(sites) == 6
    assert max(sites.values()) >= 3 * min(sites.values())
    assert {d["lang"] for d in web_docs} == {"en", "ru"}
    assert any(re.search("[а-я]", d["text"]) for d in web_docs if d["lang"] == "ru")
    assert all(d["url"].startswith(f"https://{d['site']}/") for d in web_docs)
    n_tokens, template_share, span_lengths = [], [], []
    for d in web_docs:
        toks, is_tmpl = token_labels(d["text"], d["truth"]["template_spans"])
        n_tokens.append(len(toks))
        template_share.append(is_tmpl.mean())
        span_lengths += [len(tokenize(d["text"][a:b])) for a, b in d["truth"]["template_spans"]]
    assert 400 <= np.mean(n_tokens) <= 800
    assert 0.05 < sum(s * n for s, n in zip(template_share, n_tokens)) / sum(n_tokens) < 0.5
    assert 1 <= sum(s > 0.9 for s in template_share) <= 0.15 * WEB_DOCS, "a few pages almost entirely template"
    span_lengths = np.asarray(span_lengths)
    assert span_lengths.min() >= 3 and np.mean((span_lengths >= 10) & (span_lengths <= 60)) > 0.4
    assert {d["page_type"] for d in web_docs} == {"article", "product", "listing", "info"}
    for d in web_docs:
        if d["page_type"] == "listing":   # "Showing 1–20 of 345 products" and product cards
            assert re.search(r"\d+–\d+ (of|из) \d+|\d+ products found|Найдено товаров: \d+", d["text"])
            assert len(d["truth"]["template_spans"]) >= 6


def test_web_near_duplicates_point_back_to_similar_pages():
    docs = list(generate_web(500, 3, n_sites=5))
    by_id = {d["id"]: d for d in docs}
    pairs = [(d, by_id[d["truth"]["near_duplicate_of"]]) for d in docs if d["truth"]["near_duplicate_of"]]
    assert 2 <= len(pairs) <= 25
    for dup, orig in pairs:
        assert orig["id"] < dup["id"] and orig["site"] == dup["site"]
        a, b = tokenize(dup["text"]), tokenize(orig["text"])
        assert a != b
        assert len(set(a) & set(b)) / len(set(a) | set(b)) > 0.6


def test_web_content_lz78_ratio_is_natural_like(web_docs):
    """Content c/n sits near real prose of equal size, far from Synthetic 1's ~1.

    Measured on ~100 k content tokens: this generator 0.44 (whole pages 0.42); Gutenberg
    fiction (Norvig's big.txt) 0.42 at 100 k and 0.39 at 476 k tokens.
    """
    content, everything = [], []
    for d in web_docs:
        toks, is_tmpl = token_labels(d["text"], d["truth"]["template_spans"])
        everything += toks
        content += [t for t, x in zip(toks, is_tmpl.tolist()) if not x]
    content = content[:100_000]
    ratio = lz78_phrases_per_token(content)
    assert len(content) == 100_000
    assert 0.36 < ratio < 0.52, ratio
    assert lz78_phrases_per_token(everything[:100_000]) < ratio   # templates repeat


def test_generate_web_validates_arguments():
    with pytest.raises(ValueError, match="n_docs"):
        generate_web(-1, 0)
    with pytest.raises(ValueError, match="n_sites"):
        generate_web(10, 0, n_sites=0)


def test_web_draws_from_a_small_vocabulary():
    # bloomspan warmup's crawl spells 32,000 words, not 400,000: brand names were drawn from
    # ranks up to 200,000 whatever the vocabulary's size (an IndexError).
    docs = list(generate_web(40, 7, model=TextModel(vocab_size=32_000)))
    assert len(docs) == 40 and {d["lang"] for d in docs} == {"en", "ru"}


# --- Synthetic 1 --------------------------------------------------------------------------

def test_synthetic1_structure():
    n_docs, wpd = 12, 400
    docs = list(generate_synthetic1(n_docs, 7, words_per_doc=wpd))
    assert docs == list(generate_synthetic1(n_docs, 7, words_per_doc=wpd))
    background: list[str] = []
    support = Counter()
    for d in docs:
        text = d["text"]
        cut, prev = [], 0
        for k, a, b in d["truth"]["planted"]:
            assert text[a:b] == SYNTHETIC1_PHRASES[k][0]
            cut.append(text[prev:a])
            prev = b
            support[k] += 1
        cut.append(text[prev:])
        words = " ".join(cut).split()
        assert len(words) == wpd
        assert all(len(w) == 8 and w.isascii() and w.isalpha() and w.islower() for w in words)
        background += words
        assert [[a, b] for _k, a, b in d["truth"]["planted"]] == d["truth"]["template_spans"]
    assert len(set(background)) == len(background) == n_docs * wpd, "every background word is unique"
    assert dict(support) == {k: s for k, (_p, s) in enumerate(SYNTHETIC1_PHRASES)}
    tokens = [t for d in docs for t in tokenize(d["text"])]
    assert lz78_phrases_per_token(tokens) > 0.99


@pytest.mark.parametrize("sigma", [2, 3, 4, 5, 6])
def test_synthetic1_expected_matches_brute_force(sigma):
    n_docs, wpd = 9, 30
    docs = list(generate_synthetic1(n_docs, 11, words_per_doc=wpd))
    got = synthetic1_expected(n_docs, 11, sigma=sigma, min_length=3, words_per_doc=wpd)
    truth = brute_force_mcfp([tokenize(d["text"]) for d in docs], sigma, 3)
    assert {p.tokens: (p.df, p.occurrences) for p in got} == truth
    if sigma == 3:
        assert sorted(p.df for p in got) == [3, 4, 5]
    for p in got:
        holders = [d["id"] for d in docs if " " + " ".join(p.tokens) + " " in " " + " ".join(tokenize(d["text"])) + " "]
        assert list(p.doc_ids) == holders


def test_synthetic1_rejects_too_few_documents():
    with pytest.raises(ValueError, match="n_docs"):
        list(generate_synthetic1(4, 0))


# --- Synthetic 2 --------------------------------------------------------------------------

SMALL2 = dict(n_phrases=14, phrases_per_doc=3, max_phrase_length=11, min_phrase_length=3)


@pytest.mark.parametrize("sigma, min_length", [(2, 2), (3, 3), (5, 2), (8, 4)])
def test_synthetic2_expected_matches_brute_force(sigma, min_length):
    docs = list(generate_synthetic2(24, 5, **SMALL2))
    got = synthetic2_expected(24, 5, sigma, min_length, **SMALL2)
    truth = brute_force_mcfp([tokenize(d["text"]) for d in docs], sigma, min_length)
    assert {p.tokens: (p.df, p.occurrences) for p in got} == truth
    assert [p.psi for p in got] == sorted((p.psi for p in got), reverse=True)


def test_synthetic2_is_dense_and_nested():
    docs = list(generate_synthetic2(120, 9, n_phrases=60, max_phrase_length=40, min_phrase_length=5))
    assert docs == list(generate_synthetic2(120, 9, n_phrases=60, max_phrase_length=40, min_phrase_length=5))
    tokens = [tokenize(d["text"]) for d in docs]
    planted = sum(len(tokenize(d["text"][a:b])) for d in docs for a, b in d["truth"]["template_spans"])
    assert planted > 0.85 * sum(map(len, tokens)), "documents are almost entirely planted phrases"
    lengths = [len(tokenize(d["text"][a:b])) for d in docs for _k, a, b in d["truth"]["planted"]]
    assert max(lengths) == 40 and min(lengths) == 5
    # Almost every bigram of planted material is frequent at sigma = 3 (nothing to filter).
    bigram_docs: dict[tuple, set] = {}
    for d, (doc, _toks) in enumerate(zip(docs, tokens)):
        for _k, a, b in doc["truth"]["planted"]:
            seg = tokenize(doc["text"][a:b])
            for g in zip(seg, seg[1:]):
                bigram_docs.setdefault(g, set()).add(d)
    assert np.mean([len(s) >= 3 for s in bigram_docs.values()]) > 0.9
    expected = synthetic2_expected(120, 9, 3, 5, n_phrases=60, max_phrase_length=40, min_phrase_length=5)
    assert 1 <= len(expected) < 60, "most planted phrases are nested in longer frequent ones"


# --- LZ78 ---------------------------------------------------------------------------------

def test_lz78_hand_examples():
    assert lz78_parse("a b a b c".split()).phrases == 4        # a | b | a b | c
    assert lz78_parse(["a", "a"]).phrases == 2                  # a | a (incomplete)
    assert lz78_parse("a a a a a a".split()).phrases == 3       # a | a a | a a a
    assert lz78_phrases_per_token([]) == 0.0
    assert lz78_phrases_per_token(np.array([5, 5, 7], dtype=np.uint32)) == lz78_phrases_per_token(["x", "x", "y"])
    assert lz78_phrases_per_token(iter(range(1000))) == 1.0


@settings(derandomize=True, max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 3), max_size=200))
def test_lz78_matches_naive_parse(tokens):
    assert lz78_parse(tokens).phrases == naive_lz78(tokens)


# --- evaluate -----------------------------------------------------------------------------

def test_doc_counts_hand_case():
    text = "Home | News\nHello world, friend.\n© 2024 Acme. All rights reserved."
    home = [0, 11]
    footer = [text.index("©"), len(text)]
    year = [text.index("2024"), text.index("2024") + 4]
    # covered: "Home", "News", "world" and "Acme All rights reserved" (not the year).
    covered = [[0, 4], [7, 11], [text.index("world"), text.index("world") + 5],
               [text.index("Acme"), len(text)]]
    c = doc_counts(text, [home, footer], covered, [year])
    # token characters: Home 4 News 4 | Hello 5 world 5 friend 6 | 2024 4 Acme 4 All 3 rights 6 reserved 8
    assert (c.template_chars, c.content_chars) == (4 + 4 + 4 + 4 + 3 + 6 + 8, 5 + 5 + 6)
    assert (c.template_chars_covered, c.content_chars_covered) == (4 + 4 + 4 + 3 + 6 + 8, 5)
    assert (c.template_tokens, c.template_tokens_covered, c.content_tokens, c.content_tokens_covered) == (7, 6, 3, 1)
    assert c.char_recall == pytest.approx(29 / 33) and c.char_damage == pytest.approx(5 / 16)
    ign = doc_counts(text, [home, footer], covered, [year], variable_parts="ignore")
    assert (ign.template_chars, ign.template_chars_covered, ign.template_tokens, ign.template_tokens_covered) == \
        (29, 29, 6, 6)
    assert ign.char_recall == 1.0 and ign.content_chars == 16


def test_doc_counts_partial_token_coverage_and_validation():
    text = "alpha beta"
    c = doc_counts(text, [[0, 5]], [[0, 2], [6, 9]])     # 2/5 of alpha, 3/4 of beta
    assert (c.template_chars_covered, c.content_chars_covered) == (2, 3)
    assert (c.template_tokens_covered, c.content_tokens_covered) == (0, 1)
    empty = doc_counts("", [], [])
    assert math.isnan(empty.char_recall) and empty.to_dict()["char_recall"] is None
    with pytest.raises(ValueError, match="len\\(text\\)"):
        doc_counts(text, [[0, 11]], [])
    with pytest.raises(ValueError, match="variable_parts"):
        doc_counts(text, [], [], variable_parts="drop")


def test_evaluate_template_recovery_aggregates_per_site():
    docs = [
        {"id": "a", "site": "s1", "text": "nav bar here body text", "truth": {"template_spans": [[0, 12]]}},
        {"id": "b", "site": "s1", "text": "nav bar here other", "truth": {"template_spans": [[0, 12]]}},
        {"id": "c", "site": "s2", "text": "plain content", "truth": {"template_spans": []}},
    ]
    rep = evaluate_template_recovery(docs, {"a": [[0, 12]], "c": [[0, 5]]})
    s1, s2 = rep.per_site["s1"], rep.per_site["s2"]
    assert (s1.docs, s1.template_chars, s1.template_chars_covered) == (2, 20, 10)
    assert s1.content_chars_covered == 0 and s1.token_recall == 0.5
    assert math.isnan(s2.char_recall) and s2.char_damage == pytest.approx(5 / 12)
    assert rep.overall == s1 + s2
    same = evaluate_template_recovery(docs, [[[0, 12]], [], [[0, 5]]])
    assert same.to_dict() == rep.to_dict()
    json.dumps(rep.to_dict())
    with pytest.raises(ValueError, match="one span list per document"):
        evaluate_template_recovery(docs, [[]])


def test_perfect_and_empty_coverage_on_web(web_docs):
    docs = web_docs[:50]
    perfect = evaluate_template_recovery(docs, {d["id"]: d["truth"]["template_spans"] for d in docs})
    assert perfect.overall.char_recall == 1.0 and perfect.overall.char_damage == 0.0
    assert perfect.overall.token_recall == 1.0 and perfect.overall.token_damage == 0.0
    none = evaluate_template_recovery(docs, {})
    assert none.overall.char_recall == 0.0 and none.overall.template_chars == perfect.overall.template_chars


def test_spans_from_token_mask_round_trip():
    text = "Home | News\n\nHello world. Bye"
    _toks, starts, ends = token_spans(text)
    mask = np.array([True, True, False, True, False])
    assert spans_from_token_mask(text, mask) == [[0, 11], [19, 24]]
    c = doc_counts(text, [[0, 11]], spans_from_token_mask(text, mask))
    assert c.template_tokens_covered == 2 and c.content_tokens_covered == 1
    with pytest.raises(ValueError, match="one flag per token"):
        spans_from_token_mask(text, mask[:3])


# --- unique words, I/O, dispatch ----------------------------------------------------------

def test_unique_words_are_distinct_and_skip_forbidden():
    w = UniqueWords(3)
    words = w.words(0, 20_000)
    assert len(set(words)) == 20_000 and all(len(x) == 8 for x in words)
    assert w.words(10_000, 5) == words[10_000:10_005]
    banned = words[7]
    w2 = UniqueWords(3, forbidden=(banned,))
    again = w2.words(0, 20_000)
    assert banned not in again and len(set(again)) == 20_000
    assert encode("aaaaaaab") == 1 and w2.capacity == 26**8 - 1
    letters = Counter("".join(words))
    assert len(letters) == 26 and max(letters.values()) < 1.15 * min(letters.values())


def test_jsonl_round_trip_and_dispatch(tmp_path):
    path = tmp_path / "web.jsonl"
    docs = list(corpus_by_name("web", 12, 4))
    assert write_jsonl(docs, path) == 12
    assert list(read_jsonl(path)) == docs
    assert "Главная" in path.read_text(encoding="utf-8") or all(d["lang"] == "en" for d in docs)
    assert not (tmp_path / "web.jsonl.tmp").exists()
    assert set(CORPUS_NAMES) == {"web", "synthetic1", "synthetic2"}
    first = next(iter(corpus_by_name("synthetic1", 5, 1)))
    assert first["site"] == "synthetic1" and len(first["text"].split()) >= 5000
    assert next(iter(corpus_by_name("synthetic2", 3, 1)))["site"] == "synthetic2"
    with pytest.raises(ValueError, match="web, synthetic1, synthetic2"):
        corpus_by_name("books", 1, 1)


def test_separators_cover_every_code():
    assert len(SEPARATORS) == 14 and SEPARATORS[11:] == (".", "?", "!")
