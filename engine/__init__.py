"""bloomspan.engine: the algorithms, one concept per subpackage; no I/O beyond numpy memmaps.

* ``text``: tokenizer, vocabulary, the corpus store on disk, digit slots;
* ``mining``: BloomSpan stage by stage, its config, results and coverage report;
* ``oracles``: exact miners that check it (FHK over a suffix array, the brute force);
* ``templates``: the template detector (blocks, site scope, page skeletons);
* ``sketches``: Bloom filters (classic, forgetful) and chunk fingerprints;
* ``distributed``: the exact frequent-window reduction for sharded mining.

"The article" in this code base is "BloomSpan: fast discovery of frequent repeated fragments
in text" (``../shared/reference/bloomspan-article.txt`` from the repository root). It is cited
by part and heading, e.g. "the article, Part 4, The coverage mask".
"""
