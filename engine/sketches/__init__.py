"""bloomspan.engine.sketches: Probabilistic sketches: Bloom filters (classic, forgetful) and chunk fingerprints."""
