"""A deterministic web crawl: sites with templates around natural-like content.

``generate_web(n_docs, seed, n_sites=None)`` streams documents (dicts); nothing but the
site descriptions and a few recent pages per site stays in memory, so 100 M-token
corpora can be written straight to JSONL.

Corpus shape
------------
* ``n_sites`` sites (default ``max(3, round(sqrt(n_docs) / 2))``); site sizes differ
  10x between the smallest and the largest (weights ``10**u`` spread evenly on [0, 1]).
  About 20% of sites are Russian (Cyrillic templates and content), the rest English;
  site 0 is an English shop and, from 3 sites on, site 1 a Russian news site.
* Site kinds: shop (product pages, listing pages with product cards, blog), news (with
  an "about the company" paragraph under each item), blog. Every kind has a few thin
  pages (contacts, 404) that are almost entirely template.
* Page layout: cookie banner (shared across sites), header navigation (3-8 tokens),
  breadcrumbs (category names vary), title, body paragraphs separated by blank lines,
  possibly a legal disclaimer pasted between paragraphs, a product box or a listing
  ("Showing 1–20 of 345 products" plus product cards), a "Read also" block with titles
  of the site's popular pages, a category sidebar (some sites), newsletter prompt
  (shared), and a footer block (social links, footer links, contact line on some sites,
  "© <year> <Company>. All rights reserved." with a varying year).
* About 1.5% of article and product pages are near-duplicates of a recent page of the
  same site (1-3% of the body's words replaced, different template variables).
* Content: see :mod:`.text_model`; its LZ78 phrases per token is near that of real
  prose of the same size (measured values in the test module and the task report).

Document dict
-------------
``{"id": "web-000000042", "url": "https://…", "site": "<domain>", "lang": "en"|"ru",
"page_type": "article"|"product"|"listing"|"info", "text": str,
"truth": {"template_spans": [[start, end], …], "variable_spans": [[start, end], …],
"near_duplicate_of": id | None}}``. ``template_spans`` are character spans (end
exclusive, ascending, disjoint) of every string inserted from a template, variable parts
included; ``variable_spans`` are the variable parts inside them (a subset). Everything
else is content.

Determinism: the output is a function of ``(seed, n_sites)`` and the position ``i``
(the vocabulary, i.e. the "language", is fixed by ``TextModel.vocab_seed``);
``generate_web(k, seed, n_sites=m)`` is a prefix of ``generate_web(n, seed, n_sites=m)``
for k <= n. (With the default ``n_sites`` the site count depends on ``n_docs``.)
"""
from __future__ import annotations

import functools
import logging
import math
from bisect import bisect_right
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from .templates import SITE_KINDS, Site, build_site, fill
from .text_model import Body, TextModel, Vocabulary, build_vocabulary, render, render_title, sample_body, sample_topic

logger = logging.getLogger(__name__)

RU_SHARE = 0.2
NEAR_DUP_RATE = 0.015
_PAGE_TYPES = {  # (page types, probabilities) per site kind
    "shop": (("product", "listing", "article", "info"), (0.55, 0.12, 0.28, 0.05)),
    "news": (("article", "info"), (0.95, 0.05)),
    "blog": (("article", "info"), (0.96, 0.04)),
}


def default_n_sites(n_docs: int) -> int:
    """Site count used when ``n_sites`` is None: ``max(3, round(sqrt(n_docs) / 2))``."""
    return max(3, round(math.sqrt(max(n_docs, 0)) / 2))


@functools.lru_cache(maxsize=4)
def _vocabulary(lang: str, size: int, exponent: float, shift: float, seed: int) -> Vocabulary:
    return build_vocabulary(lang, size, exponent, seed, shift)


