"""bloomspan.engine.oracles: the brute-force definition of MCFP that checks both engines.

FHK (``engine/mining/fhk.py``) was here; it is a production engine (``--engine fhk|auto``) and
sits beside BloomSpan. This package may import ``mining``; ``mining`` never imports it.
"""
