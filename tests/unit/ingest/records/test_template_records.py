"""Which records make a file a template file (``is_template_record``): every kind only the
template matcher reads, the page models included, whatever record comes first."""
from __future__ import annotations

import json

import pytest

from bloomspan.ingest.match.loading import load_phrase_file, load_run_phrases
from bloomspan.ingest.records.phrase_set import is_phrase_record
from bloomspan.ingest.records.record_kinds import PAGE_MODEL_KINDS, TEMPLATE_KINDS
from bloomspan.ingest.records.template_records import is_template_record

SITE = "s.example"
PHRASE = {"tokens": ["we", "use", "cookies", "on", "this", "site"]}
PAGE_MODELS = [
    {"kind": "title_nav", "version": 1, "scope": SITE, "names": ["install", "guide"], "edge_lines": 2,
     "documents": 3},
    {"kind": "own_facts", "version": 1, "scope": SITE, "lines": [["release", "<num>"]], "documents": 3},
]


@pytest.mark.parametrize("kind", ["config", "skeleton", "line_shape", "title_nav", "own_facts", "block"])
def test_every_matcher_kind_marks_a_template_record(kind):
    assert kind in TEMPLATE_KINDS
    assert is_template_record({"kind": kind})


def test_plain_phrases_are_not_template_records():
    assert not is_template_record(PHRASE)
    assert not is_template_record({**PHRASE, "kind": "mcfp"})
    assert is_template_record({**PHRASE, "slots": [2]})


@pytest.mark.parametrize("model", PAGE_MODELS, ids=lambda m: m["kind"])
def test_a_file_whose_only_matcher_record_is_a_page_model_loads_as_templates(tmp_path, model):
    """Before, a file holding a title_nav or own_facts record but no config, skeleton, line shape or
    block was read as a plain phrase set and the model was silently dropped."""
    path = tmp_path / "curated.jsonl"
    path.write_text(json.dumps(PHRASE) + "\n" + json.dumps(model) + "\n", encoding="utf-8")
    phrases, matcher = load_phrase_file(path)
    assert matcher is not None
    assert len(phrases) == 1


@pytest.mark.parametrize("model", PAGE_MODELS, ids=lambda m: m["kind"])
def test_a_run_templates_file_of_page_models_only_is_applied(tmp_path, model):
    """A run's templates.jsonl holding only page models is applied next to its phrases, not refused
    as 'holds no template record'."""
    (tmp_path / "phrases.jsonl").write_text(json.dumps(PHRASE) + "\n", encoding="utf-8")
    (tmp_path / "templates.jsonl").write_text(json.dumps(model) + "\n", encoding="utf-8")
    run = load_run_phrases(tmp_path / "phrases.jsonl")
    assert run.templates is not None


def test_every_page_model_marks_a_template_file_and_is_no_phrase():
    for kind in PAGE_MODEL_KINDS:
        assert kind in TEMPLATE_KINDS
        assert not is_phrase_record({"kind": kind})
