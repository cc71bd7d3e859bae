"""bloomspan.engine.mining: BloomSpan, stage by stage (filters, seeds, growth, maximality, coverage), its config, results and report."""
