"""Pick the mining engine named by ``MiningConfig.engine``."""
from __future__ import annotations

import numpy as np

from bloomspan.engine.mining.config import MiningConfig
from bloomspan.engine.mining.phrases import MiningResult


def mine(tokens: np.ndarray, doc_offsets: np.ndarray, config: MiningConfig) -> MiningResult:
    """Run BloomSpan (default) or the exact suffix-array miner FHK on a corpus."""
    if config.engine == "fhk":
        from bloomspan.engine.oracles.fhk import mine_fhk

        return mine_fhk(tokens, doc_offsets, config)
    from bloomspan.engine.mining.bloomspan import mine_bloomspan

    return mine_bloomspan(tokens, doc_offsets, config)
