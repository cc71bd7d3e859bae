"""Mining configuration, validated on construction.

Every error names the field, the value it got and how to fix it; the CLI maps its flags
1:1 onto these fields.
"""
from __future__ import annotations

from dataclasses import dataclass

ENGINES = ("bloomspan", "fhk", "auto")

# The article (Part 4, "A Bloom filter with counters") sizes the counting filter at 8 bytes per
# corpus token, capped at 512 MB. Here it is sized by the keys it counts (counting_filter.count_keys:
# the positions that start a window of frequent words, usually a fraction of the corpus) and by
# the counter value a candidate needs, t = min(sigma, 255): with c cells per key a key that is not
# frequent is a false positive when its cell also holds a frequent key (at most 1 / (t * c) of the
# cells: each holds >= t occurrences) or when other keys add up to t (a Poisson tail of mean 1 / c).
# c = ceil(FILTER_CELL_BUDGET / t) keeps the first under 6 % (measured on the web crawl at 100 M tokens:
# 0.3 % more candidates than a table twice the size) and the second small.
FILTER_CELL_BUDGET = 16
MIN_FILTER_BYTES = 1024


class ConfigError(ValueError):
    """A configuration field has an invalid value; ``field`` names it."""

    def __init__(self, field: str, value, fix: str):
        self.field = field
        self.value = value
        super().__init__(f"{field}={value!r}: {fix}")


@dataclass(frozen=True)
class MiningConfig:
    sigma: int
    min_length: int
    filter_bytes: int | None = None  # None: sized by the counted keys (filter_size_for)
    engine: str = "bloomspan"  # or "fhk", or "auto": BloomSpan or FHK by corpus shape (engines.choose_engine)
    # BloomSpan optimisations. Each is exact (see engine/mining/grow.py and engine/mining/coverage.py);
    # the switches exist so tests can prove the result does not depend on them.
    mask_skip: bool = True  # drop seed/branch occurrences inside a frequent document suffix
    left_prune: bool = True  # prune a branch whose live occurrences share one left neighbour
    kgram_filter: bool = True  # the counting filter also counts min_length-token windows

    def __post_init__(self) -> None:
        if not isinstance(self.sigma, int) or isinstance(self.sigma, bool) or self.sigma < 2:
            raise ConfigError("sigma", self.sigma, "must be an integer >= 2 (a phrase in one document is not boilerplate)")
        if not isinstance(self.min_length, int) or isinstance(self.min_length, bool) or self.min_length < 2:
            raise ConfigError("min_length", self.min_length, "must be an integer >= 2 (seeds are bigrams)")
        if self.filter_bytes is not None and (
            not isinstance(self.filter_bytes, int) or self.filter_bytes < 1
        ):
            raise ConfigError("filter_bytes", self.filter_bytes, "must be a positive integer, or None to size the filter by the corpus")
        for name in ("mask_skip", "left_prune", "kgram_filter"):
            value = getattr(self, name)
            if not isinstance(value, bool):
                raise ConfigError(name, value, "must be True or False")
        if self.engine not in ENGINES:
            raise ConfigError("engine", self.engine, f"must be one of {', '.join(ENGINES)}")

    def filter_size_for(self, n_keys: int) -> int:
        """Counting-filter size in bytes (one byte per cell) for ``n_keys`` counted keys."""
        if self.filter_bytes is not None:
            return self.filter_bytes
        threshold = min(self.sigma, 255)
        cells_per_key = -(-FILTER_CELL_BUDGET // threshold)
        return max(MIN_FILTER_BYTES, cells_per_key * int(n_keys))
