"""A native pipeline cannot express a line-shape template: the export leaves it out, says so,
and adds no processor for it."""
from __future__ import annotations

import json

from bloomspan.engine.templates.detector import detect_templates_in_texts
from bloomspan.ingest.pipeline_export.export import export_pipeline
from bloomspan.ingest.records.phrase_set import PhraseSet
from tests.support.navigation_pages import texinfo_site


def test_line_shapes_are_left_out_of_the_pipeline_and_named():
    pages = texinfo_site(30, 1)
    run = detect_templates_in_texts([p["text"] for p in pages], [p["site"] for p in pages], [p["url"] for p in pages])
    shapes = [r for r in run.records if r.get("kind") == "line_shape"]
    others = [r for r in run.records if r.get("kind") != "line_shape"]
    assert shapes
    phrases = PhraseSet.from_records([{"tokens": ["cookie", "policy", "accept"], "df": 30}])
    with_shapes = export_pipeline(phrases, templates=run.records, scope_field="site", url_field="url")
    without = export_pipeline(phrases, templates=others, scope_field="site", url_field="url")
    assert with_shapes.left_out["line_shapes"] == len(shapes)
    assert f"{len(shapes):,} line-shape templates" in with_shapes.left_out_line()
    assert json.dumps(with_shapes.body, sort_keys=True) == json.dumps(without.body, sort_keys=True)
