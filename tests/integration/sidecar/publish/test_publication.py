"""The template index: contents checked against the documents' own text, the atomic alias
swap under a polling reader, retention, rollback, unfinished and failed publishes."""
from __future__ import annotations

import numpy as np
import pytest
from opensearchpy.exceptions import ConnectionError as OSConnectionError

from bench.published_run import published
from bloomspan.engine.text.tokenizer import tokenize
from bloomspan.sidecar.errors import PublishError, RunNotFoundError
from bloomspan.sidecar.publish.bitmaps import bitmap_from_array, coverage_from_bitmaps, decode_bitmap
from bloomspan.sidecar.publish.clean_index_template import template_name
from bloomspan.sidecar.publish.template_index import (
    aliased_indices,
    list_runs,
    new_run_id,
    physical_indices,
    physical_name,
    publish,
    rollback,
    setup,
)
from bloomspan.sidecar.run.mining_run import MineConfig, RunRefusedError, run_mining
from tests.support.sidecar_helpers import AliasReader, make_source, web_docs


def _starts(doc: list[str], phrase: list[str]) -> list[int]:
    """Token positions where ``phrase`` starts in ``doc`` (overlaps included), via string search
    (tokens hold no spaces, so " a b " occurs in " x a b y " exactly at token boundaries)."""
    hay = " " + " ".join(doc) + " "
    needle = " " + " ".join(phrase) + " "
    out, at = [], hay.find(needle)
    while at >= 0:
        out.append(hay.count(" ", 0, at))  # spaces before = tokens before
        at = hay.find(needle, at + 1)
    return out


def test_end_to_end_bitmaps_decode_to_exactly_the_containing_documents(os_client, index_prefix, opensearch_url,
                                                                       tmp_path):
    docs = list(web_docs(300))
    src, tpl = f"{index_prefix}src", f"{index_prefix}tpl"
    make_source(os_client, src, docs, shards=2)
    summary = run_mining(MineConfig.from_flags(index=src, url=opensearch_url, sigma=5, min_length=5, template_index=tpl,
                                    work_dir=str(tmp_path), lease_index=f"{index_prefix}lease", site_field="site"),
                         client=os_client)
    pub = published(os_client, tpl)
    ids = sorted(d["id"] for d in docs)
    assert pub["doc_ids"] == ids and summary.docs_mined == 300 and summary.phrases == len(pub["phrases"]) > 20
    toks = {d["id"]: tokenize(d["text"]) for d in docs}
    corpus = [toks[i] for i in ids]  # canonical order
    covered = [[False] * len(t) for t in corpus]
    for p in pub["phrases"].values():
        members = list(decode_bitmap(p["doc_bitmap"]))
        starts = [_starts(doc, p["tokens"]) for doc in corpus]
        assert members == [d for d, s in enumerate(starts) if s], p["text"]
        assert (len(members), sum(map(len, starts))) == (p["df"], p["occurrences"])
        assert p["example_ids"] == [ids[d] for d in members[:5]]
        assert p["psi"] == p["length"] * p["df"] and p["text"] == " ".join(p["tokens"])
        for d, found in enumerate(starts):
            for i in found:
                covered[d][i:i + p["length"]] = [True] * p["length"]
    run = pub["run"]
    flat = [c for doc in covered for c in doc]
    coverage = coverage_from_bitmaps([decode_bitmap(run["coverage_bitmap"])], len(flat))
    assert coverage.tolist() == flat
    assert run["covered_tokens"] == sum(flat) and run["tokens_mined"] == len(flat) == summary.tokens_mined
    assert run["docs_seen"] == 300 and run["docs_skipped"] == 0 and run["doc_id_chunks"] == 1
    rep = pub["report"]
    assert sum(b["docs"] for b in rep["clutter_histogram"]) == 300
    assert [p["text"] for p in rep["top_phrases"]] == [p["text"] for p in sorted(
        pub["phrases"].values(), key=lambda p: (-p["psi"], -p["length"], p["text"]))][:20]
    assert rep["most_cluttered_sites"] and all(0 <= s["covered_share"] <= 1 for s in rep["most_cluttered_sites"])
    # the run document carries no credential and names the source
    assert run["source_index"] == src and run["field"] == "text"


