"""Scope ids shared by every matcher, and the scopes a document belongs to.

A phrase with a scope (a site, or a site section ``site/folder``) applies only to the
documents that list that scope; a phrase without one applies everywhere.
"""
from __future__ import annotations

from collections.abc import Sequence
from urllib.parse import urlsplit

GLOBAL_SCOPE = -1  # phrase scope id of phrases that apply to every document
UNKNOWN_SCOPE = -2  # scope id of a document whose scope no phrase names


def scope_names(scopes: str | Sequence[str] | None) -> tuple[str, ...]:
    """A document's scopes as a matcher takes them: one, several or none."""
    return () if scopes is None else (scopes,) if isinstance(scopes, str) else tuple(scopes)


def template_scopes(site: str | None, url: str | None = None) -> list[str]:
    """The scopes a document belongs to for site-scoped records: its site, and ``site/<the
    first d folders of the URL path>`` for every d (the detector's sections use one depth;
    listing all of them lets the matcher find it without knowing which)."""
    if not site:
        return []
    out = [site]
    if url:
        folders = [p for p in urlsplit(url).path.split("/") if p][:-1]
        out += [f"{site}/" + "/".join(folders[:d]) for d in range(1, len(folders) + 1)] or [f"{site}/"]
    return out
