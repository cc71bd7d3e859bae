"""One phrase record shape: what publication writes into the template index reads back as the
record the phrase set and the template matcher parse."""
from __future__ import annotations

from bloomspan.engine.mining.phrases import Phrase
from bloomspan.ingest.records.phrase_set import PhraseSet, parse_phrase_record
from bloomspan.sidecar.publish.phrase_records import document_record, phrase_record
from bloomspan.sidecar.publish.template_reader import template_documents


def test_a_mined_phrase_record_parses_and_its_document_reads_back():
    rec = phrase_record(Phrase((1, 2, 3), 4, 6), ["all", "rights", "reserved"])
    assert rec == {"text": "all rights reserved", "tokens": ["all", "rights", "reserved"], "length": 3, "df": 4,
                   "occurrences": 6, "psi": 12}
    parsed = parse_phrase_record(rec)
    doc = {"kind": "phrase", "phrase_id": parsed.id, **rec, "example_ids": ["a"]}
    back = document_record(doc)
    assert back == {"text": rec["text"], "tokens": rec["tokens"], "length": 3, "df": 4, "id": parsed.id}
    assert parse_phrase_record(back) == parsed


def test_a_template_record_survives_the_template_index():
    records = [{"id": "t1", "kind": "block", "text": "home shop blog", "tokens": ["home", "shop", "blog"],
                "length": 3, "df": 9, "occurrences": 9, "slots": [], "scope": "a.example", "block_lengths": [3],
                "anchor": "start"},
               {"id": "t2", "kind": "mcfp", "text": "<num> all rights", "tokens": ["<num>", "all", "rights"],
                "length": 3, "df": 5, "occurrences": 5, "slots": [0]}]
    docs = dict(template_documents(records))
    back = [document_record(docs[r["id"]]) for r in records]
    for rec, got in zip(records, back):
        assert got == {k: v for k, v in rec.items() if k != "occurrences"}
    assert [p.id for p in PhraseSet.from_records(back)] == ["t1", "t2"]


def test_the_phrase_set_and_the_curation_agree_on_what_is_a_phrase():
    from bloomspan.ingest.records.curation import CurationEntry, curate_records
    from bloomspan.ingest.records.phrase_set import is_phrase_record

    skeleton, config = {"kind": "skeleton", "scope": "a"}, {"kind": "config", "template_config": {}}
    phrase = {"text": "all rights reserved", "tokens": ["all", "rights", "reserved"]}
    assert [is_phrase_record(r) for r in (skeleton, config, phrase, "not a record")] == [False, False, True, True]
    assert len(PhraseSet.from_records([skeleton, config, phrase])) == 1
    deny = CurationEntry(action="deny", tokens=("all", "rights", "reserved"))
    curated = curate_records([skeleton, config, phrase], [deny])
    assert curated.records == [skeleton, config] and len(curated.filtered) == 1  # only the phrase is curated