def _fake_run(n_phrases: int, n_docs: int = 30):
    phrases = [{"phrase_id": f"p{k:04d}", "text": f"w{k} x", "tokens": [f"w{k}", "x"], "length": 2, "df": 2,
                "occurrences": 2, "psi": 4, "example_ids": ["a", "b"], "doc_bitmap": "OjAAAAEAAAAAAAEAEAAAAAAAAQA="}
               for k in range(n_phrases)]
    return dict(phrase_docs=phrases, doc_keys=[f"doc{i:05d}" for i in range(n_docs)],
                coverage=[bitmap_from_array(np.arange(0, 10))],
                run_doc={"phrases": n_phrases, "docs_seen": n_docs, "source_index": "src", "field": "text"})


def test_alias_readers_only_see_complete_runs_and_retention(os_client, index_prefix):
    tpl = f"{index_prefix}tpl"
    published_runs = []
    with AliasReader(os_client, tpl, period=0.005) as reader:
        for k in range(5):
            run_id = new_run_id()
            res = publish(os_client, tpl, run_id, **_fake_run(40 + 25 * k), keep_runs=2, bulk_docs=7)
            published_runs.append(res.physical_index)
            assert aliased_indices(os_client, tpl) == [res.physical_index]
    assert reader.violations == [] and reader.complete_views > 0
    states = physical_indices(os_client, tpl)
    assert sorted(states) == sorted(published_runs[-2:]) and all(s["complete"] for s in states.values())
    runs = list_runs(os_client, tpl)
    assert [r["physical_index"] for r in runs] == published_runs[-1:-3:-1]
    assert runs[0]["current"] and not runs[1]["current"] and runs[0]["phrases"] == 140
    assert "coverage_bitmap" not in runs[0]


def test_rollback_moves_the_alias_back_and_forth(os_client, index_prefix):
    tpl = f"{index_prefix}tpl"
    with pytest.raises(RunNotFoundError):
        rollback(os_client, tpl)
    first = publish(os_client, tpl, new_run_id(), **_fake_run(3), keep_runs=3).physical_index
    with pytest.raises(RunNotFoundError, match="older"):
        rollback(os_client, tpl)
    second = publish(os_client, tpl, new_run_id(), **_fake_run(4), keep_runs=3).physical_index
    res = rollback(os_client, tpl)
    assert res["to"] == first and res["from"] == [second] and aliased_indices(os_client, tpl) == [first]
    res = rollback(os_client, tpl, to_run=second.rsplit(f"{tpl}-", 1)[1])
    assert aliased_indices(os_client, tpl) == [second]
    with pytest.raises(RunNotFoundError, match="does not exist"):
        rollback(os_client, tpl, to_run="20000101t000000000-abcd")


def test_unfinished_index_is_never_aliased_and_is_cleaned_up(os_client, index_prefix):
    tpl = f"{index_prefix}tpl"
    done = publish(os_client, tpl, new_run_id(), **_fake_run(3)).physical_index
    crashed = physical_name(tpl, new_run_id())
    os_client.indices.create(index=crashed)  # what a kill -9 during the bulk leaves behind
    os_client.index(index=crashed, id="x", body={"kind": "phrase"}, refresh=True)
    with pytest.raises(RunNotFoundError, match="never finished"):
        rollback(os_client, tpl, to_run=crashed)
    assert [r["status"] for r in list_runs(os_client, tpl) if r["physical_index"] == crashed] == ["incomplete"]
    newer = publish(os_client, tpl, new_run_id(), **_fake_run(5)).physical_index
    assert aliased_indices(os_client, tpl) == [newer]
    assert crashed not in physical_indices(os_client, tpl) and done in physical_indices(os_client, tpl)


def test_resuming_the_same_run_recreates_its_unfinished_index(os_client, index_prefix):
    tpl = f"{index_prefix}tpl"
    run_id = new_run_id()
    os_client.indices.create(index=physical_name(tpl, run_id))  # an earlier attempt of this run
    res = publish(os_client, tpl, run_id, **_fake_run(6))
    assert os_client.count(index=tpl, body={"query": {"term": {"kind": "phrase"}}})["count"] == 6
    again = publish(os_client, tpl, run_id, **_fake_run(6))  # killed after the swap: nothing to redo
    assert again.reused and again.physical_index == res.physical_index


