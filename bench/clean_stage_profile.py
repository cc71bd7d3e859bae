"""Where `bloomspan clean` spends its CPU: one table per stage, against orjson's parse of the file.

    python -m bench.clean_stage_profile --corpus web.jsonl --phrases mine/phrases.jsonl \
        --site-field site --url-field url

One run measures, on the same file and in this order:

1. orjson's parse of every line (CPU seconds of this process), the bar of issue 28's ratio;
2. the whole ``bloomspan clean --mode strip`` process (user + sys of the child: imports, loading
   the records, numba's cached kernels, parse, clean, serialise), ``--reps`` times, best kept;
3. the same clean in this process with every stage's function wrapped by a CPU timer
   (exclusive time: a stage's time excludes the wrapped stages it calls). The stages: parse
   (``json.loads`` of each line), prepare (fields, scopes), tokenize, window and phrase match
   (symbols and the automaton/window scans), template records (rules, chains, middle and section
   rules), match results (per-text arrays), skeletons, line shapes, title navigation (the title_nav
   records' edge lines), removal fixed point (every matching pass after the first, with the tokens
   it derives), splice (junctions), apply (the new
   document and its metadata), serialise (``json.dumps`` and the write), other (the rest of the
   clean loop). The wrappers cost a few microseconds per call, so shares are what to read.

Prints the table and the ratio clean CPU / orjson CPU; ``--write`` stores it as
``bench/results/clean-stage-profile.json`` (:func:`bench.result_file.write_section`).
"""
from __future__ import annotations

import argparse
import functools
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

from bench.result_file import RESULTS_DIR, command_line, write_section

GOAL_RATIO = 5.0  # whole clean CPU / orjson parse CPU


def orjson_parse_cpu(path: str) -> tuple[float, int]:
    """CPU seconds of ``orjson.loads`` over every line of ``path`` (read first), and the line count."""
    import orjson

    with open(path, "rb") as f:
        lines = f.readlines()
    t = time.process_time()
    for line in lines:
        orjson.loads(line)
    return time.process_time() - t, len(lines)


def whole_clean_cpu(bloomspan: str, args: list[str]) -> float:
    """user + sys CPU seconds of one ``bloomspan clean`` child process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([bloomspan, "clean", *args], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


class StageTimer:
    """Exclusive CPU seconds per stage of wrapped functions; inside the fixed point every
    wrapped call but the splice counts as the fixed point."""

    def __init__(self):
        self.cpu: dict[str, float] = defaultdict(float)
        self.calls: dict[str, int] = defaultdict(int)
        self._stack: list[list[float]] = []  # [child seconds] per open call
        self.fixed_point = False

    def wrap(self, fn, stage: str, *, keeps_stage: bool = False, opens_fixed_point: bool = False):
        @functools.wraps(fn)
        def timed(*a, **k):
            name = "removal fixed point" if self.fixed_point and not keeps_stage else stage
            was = self.fixed_point
            if opens_fixed_point:
                self.fixed_point = True
            self._stack.append([0.0])
            t0 = time.process_time()
            try:
                return fn(*a, **k)
            finally:
                spent = time.process_time() - t0
                child = self._stack.pop()[0]
                self.cpu[name] += spent - child
                self.calls[name] += 1
                if self._stack:
                    self._stack[-1][0] += spent
                self.fixed_point = was
        return timed


def install_timers(timer: StageTimer) -> None:
    """Wrap the clean path's stage functions in place (this process only)."""
    from bloomspan.ingest.clean import cleaner as cleaner_mod
    from bloomspan.ingest.match import page_rules, phrase_index, phrase_matcher, template_matcher
    from bloomspan.sidecar.cli import clean_jsonl as clean_mod

    Cleaner = cleaner_mod.Cleaner
    TM = template_matcher.TemplateMatcher
    clean_mod._parse = timer.wrap(clean_mod._parse, "parse")
    clean_mod._write_result = timer.wrap(clean_mod._write_result, "serialise")
    Cleaner.clean_batch = timer.wrap(Cleaner.clean_batch, "other")
    Cleaner._prepare = timer.wrap(Cleaner._prepare, "prepare")
    Cleaner._apply = timer.wrap(Cleaner._apply, "apply")
    # Each matcher tokenizes the batch as it reads it (``matcher.tokenize``).
    template_matcher.tokenize_batch = timer.wrap(template_matcher.tokenize_batch, "tokenize")
    phrase_matcher.tokenize_batch = timer.wrap(phrase_matcher.tokenize_batch, "tokenize")
    cleaner_mod.tokens_after_strip = timer.wrap(cleaner_mod.tokens_after_strip, "removal fixed point")
    cleaner_mod.strip_spans_with_junctions = timer.wrap(cleaner_mod.strip_spans_with_junctions, "splice",
                                                        keeps_stage=True)
    # The first pass's strip runs inside _strip_all before its loop: only the loop's passes are
    # the fixed point, so _strip_all opens it and the splice keeps its own stage.
    Cleaner._strip_all = timer.wrap(Cleaner._strip_all, "removal fixed point", opens_fixed_point=True)
    TM.find_match_results = timer.wrap(TM.find_match_results, "match results")
    TM.find_batch = timer.wrap(TM.find_batch, "match results")
    TM._symbols = timer.wrap(TM._symbols, "window + phrase match")
    phrase_index.PhraseIndex.scan = timer.wrap(phrase_index.PhraseIndex.scan, "window + phrase match")
    TM._rule_spans = timer.wrap(TM._rule_spans, "template records")
    page_rules.SkeletonCover.cover = timer.wrap(page_rules.SkeletonCover.cover, "skeletons")
    page_rules.LineShapeCover.cover = timer.wrap(page_rules.LineShapeCover.cover, "line shapes")
    page_rules.TitleNavCover.cover = timer.wrap(page_rules.TitleNavCover.cover, "title navigation")


