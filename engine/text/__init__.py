"""bloomspan.engine.text: Text as token ids: tokenizer, vocabulary, the corpus store on disk, digit slots."""
