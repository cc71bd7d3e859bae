"""A native OpenSearch ingest pipeline from a phrase set, for users who cannot route writes
through the bulk proxy.

Each phrase becomes a case-insensitive Java regex over the *original* text: its tokens in
order, separated by runs of non-letter/non-digit characters, bounded so that it matches
whole tokens only — the same match the tokenizer-based cleaner makes, expressed for the
cluster's ``gsub`` processor. Phrases are packed into alternations of at most
``phrases_per_processor`` and applied longest first. A final ``script`` processor (Painless)
computes (gsub and trim processors tidy the whitespace left behind) ``bloomspan.boilerplate_ratio``.

Needs OpenSearch >= 2.12 (the ``copy`` processor). Limits compared with the proxy (say so to users):

* only the ``top`` phrases by Ψ go in: every processor is a regex pass over the text, so
  cost grows with the phrase count, where the proxy's Aho–Corasick scan is one pass for any
  number of phrases; the pipeline is also fixed at creation time (re-run this after each
  mining run; the proxy reloads itself);
* punctuation after a removed phrase goes with it, up to the next token or line break
  (the cleaner's junction rules, which keep a sentence end or a bracket, are finer);
* the ratio is by characters (1 − clean length / original length), not by tokens;
* no ``mark`` mode (no spans or phrase ids), no site scope, no RAG chunks, no
  fingerprints, no emerging-boilerplate detection;
* whole phrases only: the proxy's window matching (any ``min_length`` run of a phrase's
  tokens) would need one alternation per window;
* of the template detector's records (``templates=``) only what a regex over the whole text
  can say exactly: unscoped whole-line templates (``(?m)^…$``), two-line templates and lines
  at the text's start or end (Java's text anchors) of at least ``run_min_length`` tokens, and
  slots as ``[0-9]+``; site- and section-scoped records, page skeletons and shorter line
  pairs (valid only inside a longer chain) are left out, and :func:`template_patterns`
  counts them (``bloomspan pipeline`` prints the counts);
* the token boundary is Java's ``[\\p{L}\\p{N}]``, the same classes Python's
  ``str.isalnum`` covers for practical text, but case folding is the regex engine's
  (``(?iu)``), not Python's ``str.lower``.
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from .errors import IngestConfigError

TOKEN_CLASS = r"[\p{L}\p{N}]"
SEPARATOR = r"[^\p{L}\p{N}]+"
MODES = ("strip", "downweight")
ORIGINAL = "_bloomspan_original"
MIN_RATIO = 1e-4  # rank_feature with negative impact cannot hold 0 (see sidecar/run/annotate.py)

# Painless: only the ratio; the tidying is done by gsub/trim processors before it.
_RATIO_SCRIPT = """
def original = ctx[params.original];
def cleaned = ctx[params.target];
if (original instanceof String && cleaned instanceof String && original.length() > 0
    && cleaned.length() < original.length()) {
  double ratio = 1.0 - ((double) cleaned.length() / original.length());
  if (!(ctx.get('bloomspan') instanceof Map)) { ctx.bloomspan = new HashMap(); }
  ctx.bloomspan.boilerplate_ratio = Math.max(ratio, params.min_ratio);
}
"""


def phrase_regex(tokens: Sequence[str]) -> str:
    """Java regex matching ``tokens`` as whole tokens, any separators between them."""
    if not tokens:
        raise ValueError("a phrase needs at least one token")
    return SEPARATOR.join(re.escape(t) for t in tokens)


SLOT_TOKEN = "<num>"  # bloomspan.engine.text.slots.SLOT_TOKEN: any number token (ASCII digits)
SLOT_REGEX = "[0-9]+"
_LINE_GAP = r"[^\p{L}\p{N}\n]*"  # what a line may hold around its tokens: punctuation and spaces
_LINE_SEPARATOR = r"[^\p{L}\p{N}\n]+"  # between the tokens of one line


def _token_regex(token: str) -> str:
    return SLOT_REGEX if token == SLOT_TOKEN else re.escape(token)


def template_regex(tokens: Sequence[str], block_lengths: Sequence[int], anchor: str | None) -> str:
    """Java regex of a whole-line template: its lines in order, each exactly one line of the
    text (only punctuation and spaces around the tokens), the text's first line for anchor
    "start", its last for "end"; slots match any number."""
    lines, k = [], 0
    for n in block_lengths:
        lines.append(_LINE_GAP + _LINE_SEPARATOR.join(_token_regex(t) for t in tokens[k:k + n]) + _LINE_GAP)
        k += n
    body = r"\n".join(lines)
    start = r"\A" if anchor == "start" else "^"
    end = r"\z" if anchor == "end" else r"(?:\n|\z)"
    return f"(?imu){start}{body}{end}"


def template_patterns(records: Iterable[dict], run_min_length: int = 4) -> tuple[list[tuple[str, int]], dict]:
    """``(patterns, left_out)`` for the template detector's records: ``(regex, psi)`` per record
    a pipeline can express exactly (module docstring), and per reason the number left out."""
    patterns: list[tuple[str, int]] = []
    left_out = {"scoped": 0, "skeletons": 0, "short_line_pairs": 0}
    for r in records:
        kind = r.get("kind", "mcfp")
        if kind == "config":
            continue
        if kind == "skeleton":
            left_out["skeletons"] += 1
            continue
        if r.get("scope"):
            left_out["scoped"] += 1
            continue
        tokens = list(r.get("tokens") or str(r.get("text", "")).split(" "))
        psi = len(tokens) * int(r.get("df") or 0)
        if kind == "block":
            blocks, anchor = list(r["block_lengths"]), r.get("anchor")
            if (len(blocks) == 2 or anchor is not None) and len(tokens) < run_min_length:
                left_out["short_line_pairs"] += 1
                continue
            patterns.append((template_regex(tokens, blocks, anchor), psi))
        elif SLOT_TOKEN in tokens:
            body = SEPARATOR.join(_token_regex(t) for t in tokens)
            patterns.append((f"(?iu)(?<!{TOKEN_CLASS})(?:{body})(?!{TOKEN_CLASS})[^\\p{{L}}\\p{{N}}\\n]*", psi))
    return patterns, left_out


def _alternation(phrases: Sequence[Sequence[str]]) -> str:
    body = "|".join(phrase_regex(p) for p in phrases)
    # Whole tokens only: no letter/digit right before or after. The punctuation and spaces
    # after the phrase, up to the next token or line break, go with it ("experience!" leaves
    # no lone "!"); an opening bracket of the next token on the same line goes too.
    return f"(?iu)(?<!{TOKEN_CLASS})(?:{body})(?!{TOKEN_CLASS})[^\\p{{L}}\\p{{N}}\\n]*"


def build_pipeline(phrases: Iterable, field: str = "text", mode: str = "strip", top: int = 500,
                   phrases_per_processor: int = 50, description: str | None = None,
                   templates: Sequence[dict] | None = None) -> dict:
    """The ``_ingest/pipeline`` body for ``phrases`` (records with ``.tokens``, ``.df``, in Ψ order
    or any order: they are ranked by Ψ = length × df here, then applied longest first).

    ``templates``: the template detector's records (a config record first, as in
    ``templates.jsonl``); what :func:`template_patterns` can express runs before the
    phrases, one ``gsub`` per template (the top ``top`` by Ψ)."""
    if mode not in MODES:
        raise IngestConfigError("mode", mode, f"a pipeline supports {', '.join(MODES)} (mark needs the proxy or `bloomspan clean`)")
    if not isinstance(top, int) or top < 1:
        raise IngestConfigError("top", top, "must be an integer >= 1")
    if not isinstance(phrases_per_processor, int) or phrases_per_processor < 1:
        raise IngestConfigError("phrases_per_processor", phrases_per_processor, "must be an integer >= 1")
    if not field:
        raise IngestConfigError("field", field, "name the text field to clean")
    records = [(tuple(p.tokens), int(p.df or 0)) for p in phrases
               if not (templates and SLOT_TOKEN in p.tokens)]  # slotted phrases go with the templates
    template_regexes: list[str] = []
    if templates:
        configs = [r.get("template_config") or {} for r in templates if r.get("kind") == "config"]
        run_min_length = int((configs[0] if configs else {}).get("run_min_length", 4))
        found, _ = template_patterns(templates, run_min_length)
        template_regexes = [rx for rx, _ in sorted(found, key=lambda f: -f[1])[:top]]
    if not records and not template_regexes:
        raise IngestConfigError("phrases", 0, "the phrase set is empty: mine first")
    ranked = sorted(records, key=lambda r: (-len(r[0]) * r[1], -len(r[0]), r[0]))[:top]
    ordered = sorted((r[0] for r in ranked), key=lambda t: (-len(t), t))  # longest first
    target = field if mode == "strip" else f"{field}_clean"
    processors: list[dict] = []
    if mode == "downweight":
        processors.append({"copy": {"source_field": field, "target_field": target, "ignore_missing": True,
                                    "override_target": True}})
    for k, regex in enumerate(template_regexes):
        processors.append({"gsub": {"field": target, "pattern": regex, "replacement": "", "ignore_missing": True,
                                    "tag": f"bloomspan-template-{k}"}})
    for i in range(0, len(ordered), phrases_per_processor):
        chunk = ordered[i:i + phrases_per_processor]
        processors.append({"gsub": {"field": target, "pattern": _alternation(chunk), "replacement": "",
                                    "ignore_missing": True,
                                    "tag": f"bloomspan-phrases-{i // phrases_per_processor}"}})
    for pattern, replacement in ((r"[ \t]+\n", "\n"), (r"\n{3,}", "\n\n"), (r"[ \t]{2,}", " ")):
        processors.append({"gsub": {"field": target, "pattern": pattern, "replacement": replacement,
                                    "ignore_missing": True, "tag": "bloomspan-tidy"}})
    processors.append({"trim": {"field": target, "ignore_missing": True, "tag": "bloomspan-tidy"}})
    if mode == "strip":
        # The ratio needs the original: kept in a temporary field, removed at the end.
        processors.insert(0, {"copy": {"source_field": field, "target_field": ORIGINAL, "ignore_missing": True,
                                       "override_target": True}})
    processors.append({"script": {"lang": "painless", "source": _RATIO_SCRIPT.strip(), "tag": "bloomspan-ratio",
                                  "params": {"original": ORIGINAL if mode == "strip" else field, "target": target,
                                             "min_ratio": MIN_RATIO}}})
    if mode == "strip":
        processors.append({"remove": {"field": ORIGINAL, "ignore_missing": True}})
    what = f"{len(ordered)} boilerplate phrases" + (f" and {len(template_regexes)} templates" if templates else "")
    return {"description": description or f"bloomspan: {mode} {what} from field {field}",
            "processors": processors}
