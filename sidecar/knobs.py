"""One declaration per knob: a config field that carries its own flag.

A config section (a frozen dataclass: the cluster, the scan, the mining, ...) declares each
knob once, with :func:`knob`: its default, and in the field's metadata the :class:`Flag` that
sets it (the flag's name, its help, its click type). The CLI turns a section's fields into click
options (:func:`bloomspan.sidecar.cli.config_flags.section_options`) and click's parameters back
into the nested config (:meth:`~bloomspan.sidecar.cli.config_flags.FlagBinding.build`), so
the default, the flag and its help are written in one place. Nothing here imports click: the
declarations are plain data, and a section stays importable by the library without the CLI.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from bloomspan.sidecar.errors import ClusterConfigError

FLAG = "bloomspan.flag"  # the metadata key of a field's Flag


class _FieldDefault:
    def __repr__(self) -> str:
        return "FIELD_DEFAULT"


FIELD_DEFAULT = _FieldDefault()  # a flag whose default is its field's


@dataclass(frozen=True)
class Flag:
    """How a knob appears on the command line.

    decls:        the click declarations (``"--annotate/--no-annotate"``); default ``--field-name``.
    param:        the click parameter name where it is not the field's (``"template_config_path"``).
    help:         the ``--help`` text.
    kind:         ``"int"``, ``"float"``, ``"file"`` or ``"existing_file"`` where the default does not say.
    choices:      the values a choice flag takes.
    is_flag:      a bare switch (``--full``).
    show_default: ``--help`` shows the default.
    metavar:      what ``--help`` shows for the value.
    flag_default: the flag's default where it is not the field's (``--index``: unset, the
                  command says which flag is missing).
    no_flag:      why no flag sets this field (derived from another flag, or fixed).
    envvar:       an environment variable beside ``BLOOMSPAN_<COMMAND>_<FLAG>`` (where the
                  parameter's name is not the flag's).
    """

    decls: tuple[str, ...] = ()
    param: str | None = None
    help: str | None = None
    kind: str | None = None
    choices: tuple[str, ...] | None = None
    is_flag: bool = False
    show_default: bool = False
    metavar: str | None = None
    flag_default: Any = FIELD_DEFAULT
    no_flag: str | None = None
    envvar: str | None = None


def knob(default: Any = dataclasses.MISSING, help: str | None = None, *, secret: bool = False, **flag: Any):
    """A dataclass field with its flag (see :class:`Flag`); ``secret``: never in repr."""
    return dataclasses.field(default=default, repr=not secret, metadata={FLAG: Flag(help=help, **flag)})


def flag_of(f: dataclasses.Field) -> Flag:
    """The field's :class:`Flag` (a field declared without :func:`knob` has the plain one)."""
    return f.metadata.get(FLAG) or Flag()


def param_name(f: dataclasses.Field) -> str:
    """The click parameter that sets field ``f``."""
    flag = flag_of(f)
    return flag.param or f.name


def flag_name(f: dataclasses.Field) -> str:
    """The flag users type for field ``f`` (``--keep-runs``)."""
    flag = flag_of(f)
    return flag.decls[0].split("/")[0] if flag.decls else "--" + f.name.replace("_", "-")


# ---------------------------------------------------------------------- sections
SECTION = "bloomspan.section"  # the metadata key of a field that holds a section: its class


def section(cls: type, *, factory=None, params: dict[str, str] | None = None, required: bool = False):
    """A field of a composite config that holds the section ``cls`` (a dataclass of knobs).

    factory:  makes the default section (default ``cls()``); required: no default (the
              section has a knob without one, such as the scan's index).
    params:   knob name -> click parameter, where this composite names the flag otherwise
              (``serve``'s cluster URL is ``--upstream-url``).
    """
    meta = {SECTION: cls, RENAMES: dict(params or {})}
    if required:
        return dataclasses.field(metadata=meta)
    return dataclasses.field(default_factory=factory or cls, metadata=meta)


RENAMES = "bloomspan.section_params"


@dataclass(frozen=True)
class Leaf:
    """One knob of a (possibly nested) config: its dotted path, its field, its click
    parameter and its default (``dataclasses.MISSING`` when it has none)."""

    path: str
    field: dataclasses.Field
    param: str
    default: Any


def leaves(cls: type, prefix: str = "", renames: dict[str, str] | None = None, defaults: Any = None) -> list[Leaf]:
    """Every knob of ``cls``, sections walked in declaration order."""
    found = []
    for f in dataclasses.fields(cls):
        sub = f.metadata.get(SECTION)
        if sub is not None:
            # a composite's own default section (serve's cluster waits longer) gives the defaults
            made = f.default_factory() if f.default_factory not in (dataclasses.MISSING, sub) else None
            found += leaves(sub, f"{prefix}{f.name}.", f.metadata.get(RENAMES), made)
            continue
        if defaults is not None:
            default = getattr(defaults, f.name)
        elif f.default is not dataclasses.MISSING:
            default = f.default
        elif f.default_factory is not dataclasses.MISSING:
            default = f.default_factory()
        else:
            default = dataclasses.MISSING
        found.append(Leaf(prefix + f.name, f, (renames or {}).get(f.name, param_name(f)), default))
    return found


def from_flags(cls: type, params: dict[str, Any], renames: dict[str, str] | None = None, prefix: str = ""):
    """``cls`` built from flag values by parameter name, sections nested; a parameter left
    out, or at its flag's own default (``--index`` unset), leaves the knob at its default.
    An invalid knob raises the section's error naming ``section.field``."""
    kwargs = {}
    for f in dataclasses.fields(cls):
        sub = f.metadata.get(SECTION)
        if sub is not None:
            section_params = _section_params(sub, params, f.metadata.get(RENAMES))
            if f.default_factory not in (dataclasses.MISSING, sub):  # the composite's own defaults for the rest
                made = f.default_factory()
                section_params = {**{n: getattr(made, n) for n in _knob_names(sub)}, **section_params}
            kwargs[f.name] = _qualified(sub, section_params, f"{prefix}{f.name}")
            continue
        name = (renames or {}).get(f.name, param_name(f))
        if name in params and not _unset(f, params[name]):
            kwargs[f.name] = params[name]
    return cls(**kwargs)


def _knob_names(cls: type) -> list[str]:
    return [f.name for f in dataclasses.fields(cls)]


def _section_params(cls: type, params: dict[str, Any], renames: dict[str, str] | None) -> dict[str, Any]:
    """The section's knobs among ``params``, by field name."""
    found = {}
    for f in dataclasses.fields(cls):
        name = (renames or {}).get(f.name, param_name(f))
        if name in params and not _unset(f, params[name]):
            found[f.name] = params[name]
    return found


def _qualified(cls: type, kwargs: dict[str, Any], path: str):
    try:
        return cls(**kwargs)
    except ClusterConfigError as exc:
        raise exc.within(path) from None


def _unset(f: dataclasses.Field, value: Any) -> bool:
    flag = flag_of(f)
    return flag.flag_default is not FIELD_DEFAULT and value == flag.flag_default


def flag_for(cls: type, path: str | None) -> str:
    """The flag users type for the knob at ``path`` (``"publish.keep_runs"`` -> ``--keep-runs``)."""
    for leaf in leaves(cls):
        if leaf.path == path or leaf.path.split(".")[-1] == path:
            return flag_name(leaf.field) if leaf.param == param_name(leaf.field) else \
                "--" + leaf.param.replace("_", "-")
    return "--" + (path or "").split(".")[-1].replace("_", "-")
