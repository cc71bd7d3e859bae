"""bloomspan's Python API, in one namespace:

* :func:`mine` — the maximal frequent phrases of a list of texts (what ``bloomspan mine
  --jsonl`` writes to ``phrases.jsonl``, as a list of records).
* ``Cleaner``, ``CleanerConfig``, ``PhraseSet`` — cleaning with them
  (:mod:`bloomspan.ingest`); ``PhraseSet.from_records(bloomspan.mine(...))`` joins the two.

Nothing heavy is imported here: ``bloomspan.engine``, ``bloomspan.ingest`` and
``bloomspan.sidecar`` load when first used, so ``bloomspan --help`` stays instant.
"""
from __future__ import annotations

from collections.abc import Iterable

__all__ = ["Cleaner", "CleanerConfig", "PhraseSet", "mine"]

_INGEST = ("Cleaner", "CleanerConfig", "PhraseSet")


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


def __getattr__(name: str):
    if name in _INGEST:
        import bloomspan.ingest  # local: the lazy exports (PEP 562) load ingest on first use

        return getattr(bloomspan.ingest, name)
    raise AttributeError(f"module 'bloomspan' has no attribute {name!r}")
