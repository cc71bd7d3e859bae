"""Counting filter, candidates and seeds of an older commit against the current ones, in one process.

    python -m bench.counting_filter_ab --store /var/tmp/bstest-core/web-1B --tokens 100M --before dcd0ed0~1

The older ``counting_filter.py`` and ``seeds.py`` are read with ``git show <commit>:...`` into
a temporary folder and imported under other names; both versions run on the same arrays
(prefix of a corpus store, word filter computed once), alternately, ``--reps`` times. CPU
ns/token per stage (``time.process_time``: the machine is shared).
"""
from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from bench.mining_bench import ROOT, parse_count
from bench.result_file import command_line, write_section


def load_old(commit: str, folder: Path):
    mods = {}
    for name in ("counting_filter", "seeds"):
        text = subprocess.run(["git", "show", f"{commit}:engine/mining/{name}.py"], cwd=ROOT, check=True,
                              capture_output=True, text=True).stdout
        text = text.replace("from .word_filter import", "from bloomspan.engine.mining.word_filter import")
        path = folder / f"old_{name}.py"
        path.write_text(text)
        spec = importlib.util.spec_from_file_location(f"old_{name}", path)
        mod = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = mod  # dataclasses look their module up there
        spec.loader.exec_module(mod)
        mods[name] = mod
    return mods["counting_filter"], mods["seeds"]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--store", required=True)
    ap.add_argument("--tokens", type=parse_count, required=True)
    ap.add_argument("--before", required=True, help="Commit whose stage code is compared.")
    ap.add_argument("--sigma", type=int, default=20)
    ap.add_argument("--min-length", type=int, default=10)
    ap.add_argument("--reps", type=int, default=2)
    args = ap.parse_args(argv)

    from bloomspan.engine.mining import counting_filter as new_cf, seeds as new_seeds
    from bloomspan.engine.mining.config import MiningConfig
    from bloomspan.engine.mining.word_filter import document_frequency, frequent_bitmap, frequent_word_ranks
    from bloomspan.engine.text.corpus_store import CorpusStore

    store = CorpusStore.open(args.store)
    nd = int(np.searchsorted(np.asarray(store.doc_offsets), args.tokens))
    tok = np.asarray(store.tokens[: int(store.doc_offsets[nd])])
    offs = np.asarray(store.doc_offsets[: nd + 1])
    n, sigma, k = len(tok), args.sigma, args.min_length
    df = document_frequency(tok, offs)
    freq = frequent_bitmap(df, sigma)
    rank_of, nf = frequent_word_ranks(df, sigma)
    del df
    out: list[str] = []
    tmp = tempfile.TemporaryDirectory()  # kept until exit: numba caches the old kernels next to them
    old_cf, old_seeds = load_old(args.before, Path(tmp.name))
    head = np.array([0, 2000])
    for cf, sd in ((old_cf, old_seeds), (new_cf, new_seeds)):  # compile
        c = cf.build_counting_filter(tok[:2000], head, 4096, freq, k)
        p, d = cf.candidate_occurrences(tok[:2000], head, c, 2, freq, k)
        sd.gather_seeds(tok, rank_of, p, d, 2, nf)
    new_cf.estimate_keys(tok[:2000], head, freq, k)

    def cpu(f, *fargs):
        c0 = time.process_time()
        r = f(*fargs)
        return r, (time.process_time() - c0) * 1e9 / n

    old_cells = min(8 * n, 512 << 20)  # the old default: 8 bytes per token, at most 512 MiB
    t = min(sigma, 255)
    for _ in range(args.reps):
        cnt, ob = cpu(old_cf.build_counting_filter, tok, offs, old_cells, freq, k)
        (po, do), oq = cpu(old_cf.candidate_occurrences, tok, offs, cnt, t, freq, k)
        del cnt
        _, osd = cpu(old_seeds.gather_seeds, tok, rank_of, po, do, sigma, nf)
        nk, ne = cpu(new_cf.estimate_keys, tok, offs, freq, k)
        cells = MiningConfig(sigma=sigma, min_length=k).filter_size_for(nk)
        cnt, nb = cpu(new_cf.build_counting_filter, tok, offs, cells, freq, k)
        (pn, dn), nq = cpu(new_cf.candidate_occurrences, tok, offs, cnt, t, freq, k)
        del cnt
        _, nsd = cpu(new_seeds.gather_seeds, tok, rank_of, pn, dn, sigma, nf)
        out.append(f"{n:,} tokens | before: table {old_cells / 2**20:.0f} MiB, build {ob:.1f} + candidates {oq:.1f} + "
              f"seeds {osd:.1f} = {ob + oq + osd:.1f} CPU ns/token, {len(po):,} candidates | after: table "
              f"{cells / 2**20:.0f} MiB, estimate {ne:.1f} + build {nb:.1f} + candidates {nq:.1f} + seeds {nsd:.1f} "
              f"= {ne + nb + nq + nsd:.1f}, {len(pn):,} candidates")
        print(out[-1], flush=True)
    tmp.cleanup()
    write_section("counting-filter-ab", "Mining core on one node", "\n".join(
        ["## Counting filter + candidates + seeds, before vs after in one process (CPU ns/token)",
         f"`{command_line('bench.counting_filter_ab', argv)}`", "", *out]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
