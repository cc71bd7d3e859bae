"""The exported ingest pipeline on the real node removes the same boilerplate as the cleaner."""
from __future__ import annotations

import json

from click.testing import CliRunner

from bloomspan.ingest.clean.cleaner import Cleaner, CleanerConfig
from bloomspan.ingest.records.phrase_set import PhraseSet
from bloomspan.sidecar.cli.main import cli

PHRASES = ["all rights reserved by acme corporation", "we use cookies to improve your experience",
           "все права защищены"]
DOCS = [
    "Great shoes for running.\nWe use cookies to improve your experience!\n\n© 2024 All rights reserved by ACME Corporation.",
    "Обувь для бега. Все права защищены.",
    "A page without boilerplate, mentioning rights and cookies separately.",
    "Partial: all rights reserved by acmecorp stays, because acmecorp is another token.",
]


def test_pipeline_strips_like_the_cleaner(opensearch_url, os_client, index_prefix, tmp_path):
    path = tmp_path / "phrases.jsonl"
    path.write_text("".join(json.dumps({"tokens": p.split(), "df": 50}, ensure_ascii=False) + "\n" for p in PHRASES),
                    encoding="utf-8")
    pipeline_id = f"{index_prefix}clean"
    res = CliRunner().invoke(cli, ["pipeline", "--phrases", str(path), "--url", opensearch_url,
                                   "--pipeline-id", pipeline_id, "--field", "text"])
    assert res.exit_code == 0, res.output
    index = f"{index_prefix}docs"
    for i, text in enumerate(DOCS):
        os_client.index(index=index, id=str(i), body={"text": text}, params={"pipeline": pipeline_id, "refresh": "true"})
    cleaner = Cleaner(PhraseSet.from_jsonl(str(path)), CleanerConfig(fields=("text",), mode="strip", id_field=None))
    for i, text in enumerate(DOCS):
        stored = os_client.get(index=index, id=str(i))["_source"]
        expected = cleaner.clean({"text": text})
        norm = lambda t: " ".join(t.replace("©", " ").split()).strip(" .!")  # noqa: E731 - whitespace rules differ
        if expected.covered_tokens:
            assert 0 < stored["bloomspan"]["boilerplate_ratio"] < 1
            assert norm(stored["text"]).lower() != norm(text).lower()
            for phrase in PHRASES:
                assert phrase not in " ".join(stored["text"].lower().replace(".", " ").split())
        else:
            assert stored["text"] == text and "bloomspan" not in stored
    assert os_client.get(index=index, id="0")["_source"]["text"].startswith("Great shoes for running.")
    assert "acmecorp stays" in os_client.get(index=index, id="3")["_source"]["text"]
    assert "_bloomspan_original" not in os_client.get(index=index, id="0")["_source"]


def test_downweight_pipeline_keeps_original(opensearch_url, os_client, index_prefix, tmp_path):
    path = tmp_path / "phrases.jsonl"
    path.write_text(json.dumps({"tokens": PHRASES[0].split(), "df": 9}) + "\n")
    pipeline_id = f"{index_prefix}dw"
    res = CliRunner().invoke(cli, ["pipeline", "--phrases", str(path), "--url", opensearch_url, "--pipeline-id",
                                   pipeline_id, "--mode", "downweight"])
    assert res.exit_code == 0, res.output
    index = f"{index_prefix}dw"
    os_client.index(index=index, id="a", body={"text": DOCS[0]}, params={"pipeline": pipeline_id, "refresh": "true"})
    src = os_client.get(index=index, id="a")["_source"]
    assert src["text"] == DOCS[0]
    assert "acme" not in src["text_clean"].lower() and src["bloomspan"]["boilerplate_ratio"] > 0


def test_pipeline_removes_whole_line_templates_with_slots_and_says_what_it_left_out(opensearch_url, os_client,
                                                                                   index_prefix, tmp_path):
    (tmp_path / "phrases.jsonl").write_text(json.dumps({"tokens": PHRASES[1].split(), "df": 50, "min_length": 4}) + "\n")
    records = [{"kind": "config", "template_config": {"run_min_length": 4}},
               {"text": "home docs api", "tokens": ["home", "docs", "api"], "df": 30, "kind": "block",
                "block_lengths": [3], "slots": []},
               {"text": "<num> acme inc ltd", "tokens": ["<num>", "acme", "inc", "ltd"], "df": 30, "kind": "block",
                "block_lengths": [4], "anchor": "end", "slots": [0]},
               {"text": "top", "tokens": ["top"], "df": 30, "kind": "block", "block_lengths": [1], "anchor": "start",
                "slots": []},
               {"text": "site nav", "tokens": ["site", "nav"], "df": 30, "kind": "block", "block_lengths": [2],
                "scope": "one.example", "slots": []},
               {"kind": "skeleton", "scope": "one.example"}]
    (tmp_path / "templates.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    pipeline_id = f"{index_prefix}tpl"
    res = CliRunner().invoke(cli, ["pipeline", "--phrases", str(tmp_path / "phrases.jsonl"), "--url", opensearch_url,
                                   "--pipeline-id", pipeline_id, "--field", "text"])
    assert res.exit_code == 0, res.output
    assert ("1 page skeletons, 1 line pairs shorter than run_min_length, 1 scoped records (no --site-field), "
            "window matching (whole phrases only)") in res.output
    text = "Home | Docs | API\nThe page: home docs api, inline.\nsite nav\n© 2031 ACME Inc. Ltd"
    index = f"{index_prefix}tpl"
    os_client.index(index=index, id="a", body={"text": text}, params={"pipeline": pipeline_id, "refresh": "true"})
    stored = os_client.get(index=index, id="a")["_source"]["text"]
    # the whole line goes, the same words inside a sentence stay; the last line with any year goes
    assert stored == "The page: home docs api, inline.\nsite nav"
