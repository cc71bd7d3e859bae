"""A deny entry's text stays whatever record covered it: page skeletons, line shapes and
phrases that overlap its edge; scoped entries only on documents of their scope."""
from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from bloomspan.engine.templates.config import TemplateConfig
from bloomspan.engine.templates.detector import detect_templates_in_texts
from bloomspan.engine.text.tokenizer import token_spans, tokenize
from bloomspan.engine.text.vocabulary import UNKNOWN
from bloomspan.ingest.base.errors import IngestConfigError
from bloomspan.ingest.clean.cleaner import Cleaner, CleanerConfig
from bloomspan.ingest.clean.curated_cleaner import curated_cleaner
from bloomspan.ingest.clean.denied_text import DeniedText, occurrence_mask, occurrence_mask_reference
from bloomspan.ingest.records.curation import CurationEntry
from bloomspan.ingest.records.phrase_set import PhraseSet
from tests.support.navigation_pages import texinfo_site

SPHINX = "docs.example"
MANUAL = "manual.example"


def sphinx_page(i: int, headings: list[str], body: list[str]) -> str:
    """A Sphinx page as crawled: header, content, a sidebar with the page's own headings
    (walked by the site's page skeleton) and previous/next titles."""
    return "\n".join(["Navigation", "index", "modules", "Project Documentation 2.1", *headings[:1], *body,
                      "Contents", *headings, "Navigation", "Overview", f"Previous: chapter {i - 1} notes",
                      f"Next: chapter {i + 1} notes", "Quick search",
                      "Copyright 2024 The Authors. Created using Sphinx 5.3.0"])


@pytest.fixture(scope="module")
def records() -> list[dict]:
    """A template detection of a Sphinx site (its skeleton) and of a Texinfo manual (its line
    shapes), as read back from the template index."""
    rng = np.random.default_rng(7)
    words = [f"w{k}" for k in range(400)]
    pages = [sphinx_page(i, [f"Heading {i} {j} " + " ".join(rng.choice(words, 2)) for j in range(1 + i % 4)],
                         [" ".join(rng.choice(words, 12)) for _ in range(6)]) for i in range(30)]
    manual = texinfo_site(30, 1, MANUAL)
    texts = pages + [p["text"] for p in manual]
    sites = [SPHINX] * len(pages) + [MANUAL] * len(manual)
    urls = [f"https://{SPHINX}/docs/{i}.html" for i in range(len(pages))] + [p["url"] for p in manual]
    out = detect_templates_in_texts(texts, sites, urls, config=TemplateConfig(slots=False))
    recs = json.loads(json.dumps(out.records))
    kinds = {(r.get("kind"), r.get("scope")) for r in recs}
    assert ("skeleton", SPHINX) in kinds and ("line_shape", MANUAL) in kinds, kinds
    return recs


NEW_SPHINX = sphinx_page(99, ["Heading new alpha", "Heading new beta"], ["fresh content line one two three four"])
DENIED_HEADING = "Heading new beta"  # a heading only the skeleton's walk over the sidebar covers
MANUAL_PAGE = texinfo_site(30, 1, MANUAL)[3]
DENIED_LINK = "Previous: W126"  # inside both navigation bars, which only line shapes cover


def _config(mode: str = "strip") -> CleanerConfig:
    return CleanerConfig(fields=("text",), mode=mode, id_field=None, meta_field="bloomspan" if mode == "mark" else None,
                         scope_field="site", url_field="url")


def _deny(text: str, scope: str | None = None) -> CurationEntry:
    return CurationEntry(action="deny", tokens=tuple(tokenize(text)), scope=scope)


def _token_mask(text: str, spans) -> list[bool]:
    """Per token of ``text``: inside one of the character ``spans``."""
    _, starts, ends = token_spans(text)
    return [any(a <= s and e <= b for a, b in spans) for s, e in zip(starts.tolist(), ends.tolist())]


def _marked(cleaner, doc) -> list[tuple[int, int]]:
    return [(s["start"], s["end"]) for s in cleaner.clean(doc).doc["bloomspan"]["spans"]]


def _occurrences(text: str, phrase: str) -> list[tuple[int, int]]:
    out, at = [], text.find(phrase)
    while at >= 0:
        out.append((at, at + len(phrase)))
        at = text.find(phrase, at + 1)
    return out


