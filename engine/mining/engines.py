"""The exact MCFP engines by name (``MiningConfig.engine``): BloomSpan, FHK over a suffix
array, or ``auto``, which picks one of the two from the corpus shape.

Every caller that mines a whole corpus or a sub-corpus picks its engine here, once.

``auto`` (:func:`choose_engine`). Both engines return the same phrases; only time and
memory differ. BloomSpan's cost follows what survives its filters, FHK's the corpus: the
suffix array costs ~25 bytes and a few hundred ns per token whatever the corpus, BloomSpan
~10 bytes and well under 100 ns per token on natural text, but its growth revisits the
occurrences of nested repeats once per branch, so on a corpus made of heavily overlapping
phrases (the article's Synthetic 2) FHK is several times faster. The rule,
fitted on the regimes of ``bench/engine_auto_bench.py`` (web crawl at strict and
permissive sigma, Synthetic 1, Synthetic 2; table in bench/RESULTS.md): FHK when the
sampled c/n (:mod:`.corpus_shape`) is below ``FHK_MAX_CN`` and the corpus has at most
``FHK_MAX_TOKENS`` tokens (past that FHK's memory, not its speed, decides), BloomSpan
otherwise. Measuring c/n costs one LZ78 parse of at most 2**16 tokens (a few ms: on the
smallest regime, Synthetic 2 mined by FHK in ~0.1 s, more would already cost 5 %).
"""
from __future__ import annotations

import logging
from dataclasses import replace

import numpy as np

from .bloomspan import mine_bloomspan
from .config import MiningConfig
from .corpus_shape import corpus_shape
from .fhk import mine_fhk
from .phrases import MiningResult

logger = logging.getLogger(__name__)

# Fitted on bench/engine_auto_bench.py, c/n of the 2**16-token sample: the web crawl 0.45
# (BloomSpan faster at every sigma measured), Synthetic 1 ~1.0 (BloomSpan faster), Synthetic 2
# 0.10 (FHK faster).
FHK_MAX_CN = 0.2
FHK_MAX_TOKENS = 200_000_000


def choose_engine(tokens: np.ndarray, doc_offsets: np.ndarray, config: MiningConfig) -> tuple[str, str]:
    """``(engine, reason)`` for ``config.engine == "auto"``: ``"fhk"`` or ``"bloomspan"``."""
    shape = corpus_shape(tokens, doc_offsets)
    if shape.cn < FHK_MAX_CN and shape.tokens <= FHK_MAX_TOKENS:
        return "fhk", (f"c/n {shape.cn:.3f} < {FHK_MAX_CN} (dense nested repeats) and "
                       f"{shape.tokens:,} <= {FHK_MAX_TOKENS:,} tokens")
    if shape.cn < FHK_MAX_CN:
        return "bloomspan", f"c/n {shape.cn:.3f} < {FHK_MAX_CN} but {shape.tokens:,} tokens > {FHK_MAX_TOKENS:,}"
    return "bloomspan", f"c/n {shape.cn:.3f} >= {FHK_MAX_CN}"


def mine(tokens: np.ndarray, doc_offsets: np.ndarray, config: MiningConfig) -> MiningResult:
    """Run BloomSpan (default), the exact suffix-array miner FHK, or the one ``auto`` picks.

    ``tokens`` uint32 (W,), ``doc_offsets`` int64 (D+1,). With ``auto`` the stats say which
    engine ran (``engine``) and why (``engine_reason``).
    """
    reason = None
    if config.engine == "auto":
        engine, reason = choose_engine(np.asarray(tokens), np.asarray(doc_offsets), config)
        logger.info("engine auto: %s (%s)", engine, reason)
        config = replace(config, engine=engine)
    if config.engine == "fhk":
        result = mine_fhk(tokens, doc_offsets, config)
    else:
        result = mine_bloomspan(tokens, doc_offsets, config)
    if reason is not None:
        result.stats["engine_reason"] = reason
        result.stats["engine_requested"] = "auto"
    return result
