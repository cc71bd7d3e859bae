"""Agreement of the exported native pipeline with `bloomspan clean` on a real node: the
measure (tokens the cleaner removes that the pipeline removes too, and tokens the pipeline
removes that the cleaner keeps) and the steps that produce it, shared by
tests/integration/ingest/pipeline_export/test_pipeline_scoped.py and ``python -m bench.pipeline_agreement``.

Per page, with the tokenizer's tokens of the original (O), the cleaner's text (C) and the
stored text (P): ``extra`` = |C| − LCS(C, P), the tokens the pipeline removes that the
cleaner keeps (both only remove tokens, so C is a subsequence of P exactly when the pipeline
removed nothing more); ``shared`` = (|O| − |P|) − extra, removed by both; agreement =
shared / (|O| − |C|). Every other field must come back equal (``_source`` compared key by key
as JSON values: a pipeline re-serialises ``_source``, so bytes of number formatting may change).
"""
from __future__ import annotations

import json
import time
import uuid
from dataclasses import dataclass
from itertools import islice
from pathlib import Path

PREFIX = "bstest-"  # every index and pipeline run() creates is removed at its end


@dataclass
class Agreement:
    pages: int = 0
    tokens: int = 0
    cleaner_removed: int = 0
    pipeline_removed: int = 0
    shared: int = 0
    extra: int = 0
    pages_with_extra: int = 0
    identical_pages: int = 0
    other_fields_differ: int = 0

    @property
    def share(self) -> float:
        return self.shared / self.cleaner_removed if self.cleaner_removed else 1.0


def lcs_length(a: list[int], b: list[int]) -> int:
    """Length of a longest common subsequence (bit-parallel, Hyyrö 2004)."""
    if not a or not b:
        return 0
    masks: dict[int, int] = {}
    for i, x in enumerate(a):
        masks[x] = masks.get(x, 0) | (1 << i)
    full = (1 << len(a)) - 1
    v = full
    for y in b:
        u = v & masks.get(y, 0)
        v = ((v + u) | (v - u)) & full
    return len(a) - bin(v).count("1")


def lcs_length_reference(a: list[int], b: list[int]) -> int:
    """Plain dynamic-programming twin of :func:`lcs_length`."""
    row = [0] * (len(b) + 1)
    for x in a:
        prev = 0
        for j, y in enumerate(b, start=1):
            cur = row[j]
            row[j] = prev + 1 if x == y else max(row[j], row[j - 1])
            prev = cur
    return row[-1]


def token_lists(texts: list[str]) -> list[list[int]]:
    from bloomspan.engine.text.tokenizer import encode_batch
    from bloomspan.engine.text.vocabulary import Vocabulary

    ids, offsets = encode_batch(texts, Vocabulary(), count_df=False)
    ids = ids.tolist()
    return [ids[offsets[d]:offsets[d + 1]] for d in range(len(texts))]


def compare(originals: list[dict], cleaned: list[dict], stored: list[dict], field: str = "text") -> Agreement:
    """:class:`Agreement` of the stored documents with the cleaner's, page by page."""
    n = len(originals)
    tokens = token_lists([d[field] for d in originals] + [d[field] for d in cleaned] + [d[field] for d in stored])
    o, c, p = tokens[:n], tokens[n:2 * n], tokens[2 * n:]  # one vocabulary: the same token, the same id
    out = Agreement()
    for k, (doc, co, po, oo) in enumerate(zip(originals, c, p, o)):
        extra = len(co) - lcs_length(co, po)
        out.pages += 1
        out.tokens += len(oo)
        out.cleaner_removed += len(oo) - len(co)
        out.pipeline_removed += len(oo) - len(po)
        out.shared += len(oo) - len(po) - extra
        out.extra += extra
        out.pages_with_extra += extra > 0
        out.identical_pages += co == po
        others = {key: v for key, v in doc.items() if key not in (field, "bloomspan")}
        kept = {key: v for key, v in stored[k].items() if key not in (field, "bloomspan")}
        out.other_fields_differ += json.dumps(others, sort_keys=True) != json.dumps(kept, sort_keys=True)
    return out


def generated_pages(n_mine: int, n_new: int, seed: int) -> tuple[list[dict], list[dict]]:
    from bloomspan.corpora.web import generate_web

    pages = list(islice(generate_web(n_mine + n_new, seed), n_mine + n_new))
    return pages[:n_mine], pages[n_mine:]


