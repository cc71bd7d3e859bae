"""`mine --jsonl --dask`: the distributed run writes exactly the single-node phrases.jsonl and
report.json, on a 2-worker LocalCluster and on an external scheduler + worker pair."""
from __future__ import annotations

import json

import pytest

from bloomspan.engine.mining.config import MiningConfig
from bloomspan.sidecar.distributed.cluster import DaskConfig
from bloomspan.sidecar.run.dask_jsonl_mining import mine_jsonl_dask
from bloomspan.sidecar.run.jsonl_mining import JsonlInputError, mine_jsonl
from tests.support.dask_helpers import ExternalCluster, comparable_report, local_cluster, planted_docs, write_jsonl


@pytest.fixture(scope="module")
def cluster():
    with local_cluster(2) as c:
        yield c


def _both(path, out, config, dask, id_field, **kw):
    mine_jsonl(str(path), "text", config, str(out / "single"), id_field=id_field)
    events = []
    mine_jsonl_dask(str(path), "text", config, str(out / "dist"), dask, id_field=id_field,
                    progress=lambda *a: events.append(a), **kw)
    single = (out / "single" / "phrases.jsonl").read_text(encoding="utf-8")
    dist = (out / "dist" / "phrases.jsonl").read_text(encoding="utf-8")
    reports = [json.loads((out / x / "report.json").read_text(encoding="utf-8")) for x in ("single", "dist")]
    return single, dist, reports, events


# count: the pigeonhole over one filter per worker (count unit) while ceil(sigma / workers) >= 2,
# at any number of ranges (13 ranges for sigma 3 on 2 workers: 13 shards, 2 units), every window
# counted exactly beyond (sigma 2 on 2 workers).
@pytest.mark.parametrize("seed,sigma,min_length,n_ranges,id_field,count_method", [
    (1, 5, 6, None, "id", "pigeonhole"), (2, 8, 10, 7, None, "pigeonhole"), (3, 3, 4, 13, "id", "pigeonhole"),
    (4, 2, 4, 13, "id", "exact")])
def test_random_corpora_equal_the_single_node_run(cluster, tmp_path, seed, sigma, min_length, n_ranges, id_field,
                                                  count_method):
    path = tmp_path / "docs.jsonl"
    write_jsonl(path, planted_docs(seed, 700), blank_every=0 if id_field else 37)  # blank lines: ids are line numbers
    single, dist, (r1, r2), events = _both(path, tmp_path, MiningConfig(sigma=sigma, min_length=min_length),
                                           DaskConfig(cluster.scheduler_address), id_field, n_ranges=n_ranges)
    assert single == dist and single.count("\n") >= 3
    assert comparable_report(r1) == comparable_report(r2)
    assert r2["stats"]["reduced_tokens"] < r1["tokens_mined"]  # the workers cut the background away
    assert r2["stats"]["count_method"] == count_method
    stages = {e[0] for e in events}
    assert {"read", "count", "reduce", "cut", "grow"} <= stages
    assert max(e[1] for e in events if e[0] == "read") == path.stat().st_size  # progress from the workers


def test_web_crawl_on_an_external_scheduler_and_worker(tmp_path):
    from bloomspan.corpora import corpus_by_name, write_jsonl as write_corpus

    path = tmp_path / "web.jsonl"
    write_corpus(corpus_by_name("web", 1500, 1), path)
    with ExternalCluster(n_workers=1) as ext:
        single, dist, (r1, r2), _ = _both(path, tmp_path, MiningConfig(sigma=20, min_length=10),
                                          DaskConfig(ext.address), "id", n_ranges=5)
    assert single == dist and single.count("\n") > 20
    assert comparable_report(r1) == comparable_report(r2)


def test_the_first_bad_line_in_file_order_is_reported_with_its_line_number(cluster, tmp_path):
    docs = planted_docs(4, 300)
    path = tmp_path / "bad.jsonl"
    write_jsonl(path, docs)
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    lines[250] = '{"text": 17}\n'
    lines[120] = "{not json\n"
    path.write_text("".join(lines), encoding="utf-8")
    with pytest.raises(JsonlInputError) as single:
        mine_jsonl(str(path), "text", MiningConfig(sigma=5, min_length=6), str(tmp_path / "a"))
    with pytest.raises(JsonlInputError) as dist:
        mine_jsonl_dask(str(path), "text", MiningConfig(sigma=5, min_length=6), str(tmp_path / "b"),
                        DaskConfig(cluster.scheduler_address), n_ranges=6)
    assert str(dist.value) == str(single.value) and dist.value.line == 121
    assert not (tmp_path / "b" / "report.json").exists()