def test_failed_bulk_leaves_the_alias_on_the_previous_run(os_client, index_prefix):
    tpl = f"{index_prefix}tpl"
    good = publish(os_client, tpl, new_run_id(), **_fake_run(5)).physical_index

    class FailingBulk:
        def __init__(self, client, fail_at):
            self._c, self.calls, self.fail_at = client, 0, fail_at

        def __getattr__(self, name):
            return getattr(self._c, name)

        def bulk(self, *a, **kw):
            self.calls += 1
            if self.calls == self.fail_at:
                raise OSConnectionError("N/A", "injected", None)
            return self._c.bulk(*a, **kw)

    bad_run = new_run_id()
    with pytest.raises(PublishError) as info:
        publish(FailingBulk(os_client, 3), tpl, bad_run, **_fake_run(50), bulk_docs=10)
    assert info.value.index == physical_name(tpl, bad_run)
    assert aliased_indices(os_client, tpl) == [good]
    assert not physical_indices(os_client, tpl)[physical_name(tpl, bad_run)]["complete"]
    # a rejected document is a PublishError naming the item
    broken = _fake_run(2)
    broken["phrase_docs"][1]["length"] = "not a number"
    with pytest.raises(PublishError) as info:
        publish(os_client, tpl, new_run_id(), **broken)
    assert info.value.item and aliased_indices(os_client, tpl) == [good]
    publish(os_client, tpl, bad_run, **_fake_run(50), bulk_docs=10)  # the retry completes
    assert aliased_indices(os_client, tpl) == [physical_name(tpl, bad_run)]


@pytest.fixture
def clean_templates(os_client, index_prefix):
    """Deletes the clean-index templates (index and component) that setup makes for this test's indices."""
    yield
    for template in os_client.indices.get_index_template(name=f"bloomspan-clean-{index_prefix}*",
                                                         ignore=[404]).get("index_templates", []):
        os_client.indices.delete_index_template(name=template["name"])
    for template in os_client.cluster.get_component_template(name=f"bloomspan-clean-{index_prefix}*",
                                                             ignore=[404]).get("component_templates", []):
        os_client.cluster.delete_component_template(name=template["name"])


def test_name_taken_by_a_concrete_index_and_setup(os_client, index_prefix, clean_templates, cluster_engine):
    tpl = f"{index_prefix}tpl"
    os_client.indices.create(index=tpl)
    with pytest.raises(PublishError) as info:
        publish(os_client, tpl, new_run_id(), **_fake_run(1))
    assert info.value.field == "template_index"
    other, lease, src = f"{index_prefix}tpl2", f"{index_prefix}lease", f"{index_prefix}src"
    os_client.indices.create(index=src)
    lines = setup(os_client, other, lease, src)
    name = template_name(src)
    # Elasticsearch 8's integ-test zip has no mapper-extras: the ratio is a float there.
    ratio_type = "rank_feature" if cluster_engine.has_rank_feature else "float"
    fallback = [] if cluster_engine.has_rank_feature else [
        f"bloomspan.boilerplate_ratio as float, not rank_feature: {cluster_engine.name} has no mapper-extras "
        "module; down-weight with function_score instead of a rank_feature query"]
    assert lines == [f"index template {other} -> {other}-*", f"index template {lease} -> {lease}", *fallback,
                     f"component template {name} (bloomspan fields for text)",
                     f"index template {name} -> {src} (priority 0, composed of {name})", f"bloomspan fields -> {src}"]
    tmpl = os_client.indices.get_index_template(name=other)["index_templates"][0]["index_template"]
    assert tmpl["index_patterns"] == [f"{other}-*"]
    os_client.indices.create(index=f"{other}-20250101t000000000-abcd")  # gets the template's mapping
    mapping = os_client.indices.get_mapping(index=f"{other}-20250101t000000000-abcd")
    assert mapping[f"{other}-20250101t000000000-abcd"]["mappings"]["dynamic"] == "strict"
    props = os_client.indices.get_mapping(index=src)[src]["mappings"]["properties"]
    assert props["bloomspan"]["properties"]["boilerplate_ratio"]["type"] == ratio_type


def test_a_source_without_usable_documents_is_refused_unless_allow_empty(os_client, index_prefix, opensearch_url,
                                                                         tmp_path):
    """This test used to assert that an all-blank source publishes an empty run: that was the
    destructive publish (serve then stops cleaning)."""
    src, tpl = f"{index_prefix}src", f"{index_prefix}tpl"
    make_source(os_client, src, [{"id": "only-blank", "text": ""}], shards=1)
    config = dict(index=src, url=opensearch_url, template_index=tpl, work_dir=str(tmp_path),
                  lease_index=f"{index_prefix}lease")
    with pytest.raises(RunRefusedError, match=r"^--field text: 0 of 1 documents have a text value in field 'text' "
                                              r"\(empty in 1\); fields seen: text") as info:
        run_mining(MineConfig.from_flags(**config), client=os_client)
    assert info.value.field == "field" and not os_client.indices.exists_alias(name=tpl)
    summary = run_mining(MineConfig.from_flags(**config, allow_empty=True), client=os_client)
    assert (summary.docs_seen, summary.docs_mined, summary.phrases, summary.tokens_mined) == (1, 0, 0, 0)
    pub = published(os_client, tpl)
    assert pub["phrases"] == {} and pub["doc_ids"] == [] and pub["run"]["docs_skipped"] == 1


