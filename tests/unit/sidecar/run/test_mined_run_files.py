"""The mined run's records on disk: saved from lists or from record files, read back a record
at a time, the same records either way."""
from __future__ import annotations

import json

import pytest
from pyroaring import BitMap

from bloomspan.sidecar.publish.document_figures import DocumentFigures
from bloomspan.sidecar.publish.publication import run_report_from_figures
from bloomspan.sidecar.run.mined_run import MinedRun
from bloomspan.sidecar.run.record_files import CoverageFiles, RecordFile, RecordFileWriter

PHRASES = [{"phrase_id": f"p{k}", "text": f"phrase {k} ünïcode", "length": 3, "df": 10 - k, "occurrences": 12 - k,
            "psi": 30 - k, "doc_bitmap": "OjAAAAEAAAAAAAEAEAAAAAEAAgA="} for k in range(5)]
TEMPLATES = [("template-config", {"kind": "template_config", "template_config": {"min_pages": 3}}),
             ("skeleton-000000", {"kind": "skeleton", "scope": "a.example", "skeleton": {"lines": ["x", "y"]}})]


COVERAGE = [BitMap([1, 2, 3, 70_000]), BitMap([5])]


def _mined(phrases, templates, coverage=None) -> MinedRun:
    return MinedRun(phrase_docs=phrases, figures=DocumentFigures(top=3, bins=4, docs=2, tokens=40, covered_tokens=9),
                    coverage=list(COVERAGE) if coverage is None else coverage, engine_stats={"engine": "test"}, skipped={"empty": 1},
                    docs_seen=3, curation={"filtered": 0}, template_docs=templates, template_stats={"phrases": 0})


def test_record_file_reads_what_the_writer_wrote_every_time(tmp_path):
    with RecordFileWriter(tmp_path / "r.jsonl") as w:
        w.write_all(PHRASES)
    records = w.close()
    assert len(records) == 5
    assert list(records) == PHRASES
    assert list(records) == PHRASES  # each iteration reads the file again
    assert len(RecordFile(tmp_path / "r.jsonl")) == 5  # counted from the file without a count


def test_a_failed_writer_leaves_no_file(tmp_path):
    with pytest.raises(RuntimeError), RecordFileWriter(tmp_path / "r.jsonl") as w:
        w.write({"a": 1})
        raise RuntimeError("mining failed")
    assert not (tmp_path / "r.jsonl").exists()


@pytest.mark.parametrize("as_files", [False, True])
def test_saved_run_loads_the_same_records_as_record_files(tmp_path, as_files):
    coverage = None
    if as_files:
        phrases = RecordFileWriter(tmp_path / "parts" / "p.jsonl").write_all(PHRASES).close()
        templates = RecordFileWriter(tmp_path / "parts" / "t.jsonl").write_all([list(t) for t in TEMPLATES]).close()
        for k, bm in enumerate(COVERAGE):
            (tmp_path / "parts" / f"c{k}.roaring").write_bytes(bm.serialize())
        coverage = CoverageFiles([tmp_path / "parts" / f"c{k}.roaring" for k in range(len(COVERAGE))])
    else:
        phrases, templates = list(PHRASES), list(TEMPLATES)
    mined = _mined(phrases, templates, coverage)
    mined.save(tmp_path / "mined")
    if as_files:  # moved into the folder, not copied; the objects follow them
        assert not (tmp_path / "parts" / "p.jsonl").exists()
        assert list(phrases) == PHRASES and phrases.path == tmp_path / "mined" / "phrases.jsonl"
        assert list(coverage) == COVERAGE and not (tmp_path / "parts" / "c0.roaring").exists()
    loaded = MinedRun.load(tmp_path / "mined")
    assert isinstance(loaded.phrase_docs, RecordFile) and isinstance(loaded.template_docs, RecordFile)
    assert list(loaded.phrase_docs) == PHRASES
    assert [tuple(t) for t in loaded.template_docs] == TEMPLATES
    assert len(loaded.phrase_docs) == 5 and len(loaded.template_docs) == 2
    assert isinstance(loaded.coverage, CoverageFiles) and len(loaded.coverage) == 2
    assert list(loaded.coverage) == COVERAGE
    assert (loaded.n_docs, loaded.n_tokens, loaded.covered_tokens) == (2, 40, 9)
    lines = (tmp_path / "mined" / "templates.jsonl").read_text(encoding="utf-8").splitlines()
    assert json.loads(lines[1]) == ["skeleton-000000", TEMPLATES[1][1]]


def test_a_run_without_templates_loads_none(tmp_path):
    _mined(list(PHRASES), None).save(tmp_path / "mined")
    assert MinedRun.load(tmp_path / "mined").template_docs is None


def test_report_reads_the_top_phrases_from_a_record_file(tmp_path):
    figures = DocumentFigures(top=3, bins=4, docs=2, tokens=40, covered_tokens=9)
    from_list = run_report_from_figures(figures, {}, [], PHRASES, 2)
    from_file = run_report_from_figures(figures, {}, [], RecordFileWriter(tmp_path / "p.jsonl").write_all(PHRASES).close(), 2)
    assert from_file == from_list
    assert [p["text"] for p in from_file["top_phrases"]] == ["phrase 0 ünïcode", "phrase 1 ünïcode"]
    assert from_file["phrases"] == 5
