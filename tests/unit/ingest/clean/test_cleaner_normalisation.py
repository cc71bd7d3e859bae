"""A phrase mined from NFC text is found in NFD, full-width and ligature spellings of it:
mining and ingest share the normalising tokenizer, and the cut spans are the original's."""
from __future__ import annotations

import json
import unicodedata

from bloomspan.engine.mining.config import MiningConfig
from bloomspan.ingest import Cleaner, CleanerConfig, PhraseSet
from bloomspan.sidecar.run.jsonl_mining import mine_jsonl

BANNER = "Настройки файлов cookie и конфиденциальности сайта"


def _mined_phrases(tmp_path) -> PhraseSet:
    src = tmp_path / "corpus.jsonl"
    with open(src, "w", encoding="utf-8") as f:
        for i in range(30):
            f.write(json.dumps({"id": str(i), "text": f"статья номер {i} о разном {i * 7}\n{BANNER}"},
                               ensure_ascii=False) + "\n")
    mine_jsonl(str(src), "text", MiningConfig(sigma=20, min_length=5), str(tmp_path / "out"), id_field="id")
    return PhraseSet.from_jsonl(tmp_path / "out" / "phrases.jsonl")


def test_nfd_document_matches_a_phrase_mined_from_nfc(tmp_path):
    phrases = _mined_phrases(tmp_path)
    assert any("настройки" in p.tokens for p in phrases)
    nfd = unicodedata.normalize("NFD", BANNER)
    assert nfd != BANNER and len(nfd) > len(BANNER)  # й and ё decompose
    text = f"Новая страница.\n{nfd}"
    cleaner = Cleaner(phrases, CleanerConfig(fields=("text",), mode="mark"))
    (result,) = cleaner.clean_batch([{"text": text}])
    spans = result.doc["bloomspan"]["spans"]
    assert spans, "the NFD banner was not recognised"
    covered = "".join(text[s["start"]:s["end"]] for s in spans)
    assert unicodedata.normalize("NFC", covered) == BANNER

    (stripped,) = Cleaner(phrases, CleanerConfig(fields=("text",), mode="strip")).clean_batch([{"text": text}])
    assert stripped.doc["text"].strip() == "Новая страница."


def test_full_width_spelling_matches_too(tmp_path):
    phrases = _mined_phrases(tmp_path)
    wide = BANNER.replace("cookie", "ｃｏｏｋｉｅ")
    (result,) = Cleaner(phrases, CleanerConfig(fields=("text",), mode="strip")).clean_batch(
        [{"text": f"Начало. {wide}"}])
    assert result.doc["text"].strip() == "Начало."
