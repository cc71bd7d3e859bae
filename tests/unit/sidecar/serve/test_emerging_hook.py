"""EmergingHook: what it reads from bulk and single-document bodies, the zero-argument trigger,
known phrases, JSON-ready output, prometheus counters, and thread safety."""
from __future__ import annotations

import json
import threading

import numpy as np
from prometheus_client import CollectorRegistry, generate_latest

from bloomspan.engine.text.tokenizer import tokenize
from bloomspan.ingest.companions.emerging import EmergingConfig, zipf_words
from bloomspan.ingest.records.phrase_set import PhraseSet
from bloomspan.sidecar.serve.emerging_hook import EmergingHook, detector_config
from bloomspan.sidecar.serve.state import ServeConfig

TEMPLATE = ("This article was originally published by the Example Tribune and is republished "
            "here under a Creative Commons licence; subscribe to our newsletter for more stories")
SMALL = EmergingConfig(filter_bits=1 << 14, threshold=8, cooldown_seconds=600)


class FakeClock:
    t = 0.0

    def __call__(self) -> float:
        return self.t


def filler(rng, n=30) -> str:
    return " ".join(zipf_words(rng, n, 5000, 1.1))


def bulk(docs, index="crawl-1", verb="index") -> bytes:
    lines = []
    for i, d in enumerate(docs):
        lines.append(json.dumps({verb: {"_index": index, "_id": str(i)}}))
        lines.append(json.dumps(d))
    return ("\n".join(lines) + "\n").encode()


def hook(calls=None, **config) -> EmergingHook:
    config.setdefault("emerging_shingle", 8)
    cfg = ServeConfig(**config)
    return EmergingHook(cfg, on_threshold=(lambda: calls.append(1)) if calls is not None else None,
                        emerging_config=SMALL, clock=FakeClock(), background=False)


def test_detector_config_follows_the_serve_config():
    cfg = detector_config(ServeConfig(emerging_shingle=6, emerging_threshold=5000))
    assert cfg.shingle_tokens == 6 and cfg.threshold == 5000 and cfg.max_tracked >= 5000
    h = EmergingHook(ServeConfig(emerging_shingle=6, emerging_threshold=3))
    assert h.emerging_config.shingle_tokens == 6 and h.emerging_config.threshold == 3


def test_bulk_items_index_and_create_are_read_update_and_delete_are_not():
    h = hook(fields=("title", "text"))
    body = b"\n".join([
        b'{"index":{"_index":"a","_id":"1"}}', b'{"title":"Hello world","text":"one two three"}',
        b'{"create":{"_index":"a","_id":"2"}}', b'{"text":"four five six"}',
        b'{"update":{"_index":"a","_id":"3"}}', b'{"doc":{"text":"never read"}}',
        b'{"delete":{"_index":"a","_id":"4"}}',
        b'{"index":{"_index":"a","_id":"5"}}', b'{"other": 1, "text": 7}',
        b'{"index":{"_index":"a","_id":"6"}}', b'{not json',
        b'{"index":{"_index":"a","_id":"7"}}', b'{"text":"seven eight nine"}', b''])
    assert h.observe_bulk(body) == 3
    m = h.metrics()
    assert m["documents"] == 3 and m["hook_documents_observed"] == 3
    assert m["hook_documents_without_text"] == 1 and m["hook_parse_errors"] == 1 and m["hook_requests"] == 1


def test_a_bad_action_line_stops_reading_and_garbage_is_counted():
    h = hook()
    body = b'{"index":{}}\n{"text":"alpha beta"}\nthis is not an action\n{"index":{}}\n{"text":"gamma"}\n'
    assert h.observe_bulk(body) == 1
    assert h.observe_bulk(b"\xff\xfe garbage") == 0
    assert h.observe_bulk(b"[1, 2]") == 0
    assert h.metrics()["hook_parse_errors"] == 3


def test_a_single_document_body_is_read_even_pretty_printed():
    h = hook()
    assert h.observe_bulk(json.dumps({"text": "a single page body", "n": 1}, indent=2).encode()) == 1
    assert h.observe_bulk('{"text": "as a str"}') == 1
    assert h.observe_bulk(b'{"delete":{"_index":"a","_id":"1"}}') == 0  # a one-line bulk body
    assert h.metrics()["documents"] == 2


def test_only_watched_indices_are_read_when_clean_indices_are_set(tmp_path):
    phrases = tmp_path / "p.jsonl"
    phrases.write_text('{"text": "x y"}\n')
    h = hook(clean_indices=("crawl-*",), phrases_path=str(phrases))
    assert h.observe_bulk(bulk([{"text": "in crawl"}], index="crawl-7")) == 1
    assert h.observe_bulk(bulk([{"text": "elsewhere"}], index="logs")) == 0
    no_index = b'{"index":{}}\n{"text":"index from the url"}\n'
    assert h.observe_bulk(no_index, index="crawl-2") == 1
    assert h.observe_bulk(no_index, index="logs") == 0
    assert h.observe_bulk(no_index) == 1  # unknown target: the proxy already chose to pass it here
    assert h.metrics()["hook_documents_other_index"] == 2


