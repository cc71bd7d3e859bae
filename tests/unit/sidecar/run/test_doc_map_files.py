"""A doc map written by parts of any size reads back as the list of keys (items, slices,
published chunks), and an incomplete folder (no manifest) is refused naming the fix."""
from __future__ import annotations

import pytest

from bloomspan.sidecar.errors import CheckpointError
from bloomspan.sidecar.publish.template_index import DOCMAP_CHUNK
from bloomspan.sidecar.run.doc_map_files import MANIFEST, DocMap, DocMapWriter


@pytest.mark.parametrize("n_docs, part", [(0, 5), (1, 1), (DOCMAP_CHUNK * 2 + 3, 7_777), (DOCMAP_CHUNK, DOCMAP_CHUNK)])
def test_parts_read_back_as_the_keys(tmp_path, n_docs, part):
    keys = [f"k{i:07d}\u00e9" for i in range(n_docs)]
    writer = DocMapWriter(tmp_path / "doc_map")
    for lo in range(0, n_docs, part):
        writer.add(keys[lo:lo + part])
    doc_map = writer.close()
    again = DocMap(tmp_path / "doc_map")
    assert len(doc_map) == len(again) == n_docs
    assert list(again) == keys
    assert again[-1:] == keys[-1:]
    for first in range(0, n_docs, DOCMAP_CHUNK):
        assert again[first:first + DOCMAP_CHUNK] == keys[first:first + DOCMAP_CHUNK]
    with pytest.raises(IndexError):
        again[n_docs]


def test_a_folder_without_manifest_is_refused(tmp_path):
    writer = DocMapWriter(tmp_path / "doc_map")
    writer.add(["a"])
    with pytest.raises(CheckpointError, match="delete"):
        DocMap(tmp_path / "doc_map")
    writer.close()
    assert (tmp_path / "doc_map" / MANIFEST).exists()
    assert DocMap(tmp_path / "doc_map")[0] == "a"
