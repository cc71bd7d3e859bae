"""`mine --jsonl --dask` over a compressed, Parquet or WARC file, on a real 2-worker LocalCluster:
a .gz/.zst/WARC file is one partition and Parquet one per row group, and the phrases.jsonl and
report.json are exactly the single process's (ids included: line or row numbers, or --id-field);
damage is the single process's one error, naming the same line or row."""
from __future__ import annotations

import gzip
import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import zstandard
from click.testing import CliRunner

from bloomspan.engine.mining.config import MiningConfig
from bloomspan.sidecar.cli.main import cli
from bloomspan.sidecar.distributed.cluster import DaskConfig
from bloomspan.sidecar.inputs.warc import write_wet
from bloomspan.sidecar.run.dask_jsonl_mining import mine_jsonl_dask
from bloomspan.sidecar.run.file_partitions import ROW_GROUPS, WHOLE_FILE, file_partitions
from bloomspan.sidecar.run.jsonl_mining import JsonlInputError, mine_jsonl
from tests.support.dask_helpers import comparable_report, local_cluster, planted_docs

CONFIG = MiningConfig(sigma=6, min_length=8)


@pytest.fixture(scope="module")
def cluster():
    with local_cluster(2) as c:
        yield c


@pytest.fixture(scope="module")
def crawls(tmp_path_factory):
    folder = tmp_path_factory.mktemp("formats")
    docs = [{**d, "url": f"https://site{i % 3}.example/p/{i}"} for i, d in enumerate(planted_docs(5, 400))]
    lines = "".join(json.dumps(d) + "\n" for d in docs).encode()
    paths = {"gz": folder / "docs.jsonl.gz", "zst": folder / "docs.jsonl.zst", "parquet": folder / "docs.parquet",
             "wet": folder / "docs.warc.wet.gz"}
    paths["gz"].write_bytes(gzip.compress(lines))
    paths["zst"].write_bytes(zstandard.ZstdCompressor().compress(lines))
    pq.write_table(pa.Table.from_pylist(docs), paths["parquet"], row_group_size=90)  # 5 row groups
    write_wet(docs, str(paths["wet"]), paths["wet"].name)
    return docs, paths


def _single_and_dask(path, out, cluster, id_field):
    mine_jsonl(str(path), "text", CONFIG, str(out / "single"), id_field=id_field)
    mine_jsonl_dask(str(path), "text", CONFIG, str(out / "dist"), DaskConfig(cluster.scheduler_address),
                    id_field=id_field)
    phrases = [(out / x / "phrases.jsonl").read_text(encoding="utf-8") for x in ("single", "dist")]
    reports = [json.loads((out / x / "report.json").read_text(encoding="utf-8")) for x in ("single", "dist")]
    return phrases, reports


@pytest.mark.parametrize("fmt,id_field,kind,parts", [("gz", None, WHOLE_FILE, 1), ("zst", "id", WHOLE_FILE, 1),
                                                     ("parquet", None, ROW_GROUPS, 5), ("wet", None, WHOLE_FILE, 1)])
def test_each_format_mines_on_dask_as_in_one_process(cluster, crawls, tmp_path, fmt, id_field, kind, parts):
    _, paths = crawls
    partitions = file_partitions(str(paths[fmt]), lambda p: [])
    assert (partitions.kind, len(partitions.parts)) == (kind, parts)
    (single, dist), (r1, r2) = _single_and_dask(paths[fmt], tmp_path, cluster, id_field)
    assert single == dist and single.count("\n") >= 3
    assert comparable_report(r1) == comparable_report(r2)  # most_cluttered_docs' ids included


def test_damage_is_the_single_process_error(cluster, crawls, tmp_path):
    docs, paths = crawls
    cut = tmp_path / "cut.jsonl.gz"
    cut.write_bytes(paths["gz"].read_bytes()[: paths["gz"].stat().st_size // 2])
    bad_row = tmp_path / "bad.parquet"
    rows = [dict(d) for d in docs]
    rows[200]["text"] = None
    pq.write_table(pa.Table.from_pylist(rows), bad_row, row_group_size=90)
    for path in (cut, bad_row):
        with pytest.raises(JsonlInputError) as single:
            mine_jsonl(str(path), "text", CONFIG, str(tmp_path / "s"))
        with pytest.raises(JsonlInputError) as dist:
            mine_jsonl_dask(str(path), "text", CONFIG, str(tmp_path / "d"), DaskConfig(cluster.scheduler_address))
        assert str(dist.value) == str(single.value)
    assert "row 201" in str(dist.value)


def test_the_command_mines_a_gz_file_with_templates_on_a_local_cluster(tmp_path):
    from bloomspan.corpora import corpus_by_name, write_jsonl

    path = tmp_path / "web.jsonl.gz"
    write_jsonl(corpus_by_name("web", 300, 2), path)
    for name, extra in (("single", []), ("dist", ["--dask", "local:2"])):
        res = CliRunner().invoke(cli, ["mine", "--jsonl", str(path), "--sigma", "10", "--site-field", "site",
                                       "--url-field", "url", "--out", str(tmp_path / name), "--progress", "none",
                                       *extra])
        assert res.exit_code == 0, res.output
    for output in ("phrases.jsonl", "templates.jsonl"):
        assert (tmp_path / "single" / output).read_bytes() == (tmp_path / "dist" / output).read_bytes(), output