def _mine(os_client, opensearch_url, index_prefix, tmp_path, **kw):
    config = dict(url=opensearch_url, template_index=f"{index_prefix}tpl", work_dir=str(tmp_path / "work"),
                  lease_index=f"{index_prefix}lease", engine="fhk", sigma=5, min_length=5)
    return run_mining(MineConfig.from_flags(**{**config, **kw}), client=os_client)


def test_destructive_publishes_are_refused_and_the_alias_stays(os_client, index_prefix, opensearch_url, tmp_path):
    src, tpl = f"{index_prefix}src", f"{index_prefix}tpl"
    docs = [{**d, "n": i} for i, d in enumerate(web_docs(60))]
    make_source(os_client, src, docs, shards=2)
    good = _mine(os_client, opensearch_url, index_prefix, tmp_path, index=src)
    assert good.phrases > 0
    alias = aliased_indices(os_client, tpl)
    refusals = [
        (dict(field="body"), "field", r"^--field body: 0 of 60 documents have a text value in field 'body' "
                                      r"\(missing in 60\); fields seen: n, site, text"),
        (dict(field="n"), "field", r"^--field n: 0 of 60 documents have a text value in field 'n' \(not text in 60\)"),
        (dict(sigma=61), "sigma", r"^--sigma 61: only 60 documents of .* have a text value in field 'text'.*"
                                  r"give --sigma 60 or less"),
        (dict(sigma=60, min_length=200), "sigma", r"^--sigma 60 --min-length 200: this run found 0 phrases, while "
                                                  r".* holds run .* with [\d,]+; .*the alias stays"),
    ]
    for kw, flag, message in refusals:
        with pytest.raises(RunRefusedError, match=message) as info:
            _mine(os_client, opensearch_url, index_prefix, tmp_path, index=src, **kw)
        assert info.value.field == flag
        assert aliased_indices(os_client, tpl) == alias, kw
        assert not (tmp_path / "work" / "run").exists()  # the refused run is discarded: the next one reads afresh
    assert len(list_runs(os_client, tpl)) == 1
    # --allow-empty publishes the empty run on purpose
    empty = _mine(os_client, opensearch_url, index_prefix, tmp_path, index=src, sigma=60, min_length=200,
                  allow_empty=True)
    assert empty.phrases == 0 and aliased_indices(os_client, tpl) == [empty.physical_index]


def test_an_empty_index_gets_a_clear_message_not_a_sort_error(os_client, index_prefix, opensearch_url, tmp_path):
    src, tpl = f"{index_prefix}src", f"{index_prefix}tpl"
    os_client.indices.create(index=src)  # no document ever: no mapping at all
    with pytest.raises(RunRefusedError, match=r"^--index .*src: .*src holds no documents") as info:
        _mine(os_client, opensearch_url, index_prefix, tmp_path, index=src)
    assert info.value.field == "index" and not os_client.indices.exists_alias(name=tpl)
    summary = _mine(os_client, opensearch_url, index_prefix, tmp_path, index=src, allow_empty=True)
    assert (summary.docs_seen, summary.phrases) == (0, 0)


def test_mine_cli_refusal_is_one_line_naming_the_flag(os_client, index_prefix, opensearch_url, tmp_path):
    from click.testing import CliRunner

    from bloomspan.sidecar.cli.cluster import cluster_cli

    src = f"{index_prefix}src"
    make_source(os_client, src, web_docs(20), shards=1)
    result = CliRunner().invoke(cluster_cli, [
        "mine", "--url", opensearch_url, "--index", src, "--field", "body", "--template-index", f"{index_prefix}tpl",
        "--lease-index", f"{index_prefix}lease", "--work-dir", str(tmp_path), "--progress", "none"])
    assert result.exit_code == 1, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("Error: --field body: ") and "site, text" in lines[0], lines
    assert not os_client.indices.exists_alias(name=f"{index_prefix}tpl")


