"""Steps for the pipelines data teams already run, each built from a finished run with ``from_run``.

One module per framework, and only that module imports its framework (each an optional extra):

* :mod:`.langchain_transformer` — ``BloomspanTransformer``, a LangChain ``BaseDocumentTransformer``
  (``pip install 'bloomspan[langchain]'``);
* :mod:`.llama_index_component` — ``BloomspanTransform``, a LlamaIndex ``TransformComponent`` for
  documents and nodes (``bloomspan[llama-index]``);
* :mod:`.datatrove_steps` — ``BloomspanCleaner`` (a pipeline step cleaning with a published run)
  and ``BloomspanMiner`` (mines the documents a reader yields into a ``mine --out`` directory)
  (``bloomspan[datatrove]``).

:mod:`.text_cleaning` is what they share: one batch of texts cleaned, with the spans found.
"""
