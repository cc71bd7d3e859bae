"""Document keys as the scan makes them (:func:`.scroll.doc_key`), held as one numpy array.

Snapshots, doc logs, the Dask run's canonical numbering and the field reads of publication
all sort and search keys this way, so the order is one: UTF-8 bytes, compared bytewise.
"""
from __future__ import annotations

import numpy as np


def keys_array(encoded: list[bytes]) -> np.ndarray:
    """Numpy ``S`` array of UTF-8 keys (numpy compares them bytewise = code point order)."""
    width = max((len(k) for k in encoded), default=1)
    return np.array(encoded, dtype=f"S{max(width, 1)}")