def test_a_template_appearing_mid_stream_triggers_once_and_is_listed():
    rng = np.random.default_rng(0)
    calls: list[int] = []
    h = hook(calls)
    h.observe_bulk(bulk([{"text": filler(rng)} for _ in range(60)]))
    assert calls == [] and h.emerging() == []
    sent = 0
    while not calls and sent < 40:
        h.observe_bulk(bulk([{"text": filler(rng, 15) + ". " + TEMPLATE + ". " + filler(rng, 15)},
                             {"text": filler(rng)}]))
        sent += 1
    assert calls == [1] and sent <= 12  # full after 64/8 = 8 sightings, plus a few
    listed = h.emerging()
    assert len(listed) >= 8
    json.dumps(listed)  # JSON-ready
    for e in listed:
        assert len(e["tokens"]) == 8 and e["text"] == " ".join(e["tokens"])
        assert e["example"] in TEMPLATE and len(e["hash"]) == 16 and e["hits"] >= 1
    h.observe_bulk(bulk([{"text": TEMPLATE}]))
    assert calls == [1]  # cooldown
    assert h.metrics()["hook_triggers"] == 1


def test_known_phrases_cover_the_template():
    rng = np.random.default_rng(1)
    h = hook()
    h.observe_bulk(bulk([{"text": TEMPLATE + " " + filler(rng, 10)} for _ in range(12)]))
    tracked = len(h.emerging())
    assert tracked > 0
    phrase_set = PhraseSet.from_records([{"tokens": tokenize(TEMPLATE)}])
    assert h.set_known_phrases(phrase_set) == tracked
    assert h.emerging() == []
    h.observe_bulk(bulk([{"text": TEMPLATE + " " + filler(rng, 10)} for _ in range(12)]))
    assert h.emerging() == [] and h.metrics()["known_hits"] > 0
    assert h.metrics()["known_phrases"] == 1
    h.set_known_phrases(None)
    assert h.metrics()["known_phrases"] == 0


def test_phrase_texts_work_as_known_phrases_too():
    rng = np.random.default_rng(5)
    h = hook()
    h.set_known_phrases([TEMPLATE])
    h.observe_bulk(bulk([{"text": TEMPLATE + " " + filler(rng, 10)} for _ in range(12)]))
    assert h.emerging() == [] and h.metrics()["known_hits"] > 0


def test_a_failing_trigger_is_counted_not_raised():
    rng = np.random.default_rng(2)

    def boom():
        raise RuntimeError("scheduler down")

    h = EmergingHook(ServeConfig(emerging_shingle=8), on_threshold=boom, emerging_config=SMALL, background=False)
    h.observe_bulk(bulk([{"text": TEMPLATE + " " + filler(rng, 10)} for _ in range(12)]))
    m = h.metrics()
    assert m["hook_triggers"] == 1 and m["hook_trigger_errors"] == 1


def test_counters_reach_prometheus():
    registry = CollectorRegistry()
    h = EmergingHook(ServeConfig(emerging_shingle=8), registry=registry, emerging_config=SMALL)
    h.observe_bulk(bulk([{"text": "one two three four five six seven eight nine ten"}] * 3))
    assert h.flush(10)
    text = generate_latest(registry).decode()
    assert "bloomspan_emerging_documents_total 3.0" in text
    assert "bloomspan_emerging_filter_bytes 2048.0" in text
    assert "bloomspan_emerging_tracked 0.0" in text


def test_concurrent_observers_lose_no_count():
    rng = np.random.default_rng(3)
    h = hook()
    bodies = [bulk([{"text": filler(rng, 20)} for _ in range(10)]) for _ in range(16)]

    def work(chunk):
        for b in chunk:
            h.observe_bulk(b)

    threads = [threading.Thread(target=work, args=(bodies[i::4],)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    m = h.metrics()
    assert m["documents"] == 160 and m["hook_documents_observed"] == 160 and m["hook_requests"] == 16


def test_background_worker_observes_everything_queued_and_skips_on_overload():
    rng = np.random.default_rng(4)
    h = EmergingHook(ServeConfig(emerging_shingle=8), emerging_config=SMALL)  # background by default
    bodies = [bulk([{"text": filler(rng, 20)} for _ in range(10)]) for _ in range(8)]
    for b in bodies:
        assert h.observe_bulk(b) == 0  # queued, not observed on the caller's thread
    assert h.flush(30)
    assert h.metrics()["documents"] == 80 and h.metrics()["queued_bytes"] == 0
    h.close()
    assert not h._worker.is_alive()
    assert h.observe_bulk(bodies[0]) == 0 and h.counters.skipped_bodies == 1  # closed: counted, never raised
    tiny = EmergingHook(ServeConfig(emerging_shingle=8), emerging_config=SMALL, max_queue_bytes=1)
    with tiny._cond:  # hold the worker back: the first body waits in the queue, the next ones do not fit
        for b in bodies[:3]:
            tiny.observe_bulk(b)
        assert tiny.counters.skipped_bodies == 2 and tiny.counters.skipped_bytes == len(bodies[1]) + len(bodies[2])
    assert tiny.flush(30) and tiny.metrics()["documents"] == 10
    tiny.close()


async def test_the_trigger_runs_on_the_event_loop_that_fed_the_hook():
    import asyncio

    rng = np.random.default_rng(6)
    loop = asyncio.get_running_loop()
    seen: list = []
    fired = asyncio.Event()

    def on_threshold():
        seen.append(asyncio.get_running_loop())  # raises unless called on a running loop
        fired.set()

    h = EmergingHook(ServeConfig(emerging_shingle=8), on_threshold=on_threshold, emerging_config=SMALL)
    for _ in range(12):
        h.observe_bulk(bulk([{"text": TEMPLATE + " " + filler(rng, 10)}]))
    await asyncio.wait_for(fired.wait(), 30)
    assert seen == [loop] and h.metrics()["hook_trigger_errors"] == 0
    await h.on_cleanup()  # the aiohttp on_cleanup handler: the worker stops
    assert not h._worker.is_alive()
