"""The template index stores every page model ingest knows, under one table of kinds
(``WHOLE_MODELS``), and reads each back as the record it was."""
from __future__ import annotations

import pytest

from bloomspan.ingest.records.record_kinds import PAGE_MODEL_KINDS
from bloomspan.sidecar.publish.template_reader import TEMPLATE_DOCUMENT_KINDS, WHOLE_MODELS, template_documents


def test_the_index_stores_exactly_the_page_models_ingest_reads():
    assert tuple(WHOLE_MODELS) == PAGE_MODEL_KINDS
    assert set(PAGE_MODEL_KINDS) <= set(TEMPLATE_DOCUMENT_KINDS)


@pytest.mark.parametrize("kind", PAGE_MODEL_KINDS)
def test_each_page_model_is_stored_whole_with_a_kind_prefixed_id(kind):
    first = {"kind": kind, "scope": "a.example", "version": 1}
    second = {"kind": kind, "scope": "b.example", "version": 1}
    docs = template_documents([{"kind": "config", "template_config": {}}, first, second])
    assert docs[0] == ("template-config", {"kind": "template_config", "template_config": {}})
    prefix = kind.replace("_", "-")
    assert docs[1:] == [(f"{prefix}-000000", {"kind": kind, "scope": "a.example", "skeleton": first}),
                        (f"{prefix}-000001", {"kind": kind, "scope": "b.example", "skeleton": second})]
    assert docs[1][1]["kind"] in TEMPLATE_DOCUMENT_KINDS  # what cleaning_records scans for
