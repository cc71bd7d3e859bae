"""bloomspan.ingest.base: what every ingest room stands on, importing none of them.

``errors`` (the ingest errors: a bad document's error is returned, not raised),
``batch_tokens`` (a batch's tokens, carried from one strip pass to the next) and
``lazy_exports`` (the rooms' PEP 562 ``__init__`` names). The rooms import this one; it
imports only the engine, so the import graph between ingest's rooms has no cycle.
"""
