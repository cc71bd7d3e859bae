"""Generated pages whose navigation bars have no repeated line: Texinfo's "Next: X, Previous:
Y, Up: Z [Contents][Index]" above each node and "Previous: Y | Next: X | Top" below it, the
titles changing per page (the two bars differ, so neither repeats inside its page either)."""
from __future__ import annotations

import random

WORDS = [f"w{i}" for i in range(400)]


def texinfo_site(n_pages: int, seed: int, site: str = "manual.example") -> list[dict]:
    """``n_pages`` page dicts (id, text, site, url, spans): the top bar, the page's title, 4-9
    lines of body words, the bottom bar. ``spans``: the two bars' character spans."""
    rng = random.Random(seed)
    titles = [" ".join(rng.choice(WORDS[:150]).title() for _ in range(rng.randint(1, 3))) for _ in range(n_pages)]
    pages = []
    for p in range(n_pages):
        bar = (f"Next: {titles[(p + 1) % n_pages]}, Previous: {titles[p - 1]}, "
               f"Up: {titles[p // 5]}   [Contents][Index]")
        body = "\n".join(" ".join(rng.choice(WORDS[150:]) for _ in range(rng.randint(8, 20)))
                         for _ in range(rng.randint(4, 9)))
        low = f"Previous: {titles[p - 1]} | Next: {titles[(p + 1) % n_pages]} | Top"
        text = f"{bar}\n{titles[p]}\n{body}\n{low}"
        pages.append({"id": f"{site}-{p}", "text": text, "site": site, "url": f"https://{site}/html_node/{p}.html",
                      "spans": [[0, len(bar)], [len(text) - len(low), len(text)]]})
    return pages
