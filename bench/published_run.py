"""What a run published behind a template alias, read back for comparing two runs.

Equal corpora must publish equal sets; what legitimately differs between two equal runs
(the run id, timings, the physical index name) is left out, so ``published(a) ==
published(b)`` is the comparison. The integration tests and the restart bench share it.
"""
from __future__ import annotations

from opensearchpy import helpers

# The run document's fields two equal runs agree on (its counts, coverage files and source).
RUN_FIELDS = ("docs_seen", "docs_skipped", "tokens_mined", "covered_tokens", "covered_share", "phrases",
              "coverage_bitmap", "coverage_chunks", "doc_id_chunks", "source_index", "field")


def published(client, alias: str) -> dict:
    """Everything a run published behind ``alias``, minus what differs between equal runs
    (run id, timings, template name): phrases by id, the doc map, the run's counts and report."""
    phrases, docmap, run = {}, {}, None
    for hit in helpers.scan(client, index=alias, query={"query": {"match_all": {}}}):
        src = dict(hit["_source"])
        src.pop("run_id", None)
        if src["kind"] == "phrase":
            phrases[hit["_id"]] = src
        elif src["kind"] == "docmap":
            docmap[src["first_member"]] = src["ids"]
        elif src["kind"] == "run":
            run = src
    ids = [i for first in sorted(docmap) for i in docmap[first]]
    report = dict(run["report"])
    return {"phrases": phrases, "doc_ids": ids, "run": {k: run.get(k) for k in RUN_FIELDS}, "report": report}
