"""The template detector inside a mining run: what ``mine --jsonl`` runs when a site or URL field is given.

A run's corpus (tokens, document offsets, line starts, vocabulary) and its exact MCFP
coverage go in; the detector's records (its configuration, template phrases, page
skeletons: what :class:`~bloomspan.ingest.match.template_matcher.TemplateMatcher` reads) and the
stats the run reports come out. The documents' sites are their site field's values (a URL
counts as its host) or the hosts of their URLs (:func:`~bloomspan.sidecar.publish.publication.document_sites`);
URL sections are the second scope level. The run's exact phrases count as found for the
page-skeleton walk where ingest applies them next to the records (``exact_phrases_on_sites``),
so mining and cleaning walk alike.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np

from bloomspan.engine.templates.detector import detect_templates, scope_levels, template_records
from bloomspan.engine.text.slots import number_token_mask
from bloomspan.sidecar.publish.publication import document_sites

from .mine_config import template_config

log = logging.getLogger(__name__)

TEMPLATES_FILE = "templates.jsonl"  # written next to phrases.jsonl


class TemplateOptionsError(ValueError):
    """A template option is not valid; ``flag`` names the command-line flag."""

    def __init__(self, flag: str, message: str):
        self.flag = flag
        super().__init__(f"{flag}: {message}")


@dataclass(frozen=True)
class TemplateOptions:
    """Whether and how a run detects templates.

    site_field, url_field: document fields with the site (or a URL: its host) and the page URL.
    enabled:  None (default): on whenever a site or URL field is given; True/False decide
              (True without either field is an error: the detector works per site).
    config:   TemplateConfig fields that differ from the defaults (``--template-config``).
    """

    site_field: str | None = None
    url_field: str | None = None
    enabled: bool | None = None
    config: dict | None = None

    def __post_init__(self) -> None:
        for name in ("site_field", "url_field"):
            v = getattr(self, name)
            if v is not None and (not isinstance(v, str) or not v):
                raise TemplateOptionsError(f"--{name.replace('_', '-')}", f"{v!r} must be a non-empty field name")
        if self.enabled is None:
            object.__setattr__(self, "enabled", bool(self.site_field or self.url_field))
        if self.enabled and not (self.site_field or self.url_field):
            raise TemplateOptionsError("--templates", "the template detector works per site: give --site-field "
                                                      "and/or --url-field, or leave --templates out")
        self.detector_config()  # validates the fields

    @property
    def fields(self) -> list[str]:
        return [f for f in (self.site_field, self.url_field) if f]

    def detector_config(self):
        """The TemplateConfig: its defaults with ``config`` applied (:func:`template_config`)."""
        try:
            return template_config(self.config)
        except ValueError as exc:
            raise TemplateOptionsError("--template-config", str(exc)) from None


def detect_run_templates(tokens: np.ndarray, doc_offsets: np.ndarray, block_offsets: np.ndarray, vocabulary,
                         site_values: list | None, url_values: list | None, options,
                         mcfp_coverage: np.ndarray, denied: np.ndarray | None = None) -> tuple[list[dict], dict]:
    """``(records, stats)`` of the detector on one run's corpus: the one place a mining run
    (a file or an index) detects templates.

    tokens uint32 (W,), doc_offsets int64 (D+1,), block_offsets int64 (B+1,) (the corpus'
    lines), vocabulary: the corpus' :class:`~bloomspan.engine.text.vocabulary.Vocabulary`;
    site_values / url_values: D values of the fields (None when the field was not given;
    sites are resolved by :func:`~bloomspan.sidecar.publish.publication.document_sites`);
    options: what gives the TemplateConfig (``detector_config()``: a :class:`TemplateOptions`
    or a run's :class:`~.mine_config.TemplatesSection`, both through :func:`template_config`); mcfp_coverage bool (W,): the run's
    exact phrases' coverage; denied bool (W,): tokens no cleaner removes (the occurrences of
    globally denied phrases), left out of the covered figures.
    """
    config = options.detector_config()
    sites = document_sites(site_values, url_values)
    levels = [] if sites is None else scope_levels(sites, url_values, config.section_depth)
    strings = vocabulary.tokens()
    detection = detect_templates(np.ascontiguousarray(tokens), doc_offsets, block_offsets, config, levels,
                                 number_token_mask(strings), anchor_coverage=mcfp_coverage, token_strings=strings)
    records = template_records(detection, config, vocabulary.token)
    covered = detection.coverage | exact_phrases_applied(mcfp_coverage, doc_offsets, levels, detection, config)
    if denied is not None:
        covered &= ~denied
    stats = {"phrases": len(detection.phrases), "skeletons": len(detection.skeletons),
             "line_shapes": len(detection.line_shapes), "title_navs": len(detection.title_navs),
             "own_facts": len(detection.own_facts),
             "covered_tokens": int(covered.sum()), "covered_share": float(covered.mean()) if covered.size else 0.0,
             "documents_with_site": 0 if sites is None else sum(s is not None for s in sites),
             "detector": detection.stats}
    log.info("templates phrases=%d skeletons=%d covered_share=%.4f", stats["phrases"], stats["skeletons"],
             stats["covered_share"])
    return records, stats


def exact_phrases_applied(mcfp_coverage: np.ndarray, doc_offsets: np.ndarray, levels, detection, config) -> np.ndarray:
    """bool (W,): the part of the exact phrases' coverage that ingest applies next to the
    detector's records: all of it with ``exact_phrases_on_sites``, else the pages of sites the
    detector has no record for (as :class:`~bloomspan.ingest.match.template_matcher.TemplateMatcher`)."""
    mcfp_coverage = np.asarray(mcfp_coverage, dtype=bool)
    if config.exact_phrases_on_sites or not levels:
        return mcfp_coverage
    known = {p.scope for p in detection.phrases if p.scope is not None}
    known |= {k.scope for k in detection.skeletons if k.scope is not None}
    n_docs = doc_offsets.shape[0] - 1
    mined = np.asarray([any(level[d] in known for level in levels if level[d] is not None) for d in range(n_docs)],
                       dtype=bool)
    return mcfp_coverage & np.repeat(~mined, np.diff(doc_offsets))
