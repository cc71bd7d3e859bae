"""The template detector's configuration: one dataclass per concept, one default per knob.

:class:`TemplateConfig` holds the detector's passes (:mod:`.detector`) and nests
:class:`SkeletonConfig`, the page-skeleton walk's knobs (:mod:`.page_skeleton`), which a
skeleton record also carries (its ``params``). The engine, the record readers
(:class:`~.page_skeleton.PageSkeleton.from_record`, the ingest matcher) and the CLI
(``bloomspan templates``, whose options are generated from these fields) all read the
defaults written here. This module imports no numba, so the CLI's ``--help`` stays instant.

Dicts (a config record, a run document's ``template_config``, ``--template-config``) become
configs through :meth:`TemplateConfig.from_dict`, which reads the nested form
(``{"skeleton": {"line_length": 8}}``).
"""
from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from bloomspan.engine.mining.config import ENGINES, ConfigError


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


# The detector's kernels take int64 arguments: a larger knob would fail inside numba.
_KNOB_MAX = 2**63 - 1


def _int_knob_error(v: Any, low: int, what: str) -> str | None:
    """Why ``v`` is not an integer knob of at least ``low`` (``what``: its unit), or None."""
    if not _is_int(v) or v < low:
        return f"must be an integer >= {low} ({what})"
    if v > _KNOB_MAX:
        return f"must be an integer from {low} to 2**63-1 ({what})"
    return None


def _is_share(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and 0.0 < v <= 1.0


@dataclass(frozen=True, kw_only=True)
class SkeletonConfig:
    """The page-skeleton walk (:mod:`.page_skeleton`), per group of pages (a site or a section).

    anchor_fraction:  share of a group's pages a line (or line prefix) needs to anchor the walk.
    line_length:      longest plain gap line the walk fills, in tokens.
    echo_length:      longest echo line (repeated in its page) the walk fills, in tokens.
    site_echo_length: longest line taken after the header because it occurs on another page of
                      the group (a site map's entries); 0 switches it off.
    toc_min_lines:    fewest entries of an in-page table of contents taken anywhere in the page
                      (a "quick view" box); 0 switches tables of contents off.
    toc_line_length:  longest table-of-contents entry, in tokens.
    box_fraction:     share of a group's pages each line of a mid-page box's seed is on.
    box_min_lines:    fewest such lines in a row that make a box; 0 switches boxes off.

    The defaults are TemplateConfig's chosen ones (bench/RESULTS.md "Template quality"): site
    echoes (``site_echo_length=6``) and longer gap lines (``line_length=8``) find 1-1.5 points
    more on the tuning sites but damage 0.56-0.65 % of their content.
    """

    anchor_fraction: float = 0.7
    line_length: int = 6
    echo_length: int = 20
    site_echo_length: int = 0
    toc_min_lines: int = 3
    toc_line_length: int = 10
    box_fraction: float = 0.4
    box_min_lines: int = 4

    def __post_init__(self) -> None:
        for name, fix in (("anchor_fraction", "must be a number in (0, 1] (0.5 = a line on half of a site's pages)"),
                          ("box_fraction", "must be a number in (0, 1] (0.4 = a line on 40% of a site's pages)")):
            if not _is_share(getattr(self, name)):
                raise ConfigError(f"skeleton.{name}", getattr(self, name), fix)
        for name, low, what in (("line_length", 1, "tokens"), ("echo_length", 1, "tokens"),
                                ("site_echo_length", 0, "tokens, 0 = off"), ("toc_min_lines", 0, "lines, 0 = off"),
                                ("toc_line_length", 1, "tokens"), ("box_min_lines", 0, "lines, 0 = off")):
            v = getattr(self, name)
            if (why := _int_knob_error(v, low, what)) is not None:
                raise ConfigError(f"skeleton.{name}", v, why)

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_record(cls, params: Mapping[str, Any]) -> SkeletonConfig:
        """The ``params`` of a skeleton record (:meth:`to_dict`) or the ``skeleton`` of a
        ``--template-config``; a missing knob takes its default. Raises ConfigError naming the key."""
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(params) - known)
        if unknown:
            raise ConfigError("skeleton", unknown, f"unknown keys; known: {', '.join(sorted(known))}")
        return cls(**params)


