"""CLI commands of the companion systems: ``bloomspan dedup`` and ``bloomspan collapse``.

Each is a few lines around one library function (:mod:`.dedup_index`,
:mod:`bloomspan.sidecar.serve.near_dup_search`); heavy imports happen inside the commands so ``--help`` stays
instant. ``COMMANDS`` lists them for the main group (``cli.add_command``).
"""
from __future__ import annotations

import json

import click

from .connection_flags import cluster_client, cluster_config, connection_options
from .input_flags import refuse_parquet


@click.command()
@click.option("--in", "in_path", type=click.Path(dir_okay=False), help="JSON Lines input (file mode).")
@click.option("--out", "out_path", type=click.Path(dir_okay=False), help="JSON Lines output (file mode).")
@click.option("--index", default=None, help="Live index to deduplicate (index mode, with --url).")
@click.option("--dest-index", default=None, help="Index mode: write the kept documents to this NEW index.")
@click.option("--annotate", is_flag=True, help="Index mode: mark duplicate paragraphs on the source documents instead.")
@click.option("--field", default="text", show_default=True, help="Text field (dots for nested objects).")
@click.option("--bloom-bytes-per-item", "bloom_bytes", type=float, default=10.0, show_default=True,
              help="Screen filter bytes per paragraph B: false-positive rate exp(-8 B ln2^2).")
@click.option("--expected-items", type=int, default=None, help="Paragraphs to size the filter for (default: counted).")
@click.option("--spool-dir", type=click.Path(file_okay=False, exists=True), default=None,
              help="Where the temporary spool lives (default: the system temp dir).")
@click.option("--sort", default=None, help="Index mode: read in this field's order, so 'first' means first by it.")
@click.option("--batch-size", type=int, default=500, show_default=True, help="Index mode: scroll page and bulk size.")
@click.option("--json", "as_json", is_flag=True, help="Print the statistics as JSON.")
@connection_options
def dedup(in_path, out_path, index, dest_index, annotate, field, bloom_bytes, expected_items, spool_dir, sort,
          batch_size, as_json, **conn):
    """Remove repeated paragraphs: keep the first occurrence of each, drop documents left empty.

    File mode: --in IN.jsonl --out OUT.jsonl. Index mode: --index NAME with --dest-index NEW
    or --annotate.
    """
    file_mode = bool(in_path or out_path)
    if file_mode == bool(index):
        raise click.UsageError("give either --in and --out (file mode) or --index (index mode)")
    if file_mode and not (in_path and out_path):
        raise click.UsageError("file mode needs both --in and --out")
    if index and bool(dest_index) == bool(annotate):
        raise click.UsageError("index mode needs exactly one of --dest-index NEW or --annotate")
    if batch_size < 1:
        raise click.BadParameter(f"--batch-size={batch_size}: must be >= 1", param_hint="--batch-size")
    if file_mode:
        refuse_parquet(in_path, "--in", "dedup")
    from bloomspan.ingest.base.errors import IngestConfigError
    from bloomspan.sidecar.cli.dedup_index import DedupIndexError, dedup_index, dedup_jsonl
    from bloomspan.sidecar.cli.progress import command_progress

    try:
        client = None if file_mode else cluster_client(**conn)
        if client is not None:
            from bloomspan.sidecar.cluster.source_checks import check_source

            check_source(client, index, field, cluster=cluster_config(**conn).safe_url)
        with command_progress() as progress:
            if file_mode:
                summary = dedup_jsonl(in_path, out_path, field, bloom_bytes, expected_items=expected_items,
                                      spool_dir=spool_dir, progress=progress)
            else:
                summary = dedup_index(client, index, field, bloom_bytes, dest_index=dest_index, annotate=annotate,
                                      sort=sort, batch_size=batch_size, expected_items=expected_items,
                                      spool_dir=spool_dir, progress=progress)
    except (DedupIndexError, IngestConfigError) as exc:
        raise click.ClickException(str(exc)) from None
    if as_json:
        click.echo(json.dumps(summary.as_dict(), default=str))
    else:
        click.echo(_render(summary))
    if summary.failed:
        raise click.ClickException(f"{summary.failed} writes failed, e.g. {summary.examples[:1]}")
    if summary.damaged:
        raise click.ClickException(f"{summary.damaged}; {out_path} holds every document before it")


