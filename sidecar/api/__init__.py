"""bloomspan's Python API, in one namespace:

* :func:`mine` — the maximal frequent phrases of a list of texts (what ``bloomspan mine
  --jsonl`` writes to ``phrases.jsonl``, as a list of records).
* ``Cleaner``, ``CleanerConfig``, ``PhraseSet`` — cleaning with them
  (:mod:`bloomspan.ingest`); ``PhraseSet.from_records(bloomspan.mine(...))`` joins the two.
* :func:`cleaner_from_run` (also ``Cleaner.from_run``) — a cleaner over a finished run: a
  ``mine --out`` directory, or a published template index given an opensearch-py client
  (:mod:`bloomspan.run_cleaner`). The framework steps in
  :mod:`bloomspan.sidecar.integrations` (LangChain, LlamaIndex, datatrove) are built on it.

Nothing heavy is imported here: ``bloomspan.engine``, ``bloomspan.ingest`` and
``bloomspan.sidecar`` load when first used, so ``bloomspan --help`` stays instant.
"""
from __future__ import annotations

from collections.abc import Iterable

__all__ = ["Cleaner", "CleanerConfig", "PhraseSet", "cleaner_from_run", "mine"]

_INGEST = ("CleanerConfig", "PhraseSet")


def mine(texts: Iterable[str], *, sigma: int = 20, min_length: int = 10, engine: str = "bloomspan") -> list[dict]:
    """The phrases of ``texts`` that ``sigma`` or more of them share, at least ``min_length``
    tokens long and maximal: the records ``mine --jsonl`` writes (``text``, ``tokens``,
    ``length``, ``df``, ``occurrences``, ``psi``, ``id``, ``min_length``), Ψ descending.

    ``engine`` is ``"bloomspan"``, ``"fhk"`` or ``"auto"``; a bad setting raises
    ``bloomspan.engine.mining.config.ConfigError`` naming it.
    """
    # local: `import bloomspan` stays light (no numba) until mine() is called
    from bloomspan.engine.mining.config import MiningConfig
    from bloomspan.sidecar.run.text_mining import mine_texts  # local: as above, the mining run loads the kernels

    return mine_texts(texts, MiningConfig(sigma=sigma, min_length=min_length, engine=engine))


def cleaner_from_run(run, client=None, *, config=None, **config_fields):
    """A cleaner over the phrases and template records of a finished run: ``run`` is a
    ``bloomspan mine --out`` directory (or a file of one); with ``client`` (an opensearch-py
    ``OpenSearch``) it is a template alias or index, read with its curation applied. ``config``
    is a :class:`CleanerConfig`, or give its fields as keywords (default ``fields=("text",)``,
    no id field): ``cleaner_from_run("out", mode="mark")``.
    """
    from bloomspan.run_cleaner import cleaner_from_run as from_run  # local: `import bloomspan` stays light (no numba)

    return from_run(run, client, config=config, **config_fields)


def __getattr__(name: str):
    if name == "Cleaner":  # ingest's Cleaner with from_run, which reads runs from files or the cluster
        from bloomspan.run_cleaner import Cleaner  # local: the lazy exports load ingest on first use

        return Cleaner
    if name in _INGEST:
        import bloomspan.ingest  # local: the lazy exports (PEP 562) load ingest on first use

        return getattr(bloomspan.ingest, name)
    raise AttributeError(f"module 'bloomspan' has no attribute {name!r}")