class _Draw:
    """Uniforms of one page, drawn from its generator 256 at a time (cheap scalars)."""

    __slots__ = ("rng", "buf", "k")

    def __init__(self, rng: np.random.Generator) -> None:
        self.rng = rng
        self.buf = rng.random(256).tolist()
        self.k = 0

    def u(self) -> float:
        if self.k == len(self.buf):
            self.buf = self.rng.random(256).tolist()
            self.k = 0
        self.k += 1
        return self.buf[self.k - 1]

    def int(self, lo: int, hi: int) -> int:
        """Uniform integer in [lo, hi)."""
        return lo + min(int(self.u() * (hi - lo)), hi - lo - 1)

    def pick(self, seq):
        return seq[self.int(0, len(seq))]

    def lognormal(self, mean_log: float, sigma: float) -> float:
        # Box-Muller on two uniforms (1 - u avoids log(0)).
        z = math.sqrt(-2.0 * math.log(1.0 - self.u())) * math.cos(2.0 * math.pi * self.u())
        return math.exp(mean_log + sigma * z)


class _Builder:
    """Concatenates a page and records template and variable spans."""

    __slots__ = ("parts", "pos", "spans", "var")

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.pos = 0
        self.spans: list[list[int]] = []
        self.var: list[list[int]] = []

    def add(self, text: str, sep: str = "\n", template: bool = False, var=()) -> None:
        if not text:
            return
        if self.parts:
            self.parts.append(sep)
            self.pos += len(sep)
        if template:
            self.spans.append([self.pos, self.pos + len(text)])
            self.var.extend([self.pos + a, self.pos + b] for a, b in var)
        self.parts.append(text)
        self.pos += len(text)

    def text(self) -> str:
        return "".join(self.parts)


@dataclass
class _Recent:
    doc_id: str
    title_ids: np.ndarray
    body: Body
    cat: int


