"""bloomspan.engine.templates: The template detector: whole-line blocks, site-scoped mining, page skeletons."""
