"""bloomspan.engine.oracles: Exact miners that check BloomSpan: FHK over a suffix array, and the brute-force definition."""