@dataclass(frozen=True, kw_only=True)
class TemplateConfig:
    """Detector parameters. The defaults scored best on the real documentation corpus
    (bench/RESULTS.md "Template quality"): content damage <= 0.5 % (the issue's limit), the
    issue's recall goals met (>= 70 % per site on average, >= 95 % overall), then the most
    template tokens found (the block-miner knobs among 288 configs before the page skeleton
    existed, then sigma_fraction, scoped MCFP and the anchor share among 32, then the
    skeleton's gap line length, site echoes, tables of contents and boxes among 32). The
    global passes are off by default: on that corpus they found no template the site passes
    missed, only shared code idioms.

    sigma_fraction:    per-group sigma as a share of the group's documents.
    sigma_floor:       per-group sigma never goes below this many documents.
    block_min_length:  tokens a frequent single line needs to be a template on its own.
    run_min_length:    tokens a chain of frequent consecutive line pairs needs.
    edge_anchors:      a page's start and end count as lines of 0 tokens (blocks.mine_blocks edges).
    section_depth:     URL path segments that define a site section (0: sites only).
    global_sigma:      documents for the global passes on a corpus without groups.
    global_min_sites:  groups (sites) for the global passes when groups are given.
    global_min_length: MCFP minimum length of the global pass; None (default) switches it off.
    global_blocks:     run the block miner on the whole corpus (global_sigma / global_min_sites).
    scoped_min_length: MCFP minimum length per group; None switches it off.
    slots:             replace number tokens by a slot before mining.
    skeleton:          the page-skeleton pass (:class:`SkeletonConfig`) run after the others;
                       None switches it off.
    middle_content_tokens: a run of lines that only site-section passes found, with at least this
                       many tokens no pass found on both sides of it in its page, is content the
                       pages of one URL section repeat (a reference sentence, a code idiom), not
                       chrome, which sits at a page's top or bottom, or repeats across the site's
                       sections (then a site-level pass finds it: a promo pasted mid-page): it is
                       left out before the page-skeleton walk (:func:`.detector.middle_runs`; the
                       ingest matcher applies the same rule); 0 switches this off.
    middle_repeated_lines: such a run found by a site-level pass stays chrome only when none of its
                       lines occurs twice or more in its page: a line a page repeats in its middle
                       is a label of the page's own records ("Since: <n>", "Version Changes",
                       "Returns"), not a box pasted into it (the ingest matcher applies the same
                       rule; records written before it lack it and keep the old rule).
    section_line_length: longest line that evidence of one URL section alone (no site-level pass
                       covers any of its tokens) makes a template, in tokens: a section's own
                       chrome is navigation (links, titles); a sentence only one section repeats is
                       its reference prose ("This policy was introduced in version <n> ..."). Applied
                       after the middle rule, before the walk, and at ingest; 0 switches it off.
    line_shape_gap:    longest run of changing tokens between two fixed tokens of a line-shape
                       template (:mod:`.line_shapes`: a line at a page's first or last lines whose
                       fixed words, on most of a site's pages there, repeat in the same order while
                       the words between them change: "Next: X, Previous: Y, Up: Z"); 0 switches
                       line shapes off.
    title_nav:         the title-navigation pass (:mod:`.title_nav`): a line at a page's first or
                       last lines made of other pages' titles (first lines) of its site and a few
                       fixed navigation words ("Prev 7.3. Configuring the Network", "Home / Guide /
                       Install") is navigation; False switches it off.
    toc_sections:      a page whose header (its lines before the first text no pass found) lists at
                       least this many of the page's own headings, in the page's order (a sidebar
                       table of contents: "Variants / Trait Implementations / Blanket
                       Implementations"), keeps the covered lines from such a heading to the end
                       of their run as content: a section its table of contents names is part of
                       the page, however often its generated text repeats (:mod:`.toc_sections`;
                       applied last, to every pass's coverage, and at ingest); 0 switches it off.
    own_facts:         a slotted line whose numbers differ on nearly every page of its site that holds
                       it ("pytest 7.1.2 has just been released to PyPI") is content in the page's
                       header less its first line (the title and first paragraph): its numbers are
                       what the page is about (:mod:`.own_facts`; needs ``slots``; applied after the
                       table-of-contents rule, and at ingest); False switches it off.
    head_line_length:  shortest head line, in tokens (:mod:`.head_lines`): a line at least this long
                       at a page's head (its first tokens), followed by a line the passes found,
                       that at least ``sigma_floor`` pages of the site hold there verbatim is
                       chrome (a type's sidebar list of its members) even when too few pages hold
                       it for the site's sigma; a one-line block phrase of the site, so ingest
                       matches it as every block phrase; run before the middle rule; 0 switches
                       it off.
    exact_phrases_on_sites: apply a mining run's exact phrases (sigma documents anywhere in the
                       corpus) at ingest to pages of the sites the detector mined too. Off: on those
                       pages the detector's evidence decides (a site's share of pages, its chrome's
                       place in the page), and the exact phrases apply to pages of other sites only;
                       an exact phrase repeated by one large site is that site's content as often as
                       its chrome (bench/RESULTS.md, "Damage on unseen sites").
    engine:            exact MCFP engine, "bloomspan" or "fhk" (same results).
    """

    sigma_fraction: float = 0.15
    sigma_floor: int = 10
    block_min_length: int = 8
    run_min_length: int = 4
    edge_anchors: bool = True
    section_depth: int = 1
    global_sigma: int = 20
    global_min_sites: int = 3
    global_min_length: int | None = None
    global_blocks: bool = False
    scoped_min_length: int | None = 12
    slots: bool = True
    skeleton: SkeletonConfig | None = field(default_factory=SkeletonConfig)
    middle_content_tokens: int = 50
    middle_repeated_lines: bool = True
    section_line_length: int = 12
    line_shape_gap: int = 4
    title_nav: bool = True
    toc_sections: int = 3
    own_facts: bool = True
    head_line_length: int = 20
    exact_phrases_on_sites: bool = False
    engine: str = "bloomspan"

    def __post_init__(self) -> None:
        skeleton = self.skeleton
        if isinstance(skeleton, bool):  # on (the default walk) or off, as tests and --template-config write it
            skeleton = SkeletonConfig() if skeleton else None
        elif isinstance(skeleton, Mapping):
            skeleton = SkeletonConfig.from_record(skeleton) if skeleton else SkeletonConfig()
        elif skeleton is not None and not isinstance(skeleton, SkeletonConfig):
            raise ConfigError("skeleton", skeleton, "must be a SkeletonConfig, its fields as a dict, or None (off)")
        object.__setattr__(self, "skeleton", skeleton)

        if not isinstance(self.sigma_fraction, (int, float)) or isinstance(self.sigma_fraction, bool) \
                or not 0.0 <= self.sigma_fraction <= 1.0:
            raise ConfigError("sigma_fraction", self.sigma_fraction,
                              "must be a number in [0, 1] (0.05 = 5% of a site's pages)")
        for name, low, what in (("sigma_floor", 2, "a phrase in one document is not boilerplate"),
                                ("middle_content_tokens", 0, "tokens, 0 = off"),
                                ("section_line_length", 0, "tokens, 0 = off"),
                                ("line_shape_gap", 0, "tokens, 0 = off"),
                                ("toc_sections", 0, "headings, 0 = off"),
                                ("head_line_length", 0, "tokens, 0 = off"),
                                ("block_min_length", 1, "tokens"), ("run_min_length", 1, "tokens"),
                                ("section_depth", 0, "0 = sites only"),
                                ("global_sigma", 2, "a phrase in one document is not boilerplate"),
                                ("global_min_sites", 2, "a phrase of one site is that site's template")):
            v = getattr(self, name)
            if (why := _int_knob_error(v, low, what)) is not None:
                raise ConfigError(name, v, why)
        for name in ("global_min_length", "scoped_min_length"):
            v = getattr(self, name)
            if v is not None and (why := _int_knob_error(v, 2, "tokens")) is not None:
                raise ConfigError(name, v, why.replace(" (tokens)", ", or None to switch the pass off"))
        for name in ("global_blocks", "slots", "edge_anchors", "exact_phrases_on_sites", "middle_repeated_lines",
                     "title_nav", "own_facts"):
            if not isinstance(getattr(self, name), bool):
                raise ConfigError(name, getattr(self, name), "must be True or False")
        if self.engine not in ENGINES:
            raise ConfigError("engine", self.engine, f"must be one of {', '.join(ENGINES)}")

    @classmethod
    def option_fields(cls) -> list[dataclasses.Field]:
        """The fields a user sets (``skeleton`` nests :class:`SkeletonConfig`'s)."""
        return list(dataclasses.fields(cls))

    def to_dict(self) -> dict:
        """The nested JSON form (``"skeleton": {...}`` or None), read back by :meth:`from_dict`."""
        out = {f.name: getattr(self, f.name) for f in self.option_fields()}
        out["skeleton"] = None if self.skeleton is None else self.skeleton.to_dict()
        return out

    @classmethod
    def from_dict(cls, values: Mapping[str, Any] | None) -> TemplateConfig:
        """A config from :meth:`to_dict`'s form; missing keys take their defaults. Raises ConfigError naming an unknown or bad key."""
        values = dict(values or {})
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(values) - known)
        if unknown:
            raise ConfigError("template_config", unknown,
                              f"unknown TemplateConfig fields; known: {', '.join(sorted(known))}"
                              f" (and skeleton.{{{', '.join(f.name for f in dataclasses.fields(SkeletonConfig))}}})")
        return cls(**values)
