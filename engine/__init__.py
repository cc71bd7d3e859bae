"""bloomspan.engine: tokenizer, corpus store and the phrase miners (BloomSpan, FHK oracle).

No I/O beyond numpy memmaps lives here.
"""