class _WebGenerator:
    def __init__(self, seed: int, n_sites: int, model: TextModel) -> None:
        self.seed = seed
        self.model = model
        self.vocab = {lang: _vocabulary(lang, model.vocab_size, model.exponent, model.shift, model.vocab_seed)
                      for lang in ("en", "ru")}
        mask = (1 << 62) - 1
        self.salt = {lang: (model.vocab_seed * 0x9E3779B1 + k) & mask for k, lang in enumerate(("en", "ru"), 1)}
        rng = np.random.default_rng([seed, n_sites, 1])
        langs = np.where(rng.random(n_sites) < RU_SHARE, "ru", "en")
        kinds = rng.choice(len(SITE_KINDS), size=n_sites, p=[0.4, 0.3, 0.3])
        kinds[0] = SITE_KINDS.index("shop")  # product cards and listings are always present
        if n_sites >= 3:  # both languages are always present
            langs[0], langs[1] = "en", "ru"
            kinds[1] = SITE_KINDS.index("news")
        self.sites: list[Site] = []
        self.site_topics: list[np.ndarray] = []
        used: set[str] = set()
        for s in range(n_sites):
            srng = np.random.default_rng([seed, 2, s])
            lang = str(langs[s])
            site = build_site(s, lang, SITE_KINDS[int(kinds[s])], self.vocab[lang], self.vocab["en"], srng)
            if site.domain in used:  # keep domains unique
                site.domain = f"s{s}-{site.domain}"
            used.add(site.domain)
            self.sites.append(site)
            self.site_topics.append(sample_topic(self.vocab[lang], srng.random(40)))
        # Site sizes: weights 10**u with u evenly spread over [0, 1] -> 10x spread.
        w = 10.0 ** np.linspace(0.0, 1.0, n_sites)[rng.permutation(n_sites)]
        self.cum_w = (np.cumsum(w) / w.sum()).tolist()
        self.pages = [0] * n_sites
        self.recent: list[deque[_Recent]] = [deque(maxlen=8) for _ in range(n_sites)]
        self.type_cum = {k: (t, np.cumsum(p).tolist()) for k, (t, p) in _PAGE_TYPES.items()}

    # --- content pieces ------------------------------------------------------------
    def _topic(self, site: Site, rng: np.random.Generator) -> np.ndarray:
        half = self.model.n_topic // 2
        own = sample_topic(self.vocab[site.lang], rng.random(half))
        st = self.site_topics[site.index]
        shared = st[(rng.random(self.model.n_topic - half) * st.shape[0]).astype(np.int64)]
        return np.concatenate([own, shared])

    def _body(self, site: Site, rng: np.random.Generator, n: int, topic: np.ndarray) -> Body:
        return sample_body(self.vocab[site.lang], self.model, rng.random((4, n)), topic, self.salt[site.lang])

    def _product_name(self, site: Site, d: _Draw) -> str:
        v = self.vocab[site.lang]
        words = " ".join(v.words[d.int(200, 30_000)] for _ in range(d.int(1, 4)))
        return f"{v.capitalized[d.int(2000, 5000)]} {words} {d.int(1, 999)}"

    def _price(self, site: Site, d: _Draw) -> str:
        return str(max(1, int(site.price_scale * d.lognormal(0.0, 0.8))))

    # --- template pieces -----------------------------------------------------------
    def _header(self, b: _Builder, site: Site, d: _Draw, cat: int) -> None:
        if site.cookie and d.u() < site.p_cookie_page:
            b.add(site.cookie, template=True)
        b.add(site.nav, template=True)
        name, subs = site.categories[cat]
        crumb, var = fill(site.crumb, cat=name, sub=d.pick(subs))
        b.add(crumb, template=True, var=var)

    def _read_also(self, b: _Builder, site: Site, d: _Draw) -> None:
        # Popular pages are linked Zipf-like: low indices far more often.
        n_pop = len(site.popular_titles)
        idx = sorted({min(int(n_pop * d.u() ** 3), n_pop - 1) for _ in range(d.int(3, 6))})
        lines, var, pos = [site.read_also], [], len(site.read_also)
        for i in idx:
            t = site.popular_titles[i]
            var.append((pos + 1, pos + 1 + len(t)))
            lines.append(t)
            pos += 1 + len(t)
        b.add("\n".join(lines), sep="\n\n", template=True, var=var)

    def _footer(self, b: _Builder, site: Site, d: _Draw) -> None:
        if site.sidebar:
            b.add(site.sidebar, sep="\n\n", template=True)
        if site.newsletter:
            b.add(site.newsletter, sep="\n\n", template=True)
        # The footer block is one template: social links, footer links, copyright line.
        year = site.year if d.u() < 0.85 else site.year - d.int(1, 6)
        lines = [site.social, site.footer, site.contacts, site.copyright]
        text, var = fill("\n".join(x for x in lines if x), year=year)
        b.add(text, sep="\n\n", template=True, var=var)

    def _paragraphs(self, b: _Builder, site: Site, d: _Draw, text: str) -> None:
        pars = text.split("\n\n") if text else []
        ins_disc = d.int(1, len(pars) + 1) if pars and d.u() < site.p_disclaimer else -1
        ins_read = -1
        if pars and d.u() < site.p_read_also:
            ins_read = d.int(1, len(pars) + 1) if d.u() < 0.4 else len(pars)
        for k, p in enumerate(pars, start=1):
            b.add(p, sep="\n\n")
            if k == ins_disc:
                b.add(site.disclaimer, sep="\n\n", template=True)
            if k == ins_read:
                self._read_also(b, site, d)

    # --- pages ---------------------------------------------------------------------
    def doc(self, i: int) -> dict:
        rng = np.random.default_rng([self.seed, 3, i])
        d = _Draw(rng)
        s = min(bisect_right(self.cum_w, d.u()), len(self.sites) - 1)
        site = self.sites[s]
        vocab = self.vocab[site.lang]
        page_no = self.pages[s]
        self.pages[s] += 1
        types, cum = self.type_cum[site.kind]
        ptype = types[min(bisect_right(cum, d.u()), len(types) - 1)]
        doc_id = f"web-{i:09d}"
        near_dup = None
        b = _Builder()
        cat = d.int(0, len(site.categories))
        topic = self._topic(site, rng)
        if ptype in ("article", "product"):
            recent = self.recent[s]
            if recent and d.u() < NEAR_DUP_RATE:
                orig = recent[d.int(0, len(recent))]
                near_dup, cat, title_ids = orig.doc_id, orig.cat, orig.title_ids
                ids = orig.body.ids.copy()
                flip = rng.random(ids.shape[0]) < 0.01 + 0.02 * d.u()
                ids[flip] = np.minimum(np.searchsorted(vocab.cdf, rng.random(int(flip.sum())), side="right"),
                                       vocab.size - 1)
                body = Body(ids, orig.body.seps)
            else:
                mean = 640.0 if ptype == "article" else 220.0
                n = int(min(max(d.lognormal(math.log(mean) - 0.18, 0.6), 30), 4000))
                n_title = d.int(4, 12)
                both = self._body(site, rng, n_title + n, topic)   # one kernel call for both
                title_ids = both.ids[:n_title]
                body = Body(both.ids[n_title:], both.seps[n_title:])
                recent.append(_Recent(doc_id, title_ids, body, cat))
            self._header(b, site, d, cat)
            b.add(render_title(vocab, title_ids), sep="\n\n")
            if ptype == "product":
                box, var = fill(site.product_box, price=self._price(site, d))
                b.add(box, template=True, var=var)
            self._paragraphs(b, site, d, render(vocab, body))
            if site.about:
                b.add(site.about, sep="\n\n", template=True)
        elif ptype == "listing":
            self._header(b, site, d, cat)
            b.add(site.categories[cat][0], sep="\n\n")
            if d.u() < 0.5:
                b.add(render(vocab, self._body(site, rng, d.int(10, 60), topic)), sep="\n\n")
            total = int(d.lognormal(5.0, 1.0)) + 21
            pages = (total + 19) // 20
            page = d.int(1, pages + 1)
            text, var = fill(site.listing, a=(page - 1) * 20 + 1, b=min(page * 20, total), total=total,
                             page=page, pages=pages)
            b.add(text, sep="\n\n", template=True, var=var)
            b.add(site.sort, template=True)
            for _ in range(min(20, total - (page - 1) * 20)):
                text, var = fill(site.card, name=self._product_name(site, d), price=self._price(site, d))
                b.add(text, template=True, var=var)
        else:  # info: contacts, delivery terms, 404 - almost entirely template
            self._header(b, site, d, cat)
            if d.u() < 0.3:
                b.add(site.not_found, sep="\n\n", template=True)
            else:
                b.add(render_title(vocab, topic[:d.int(1, 4)]), sep="\n\n")
                n = d.int(0, 40)
                if n:
                    b.add(render(vocab, self._body(site, rng, n, topic)), sep="\n\n")
        self._footer(b, site, d)
        section = "blog" if ptype == "article" and site.kind == "shop" else _SECTION[ptype]
        return {
            "id": doc_id,
            "url": f"https://{site.domain}/{section}/{page_no}",
            "site": site.domain,
            "lang": site.lang,
            "page_type": ptype,
            "text": b.text(),
            "truth": {"template_spans": b.spans, "variable_spans": b.var, "near_duplicate_of": near_dup},
        }


_SECTION = {"article": "news", "product": "product", "listing": "catalog", "info": "info"}


def generate_web(n_docs: int, seed: int, n_sites: int | None = None,
                 model: TextModel | None = None) -> Iterator[dict]:
    """Stream ``n_docs`` web pages (dicts, format in the module docstring)."""
    if not isinstance(n_docs, int) or n_docs < 0:
        raise ValueError(f"n_docs={n_docs!r}: must be an integer >= 0")
    if n_sites is None:
        n_sites = default_n_sites(n_docs)
    if not isinstance(n_sites, int) or n_sites < 1:
        raise ValueError(f"n_sites={n_sites!r}: must be an integer >= 1 (or None for the default)")
    return _stream(n_docs, seed, n_sites, model or TextModel())


def _stream(n_docs: int, seed: int, n_sites: int, model: TextModel) -> Iterator[dict]:
    gen = _WebGenerator(seed, n_sites, model)
    logger.debug("web corpus: %d docs, %d sites, seed %d", n_docs, n_sites, seed)
    for i in range(n_docs):
        yield gen.doc(i)