def mine_and_export(mine_pages: list[dict], work: Path, url: str, pipeline_id: str) -> str:
    """Mine ``mine_pages`` with the detector into ``work/out`` and PUT the pipeline; returns
    what ``bloomspan pipeline`` printed."""
    from click.testing import CliRunner

    from bloomspan.sidecar.cli.main import cli

    source = work / "mine.jsonl"
    source.write_text("".join(json.dumps(p, ensure_ascii=False) + "\n" for p in mine_pages), encoding="utf-8")
    runner = CliRunner()
    res = runner.invoke(cli, ["mine", "--jsonl", str(source), "--field", "text", "--id-field", "id", "--sigma", "20",
                              "--min-length", "10", "--site-field", "site", "--url-field", "url", "--out",
                              str(work / "out"), "--progress", "none"])
    if res.exit_code != 0:
        raise RuntimeError(res.output)
    res = runner.invoke(cli, ["pipeline", "--phrases", str(work / "out" / "phrases.jsonl"), "--url", url,
                              "--pipeline-id", pipeline_id, "--field", "text", "--site-field", "site",
                              "--url-field", "url"])
    if res.exit_code != 0:
        raise RuntimeError(res.output)
    return res.output


def clean_like_the_cli(phrases_path: Path, pages: list[dict]) -> list[dict]:
    """``bloomspan clean --phrases phrases_path --site-field site --url-field url`` on ``pages``."""
    from bloomspan.ingest.clean.cleaner import Cleaner, CleanerConfig
    from bloomspan.ingest.match.loading import load_run_phrases

    run = load_run_phrases(phrases_path)
    cleaner = Cleaner(run.phrase_set, CleanerConfig(fields=("text",), mode="strip", skip_missing=True, id_field=None,
                                                    scope_field="site", url_field="url"), templates=run.templates)
    return [r.doc for r in cleaner.clean_batch(pages)]


def index_through(client, index: str, pipeline_id: str, pages: list[dict]) -> list[dict]:
    """Index ``pages`` through the pipeline (``_bulk``), return their stored ``_source`` in order."""
    from opensearchpy import helpers

    actions = ({"_index": index, "_id": str(k), "_source": p} for k, p in enumerate(pages))
    ok, errors = helpers.bulk(client, actions, params={"pipeline": pipeline_id}, refresh=True, raise_on_error=False)
    if errors:
        raise RuntimeError(f"{len(errors)} pages failed in the pipeline, first: {errors[0]}")
    got = client.mget(index=index, body={"ids": [str(k) for k in range(len(pages))]})["docs"]
    return [d["_source"] for d in got]


def run(url: str, n_mine: int, n_new: int, seed: int, work: Path,
        baselines: dict[str, dict] | None = None) -> tuple[Agreement, str, float, dict[str, Agreement]]:
    """Mine, export, index and compare (module docstring): ``(agreement, what `bloomspan
    pipeline` printed, seconds indexing through it, {name: agreement})`` where ``baselines``
    maps a name to a function ``(phrases_path) -> pipeline body`` measured on the same pages."""
    from bloomspan.sidecar.cluster.connection import ClusterConfig

    client = ClusterConfig(url=url, timeout=120).checked_client()
    tag = f"{PREFIX}{uuid.uuid4().hex[:10]}-agreement"
    mine_pages, new_pages = generated_pages(n_mine, n_new, seed)
    made = [tag]
    try:
        printed = mine_and_export(mine_pages, work, url, tag)
        t0 = time.perf_counter()
        stored = index_through(client, tag, tag, new_pages)
        seconds = time.perf_counter() - t0
        phrases_path = work / "out" / "phrases.jsonl"
        cleaned = clean_like_the_cli(phrases_path, new_pages)
        others = {}
        for k, (name, body_of) in enumerate((baselines or {}).items()):
            other = f"{tag}-{k}"
            made.append(other)
            client.ingest.put_pipeline(id=other, body=body_of(phrases_path))
            others[name] = compare(new_pages, cleaned, index_through(client, other, other, new_pages))
        return compare(new_pages, cleaned, stored), printed, seconds, others
    finally:
        for name in made:
            client.indices.delete(index=name, ignore=[404])
            client.ingest.delete_pipeline(id=name, ignore=[404])