@pytest.mark.parametrize("doc, denied, kind", [
    ({"site": SPHINX, "url": f"https://{SPHINX}/docs/99.html", "text": NEW_SPHINX}, DENIED_HEADING, "skeleton"),
    ({"site": MANUAL, "url": MANUAL_PAGE["url"], "text": MANUAL_PAGE["text"]}, DENIED_LINK, "line_shape"),
])
def test_a_denied_sentence_covered_by_a_skeleton_or_a_line_shape_is_kept_and_the_rest_removed(records, doc, denied,
                                                                                               kind):
    text = doc["text"]
    before = _token_mask(text, _marked(curated_cleaner(records, _config("mark"), [], with_templates=True), doc))
    denied_at = _token_mask(text, _occurrences(text, denied))
    assert any(a and b for a, b in zip(before, denied_at)), f"the {kind} covers the denied sentence"
    cleaner = curated_cleaner(records, _config("mark"), [_deny(denied)], with_templates=True)
    spans = _marked(cleaner, doc)
    after = _token_mask(text, spans)
    _, starts, ends = token_spans(text)
    assert all(a in starts.tolist() and b in ends.tolist() for a, b in spans)  # offsets exact: token edges
    assert after == [a and not b for a, b in zip(before, denied_at)]  # exactly the denied tokens come back
    stripped = curated_cleaner(records, _config(), [_deny(denied)], with_templates=True).clean(doc).doc["text"]
    plain = curated_cleaner(records, _config(), [], with_templates=True).clean(doc).doc["text"]
    assert denied in stripped and denied not in plain
    assert tokenize(stripped) == [t for t, a in zip(tokenize(text), after) if not a]


def test_a_scoped_deny_protects_only_documents_of_its_site_or_section(records):
    doc = {"site": SPHINX, "url": f"https://{SPHINX}/docs/99.html", "text": NEW_SPHINX}
    blog = {**doc, "url": f"https://{SPHINX}/blog/99.html"}

    def kept(entries, d) -> bool:
        return DENIED_HEADING in curated_cleaner(records, _config(), entries, with_templates=True).clean(d).doc["text"]
    assert kept([_deny(DENIED_HEADING)], doc) and kept([_deny(DENIED_HEADING)], blog)
    assert kept([_deny(DENIED_HEADING, SPHINX)], doc) and kept([_deny(DENIED_HEADING, SPHINX)], blog)
    assert not kept([_deny(DENIED_HEADING, "other.example")], doc)
    assert kept([_deny(DENIED_HEADING, f"{SPHINX}/docs")], doc)
    assert not kept([_deny(DENIED_HEADING, f"{SPHINX}/docs")], blog)
    # one cleaner, documents routed: the section's entry on its pages only
    cleaner = curated_cleaner(records, _config(), [_deny(DENIED_HEADING, f"{SPHINX}/docs")], with_templates=True)
    on_docs, on_blog = (r.doc["text"] for r in cleaner.clean_batch([doc, blog]))
    assert DENIED_HEADING in on_docs and DENIED_HEADING not in on_blog


def test_a_phrase_overlapping_the_denied_sentences_edge_removes_only_what_lies_outside_it():
    text = "Intro words here. Welcome home, we use cookies to improve your experience. More text follows."
    phrase = {"tokens": ["welcome", "home", "we", "use", "cookies"], "df": 9}  # kept: only overlaps the edge
    config = CleanerConfig(fields=("text",), id_field=None, meta_field=None)
    deny = _deny("we use cookies to improve your experience")
    cleaner = curated_cleaner([phrase], config, [deny], with_templates=False)
    once = cleaner.clean({"text": text}).doc["text"]
    assert once == "Intro words here. we use cookies to improve your experience. More text follows."
    assert cleaner.clean({"text": once}).doc["text"] == once  # idempotent
    assert "welcome" not in curated_cleaner([phrase], config, [], with_templates=False).clean({"text": text}) \
        .doc["text"].lower()


def test_protected_text_is_whole_tokens_and_case_folded():
    phrases = PhraseSet.from_records([{"tokens": ["cookies", "to", "improve", "your", "experience"], "df": 5}])
    config = CleanerConfig(fields=("text",), id_field=None, meta_field=None)
    cleaner = Cleaner(phrases, config, protected=DeniedText([("improve", "your")]))  # no curation: the phrase stays
    assert cleaner.clean({"text": "Cookies to IMPROVE YOUR experience!"}).doc["text"] == "IMPROVE YOUR!"
    # "improved" is another token: no occurrence of the denied phrase, the phrase goes
    other = PhraseSet.from_records([{"tokens": ["cookies", "to", "improved", "your", "experience"], "df": 5}])
    assert Cleaner(other, config, protected=DeniedText([("improve", "your")])).clean(
        {"text": "Intro. Cookies to improved your experience"}).doc["text"] == "Intro."
    with pytest.raises(IngestConfigError, match="protected"):
        Cleaner(phrases, config, protected=[("improve",)])


@st.composite
def _corpus(draw):
    ids = draw(st.lists(st.integers(0, 3), max_size=40))
    cuts = sorted(set(draw(st.lists(st.integers(0, len(ids)), max_size=5))) | {0, len(ids)})
    patterns = draw(st.lists(st.lists(st.sampled_from([0, 1, 2, 3, UNKNOWN]), min_size=1, max_size=4), max_size=4))
    return ids, cuts, patterns


@settings(max_examples=300, deadline=None)
@given(_corpus())
def test_occurrence_mask_equals_its_plain_twin(case):
    ids, cuts, patterns = case
    got = occurrence_mask(np.asarray(ids, dtype=np.uint32), np.asarray(cuts, dtype=np.int64),
                          [np.asarray(p, dtype=np.uint32) for p in patterns])
    assert got.tolist() == occurrence_mask_reference(ids, cuts, patterns).tolist()
