"""The kinds of record a mining run writes, named once.

A ``phrases.jsonl`` / ``templates.jsonl`` record carries ``kind``. The template detector's page
models (:data:`PAGE_MODEL_KINDS`) and its config record hold no phrase; they and line-anchored
``block`` phrases are what only the template matcher reads (:data:`TEMPLATE_KINDS`). The parser
(:mod:`.template_records`), the phrase reader (:mod:`.phrase_set`) and the template index writer
and reader (:mod:`bloomspan.sidecar.publish.template_reader`) all take their lists from here, so a
new page model is added in one place.
"""
from __future__ import annotations

# Page models, each a whole-page rule: a skeleton's line pairs, a line shape's fixed words, a site's
# title names (navigation made of other pages' titles), a site's own-fact line types.
PAGE_MODEL_KINDS = ("skeleton", "line_shape", "title_nav", "own_facts")
CONFIG_KIND = "config"  # the detector configuration a run mined with (first record of templates.jsonl)
# Records that hold no phrase: the phrase reader skips them.
NOT_PHRASE_KINDS = (*PAGE_MODEL_KINDS, CONFIG_KIND)
# Every kind only the template matcher reads: a file holding any of them is a template file,
# whatever its first record.
TEMPLATE_KINDS = (CONFIG_KIND, *PAGE_MODEL_KINDS, "block")