def _render(summary) -> str:
    s = summary.stats
    # paragraphs whose digest occurs once: each was asked about once, when it was new
    once = s.paragraphs - s.duplicate_paragraphs - (s.candidates - s.false_positives)
    fp_rate = s.false_positives / max(once, 1)
    lines = [
        f"{s.documents_in:,} documents in, {s.documents_out:,} out ({s.documents_modified:,} modified, "
        f"{s.documents_dropped:,} dropped); {s.paragraphs:,} paragraphs, {s.duplicate_paragraphs:,} duplicates removed",
        f"screen: {s.filter_bits:,} bits, {s.filter_hashes} hashes; {s.candidates:,} candidates, "
        f"{s.false_positives:,} false positives ({fp_rate:.2e} of the {once:,} unique paragraphs)",
    ]
    if summary.passed_through:
        lines.append("passed through unchanged: " + ", ".join(f"{k}={v:,}" for k, v in sorted(summary.passed_through.items())))
    if summary.written or summary.updated or summary.conflicts or summary.failed:
        lines.append(f"{summary.target}: {summary.written:,} written, {summary.updated:,} updated "
                     f"({summary.reset:,} reset to 0), {summary.conflicts:,} conflicts, {summary.failed:,} failed")
    lines.append(f"{summary.seconds:.2f}s")
    return "\n".join(lines)


@click.command()
@click.option("--index", required=True, help="Index (or pattern / alias) to search.")
@click.option("--query", "query_text", default=None, help="Text for a match query on --field.")
@click.option("--body", default=None, help="A full search body as JSON (instead of --query).")
@click.option("--field", default="text", show_default=True, help="Field of the --query match and of the shown snippet.")
@click.option("--k", type=int, default=80, show_default=True, help="Top hits to consider.")
@click.option("--threshold", type=float, default=None, help="Similarity at or above which hits collapse (default 0.5).")
@click.option("--measure", type=click.Choice(["jaccard", "containment", "overlap"]), default="jaccard", show_default=True)
@click.option("--fingerprint-field", default="bloomspan.fingerprint", show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print the whole collapsed response as JSON.")
@connection_options
def collapse(index, query_text, body, field, k, threshold, measure, fingerprint_field, as_json, **conn):
    """Search and fold near-duplicate hits (chunk-fingerprint Bloom filters) into the best-ranked one."""
    if bool(query_text) == bool(body):
        raise click.UsageError("give exactly one of --query TEXT or --body JSON")
    try:
        query_body = json.loads(body) if body else {"query": {"match": {field: query_text}}}
    except ValueError as exc:
        raise click.BadParameter(f"not valid JSON ({exc})", param_hint="--body") from None
    from bloomspan.ingest.base.errors import IngestConfigError
    from bloomspan.sidecar.cluster.source_checks import check_source
    from bloomspan.sidecar.serve.near_dup_search import DEFAULT_THRESHOLD, search_collapsed

    client = cluster_client(**conn)
    if query_text:  # a --body names its own fields
        check_source(client, index, field, cluster=cluster_config(**conn).safe_url)
    try:
        result = search_collapsed(client, index, query_body, k=k, threshold=DEFAULT_THRESHOLD if threshold is None
                                  else threshold, fingerprint_field=fingerprint_field, measure=measure)
    except IngestConfigError as exc:
        raise click.BadParameter(str(exc), param_hint="--" + exc.field.replace("_", "-")) from None
    if as_json:
        click.echo(json.dumps(result, ensure_ascii=False))
        return
    info = result["bloomspan"]
    for rank, hit in enumerate(result["hits"]["hits"], 1):
        click.echo(f"{rank:3d}. {hit['_id']}  score={hit.get('_score')}  {_snippet(hit, field)}")
        for member in hit["collapsed"]:
            click.echo(f"       ~ {member['_id']}  similarity={member['similarity']:.2f}")
    click.echo(f"{info['considered']} hits -> {info['groups']} groups ({info['collapsed']} collapsed, "
               f"{info['missing_fingerprint']} without fingerprint); search {info['search_ms']:.1f} ms, "
               f"collapse {info['collapse_ms']:.2f} ms")


def _snippet(hit: dict, field: str, width: int = 70) -> str:
    value = (hit.get("_source") or {}).get(field)
    if not isinstance(value, str):
        return ""
    flat = " ".join(value.split())
    return flat[:width] + ("…" if len(flat) > width else "")


COMMANDS = [dedup, collapse]
