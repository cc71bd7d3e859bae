"""bloomspan.engine: the algorithms, one concept per subpackage; no I/O beyond numpy memmaps.

* ``text``: tokenizer, vocabulary, the corpus store on disk, digit slots;
* ``mining``: the two exact engines (BloomSpan stage by stage, FHK over a suffix array) and
  the choice between them, their config, results and coverage report;
* ``oracles``: the brute-force definition that checks both (imports ``mining``, never the reverse);
* ``templates``: the template detector (blocks, site scope, page skeletons);
* ``sketches``: Bloom filters (classic, forgetful) and chunk fingerprints;
* ``distributed``: the exact frequent-window reduction for sharded mining.

"The article" in this code base is "BloomSpan: fast discovery of frequent repeated fragments
in text" (``../shared/reference/bloomspan-article.txt`` from the repository root). It is cited
by part and heading, e.g. "the article, Part 4, The coverage mask".
"""
