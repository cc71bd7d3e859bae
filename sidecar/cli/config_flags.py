"""How a command's flags become its config dataclass, and the check that they match.

A :class:`FlagBinding` says, for one command, which dataclass its flags fill, which flag
parameter fills a field whose name differs (``--every`` -> ``every_seconds``), which fields
have no flag and which flags fill no field (each with the reason). :meth:`FlagBinding.config_kwargs`
then builds the dataclass's keyword arguments from click's parameters by name, so a command
never copies thirty flags one by one, and :meth:`FlagBinding.mismatches` lists every field
without a flag, every flag without a field and every flag whose default is not the field's.
The unit tests run it on every such command: the dataclass holds the one default of each
knob, and the click option that shows it in ``--help`` must say the same.

The dataclass is named by import path and imported only by these two methods, so
``bloomspan --help`` does not pay for numpy and opensearch-py.
"""
from __future__ import annotations

import dataclasses
import importlib
from dataclasses import dataclass, field

import click


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

    def bound_fields(self) -> list[dataclasses.Field]:
        """The dataclass fields a flag fills, in declaration order."""
        return [f for f in dataclasses.fields(self.config_class()) if f.name not in self.fields_without_flag]

    def config_kwargs(self, params: dict) -> dict:
        """Keyword arguments of the dataclass from click's ``params`` (one per bound field)."""
        return {f.name: params[self.param_for_field.get(f.name, f.name)] for f in self.bound_fields()}

    def mismatches(self, command: click.Command) -> list[str]:
        """Every way ``command``'s flags and the dataclass disagree (empty when they match)."""
        params = {p.name: p for p in command.params if isinstance(p, click.Option)}
        # The values click gives when no flag is passed (typed, multiple ones as tuples).
        unset = command.make_context(command.name or "command", [], resilient_parsing=True).params
        problems = []
        bound = set()
        for f in self.bound_fields():
            name = self.param_for_field.get(f.name, f.name)
            bound.add(name)
            option = params.get(name)
            if option is None:
                problems.append(f"field {f.name} has no flag (add one, or list it in fields_without_flag)")
                continue
            if name in self.own_defaults:
                continue
            default = _field_default(f)
            flag_default = unset.get(name)
            if default is not _NO_DEFAULT and flag_default != default:
                problems.append(f"--{name.replace('_', '-')} defaults to {flag_default!r}, field {f.name} to "
                                f"{default!r} (the dataclass holds the default)")
        for name in sorted(set(params) - bound - set(self.flags_without_field)):
            problems.append(f"flag {params[name].opts[0]} fills no field of {self.config} "
                            "(add the field, or list it in flags_without_field)")
        return problems


_NO_DEFAULT = object()


def _field_default(f: dataclasses.Field):
    if f.default is not dataclasses.MISSING:
        return f.default
    if f.default_factory is not dataclasses.MISSING:
        return f.default_factory()
    return _NO_DEFAULT


# ---------------------------------------------------------------------- the bindings
# Every command that talks to a cluster: its connection flags are ClusterConfig's fields.
CONNECTION_FLAGS = FlagBinding("bloomspan.sidecar.cluster.connection:ClusterConfig")

_MINE_OUTPUT = "how the command prints, not what the run does"
# `bloomspan mine` (the cluster form; the JSON Lines form's flags are listed as such).
MINE_FLAGS = FlagBinding(
    "bloomspan.sidecar.run.mining_run:MineConfig",
    fields_without_flag={
        "template_config": "read from the JSON file of --template-config",
        "bins": "the clutter histogram has ten bins in every report",
    },
    flags_without_field={
        "template_config_path": "its file's JSON object is the template_config field",
        "dask": "runs the same MineConfig on a Dask cluster instead of this process",
        "dask_memory_limit": "sizes the local:N Dask workers",
        "progress_mode": _MINE_OUTPUT, "as_json": _MINE_OUTPUT, "show_report": _MINE_OUTPUT,
        "jsonl": "the JSON Lines form (mine_jsonl, no MineConfig)",
        "id_field": "the JSON Lines form (mine_jsonl, no MineConfig)",
        "out_dir": "the JSON Lines form (mine_jsonl, no MineConfig)",
    },
    own_defaults={"work_dir": "unset: ./bloomspan-work for the cluster form, a temporary directory for --jsonl"},
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

# `bloomspan pipeline`.
PIPELINE_FLAGS = FlagBinding(
    "bloomspan.sidecar.cli.ingest_pipeline:PipelineConfig",
    fields_without_flag={"cluster": "the connection flags, one ClusterConfig (CONNECTION_FLAGS)"},
    flags_without_field={name: _CONNECTION for name in _CONNECTION_PARAMS},
)
