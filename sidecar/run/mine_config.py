"""The settings of one mining run, by concept: ``MineConfig`` is the cluster, the scan, the
mining, the templates and the publication, one section each, plus the work directory.

Each section is a frozen dataclass whose fields are knobs (:func:`bloomspan.sidecar.knobs.knob`):
the one default of each, validated on construction, with the flag that sets it and its help
(``bloomspan mine`` makes its options from them). An invalid knob raises
:class:`~bloomspan.sidecar.errors.ClusterConfigError` naming the field; built from flag values
(:meth:`MineConfig.from_flags`, what the CLI calls) it names ``section.field``
(``publish.keep_runs``). Secrets (the cluster's) never show in repr.

Light on purpose (dataclasses and validation only): the CLI imports it for ``--help``.
"""
from __future__ import annotations

from dataclasses import dataclass

from bloomspan.engine.mining.config import ConfigError, MiningConfig
from bloomspan.engine.templates.config import TemplateConfig
from bloomspan.sidecar.cluster.connection import ClusterConfig
from bloomspan.sidecar.errors import ClusterConfigError
from bloomspan.sidecar.knobs import from_flags, knob, section

MAX_BATCH = 10_000  # index.max_result_window default
SCAN_MODES = ("auto", "pit", "scroll")  # the read modes of bloomspan.sidecar.cluster.scroll (its MODES)


def _bad(config, name: str, fix: str):
    raise ClusterConfigError(name, getattr(config, name), fix)


def _integers_at_least(config, bounds: tuple[tuple[str, int], ...]) -> None:
    for name, lo in bounds:
        v = getattr(config, name)
        if isinstance(v, bool) or not isinstance(v, int) or v < lo:
            _bad(config, name, f"must be an integer >= {lo}")


def _seconds(config, names: tuple[str, ...], *, may_be_zero: bool) -> None:
    for name in names:
        v = getattr(config, name)
        if isinstance(v, bool) or not isinstance(v, (int, float)) or v < 0 or (not may_be_zero and v == 0):
            _bad(config, name, "must be a number of seconds >= 0" if may_be_zero else
                 "must be a positive number of seconds")


def _index_name(name) -> bool:
    return bool(name) and isinstance(name, str) and name == name.lower() and \
        not any(c in name for c in ' ,"*\\<|>/?#:') and name[0] not in "-_+."


@dataclass(frozen=True)
class ScanSection:
    """What is read from the cluster, and how."""

    index: str = knob(help="Source index, alias or pattern to mine.", flag_default=None)
    field: str = knob("text", "Text field (dots for nested fields).", show_default=True)
    batch_size: int = knob(1000, "Documents per search page.", show_default=True)
    slices: int = knob(4, "Shards read in parallel.", show_default=True)
    scan_mode: str = knob("auto", None, choices=SCAN_MODES, show_default=True)
    pit_keep_alive: str = knob("10m", "Keep-alive of points in time (a killed run's PIT lingers this long).",
                               show_default=True)
    checkpoint_seconds: float = knob(5.0, "Seconds between checkpoints while reading.", show_default=True)
    # how long the scan waits for a cluster that went away (a restart)
    outage_seconds: float = knob(180.0, "How long reading waits for a cluster that went away (a restart: new points "
                                 "in time, from the saved positions) before the run stops; 0: stop at once.",
                                 show_default=True)
    timestamp_field: str | None = knob(None, "Field that changes when a document changes (else _seq_no/_primary_term).")
    full: bool = knob(False, "Ignore the previous snapshot: read everything.", is_flag=True)

    def __post_init__(self) -> None:
        if not isinstance(self.index, str) or not self.index.strip():
            _bad(self, "index", "give the source index (name, alias or pattern) with --index")
        if not isinstance(self.field, str) or not self.field:
            _bad(self, "field", "give the text field with --field")
        _integers_at_least(self, (("slices", 1),))
        if isinstance(self.batch_size, bool) or not isinstance(self.batch_size, int) or \
                not 1 <= self.batch_size <= MAX_BATCH:
            _bad(self, "batch_size", f"must be an integer in 1..{MAX_BATCH} (the index.max_result_window default)")
        if self.timestamp_field is not None and (not isinstance(self.timestamp_field, str) or not self.timestamp_field):
            _bad(self, "timestamp_field", "must be a non-empty field name, or left out")
        if self.scan_mode not in SCAN_MODES:
            _bad(self, "scan_mode", f"must be one of {', '.join(SCAN_MODES)}")
        _seconds(self, ("checkpoint_seconds", "outage_seconds"), may_be_zero=True)


