"""A cleaner built from a finished mining run: :func:`cleaner_from_run` and ``Cleaner.from_run``.

A run is one of

* the directory ``bloomspan mine --out DIR`` wrote (its ``phrases.jsonl``, with the
  ``templates.jsonl`` and ``report.json`` beside it), or one file of it, or a
  ``bloomspan templates`` file: read as ``bloomspan clean --phrases`` reads it;
* with an opensearch-py ``client``: a template alias (or the physical index of one run) that
  ``bloomspan mine`` published, read with the operator's curation applied, as ``bloomspan
  clean --template-index`` reads it.

The result cleans with ``clean`` / ``clean_batch`` like any :class:`bloomspan.ingest.Cleaner`;
a template index whose curation holds site-scoped deny entries gives a
:class:`~bloomspan.ingest.clean.curated_cleaner.CuratedCleaner`, which routes each document
to the set made for its site and has the same two methods.
"""
from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

from bloomspan.ingest.base.errors import IngestConfigError
from bloomspan.ingest.clean.cleaner import Cleaner as IngestCleaner, CleanerConfig
from bloomspan.ingest.match.loading import load_run_phrases
from bloomspan.sidecar.publish.template_reader import current_run, load_cleaner

log = logging.getLogger(__name__)

PHRASES_FILE = "phrases.jsonl"
# A document's text sits in "text" unless the caller says otherwise; its id is not needed.
DEFAULT_CONFIG = {"fields": ("text",), "id_field": None}


def cleaner_config(config: CleanerConfig | None, config_fields: dict[str, Any]) -> CleanerConfig:
    """``config`` as given, or a :class:`CleanerConfig` of ``config_fields`` over
    :data:`DEFAULT_CONFIG`; IngestConfigError when both are given."""
    if config is not None and config_fields:
        raise IngestConfigError("config", config, f"give a CleanerConfig or its fields ({sorted(config_fields)}), "
                                "not both")
    if config is not None:
        if not isinstance(config, CleanerConfig):
            raise IngestConfigError("config", config, "must be a bloomspan.CleanerConfig or None")
        return config
    return CleanerConfig(**{**DEFAULT_CONFIG, **config_fields})


def cleaner_from_run(run: str | os.PathLike, client=None, *, config: CleanerConfig | None = None,
                     cleaner_type: type = IngestCleaner, **config_fields):
    """A cleaner over the phrases (and template records) of ``run`` (module docstring).

    ``run``: a ``mine --out`` directory or a file of one; with ``client`` (an opensearch-py
    ``OpenSearch``), a template alias or index. ``config``: a :class:`CleanerConfig`, or its
    fields as keywords (``fields=("body",)``, ``mode="mark"``, ...; default ``fields=("text",)``,
    no id field). Errors (:class:`~bloomspan.ingest.base.errors.IngestConfigError`,
    :class:`~bloomspan.ingest.base.errors.PhraseSetError`) name the run and what to give instead.
    ``cleaner_type``: the class a run directory's cleaner is made of (``Cleaner.from_run`` gives
    its own); a template index's is made as ``clean --template-index`` makes it.
    """
    config = cleaner_config(config, config_fields)
    if client is None:
        return _from_files(run, config, cleaner_type)
    if not hasattr(client, "indices"):
        raise IngestConfigError("client", client, "must be an opensearch-py OpenSearch client (or None for a run "
                                "directory)")
    return _from_index(client, os.fspath(run), config)


def _from_files(run: str | os.PathLike, config: CleanerConfig, cleaner_type: type) -> IngestCleaner:
    path = Path(run)
    if path.is_dir():
        path = path / PHRASES_FILE
        if not path.is_file():
            raise IngestConfigError("run", os.fspath(run), f"the directory has no {PHRASES_FILE}: give the --out "
                                    "directory of `bloomspan mine`")
    elif not path.is_file():
        raise IngestConfigError("run", os.fspath(run), "no such directory or file: give a `bloomspan mine --out` "
                                "directory, or a template index name with client=")
    loaded = load_run_phrases(path)
    for note in loaded.notes:
        log.info("run %s: %s", run, note)
    if config.match == "windows" and config.min_length is None and loaded.min_length is None and len(loaded.phrase_set):
        log.warning("run %s records no min_length: its phrases are matched whole; give min_length= (the run's "
                    "--min-length) to match their windows", run)
    return cleaner_type(loaded.phrase_set, config, templates=loaded.templates)


def _from_index(client, name: str, config: CleanerConfig):
    physical = current_run(client, name)
    if physical is None:
        if not client.indices.exists(index=name):
            raise IngestConfigError("run", name, "no such template alias or index on the cluster: run "
                                    "`bloomspan mine` first, or give a `mine --out` directory without client=")
        physical = name
    cleaner, curation, _ = load_cleaner(client, physical, config)
    if curation.entries:
        log.info("run %s: curation %d deny and %d allow entries applied", physical, curation.denied, curation.allowed)
    return cleaner


class Cleaner(IngestCleaner):
    """:class:`bloomspan.ingest.Cleaner` with one more constructor, :meth:`from_run`."""

    @classmethod
    def from_run(cls, run: str | os.PathLike, client=None, *, config: CleanerConfig | None = None, **config_fields):
        """:func:`cleaner_from_run`: a cleaner of this class over a ``mine --out`` directory, or
        over a template alias or index given an opensearch-py ``client`` (then an ingest
        ``Cleaner``, or a ``CuratedCleaner`` when its curation has site-scoped deny entries)."""
        return cleaner_from_run(run, client, config=config, cleaner_type=cls, **config_fields)
