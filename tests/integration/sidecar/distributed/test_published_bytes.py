"""`mine --index` on one node and with `--dask local:2` store the same bytes in every phrase's
``doc_bitmap`` and in the run's ``coverage_bitmap``, on a corpus built so that the coverage
holds containers whose run and array forms cost the same bytes (the single node built them
as arrays, the Dask driver's OR of the shards' bitmaps as runs, and both were stored as built).

Layout (sigma 2, min length 2, words that occur once except the planted phrases): in each
2**16-position container k, a document holds a 4-token phrase (4 members, one run), and a
3-token phrase straddles the container's end (its first token is the container's last
position). Container k then holds 4 + 1 members in 2 runs (k = 0), or, with the straddling
phrase of container k - 1 at its start, 2 + 4 + 1 in 3 runs: 10 or 14 bytes either way. A
document shard that holds the 4-token run without the straddling phrase has it as a run
container. The second occurrence of every phrase sits in documents after the last container.
"""
from __future__ import annotations

import base64

import numpy as np
from click.testing import CliRunner
from opensearchpy import helpers
from pyroaring import BitMap

from bloomspan.sidecar.cli.main import cli
from tests.support.sidecar_helpers import make_source

SPAN = 1 << 16
CONTAINERS = 6  # a document shard holds the 4-token run without the straddler in about half of them
DOC_TOKENS = 8000


def _letters(i: int) -> str:
    out = ""
    while True:
        out, i = chr(97 + i % 26) + out, i // 26
        if i == 0:
            return out


def tie_corpus() -> list[dict]:
    """Documents (ids in canonical order) laid out as the module doc says."""
    filler = iter(f"f{_letters(i)}" for i in range(10**7))  # each word once: never a phrase
    fill = lambda n: [next(filler) for _ in range(n)]  # noqa: E731
    four = [[f"p{_letters(k)}{c}" for c in "abcd"] for k in range(CONTAINERS)]
    three = [[f"s{_letters(k)}{c}" for c in "abc"] for k in range(CONTAINERS)]
    docs, pos = [], 0
    for k in range(CONTAINERS):
        docs.append(fill(100) + four[k] + fill(100))
        pos += len(docs[-1])
        straddler_start = (k + 1) * SPAN - 1 - 50
        while pos < straddler_start:
            docs.append(fill(min(DOC_TOKENS, straddler_start - pos)))
            pos += len(docs[-1])
        docs.append(fill(50) + three[k])  # its first phrase token is position (k + 1) * SPAN - 1
        pos += len(docs[-1])
    docs += [fill(10) + four[k] + fill(10) + three[k] + fill(10) for k in range(CONTAINERS)]
    return [{"id": f"d{i:04d}", "text": " ".join(words)} for i, words in enumerate(docs)]


def _stored(client, alias: str) -> tuple[dict[str, bytes], bytes]:
    """The bytes stored in each phrase's doc_bitmap (by phrase id) and in the run's coverage_bitmap."""
    phrases, coverage = {}, None
    for hit in helpers.scan(client, index=alias, query={"query": {"match_all": {}}}):
        src = hit["_source"]
        if src["kind"] == "phrase":
            phrases[hit["_id"]] = base64.b64decode(src["doc_bitmap"])
        elif src["kind"] == "run":
            assert src["coverage_chunks"] == 0, "this corpus' coverage fits the run document"
            coverage = base64.b64decode(src["coverage_bitmap"])
    return phrases, coverage


def _tied_containers(members: np.ndarray) -> list[int]:
    """Containers whose members cost as many bytes as runs as as an array (card = 2 * runs + 1)."""
    tied = []
    for key in np.unique(members >> 16).tolist():
        low = members[(members >> 16) == key].astype(np.int64)
        runs = 1 + int(np.count_nonzero(np.diff(low) != 1))
        if low.size == 2 * runs + 1:
            tied.append(key)
    return tied


def test_single_node_and_dask_store_the_same_bitmap_bytes(os_client, index_prefix, opensearch_url, tmp_path):
    make_source(os_client, f"{index_prefix}src", tie_corpus(), shards=2)
    args = ["mine", "--index", f"{index_prefix}src", "--url", opensearch_url, "--sigma", "2", "--min-length", "2",
            "--lease-index", f"{index_prefix}lease", "--no-templates", "--progress", "none"]
    for name, extra in (("one", []), ("many", ["--dask", "local:2", "--dask-memory-limit", "1GiB"])):
        run = CliRunner().invoke(cli, args + ["--template-index", f"{index_prefix}{name}",
                                              "--work-dir", str(tmp_path / name), *extra])
        assert run.exit_code == 0, run.output
    one_phrases, one_coverage = _stored(os_client, f"{index_prefix}one")
    many_phrases, many_coverage = _stored(os_client, f"{index_prefix}many")
    assert len(one_phrases) == 2 * CONTAINERS
    members = np.array(BitMap.deserialize(one_coverage).to_array(), dtype=np.uint32)
    assert _tied_containers(members) == list(range(CONTAINERS))  # the case this corpus is built for
    assert many_coverage == one_coverage
    assert many_phrases == one_phrases
