"""How a command's flags come from its config's fields, become its config again, and the
check that they match.

A config section declares each knob once (:func:`bloomspan.sidecar.knobs.knob`: the default,
and the flag with its help); :func:`section_options` adds a section's knobs to a command as
click options, so the one default of each knob is the dataclass's and ``--help`` shows it.
A :class:`FlagBinding` says, for one command, which config its flags fill (sections nested:
``MineConfig.scan.index`` from ``--index``), which flag parameter fills a field whose name
differs, which fields have no flag and which flags fill no field (each with the reason).
:meth:`FlagBinding.build` then builds the config from click's parameters by name
(an invalid knob is a usage error naming its flag), and :meth:`FlagBinding.mismatches` lists every
field without a flag, every flag without a field and every flag whose default is not the
field's. The unit tests run it on every such command.

The config is named by import path and imported only by these methods, so a command module
that binds a heavy config does not load it for ``bloomspan --help``; the sections that
:func:`section_options` reads are light (dataclasses and validation only).
"""
from __future__ import annotations

import dataclasses
import importlib
from dataclasses import dataclass, field

import click

from bloomspan.sidecar.errors import ClusterConfigError
from bloomspan.sidecar.knobs import FIELD_DEFAULT, SECTION, flag_for, flag_name, flag_of, from_flags, leaves, param_name


def remember_cluster(cluster) -> None:
    """Let the group name the cluster (its URL without user-info) when a request fails mid-command."""
    ctx = click.get_current_context(silent=True)
    if ctx is not None:
        ctx.meta["bloomspan.cluster_url"] = cluster.safe_url


_KINDS = {"int": click.INT, "float": click.FLOAT, "file": click.Path(dir_okay=False),
          "existing_file": click.Path(dir_okay=False, exists=True)}


def knob_option(f: dataclasses.Field, *, param: str | None = None, decls: tuple[str, ...] | None = None,
                help: str | None = None, default=dataclasses.MISSING):
    """The click option of one knob (``f``: a field declared with :func:`~bloomspan.sidecar.knobs.knob`)."""
    flag = flag_of(f)
    name = param or param_name(f)
    kwargs: dict = {"help": help or flag.help}
    if default is dataclasses.MISSING:
        default = flag.flag_default if flag.flag_default is not FIELD_DEFAULT else f.default
    kwargs["default"] = None if default is dataclasses.MISSING else default
    if flag.show_default:
        kwargs["show_default"] = True
    if flag.choices:
        kwargs["type"] = click.Choice(list(flag.choices))
    elif flag.kind:
        kwargs["type"] = _KINDS[flag.kind]
    if flag.is_flag:
        kwargs["is_flag"] = True
    if flag.metavar:
        kwargs["metavar"] = flag.metavar
    if flag.envvar:
        kwargs["envvar"] = flag.envvar
    return click.option(*(decls or flag.decls or (flag_name(f),)), name, **kwargs)


def section_options(cls: type, *, only: tuple[str, ...] | None = None, skip: tuple[str, ...] = (),
                    params: dict[str, str] | None = None, help: dict[str, str] | None = None,
                    defaults: dict | None = None):
    """A decorator adding the flags of section ``cls``'s knobs to a command, in field order.

    only/skip: the knobs (field names) to add; params: field -> click parameter (and flag
    ``--param-name``) where this command names it otherwise; help: field -> this command's help
    text; defaults: field -> this command's default (the composite's own section default).
    """
    params, help, defaults = params or {}, help or {}, defaults or {}
    chosen = [f for f in dataclasses.fields(cls)
              if (only is None or f.name in only) and f.name not in skip and not flag_of(f).no_flag
              and SECTION not in f.metadata]  # a section's own knobs come from its own section_options

    def decorate(command):
        for f in reversed(chosen):
            renamed = params.get(f.name)
            command = knob_option(f, param=renamed, decls=("--" + renamed.replace("_", "-"),) if renamed else None,
                                  help=help.get(f.name), default=defaults.get(f.name, dataclasses.MISSING))(command)
        return command

    return decorate


