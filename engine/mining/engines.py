"""The exact MCFP engines by name (``MiningConfig.engine``): BloomSpan, or FHK over a suffix array.

Every caller that mines a whole corpus or a sub-corpus picks its engine here, once.
"""
from __future__ import annotations

import numpy as np

from .config import MiningConfig
from .phrases import MiningResult


def mine(tokens: np.ndarray, doc_offsets: np.ndarray, config: MiningConfig) -> MiningResult:
    """Run BloomSpan (default) or the exact suffix-array miner FHK on a corpus.

    ``tokens`` uint32 (W,), ``doc_offsets`` int64 (D+1,).
    """
    if config.engine == "fhk":
        from bloomspan.engine.oracles.fhk import mine_fhk

        return mine_fhk(tokens, doc_offsets, config)
    from .bloomspan import mine_bloomspan

    return mine_bloomspan(tokens, doc_offsets, config)