def test_runs_and_rollback_order_by_publication_time_not_by_id(os_client, index_prefix):
    tpl = f"{index_prefix}tpl"
    late_id = "20990101t000000000-ffff"  # sorts last by id ...
    stale_id = "20000101t000000000-0000"  # ... and this one first, but it is published last
    publish(os_client, tpl, late_id, **_fake_run(3))
    publish(os_client, tpl, stale_id, **_fake_run(5))
    runs = list_runs(os_client, tpl)
    assert [r["run_id"] for r in runs] == [stale_id, late_id]
    assert runs[0]["current"] and runs[0]["published_at"] > runs[1]["published_at"]
    res = rollback(os_client, tpl)  # the run published before the current one
    assert res["run_id"] == late_id and aliased_indices(os_client, tpl) == [physical_name(tpl, late_id)]
    with pytest.raises(RunNotFoundError, match="older than"):
        rollback(os_client, tpl)  # late_id was published first: nothing older


def test_credentials_reach_neither_logs_nor_the_template_index(os_client, index_prefix, opensearch_url, tmp_path,
                                                               caplog):
    """The local node runs without the security plugin, so it ignores the Authorization
    header: the run goes through while we check where the secret could leak."""
    import json
    import logging

    secret = "pw-Very-SECRET-42"
    src, tpl = f"{index_prefix}src", f"{index_prefix}tpl"
    make_source(os_client, src, list(web_docs(40)), shards=1)
    url = opensearch_url.replace("://", f"://miner:{secret}@")
    with caplog.at_level(logging.DEBUG):
        run_mining(MineConfig.from_flags(index=src, url=url, sigma=3, min_length=4, template_index=tpl, work_dir=str(tmp_path),
                              lease_index=f"{index_prefix}lease"))
    assert secret not in caplog.text and "miner" not in caplog.text.replace("bloomspan", "")
    stored = json.dumps(published(os_client, tpl)) + json.dumps(
        os_client.get(index=tpl, id="run")["_source"]["params"])
    assert secret not in stored and "miner" not in stored
    for path in tmp_path.rglob("*"):
        if path.is_file():
            assert secret.encode() not in path.read_bytes(), path


def test_published_phrases_equal_mine_jsonl_on_the_same_documents(os_client, index_prefix, opensearch_url, tmp_path):
    """The cluster path (scroll -> store -> mine -> template index) and the file path
    (`bloomspan mine --jsonl`) publish the same phrases with the same df and occurrences."""
    import json

    from click.testing import CliRunner

    from bloomspan.sidecar.cli.main import cli

    docs = list(web_docs(300))
    src, tpl = f"{index_prefix}src", f"{index_prefix}tpl"
    make_source(os_client, src, docs, shards=2)
    run_mining(MineConfig.from_flags(index=src, url=opensearch_url, sigma=5, min_length=5, template_index=tpl,
                          work_dir=str(tmp_path / "work"), lease_index=f"{index_prefix}lease"), client=os_client)
    cluster = sorted((p["text"], p["df"], p["occurrences"], p["psi"]) for p in published(os_client, tpl)["phrases"].values())
    path = tmp_path / "docs.jsonl"
    path.write_text("".join(json.dumps({"id": d["id"], "text": d["text"]}) + "\n" for d in docs), encoding="utf-8")
    res = CliRunner().invoke(cli, ["mine", "--jsonl", str(path), "--id-field", "id", "--sigma", "5", "--min-length", "5",
                                   "--out", str(tmp_path / "out")])
    assert res.exit_code == 0, res.output
    local = sorted((p["text"], p["df"], p["occurrences"], p["psi"]) for p in
                   map(json.loads, (tmp_path / "out" / "phrases.jsonl").read_text(encoding="utf-8").splitlines()))
    assert cluster == local and len(local) > 20


def test_bulk_requests_stay_under_the_byte_bound_however_large_the_bitmaps(os_client, index_prefix):
    """Phrase documents whose bitmaps grow with their documents: one request of ``bulk_docs``
    of them would be ~12 MB; every request stays within BULK_MAX_BYTES and all are written."""
    from bloomspan.sidecar.publish.template_index import BULK_MAX_BYTES, write_documents

    sizes: list[int] = []
    bulk = os_client.bulk

    def measured_bulk(*args, body=None, **kwargs):  # the node answers; only the body's size is noted
        sizes.append(len(body.encode("utf-8") if isinstance(body, str) else body))
        return bulk(*args, body=body, **kwargs)

    os_client.bulk = measured_bulk
    index = f"{index_prefix}bulkbound"
    big = "A" * (300 << 10)
    try:
        written = write_documents(os_client, index, ({"_id": f"p{i}", "_source": {"doc_bitmap": big}} for i in range(40)),
                                  bulk_docs=500)
    finally:
        del os_client.bulk
    assert written == 40 and len(sizes) >= 2
    assert max(sizes) <= BULK_MAX_BYTES
    os_client.indices.refresh(index=index)
    assert os_client.count(index=index)["count"] == 40