@dataclass(frozen=True)
class FlagBinding:
    """The flags of one command and the config dataclass they fill.

    config:              ``"package.module:ClassName"`` of the dataclass (or the class itself).
    param_for_field:     field name -> click parameter name, where they differ.
    fields_without_flag: field name -> why no flag sets it (derived from other flags, fixed).
    flags_without_field: click parameter name -> why it fills no field (output, derived).
    own_defaults:        click parameter name -> why its default differs from the field's.
    """

    config: str | type
    param_for_field: dict[str, str] = field(default_factory=dict)
    fields_without_flag: dict[str, str] = field(default_factory=dict)
    flags_without_field: dict[str, str] = field(default_factory=dict)
    own_defaults: dict[str, str] = field(default_factory=dict)

    def config_class(self) -> type:
        if isinstance(self.config, type):
            return self.config
        module, name = self.config.split(":")
        return getattr(importlib.import_module(module), name)

    def bound_leaves(self) -> list:
        """The knobs a flag fills (sections walked), in declaration order."""
        return [leaf for leaf in leaves(self.config_class())
                if leaf.path not in self.fields_without_flag and not flag_of(leaf.field).no_flag]

    def _param(self, leaf) -> str:
        return self.param_for_field.get(leaf.path, leaf.param)

    def config_kwargs(self, params: dict) -> dict:
        """Keyword arguments of a flat dataclass from click's ``params`` (one per bound field)."""
        return {leaf.path: params[self._param(leaf)] for leaf in self.bound_leaves()}

    def build(self, params: dict, **given):
        """The config from click's ``params`` (sections nested; ``given``: parameter values the
        command worked out itself, such as a file's JSON). An invalid knob is a usage error
        naming its flag."""
        cls = self.config_class()
        values = {**params, **{self.param_for_field.get(k, k): v for k, v in given.items()}}
        try:
            config = from_flags(cls, {**values, **{leaf.param: values[self._param(leaf)] for leaf in leaves(cls)
                                                   if self._param(leaf) in values}})
        except ClusterConfigError as exc:
            raise click.BadParameter(str(exc), param_hint=self.flag_for(exc.field)) from None
        cluster = getattr(config, "cluster", None)
        if hasattr(cluster, "safe_url"):
            remember_cluster(cluster)
        return config

    def flag_for(self, path: str | None) -> str:
        """The flag of the knob an error names (``publish.keep_runs`` -> ``--keep-runs``)."""
        return flag_for(self.config_class(), path)

    def mismatches(self, command: click.Command) -> list[str]:
        """Every way ``command``'s flags and the dataclass disagree (empty when they match)."""
        params = {p.name: p for p in command.params if isinstance(p, click.Option)}
        # The values click gives when no flag is passed (typed, multiple ones as tuples).
        unset = command.make_context(command.name or "command", [], resilient_parsing=True).params
        problems = []
        bound = set()
        for leaf in self.bound_leaves():
            name = self._param(leaf)
            bound.add(name)
            option = params.get(name)
            if option is None:
                problems.append(f"field {leaf.path} has no flag (add one, or list it in fields_without_flag)")
                continue
            if name in self.own_defaults:
                continue
            flag = flag_of(leaf.field)
            default = flag.flag_default if flag.flag_default is not FIELD_DEFAULT else leaf.default
            flag_default = unset.get(name)
            if default is not dataclasses.MISSING and flag_default != default:
                problems.append(f"--{name.replace('_', '-')} defaults to {flag_default!r}, field {leaf.path} to "
                                f"{default!r} (the dataclass holds the default)")
        for name in sorted(set(params) - bound - set(self.flags_without_field)):
            problems.append(f"flag {params[name].opts[0]} fills no field of {self.config} "
                            "(add the field, or list it in flags_without_field)")
        return problems


# ---------------------------------------------------------------------- the bindings
# Every command that talks to a cluster: its connection flags are ClusterConfig's fields.
CONNECTION_FLAGS = FlagBinding("bloomspan.sidecar.cluster.connection:ClusterConfig")

_MINE_OUTPUT = "how the command prints, not what the run does"
# `bloomspan mine` (the cluster form; the JSON Lines form's flags are listed as such).
MINE_FLAGS = FlagBinding(
    "bloomspan.sidecar.run.mine_config:MineConfig",
    flags_without_field={
        "dask": "runs the same MineConfig on a Dask cluster instead of this process",
        "dask_memory_limit": "sizes the local:N Dask workers",
        "progress_mode": _MINE_OUTPUT, "as_json": _MINE_OUTPUT, "show_report": _MINE_OUTPUT,
        "jsonl": "the JSON Lines form (mine_jsonl, no MineConfig)",
        "id_field": "the JSON Lines form (mine_jsonl, no MineConfig)",
        "out_dir": "the JSON Lines form (mine_jsonl, no MineConfig)",
    },
)

# `bloomspan serve`.
SERVE_FLAGS = FlagBinding(
    "bloomspan.sidecar.serve.state:ServeConfig",
    param_for_field={"upstream_timeout": "timeout"},
    fields_without_flag={
        "reload_seconds": "parsed from --reload-every (10s, 15m, 6h)",
        "every_seconds": "parsed from --every (10s, 15m, 6h)",
        "max_body_bytes": "parsed from --max-body-bytes (bytes or 100mb)",
        "admin_token": "from --admin-token or the file of --admin-token-file",
    },
    flags_without_field={
        "reload_every": "the reload_seconds field, as a duration",
        "every": "the every_seconds field, as a duration",
        "max_body_bytes": "the max_body_bytes field, as a byte size",
        "admin_token": "the admin_token field (or --admin-token-file)",
        "admin_token_file": "its file's content is the admin_token field",
        "workers": "how many processes run the app (http_errors.run_workers), not a setting of one app",
    },
)

_CONNECTION = "a field of the command's ClusterConfig (CONNECTION_FLAGS)"
_CONNECTION_PARAMS = ("url", "username", "password", "api_key", "ca_certs", "verify_certs", "timeout")
_CLEAN_FILE = "a field of CleanFileConfig: the run and the files, beside the cleaner's config"

# `bloomspan clean`: the cleaner's knobs; the run, the files and the cluster fill CleanFileConfig.
CLEAN_FLAGS = FlagBinding(
    "bloomspan.ingest.clean.cleaner:CleanerConfig",
    fields_without_flag={
        "max_chars": "the cleaner's limit per field, the same for every caller",
        "skip_missing": "True: a document without the field is written as it came",
        "id_field": "None: an error names its line, not an id",
        "meta_field": "the cleaner's namespace, the same for every caller",
        "clean_suffix": "the cleaner's output names, the same for every caller",
        "chunks_suffix": "the cleaner's output names, the same for every caller",
    },
    flags_without_field={
        **{name: _CLEAN_FILE for name in ("phrases_path", "template_index", "in_path", "out_path", "errors_path",
                                          "over_ratio_out")},
        **{name: _CONNECTION for name in _CONNECTION_PARAMS},
    },
)

# `bloomspan pipeline`: PipelineConfig's knobs, its cluster section included.
PIPELINE_FLAGS = FlagBinding("bloomspan.sidecar.cli.ingest_pipeline:PipelineConfig")
