"""`bloomspan demo`: the product's main job on a generated web crawl, against a real cluster.

Indexes a deterministic crawl (sites with headers, footers, cookie banners, breadcrumbs and
disclaimers around natural-like text), mines it through the cluster exactly as a production
run would (PIT scroll -> mmap'd corpus store -> BloomSpan -> versioned template index behind
an alias, with the template detector's records), prints the operator report, then cleans one
new page with the published phrases, and with the site's templates too.
"""
from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from bloomspan.sidecar.cluster.connection import ClusterConfig

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class DemoConfig:
    """What the demo generates and where it goes: ``cluster`` (its URL and credentials),
    the generated crawl's size and seed, the three index names and the mining parameters."""

    cluster: ClusterConfig = field(default_factory=ClusterConfig)
    docs: int = 3000
    seed: int = 7
    index: str = "bloomspan-demo-crawl"
    template_index: str = "bloomspan-demo-templates"
    lease_index: str = "bloomspan-demo-lease"
    sigma: int = 20
    min_length: int = 10
    work_dir: str = "./bloomspan-work/demo"

    def __post_init__(self) -> None:
        if self.docs < 50:
            raise ValueError(f"docs={self.docs}: use at least 50 documents so templates repeat")


def run_demo(config: DemoConfig, say: Callable[[str], None], client=None,
             progress: Callable[..., None] | None = None) -> dict:
    """Run the demo (module docstring), saying what happens through ``say``; ``client``
    defaults to one built from ``config.cluster``, ``progress(stage, done, total)`` sees the
    mining run's stages. Returns the figures the demo printed."""
    from opensearchpy import helpers

    from bloomspan.corpora import generate_web
    from bloomspan.ingest.clean.cleaner import Cleaner, CleanerConfig
    from bloomspan.sidecar.publish.template_reader import current_run, load_cleaning_set, load_phrase_set
    from bloomspan.sidecar.report.operator_report import report
    from bloomspan.sidecar.report.text import render_report, template_counts
    from bloomspan.sidecar.run.mine_config import (
        MineConfig,
        MiningSection,
        PublishSection,
        ScanSection,
        TemplatesSection,
    )
    from bloomspan.sidecar.run.mining_run import run_mining

    t_start = time.perf_counter()
    url = config.cluster.safe_url
    if client is None:
        client = config.cluster.checked_client()
    info = client.info()
    say(f"cluster {url}: {info['version'].get('distribution', 'elasticsearch')} {info['version']['number']}")

    client.indices.delete(index=config.index, ignore_unavailable=True)
    client.indices.create(index=config.index, body={"settings": {"number_of_shards": 2, "number_of_replicas": 0}})
    held_out = None
    t0 = time.perf_counter()

    def actions():
        nonlocal held_out
        for doc in generate_web(config.docs + 1, config.seed):
            if held_out is None:  # the first page is kept back as "a new page from the crawler"
                held_out = doc
                continue
            yield {"_index": config.index, "_id": doc["id"],
                   "_source": {"text": doc["text"], "url": doc["url"], "site": doc["site"]}}

    indexed, _ = helpers.bulk(client, actions(), chunk_size=500, refresh=True)
    say(f"indexed {indexed:,} generated pages into {config.index} in {time.perf_counter() - t0:.1f}s")

    mine_config = MineConfig(
        scan=ScanSection(index=config.index, full=True, slices=2), cluster=config.cluster,
        mining=MiningSection(sigma=config.sigma, min_length=config.min_length),
        templates=TemplatesSection(site_field="site", url_field="url", enabled=True),
        publish=PublishSection(template_index=config.template_index, lease_index=config.lease_index),
        work_dir=config.work_dir)
    t0 = time.perf_counter()
    summary = run_mining(mine_config, client=client, progress=progress or _log_progress)
    mine_seconds = time.perf_counter() - t0
    scan_seconds = summary.seconds.get("scan") or summary.seconds.get("collect") or 0.0
    rate = f", read+tokenize {summary.docs_seen / scan_seconds:,.0f} docs/s" if scan_seconds else ""
    say(f"mined {summary.docs_mined:,} documents / {summary.tokens_mined:,} tokens in {mine_seconds:.1f}s{rate}; "
        f"published {summary.phrases:,} phrases as {summary.physical_index} behind alias {config.template_index}")
    t = summary.templates
    say(f"template detector (--templates): {template_counts(t)}; with them {t['covered_share']:.1%} of all tokens "
        f"are boilerplate (exact phrases alone: {summary.covered_share:.1%})")
    say("")
    say(render_report(report(client, config.template_index, top=10), top=10))

    physical = current_run(client, config.template_index)
    phrase_set = load_phrase_set(client, physical)
    cleaner = Cleaner(phrase_set, CleanerConfig(fields=("text",), mode="strip", id_field=None, skip_missing=True))
    result = cleaner.clean({"text": held_out["text"]})
    all_phrases, templates = load_cleaning_set(client, physical)
    with_templates = Cleaner(all_phrases, CleanerConfig(fields=("text",), mode="strip", id_field=None, skip_missing=True,
                                                        scope_field="site", url_field="url"), templates=templates)
    t_result = with_templates.clean({k: held_out[k] for k in ("text", "site", "url")})
    before, after = held_out["text"], t_result.doc["text"]
    say("")
    say(f"a new page from {held_out['site']}: {len(before):,} characters; boilerplate ratio "
        f"{result.boilerplate_ratio:.1%} with the exact phrases, {t_result.boilerplate_ratio:.1%} with the site's "
        f"templates too; {len(after):,} characters after `strip`:")
    say("  " + after[:400].replace("\n", "\n  ") + ("..." if len(after) > 400 else ""))
    total = time.perf_counter() - t_start
    say("")
    say(f"demo finished in {total:.1f}s. Next: `bloomspan explain --url {url} --template-index "
        f"{config.template_index} --id <doc id>`, `bloomspan serve --template-index {config.template_index} "
        f"--clean-index 'crawl-*' --site-field site --url-field url`, `deploy/local/opensearch.sh stop`.")
    return {"seconds": total, "mine_seconds": mine_seconds, "phrases": summary.phrases,
            "covered_share": summary.covered_share, "docs_mined": summary.docs_mined,
            "template_covered_share": t["covered_share"], "page_ratio": result.boilerplate_ratio,
            "page_ratio_with_templates": t_result.boilerplate_ratio}


def _log_progress(stage: str, done: int, total: int | None = None) -> None:
    log.info("stage=%s done=%s total=%s", stage, done, total)
