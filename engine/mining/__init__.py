"""bloomspan.engine.mining: the exact MCFP engines and what they share.

BloomSpan stage by stage (filters, seeds, growth, maximality, coverage), FHK over a suffix
array (``fhk``, ``suffix_array``), the choice between them (``engines``), their config,
results and report.
"""
