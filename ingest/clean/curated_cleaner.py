"""A cleaner that honours the operator's allow and deny lists, site-scoped entries included.

:func:`curated_cleaner` builds a :class:`~.cleaner.Cleaner` over the curated records
(:func:`.curation.curate_records`). A deny entry scoped to a site cannot be expressed in one
phrase set (a global phrase applies to every document), so when there are such entries the
result is a :class:`CuratedCleaner`: documents whose scopes (their site, and with template
records their URL sections) hold a scoped deny are cleaned with a set made for those
scopes, every other document with the base set. The routing happens per document before
matching; the matcher itself is untouched.

Every cleaner built here also protects the text of the deny entries that apply to its
documents (the global ones, and those of its scopes): their occurrences stay uncovered
whatever record covered them, page skeletons and line shapes included
(:mod:`.denied_text`).
"""
from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from ..match.scopes import template_scopes
from ..match.template_matcher import TemplateMatcher
from ..records.curation import Curated, CurationEntry, curate_records, scoped_deny_scopes
from ..records.phrase_set import PhraseSet
from .cleaner import Cleaner, CleanerConfig, CleanResult
from .denied_text import DeniedText

log = logging.getLogger(__name__)


def denied_text(entries: Iterable[CurationEntry], document_scopes: frozenset = frozenset()) -> DeniedText:
    """The phrases of the deny entries that apply to documents of ``document_scopes``: those
    without a scope, and those scoped to one of them (an entry naming only a record id has
    no text to protect)."""
    return DeniedText(e.tokens for e in entries if e.action == "deny" and e.tokens
                      and (e.scope is None or e.scope in document_scopes))


def _build(records: list, config: CleanerConfig, with_templates: bool, source: str,
           protected: DeniedText | None = None) -> Cleaner:
    if with_templates:
        matcher = TemplateMatcher(records, source=source)
        return Cleaner(matcher.phrase_set, config, templates=matcher, protected=protected)
    return Cleaner(PhraseSet.from_records(records, source=source), config, protected=protected)


class CuratedCleaner:
    """Routes each document to the cleaner of the scoped deny entries that apply to it.

    Has the surface the proxy and ``clean`` use: ``config``, ``phrase_set``, ``templates``,
    ``clean_batch`` and ``clean``; results are the routed cleaners' results, in input order.
    """

    def __init__(self, records: Sequence[Any], config: CleanerConfig, entries: Sequence[CurationEntry],
                 with_templates: bool, source: str, base: Cleaner, curated: Curated):
        self._records = list(records)
        self._entries = list(entries)
        self._with_templates = with_templates
        self._source = source
        self.config = config
        self.base = base
        self.curated = curated
        self.deny_scopes = scoped_deny_scopes(entries)
        self._by_key: dict[frozenset, Cleaner] = {frozenset(): base}
        self._lock = threading.Lock()
        for scope in sorted(self.deny_scopes):  # the common case (one scope per document) is ready at once
            self._cleaner_for(frozenset([scope]))

    @property
    def phrase_set(self) -> PhraseSet:
        return self.base.phrase_set

    @property
    def templates(self):
        return self.base.templates

    def _cleaner_for(self, key: frozenset) -> Cleaner:
        cleaner = self._by_key.get(key)
        if cleaner is not None:
            return cleaner
        with self._lock:
            cleaner = self._by_key.get(key)
            if cleaner is None:
                curated = curate_records(self._records, self._entries, document_scopes=key)
                protected = denied_text(self._entries, key)
                cleaner = _build(curated.records, self.config, self._with_templates, self._source, protected)
                self._by_key[key] = cleaner
                log.info("curated cleaner for scopes=%s phrases=%d filtered=%d protected=%d", sorted(key),
                         len(cleaner.phrase_set), len(curated.filtered), len(protected))
        return cleaner

    def document_key(self, doc: Any) -> frozenset:
        """The scoped deny entries' scopes that apply to ``doc`` (empty: the base set)."""
        cfg = self.config
        if not isinstance(doc, dict) or cfg.scope_field is None:
            return frozenset()
        site = doc.get(cfg.scope_field)
        if not isinstance(site, str) or not site:
            return frozenset()
        url = doc.get(cfg.url_field) if cfg.url_field is not None else None
        scopes = template_scopes(site, url if isinstance(url, str) else None)
        return frozenset(s for s in scopes if s in self.deny_scopes)

    def clean_batch(self, docs: Iterable[Any], doc_ids: Iterable[Any] | None = None) -> list[CleanResult]:
        docs = list(docs)
        ids = [None] * len(docs) if doc_ids is None else list(doc_ids)
        if len(ids) != len(docs):
            raise ValueError(f"doc_ids has {len(ids)} entries for {len(docs)} documents")
        groups: dict[frozenset, list[int]] = {}
        for i, doc in enumerate(docs):
            groups.setdefault(self.document_key(doc), []).append(i)
        results: list[CleanResult | None] = [None] * len(docs)
        for key, positions in groups.items():
            cleaned = self._cleaner_for(key).clean_batch([docs[i] for i in positions], [ids[i] for i in positions])
            for i, result in zip(positions, cleaned):
                results[i] = result
        return results  # type: ignore[return-value]

    def clean(self, doc: Any, doc_id: Any = None) -> CleanResult:
        return self.clean_batch([doc], [doc_id])[0]


def curated_cleaner(records: Sequence[Any], config: CleanerConfig, entries: Sequence[CurationEntry], *,
                    with_templates: bool, source: str = "records",
                    on_curated: Callable[[Curated], None] | None = None) -> Cleaner | CuratedCleaner:
    """A cleaner over ``records`` (phrase records, plus the template detector's records when
    ``with_templates``) with the curation ``entries`` applied; a :class:`CuratedCleaner`
    only when some deny entry is scoped. ``on_curated`` receives the base set's outcome."""
    entries = list(entries)
    curated = curate_records(records, entries)
    if on_curated is not None:
        on_curated(curated)
    base = _build(curated.records, config, with_templates, source, denied_text(entries))
    if not scoped_deny_scopes(entries):
        return base
    return CuratedCleaner(records, config, entries, with_templates, source, base, curated)