def test_cli_mine_jsonl_dask_local_prints_the_dashboard_and_writes_the_single_node_files(tmp_path):
    from click.testing import CliRunner

    from bloomspan.sidecar.cli.main import cli

    path = tmp_path / "docs.jsonl"
    write_jsonl(path, planted_docs(6, 400))
    args = ["mine", "--jsonl", str(path), "--id-field", "id", "--sigma", "5", "--min-length", "6", "--progress", "none"]
    single = CliRunner().invoke(cli, args + ["--out", str(tmp_path / "one")])
    dist = CliRunner().invoke(cli, args + ["--out", str(tmp_path / "many"), "--dask", "local:2",
                                           "--dask-memory-limit", "1GiB"])
    assert single.exit_code == 0 and dist.exit_code == 0, dist.output
    assert "dask dashboard: http" in dist.output
    assert (tmp_path / "one" / "phrases.jsonl").read_bytes() == (tmp_path / "many" / "phrases.jsonl").read_bytes()
    bad = CliRunner().invoke(cli, args + ["--out", str(tmp_path / "x"), "--dask", "local:zero"])
    assert bad.exit_code == 2 and "--dask" in bad.output and "Traceback" not in bad.output


def test_cli_mine_jsonl_with_sites_on_dask_writes_the_single_process_templates(tmp_path):
    """The default path (site and URL fields: exact phrases and site templates) on ``--dask``
    writes the same phrases.jsonl, templates.jsonl and report figures as one process."""
    from click.testing import CliRunner

    from bloomspan.corpora.web import generate_web
    from bloomspan.sidecar.cli.main import cli

    path = tmp_path / "web.jsonl"
    write_jsonl(path, [{k: d[k] for k in ("id", "text", "site", "url")} for d in generate_web(600, seed=3, n_sites=12)])
    args = ["mine", "--jsonl", str(path), "--id-field", "id", "--site-field", "site", "--url-field", "url",
            "--sigma", "10", "--min-length", "8", "--progress", "none"]
    single = CliRunner().invoke(cli, args + ["--out", str(tmp_path / "one")])
    dist = CliRunner().invoke(cli, args + ["--out", str(tmp_path / "many"), "--dask", "local:2",
                                           "--dask-memory-limit", "1GiB"])
    assert single.exit_code == 0 and dist.exit_code == 0, dist.output
    assert "exact phrases only" not in dist.output
    for name in ("phrases.jsonl", "templates.jsonl"):
        assert (tmp_path / "one" / name).read_bytes() == (tmp_path / "many" / name).read_bytes(), name
    one = json.loads((tmp_path / "one" / "report.json").read_text())
    many = json.loads((tmp_path / "many" / "report.json").read_text())
    drop = {"seconds", "detector"}
    assert {k: v for k, v in many["templates"].items() if k not in drop} == \
        {k: v for k, v in one["templates"].items() if k not in drop}
    assert many["templates"]["skeletons"] > 0 and many["covered_share"] == one["covered_share"]


@pytest.mark.timeout(300)
def test_a_forked_local_worker_killed_mid_run_is_replaced_and_changes_nothing(tmp_path):
    """`local:N` workers are forked from the driver; one killed mid-run is restarted — spawned,
    not forked: a restart forked from the busy driver (scheduler and client threads running)
    hung a 26 M-token run — and the result is the single node's."""
    import multiprocessing
    import os
    import signal

    path = tmp_path / "docs.jsonl"
    write_jsonl(path, planted_docs(7, 600))
    config = MiningConfig(sigma=5, min_length=6)
    mine_jsonl(str(path), "text", config, str(tmp_path / "single"), id_field="id")
    killed: list[int] = []

    restarted: list[bool] = []
    others = {p.pid for p in multiprocessing.active_children()}  # another test's cluster, if any

    def ours():
        return [p for p in multiprocessing.active_children() if p.pid and p.pid not in others]

    def spawned(pid: int) -> bool:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return b"spawn_main" in f.read()

    def progress(stage, done, total):
        if stage == "reduce" and not killed:
            workers = ours()
            assert workers and not any(spawned(p.pid) for p in workers), "the first workers are forked"
            os.kill(workers[0].pid, signal.SIGKILL)
            killed.append(workers[0].pid)
        elif stage == "grow" and killed and not restarted:
            restarted.append(any(spawned(p.pid) for p in ours()))

    mine_jsonl_dask(str(path), "text", config, str(tmp_path / "dist"), DaskConfig("local:2", memory_limit="1GiB"),
                    id_field="id", progress=progress)
    assert killed and restarted == [True]
    assert (tmp_path / "single" / "phrases.jsonl").read_bytes() == (tmp_path / "dist" / "phrases.jsonl").read_bytes()
