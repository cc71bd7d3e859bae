"""LlamaIndex: :class:`BloomspanTransform`, a ``TransformComponent`` that strips (or marks) known
boilerplate in documents and nodes, first in an ``IngestionPipeline``'s transformations:

    pipeline = IngestionPipeline(transformations=[BloomspanTransform.from_run("out"), SentenceSplitter()])

Each node comes back as a copy with its text cleaned and ``metadata["bloomspan"]``
(``boilerplate_ratio`` and ``spans``, offsets into the text as it came in; :mod:`.text_cleaning`),
a key left out of the text that embeddings and LLMs see. Relationships, ids and the other
metadata are kept; the input nodes are not changed.
"""
from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

try:
    from llama_index.core.schema import BaseNode, MetadataMode, TransformComponent
    from pydantic import PrivateAttr
except ImportError as exc:
    raise ImportError(f"{__name__} needs llama-index-core ({exc}): pip install 'bloomspan[llama-index]'") from exc

from .text_cleaning import METADATA_KEY, clean_texts, step_cleaner


class BloomspanTransform(TransformComponent):
    """Strip or mark the boilerplate of a run in each node's text (documents are nodes too).

    The cleaner (from :meth:`from_run`) is given to the constructor: ``BloomspanTransform(cleaner)``.
    """

    _cleaner: Any = PrivateAttr()

    def __init__(self, cleaner, **kwargs: Any):
        super().__init__(**kwargs)
        self._cleaner = cleaner

    @classmethod
    def from_run(cls, run: str | os.PathLike, client=None, mode: str = "strip", **config_fields) -> BloomspanTransform:
        """Over a ``mine --out`` directory, or a template index given an opensearch-py ``client``;
        ``mode`` ``"strip"`` or ``"mark"``; other keywords are :class:`bloomspan.CleanerConfig` fields."""
        return cls(step_cleaner(run, client, mode, **config_fields))

    def __call__(self, nodes: Sequence[BaseNode], **kwargs: Any) -> Sequence[BaseNode]:
        nodes = list(nodes)
        cleaned = clean_texts(self._cleaner, [n.get_content(metadata_mode=MetadataMode.NONE) for n in nodes])
        out = []
        for node, c in zip(nodes, cleaned):
            # A shallow copy with new metadata and exclusion lists: the fields written here are new
            # objects, and set_content assigns a new text, so the input node is never changed (a
            # deep copy cost twice the cleaning).
            copy = node.model_copy(update={
                "metadata": {**node.metadata, METADATA_KEY: c.metadata},
                "excluded_embed_metadata_keys": _with_key(node.excluded_embed_metadata_keys),
                "excluded_llm_metadata_keys": _with_key(node.excluded_llm_metadata_keys)})
            if c.changed:
                copy.set_content(c.text)
            out.append(copy)
        return out


def _with_key(keys: list[str]) -> list[str]:
    return keys if METADATA_KEY in keys else [*keys, METADATA_KEY]