@dataclass(frozen=True)
class MiningSection:
    """The exact miner's knobs (the engine's :class:`~bloomspan.engine.mining.config.MiningConfig`)."""

    sigma: int = knob(20, "Minimum number of distinct documents.", show_default=True)
    min_length: int = knob(10, "Minimum phrase length in tokens.", show_default=True)
    # BloomSpan, or FHK where the corpus shape makes it faster (engines.choose_engine)
    engine: str = knob("auto", "Exact miner: BloomSpan, FHK (suffix array), or auto (picked by corpus shape).",
                       choices=("bloomspan", "fhk", "auto"), show_default=True)
    filter_bytes: int | None = knob(None, "Counting-filter size (default: sized by the corpus, about 1 byte per "
                                    "counted window).", kind="int")

    def __post_init__(self) -> None:
        self.engine_config()  # validates every field

    def engine_config(self) -> MiningConfig:
        try:
            return MiningConfig(sigma=self.sigma, min_length=self.min_length, filter_bytes=self.filter_bytes,
                                engine=self.engine)
        except ConfigError as exc:
            raise ClusterConfigError(exc.field, exc.value, str(exc).split(": ", 1)[-1]) from None


def template_config(given) -> TemplateConfig:
    """The one reading of ``--template-config`` (``mine --jsonl`` and ``mine --index`` alike):
    TemplateConfig's defaults with ``given`` (a JSON object of its fields, nested as
    :meth:`TemplateConfig.to_dict` writes them) applied; ValueError naming the field otherwise."""
    given = given or {}
    if not isinstance(given, dict):
        raise ValueError("must be a JSON object of TemplateConfig fields")
    try:
        return TemplateConfig.from_dict(given)
    except ConfigError as exc:
        raise ValueError(str(exc)) from None


@dataclass(frozen=True)
class TemplatesSection:
    """The template detector: whether it runs, the fields that scope it, its knobs."""

    site_field: str | None = knob(None, "Field with the site or URL: per-site clutter, and the site scope of "
                                  "--templates.")
    url_field: str | None = knob(None, "Field with the page URL: site sections for --templates (and the site when "
                                 "--site-field is not given).")
    # None (the default) runs it whenever a site or URL field is given, the path the quality
    # figures measure; True/False (--templates/--no-templates) decide.
    enabled: bool | None = knob(
        None, "Run the template detector (whole-line, site-scoped, slotted templates and page skeletons) and "
        "publish its records for the cleaner and the proxy; on by default whenever --site-field or --url-field is "
        "given.", decls=("--templates/--no-templates",), param="templates")
    # TemplateConfig fields (None: its defaults), from the JSON of --template-config
    template_config: dict | None = knob(
        None, "A file holding a JSON object of TemplateConfig fields for --templates, or the object itself, e.g. "
        '\'{"skeleton": {"site_echo_length": 6}}\' (the others keep their defaults).',
        param="template_config_path", metavar="FILE|JSON")

    def __post_init__(self) -> None:
        for name in ("site_field", "url_field"):
            v = getattr(self, name)
            if v is not None and (not isinstance(v, str) or not v):
                _bad(self, name, "must be a non-empty field name, or left out")
        if self.enabled is None:
            object.__setattr__(self, "enabled", bool(self.site_field or self.url_field))
        if not isinstance(self.enabled, bool):
            _bad(self, "enabled", "must be true or false")
        if self.template_config is not None:
            self.detector_config()  # validates every field

    def detector_config(self) -> TemplateConfig:
        """The TemplateConfig of ``--templates``: its defaults, with ``template_config`` applied
        (:func:`template_config`, the one reading of ``--template-config``)."""
        try:
            return template_config(self.template_config)
        except ValueError as exc:
            raise ClusterConfigError("template_config", self.template_config, str(exc)) from None


