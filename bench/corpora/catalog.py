"""Corpus generators by name, for the CLI (``bloomspan corpus NAME --docs N --seed S``)."""
from __future__ import annotations

from collections.abc import Callable, Iterator

from .synthetic import generate_synthetic1, generate_synthetic2
from .web import generate_web

GENERATORS: dict[str, Callable[[int, int], Iterator[dict]]] = {
    "web": generate_web,
    "synthetic1": generate_synthetic1,
    "synthetic2": generate_synthetic2,
}
CORPUS_NAMES = tuple(GENERATORS)


def corpus_by_name(name: str, n_docs: int, seed: int) -> Iterator[dict]:
    """Stream ``n_docs`` documents of corpus ``name`` (one of CORPUS_NAMES) from ``seed``.

    Every generator uses its defaults: web picks ``default_n_sites(n_docs)`` sites,
    Synthetic 1 has 5,000 words per document (needs n_docs >= 5), Synthetic 2 300 phrases.
    """
    try:
        gen = GENERATORS[name]
    except KeyError:
        raise ValueError(f"name={name!r}: unknown corpus; choose one of {', '.join(CORPUS_NAMES)}") from None
    return gen(n_docs, seed)
