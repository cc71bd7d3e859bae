"""A mining run as a state machine: its phases, the transitions between them, its typed state.

The run (:mod:`.mining_run`) goes through these phases; each one ends by naming the next,
and only the moves in :data:`TRANSITIONS` are allowed:

  full run:         scan -> assemble -> mine -> publish -> [annotate ->] finalize -> done
  incremental run:  list -> fetch -> assemble -> mine -> publish -> [annotate ->] finalize -> done
  Dask run:         mine (the workers read and mine) -> publish -> finalize -> done

The mine phase leaves a :class:`.mined_run.MinedRun` in the run folder, so a run killed
while publishing publishes again without mining again; ``executor`` says where it mines
(``local``: this process, from the snapshot; ``dask``: the workers, from the index).

:class:`RunState` is everything the run remembers between phases, saved as the checkpoint
(``<work_dir>/run/checkpoint.json``, :class:`.checkpoint.Checkpoint`) after every phase and
while reading. Its JSON form carries ``format`` and ``version``; a checkpoint of another version or format,
or with a field this version cannot read, is refused with a message saying how to start over.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

from bloomspan.sidecar.errors import CheckpointError

FORMAT = "bloomspan-run"
VERSION = 3  # 3: the mine phase of its own and the executor


class Phase(StrEnum):
    SCAN = "scan"          # full read of the field into the corpus store
    LIST = "list"          # incremental: keys and versions of every document
    FETCH = "fetch"        # incremental: texts of new and changed documents
    ASSEMBLE = "assemble"  # the canonical snapshot
    MINE = "mine"          # mine (this node or Dask), curation filter, bitmaps, templates: the mined run
    PUBLISH = "publish"    # report and run document, write the run index, swap the alias
    ANNOTATE = "annotate"  # (opt-in) ratios and spans onto the source documents
    FINALIZE = "finalize"  # the snapshot becomes the base of the next incremental run
    DONE = "done"


TRANSITIONS: dict[Phase, frozenset[Phase]] = {
    Phase.SCAN: frozenset({Phase.ASSEMBLE}),
    Phase.LIST: frozenset({Phase.FETCH}),
    Phase.FETCH: frozenset({Phase.ASSEMBLE}),
    Phase.ASSEMBLE: frozenset({Phase.MINE}),
    Phase.MINE: frozenset({Phase.PUBLISH}),
    Phase.PUBLISH: frozenset({Phase.ANNOTATE, Phase.FINALIZE}),
    Phase.ANNOTATE: frozenset({Phase.FINALIZE}),
    Phase.FINALIZE: frozenset({Phase.DONE}),
    Phase.DONE: frozenset(),
}

FIRST_PHASE = {"full": Phase.SCAN, "incremental": Phase.LIST}
EXECUTORS = ("local", "dask")


def first_phase(kind: str, executor: str) -> Phase:
    """Where a new run starts: its reading phase on this node, the mine phase on Dask (the
    workers read)."""
    return Phase.MINE if executor == "dask" else FIRST_PHASE[kind]


def check_transition(current: Phase, following: Phase) -> Phase:
    """``following`` if the table allows ``current -> following``, else ValueError (a bug)."""
    if following not in TRANSITIONS[current]:
        allowed = ", ".join(sorted(TRANSITIONS[current])) or "none"
        raise ValueError(f"phase {current} cannot be followed by {following} (allowed: {allowed})")
    return following


@dataclass
class RunState:
    """What a run remembers between phases and across restarts.

    The reading sections (``scan``, ``listing``, ``fetch``) and ``annotation`` are the
    progress dicts their phases own (:mod:`.collect` updates them in place); None until the
    phase starts. ``summary`` is the run summary once published; ``swap_started`` the run id
    whose alias swap began (from then on the run index may be visible and is never deleted).
    """

    source: dict
    template_index: str
    annotate: bool
    run_id: str
    holder: str
    started_at: str
    kind: str                     # "full" or "incremental"
    base: str | None              # the previous snapshot's folder (incremental runs)
    phase: Phase
    indices: list[str]
    units: list[list]             # [index, shard, n_shards] per scan unit
    scan_mode: str                # "pit" or "scroll"
    executor: str = "local"       # where the mine phase runs: "local" or "dask"
    seconds: dict = field(default_factory=dict)
    counts: dict = field(default_factory=dict)
    scan: dict | None = None
    listing: dict | None = None
    fetch: dict | None = None
    annotation: dict | None = None
    summary: dict | None = None
    swap_started: str | None = None

    def __post_init__(self) -> None:
        if self.kind not in FIRST_PHASE:
            raise ValueError(f"kind={self.kind!r}: must be one of {', '.join(FIRST_PHASE)}")
        if self.executor not in EXECUTORS:
            raise ValueError(f"executor={self.executor!r}: must be one of {', '.join(EXECUTORS)}")
        self.phase = Phase(self.phase)

    def section(self, name: str) -> dict:
        """The progress dict of a reading section (``scan``, ``list`` or ``fetch``), made empty
        on first use."""
        attr = _SECTION_ATTRS[name]
        if getattr(self, attr) is None:
            setattr(self, attr, {})
        return getattr(self, attr)

    def advance(self, following: Phase) -> None:
        """Move to the next phase (:data:`TRANSITIONS` decides which moves exist)."""
        self.phase = check_transition(self.phase, following)

    # ------------------------------------------------------------------ checkpoint form
    def to_checkpoint(self) -> dict:
        """The JSON object saved as the checkpoint."""
        out = {"format": FORMAT, "version": VERSION}
        for key, attr in _KEYS.items():
            value = getattr(self, attr)
            if value is not None or attr in _ALWAYS:
                out[key] = str(value) if attr == "phase" else value
        return out

    @classmethod
    def from_checkpoint(cls, data: dict, path: Path) -> RunState:
        """The state saved in ``data`` (read from ``path``); CheckpointError when this version
        cannot resume it, naming the file and how to start over."""
        fix = f"delete {path.parent} to start the run over (the source is read again)"
        if data.get("format") != FORMAT:
            raise CheckpointError(f"{path}: not a bloomspan run checkpoint (format {data.get('format')!r}); {fix}",
                                  item=str(path))
        version = data.get("version")
        if isinstance(version, bool) or version != VERSION:
            raise CheckpointError(f"{path}: checkpoint version {version!r}, this bloomspan reads {VERSION}; "
                                  f"finish the run with the bloomspan that started it, or {fix}", item=str(path))
        missing = [k for k, attr in _KEYS.items() if attr in _ALWAYS and k not in data]
        if missing:
            raise CheckpointError(f"{path}: checkpoint lacks {', '.join(missing)}; {fix}", item=str(path))
        phase = data["phase"]
        if phase not in {p.value for p in Phase}:
            raise CheckpointError(f"{path}: unknown phase {phase!r} (known: {', '.join(Phase)}); {fix}",
                                  item=str(path))
        try:
            return cls(**{attr: data[k] for k, attr in _KEYS.items() if k in data})
        except (TypeError, ValueError) as exc:
            raise CheckpointError(f"{path}: {exc}; {fix}", item=str(path)) from None


_SECTION_ATTRS = {"scan": "scan", "list": "listing", "fetch": "fetch"}
# checkpoint key -> attribute; the checkpoint has always called the listing section "list"
_KEYS = {"source": "source", "template_index": "template_index", "annotate": "annotate", "run_id": "run_id",
         "holder": "holder", "started_at": "started_at", "kind": "kind", "base": "base", "phase": "phase",
         "indices": "indices", "units": "units", "scan_mode": "scan_mode", "seconds": "seconds",
         "counts": "counts", "scan": "scan", "list": "listing", "fetch": "fetch", "annotation": "annotation",
         "summary": "summary", "swap_started": "swap_started", "executor": "executor"}
_ALWAYS = {"source", "template_index", "annotate", "run_id", "holder", "started_at", "kind", "base", "phase",
           "indices", "units", "scan_mode", "seconds", "counts", "executor"}