@dataclass(frozen=True)
class PublishSection:
    """Where and how the run is published: the template index, its lease, what is kept."""

    template_index: str = knob("bloomspan-templates", "Alias of the published template index (physical indices "
                               "are NAME-<run>).", show_default=True)
    keep_runs: int = knob(3, "Published runs kept for rollback.", show_default=True)
    lease_index: str = knob("bloomspan-lease", "Index of the lease that keeps one run at a time.", show_default=True)
    lease_ttl: float = knob(120.0, "Lease lifetime in seconds.", show_default=True)
    bulk_docs: int = knob(500, "Documents per bulk request.", show_default=True)
    # write the run but leave the alias where it is (`bloomspan promote` moves it)
    dry_run: bool = knob(False, "Publish the run without moving the alias: compare it with `bloomspan diff`, move "
                         "the alias with `bloomspan promote RUN`.", is_flag=True)
    # publish even a run that read no usable document or found no phrase
    allow_empty: bool = knob(False, "Publish even a run that read no usable document, or found no phrase while the "
                             "alias holds a run with phrases (refused by default: the cleaning would stop).",
                             is_flag=True)
    annotate: bool = knob(False, "Write bloomspan.boilerplate_ratio and spans onto the source documents.",
                          decls=("--annotate/--no-annotate",), show_default=True)
    top: int = knob(20, "Length of the report's top lists (the run document keeps as many).", show_default=True)
    bins: int = knob(10, no_flag="the clutter histogram has ten bins in every report")

    def __post_init__(self) -> None:
        _integers_at_least(self, (("keep_runs", 1), ("bulk_docs", 1), ("top", 0), ("bins", 1)))
        if not _index_name(self.template_index):
            _bad(self, "template_index", "must be a valid lowercase index name (no spaces, commas, wildcards or ':')")
        if not self.lease_index or self.lease_index != self.lease_index.lower():
            _bad(self, "lease_index", "must be a valid lowercase index name")
        for name in ("allow_empty", "dry_run"):
            if not isinstance(getattr(self, name), bool):
                _bad(self, name, "must be true or false")
        if self.dry_run and self.annotate:
            _bad(self, "annotate", "--annotate writes the run onto the source documents, which a --dry-run must not "
                 "do; promote the run, then mine again with --annotate")
        _seconds(self, ("lease_ttl",), may_be_zero=False)


@dataclass(frozen=True)
class MineConfig:
    """Every knob of ``bloomspan mine`` (cluster form), by section. Secrets never show in repr."""

    scan: ScanSection = section(ScanSection, required=True)
    cluster: ClusterConfig = section(ClusterConfig)
    mining: MiningSection = section(MiningSection)
    templates: TemplatesSection = section(TemplatesSection)
    publish: PublishSection = section(PublishSection)
    work_dir: str = knob("./bloomspan-work", "Corpus store, checkpoints and the snapshot reused by the next run "
                         "(cluster form default: ./bloomspan-work).", flag_default=None)

    @classmethod
    def from_flags(cls, **params) -> MineConfig:
        """The config from flag values by parameter name (``index=``, ``sigma=``, ``url=``,
        ``templates=``, ``template_config_path=`` a dict): what ``bloomspan mine`` builds; a
        knob left out keeps its default, an invalid one names ``section.field``."""
        return from_flags(cls, params)

    def source_fingerprint(self) -> dict:
        """What the corpus depends on: a checkpoint or snapshot made under another one is not reused."""
        return {"url": self.cluster.safe_url, "index": self.scan.index, "field": self.scan.field,
                "timestamp_field": self.scan.timestamp_field}

    def params(self) -> dict:
        """Run parameters as stored in the run document (no credentials)."""
        s, m, t, p = self.scan, self.mining, self.templates, self.publish
        return {"sigma": m.sigma, "min_length": m.min_length, "engine": m.engine,
                "filter_bytes": m.filter_bytes, "template_index": p.template_index,
                "timestamp_field": s.timestamp_field, "annotate": p.annotate, "batch_size": s.batch_size,
                "slices": s.slices, "keep_runs": p.keep_runs, "site_field": t.site_field,
                "templates": t.enabled, "url_field": t.url_field,
                "template_config": t.detector_config().to_dict() if t.enabled else None,
                "url": self.cluster.safe_url, "auth": self.cluster.auth_kind,
                "dry_run": p.dry_run}