STAGES = ("parse", "prepare", "tokenize", "window + phrase match", "template records", "match results", "skeletons",
          "line shapes", "title navigation", "removal fixed point", "splice", "apply", "serialise", "other")


def profile_in_process(corpus: str, phrases: str, site_field: str | None, url_field: str | None, out: str
                       ) -> tuple[StageTimer, float, float]:
    """The stage table of one in-process clean; also the CPU of loading the records and of the clean."""
    from bloomspan.ingest.clean.cleaner import Cleaner, CleanerConfig
    from bloomspan.ingest.match.loading import load_run_phrases
    from bloomspan.sidecar.cli.clean_jsonl import clean_jsonl

    timer = StageTimer()
    t0 = time.process_time()
    loaded = load_run_phrases(phrases)
    config = CleanerConfig(fields=("text",), mode="strip", skip_missing=True, id_field=None, scope_field=site_field,
                           url_field=url_field)
    cleaner = Cleaner(loaded.phrase_set, config, templates=loaded.templates)
    load_s = time.process_time() - t0
    install_timers(timer)
    t1 = time.process_time()
    clean_jsonl(cleaner, corpus, out, out + ".errors.jsonl")
    return timer, load_s, time.process_time() - t1


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", required=True, help="JSON Lines file with a text field (bloomspan corpus web)")
    ap.add_argument("--phrases", required=True, help="phrases.jsonl of a `bloomspan mine` run (templates.jsonl beside it)")
    ap.add_argument("--site-field", default="site")
    ap.add_argument("--url-field", default="url")
    ap.add_argument("--reps", type=int, default=2, help="whole-process clean runs; the best is reported")
    ap.add_argument("--bloomspan", default=str(Path(sys.executable).with_name("bloomspan")))
    ap.add_argument("--write", action="store_true", help="write bench/results/clean-stage-profile.json")
    ap.add_argument("--results-dir", type=Path, default=RESULTS_DIR)
    args = ap.parse_args(argv)

    orjson_s, n_lines = orjson_parse_cpu(args.corpus)
    mb = os.path.getsize(args.corpus) / 1e6
    with tempfile.TemporaryDirectory(prefix="clean-profile-") as tmp:
        out = os.path.join(tmp, "clean.jsonl")
        clean_args = ["--phrases", args.phrases, "--in", args.corpus, "--out", out, "--mode", "strip"]
        if args.site_field:
            clean_args += ["--site-field", args.site_field]
        if args.url_field:
            clean_args += ["--url-field", args.url_field]
        whole = min(whole_clean_cpu(args.bloomspan, clean_args) for _ in range(max(args.reps, 1)))
        timer, load_s, clean_s = profile_in_process(args.corpus, args.phrases, args.site_field, args.url_field,
                                                    os.path.join(tmp, "profiled.jsonl"))
    staged = sum(timer.cpu[s] for s in STAGES)
    rows = [f"| {s} | {timer.cpu[s]:.2f} | {timer.cpu[s] / staged:.0%} | {timer.cpu[s] / orjson_s:.1f}× |"
            for s in STAGES]
    section = "\n".join([
        "## `clean --mode strip` per stage, default records", "",
        f"`{command_line('bench.clean_stage_profile', argv)}` — {n_lines:,} lines, {mb:.1f} MB", "",
        "| step | CPU s | share of the clean loop | × orjson parse |",
        "|---|---|---|---|",
        f"| orjson parse of the file | {orjson_s:.2f} | | 1× |",
        f"| whole `bloomspan clean` process (best of {args.reps}) | {whole:.2f} | | **{whole / orjson_s:.1f}×** "
        f"(goal ≤ {GOAL_RATIO:g}×) |",
        f"| in process: loading the records | {load_s:.2f} | | {load_s / orjson_s:.1f}× |",
        f"| in process: the clean loop (sum of the stages below: {staged:.2f}) | {clean_s:.2f} | 100% | "
        f"{clean_s / orjson_s:.1f}× |",
        *rows, "",
        f"Whole-process MB/s per core: {mb / whole:.1f}; the rest of the whole process (imports, kernels from the "
        f"cache) is about {max(whole - clean_s - load_s, 0):.2f} s.",
    ])
    print(section)
    if args.write:
        write_section("clean-stage-profile", "Cleaner", section, args.results_dir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
