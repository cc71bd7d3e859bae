"""The refusals of a mining run: it never publishes a phrase set that would silently stop the cleaning.

A run refuses (:class:`RunRefusedError`, naming the flag; nothing published, the alias stays
where it was) when it read 0 usable documents (an empty index, a mistyped ``--field`` or a
field that holds no text), when ``--sigma`` exceeds the documents read, or when it found 0
phrases while the alias holds a run with phrases. ``allow_empty`` (``--allow-empty``)
publishes anyway.
"""
from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from bloomspan.sidecar.errors import BloomspanSidecarError, RunNotFoundError
from bloomspan.sidecar.publish.template_index import current_run_doc

if TYPE_CHECKING:  # the run's config, from the module that runs it
    from .mine_config import MineConfig

log = logging.getLogger(__name__)


class RunRefusedError(BloomspanSidecarError):
    """The run would publish an empty or useless phrase set; nothing was published.
    ``field`` names the flag (``index``, ``field``, ``sigma``); the message starts with it."""


def _mapped_fields(client, indices: list[str], limit: int = 20) -> list[str]:
    """Dotted paths of the fields mapped in ``indices`` (sorted, at most ``limit``): what a
    refusal over ``--field`` lists as the fields seen."""
    try:
        resp = client.indices.get_mapping(index=",".join(indices))
    except Exception as exc:  # the message is a hint; never fail the refusal over it
        log.debug("reading the source mapping failed: %s", exc)
        return []
    paths: set[str] = set()

    def walk(props: dict, prefix: str) -> None:
        for name, body in props.items():
            if isinstance(body, dict) and "properties" in body:
                walk(body["properties"], f"{prefix}{name}.")
            else:
                paths.add(prefix + name)

    for body in resp.values():
        walk((body.get("mappings") or {}).get("properties") or {}, "")
    return sorted(paths)[:limit]


def no_documents(config: MineConfig, indices: list[str]) -> RunRefusedError:
    return RunRefusedError(
        f"--index {config.scan.index}: {', '.join(indices)} hold{'s' if len(indices) == 1 else ''} no documents; "
        "index documents first (nothing was published; --allow-empty publishes an empty run)",
        index=config.scan.index, field="index")


def check_documents(config: MineConfig, client, indices: list[str], n_all: int, n_usable: int,
                    skipped: dict[str, int]) -> None:
    """Refuse a run that read no usable document or whose ``--sigma`` exceeds the documents
    read (no phrase can occur in more documents than there are)."""
    if config.publish.allow_empty:
        return
    if n_all == 0:
        raise no_documents(config, indices)
    if n_usable == 0:
        why = ", ".join(f"{reason.replace('_', ' ')} in {n:,}" for reason, n in skipped.items() if n)
        seen = _mapped_fields(client, indices)
        raise RunRefusedError(
            f"--field {config.scan.field}: 0 of {n_all:,} documents have a text value in field {config.scan.field!r}"
            f"{f' ({why})' if why else ''}; fields seen: {', '.join(seen) or 'none mapped'} "
            "(nothing was published)", index=config.scan.index, field="field")
    if config.mining.sigma > n_usable:
        raise RunRefusedError(sigma_above_documents(config.mining.sigma, n_usable, config.scan.index, config.scan.field,
                                                    "nothing was published"), index=config.scan.index, field="sigma")


def sigma_above_documents(sigma: int, n_usable: int, source: str, field: str, outcome: str) -> str:
    """The refusal of a ``--sigma`` above the ``n_usable`` documents of ``source`` (an index or a
    file): no phrase can occur in more documents than there are. ``outcome``: what was kept."""
    return (f"--sigma {sigma}: only {n_usable:,} document{'s' if n_usable != 1 else ''} of {source} "
            f"{'have' if n_usable != 1 else 'has'} a text value in field {field!r}, and a phrase must occur "
            f"in at least --sigma of them; give --sigma {max(2, n_usable)} or less ({outcome})")


def check_phrases(config: MineConfig, client, n_records: int) -> None:
    """Refuse to replace a run that has phrases with one that has none: the cleaner would
    stop cleaning. A first run (no alias yet) may be empty."""
    if config.publish.allow_empty or n_records:
        return
    try:
        current = current_run_doc(client, config.publish.template_index)
    except RunNotFoundError:
        return
    templates = current.get("templates") or {}
    held = int(current.get("phrases") or 0) + int(templates.get("phrases") or 0) + int(templates.get("skeletons") or 0)
    if held:
        raise RunRefusedError(
            f"--sigma {config.mining.sigma} --min-length {config.mining.min_length}: this run found 0 phrases, while "
            f"{config.publish.template_index} holds run {current.get('run_id')} with {held:,}; publishing it would stop "
            "the cleaning, so nothing was published and the alias stays; lower --sigma or --min-length, or give "
            "--allow-empty", index=config.publish.template_index, field="sigma")
