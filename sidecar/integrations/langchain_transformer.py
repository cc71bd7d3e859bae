"""LangChain: :class:`BloomspanTransformer`, a ``BaseDocumentTransformer`` that strips (or marks)
known boilerplate in ``Document.page_content`` before a text splitter cuts it into chunks.

    transformer = BloomspanTransformer.from_run("out")          # a `bloomspan mine --out` directory
    chunks = splitter.split_documents(transformer.transform_documents(docs))

Each document comes back as a new ``Document`` with the same ``id`` and metadata, plus
``metadata["bloomspan"]``: ``boilerplate_ratio`` and ``spans`` (offsets into the page content
as it came in; :mod:`.text_cleaning`). The input documents are not changed.
"""
from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

try:
    from langchain_core.documents import BaseDocumentTransformer, Document
except ImportError as exc:
    raise ImportError(f"{__name__} needs langchain-core ({exc}): pip install 'bloomspan[langchain]'") from exc

from .text_cleaning import METADATA_KEY, clean_texts, step_cleaner


class BloomspanTransformer(BaseDocumentTransformer):
    """Strip or mark the boilerplate of a run in each document's ``page_content``.

    cleaner: from :meth:`from_run` (or :func:`.text_cleaning.step_cleaner`).
    """

    def __init__(self, cleaner):
        self.cleaner = cleaner

    @classmethod
    def from_run(cls, run: str | os.PathLike, client=None, mode: str = "strip", **config_fields) -> BloomspanTransformer:
        """Over a ``mine --out`` directory, or a template index given an opensearch-py ``client``;
        ``mode`` ``"strip"`` or ``"mark"``; other keywords are :class:`bloomspan.CleanerConfig` fields."""
        return cls(step_cleaner(run, client, mode, **config_fields))

    def transform_documents(self, documents: Sequence[Document], **kwargs: Any) -> Sequence[Document]:
        documents = list(documents)
        cleaned = clean_texts(self.cleaner, [d.page_content for d in documents])
        return [Document(page_content=c.text, id=d.id, metadata={**d.metadata, METADATA_KEY: c.metadata})
                for d, c in zip(documents, cleaned)]
