"""Site templates of the web corpus: the boilerplate pools and one site's fixed choices.

Boilerplate comes in three scopes, as on the real web (article, Part 1):

* **shared across sites** - cookie banners, newsletter prompts, sentences of legal
  disclaimers: a handful of variants, each site picks one, so the same text recurs on
  many sites;
* **per site** - header navigation, footer links, social links, contact line, a
  category sidebar, "© <year> <Company>. All rights reserved.", breadcrumbs, "Read also" heading, product-card and listing
  templates, the "about the company" paragraph of news items, the disclaimer an editor
  pastes into the body of pages;
* **variable parts inside templates** - the year in the copyright, category names in
  breadcrumbs, "Showing 1–20 of 345 products", prices, product names in cards, titles in
  "Read also" blocks. The article (Part 6) notes that exact matching breaks such a
  template into pieces between the variable insertions.

Patterns use ``str.format`` fields; :func:`fill` returns the text with the character
spans of its variable parts. Site-level names (company, domain) are substituted once,
when the site is built, so they are fixed text of that site's templates.
"""
from __future__ import annotations

import string
from dataclasses import dataclass

import numpy as np

from .text_model import Vocabulary, render_title

_FMT = string.Formatter()


def fill(pattern: str, **values) -> tuple[str, list[tuple[int, int]]]:
    """Format ``pattern``; return (text, spans of the substituted fields in text)."""
    out: list[str] = []
    spans: list[tuple[int, int]] = []
    pos = 0
    for literal, name, _spec, _conv in _FMT.parse(pattern):
        out.append(literal)
        pos += len(literal)
        if name is not None:
            v = str(values[name])
            spans.append((pos, pos + len(v)))
            out.append(v)
            pos += len(v)
    return "".join(out), spans


# --- pools ----------------------------------------------------------------------------
POOLS = {
    "en": {
        "nav": ["Home", "Catalog", "Shop", "News", "Blog", "About us", "Contacts", "Delivery",
                "Payment", "Sale", "Brands", "Support", "FAQ", "Reviews", "Careers", "Services",
                "Stores", "Help", "Gift cards", "Events"],
        "nav_sep": [" | ", " · ", "  ", " / "],
        "home": "Home",
        "crumb": ["{home} › {cat} › {sub}", "{home} / {cat} / {sub}", "You are here: {home} » {cat} » {sub}",
                  "{home} > {cat} > {sub}"],
        "footer": ["Privacy policy", "Terms of use", "Cookie policy", "Sitemap", "Contact us", "Returns",
                   "Shipping information", "Accessibility", "Advertise", "Press", "Affiliate program",
                   "Store locator"],
        "copyright": ["© {{year}} {company}. All rights reserved.",
                      "Copyright © {{year}} {company}. All rights reserved.",
                      "© {{year}} {company}",
                      "© 2009–{{year}} {company}. All rights reserved. Reproduction of materials is "
                      "permitted only with a link to the source."],
        "company_suffix": ["Ltd", "Inc.", "LLC", "Group", "Media", "& Co."],
        "social": ["Follow us: Facebook · Twitter · Instagram · YouTube",
                   "Share: Facebook Twitter LinkedIn Email",
                   "Join us on Facebook, Instagram and Pinterest",
                   "Follow us on social media"],
        "cookie": ["We use cookies to ensure that we give you the best experience on our website. If you "
                   "continue to use this site we will assume that you are happy with it. Accept Decline",
                   "This website uses cookies to improve your experience. We'll assume you're ok with this, "
                   "but you can opt-out if you wish. Accept Read More",
                   "By continuing to browse this site, you agree to our use of cookies. Learn more Got it"],
        "newsletter": ["Subscribe to our newsletter. Get the latest news, offers and updates delivered straight "
                       "to your inbox. Enter your email address Subscribe",
                       "Sign up for our newsletter and get 10% off your first order. Email Sign up",
                       "Stay in the loop! Subscribe to receive news and special offers. We respect your privacy "
                       "and you can unsubscribe at any time."],
        "disclaimer": ["The information on this site does not constitute a public offer.",
                       "Prices and availability may vary.",
                       "Consult a specialist before use.",
                       "Product images are for illustrative purposes only and may differ from the actual product.",
                       "All trademarks mentioned on this site are the property of their respective owners.",
                       "The information provided is for general informational purposes only and should not be "
                       "considered professional advice.",
                       "We are not responsible for the content of external websites.",
                       "Specifications are subject to change without notice.",
                       "Delivery times are estimates and may vary depending on your location."],
        "read_also": ["Read also:", "Related articles", "You may also like", "More from {company}"],
        "listing": ["Showing {{a}}–{{b}} of {{total}} products", "{{total}} products found. Page {{page}} of {{pages}}",
                    "Items {{a}}–{{b}} of {{total}}"],
        "sort": ["Sort by: Popularity | Price: low to high | Price: high to low | Newest",
                 "Sort by: Relevance | Price | Rating", "Show: 20 | 40 | 80 per page"],
        "card": ["{{name}} — {{price}} $ In stock Add to cart", "{{name}} {{price}} USD Add to cart Compare",
                 "{{name}} Price: ${{price}} Buy now"],
        "product_box": ["Price: {{price}} $ In stock Add to cart Free shipping on orders over {threshold} dollars. "
                        "Free returns within 30 days.",
                        "{{price}} USD Add to cart Add to wishlist Delivery in 2–5 business days. "
                        "Secure payment with Visa, Mastercard and PayPal."],
        "about": "About {company}: {company} is an independent publisher founded in {founded}. Our editorial team "
                 "covers news, analysis and reviews. For press inquiries, contact press@{domain}.",
        "not_found": "Page not found. The page you are looking for does not exist or has been moved. "
                     "Go to the home page or use the search.",
        "contacts": ["Call us: {phone} Mon–Fri 9:00–18:00, Sat 10:00–16:00 Email: info@{domain}",
                     "Customer service: {phone} (toll free) Write to us: support@{domain} "
                     "Our office: {street} Street {house}, Suite {suite}"],
        "sidebar": ["Categories", "Popular categories", "Browse by category"],
        "tld": [".com", ".net", ".org", ".co.uk", ".io"],
    },
    "ru": {
        "nav": ["Главная", "Каталог", "Новости", "О компании", "Контакты", "Доставка", "Оплата", "Акции",
                "Бренды", "Помощь", "Отзывы", "Вакансии", "Услуги", "Статьи", "Магазины", "Блог"],
        "nav_sep": [" | ", " · ", "  ", " / "],
        "home": "Главная",
        "crumb": ["{home} › {cat} › {sub}", "{home} / {cat} / {sub}", "Вы здесь: {home} » {cat} » {sub}"],
        "footer": ["Политика конфиденциальности", "Пользовательское соглашение", "Карта сайта",
                   "Обратная связь", "Реклама на сайте", "Возврат товара", "Оферта", "Вакансии"],
        "copyright": ["© {{year}} {company}. Все права защищены.",
                      "© 2008–{{year}} {company}. Все права защищены. Копирование материалов разрешено только "
                      "с активной ссылкой на источник.",
                      "© {company}, {{year}}"],
        "company_suffix": ["ООО", "АО", "Группа компаний", "ИП"],
        "social": ["Мы в соцсетях: ВКонтакте · Telegram · Одноклассники · YouTube",
                   "Поделиться: ВКонтакте Telegram WhatsApp",
                   "Подписывайтесь на наш канал в Telegram"],
        "cookie": ["Мы используем файлы cookie, чтобы сделать сайт удобнее. Продолжая пользоваться сайтом, "
                   "вы соглашаетесь с использованием cookie. Принять",
                   "Этот сайт использует файлы cookie для улучшения работы. Подробнее Хорошо"],
        "newsletter": ["Подпишитесь на нашу рассылку и получайте новости и специальные предложения первыми. "
                       "Ваш email Подписаться",
                       "Будьте в курсе! Подпишитесь на новости и акции. Отписаться можно в любой момент."],
        "disclaimer": ["Информация на сайте не является публичной офертой.",
                       "Цены и наличие товара могут отличаться.",
                       "Перед применением проконсультируйтесь со специалистом.",
                       "Изображения товаров носят иллюстративный характер и могут отличаться от оригинала.",
                       "Все товарные знаки принадлежат их правообладателям.",
                       "Редакция не несёт ответственности за содержание внешних сайтов.",
                       "Характеристики товара могут быть изменены производителем без предварительного "
                       "уведомления."],
        "read_also": ["Читайте также:", "Похожие статьи", "Вам может быть интересно"],
        "listing": ["Показано {{a}}–{{b}} из {{total}} товаров", "Найдено товаров: {{total}}. Страница {{page}} из {{pages}}"],
        "sort": ["Сортировать: по популярности | по цене | по новизне", "Показывать по: 20 | 40 | 80"],
        "card": ["{{name}} — {{price}} ₽ В наличии В корзину", "{{name}} {{price}} руб. Купить Сравнить"],
        "product_box": ["Цена: {{price}} ₽ В наличии В корзину Бесплатная доставка при заказе от {threshold} рублей. "
                        "Возврат в течение 14 дней.",
                        "{{price}} руб. Купить в один клик Доставка по всей России от 1 дня."],
        "about": "О компании {company}: {company} — независимое издание, основанное в {founded} году. Редакция "
                 "публикует новости, аналитику и обзоры. По вопросам сотрудничества пишите на press@{domain}.",
        "not_found": "Страница не найдена. Возможно, она была удалена или перемещена. Перейдите на главную "
                     "страницу или воспользуйтесь поиском.",
        "contacts": ["Телефон: {phone} Пн–Пт с 9:00 до 18:00 Почта: info@{domain}",
                     "Служба поддержки: {phone} (звонок бесплатный) Адрес: ул. {street}, д. {house}, офис {suite}"],
        "sidebar": ["Рубрики", "Популярные разделы", "Категории"],
        "tld": [".ru", ".su", ".com.ru"],
    },
}

SITE_KINDS = ("shop", "news", "blog")


@dataclass
class Site:
    """One site's fixed choices. Patterns still contain the per-page fields."""

    index: int
    lang: str
    kind: str
    domain: str
    company: str
    year: int
    nav: str
    footer: str
    copyright: str          # field: year
    crumb: str              # fields: cat, sub (home substituted)
    social: str
    cookie: str | None
    newsletter: str | None
    disclaimer: str
    read_also: str
    listing: str            # fields: a, b, total, page, pages
    sort: str
    card: str               # fields: name, price
    product_box: str        # field: price
    about: str | None
    not_found: str
    contacts: str | None    # in the footer block of some sites
    sidebar: str | None     # category list under the body of some sites
    categories: list[tuple[str, list[str]]]
    popular_titles: list[str]
    p_disclaimer: float
    p_read_also: float
    p_cookie_page: float
    price_scale: float


def _name(vocab: Vocabulary, rng: np.random.Generator, lo: int, hi: int, n_words: int) -> str:
    ids = rng.integers(lo, min(hi, vocab.size), size=n_words)
    for j, w in enumerate(vocab.words[ids].tolist()):
        while w.isdigit():              # names are words, not numerals
            ids[j] = (ids[j] + 1) % vocab.size
            w = vocab.words[ids[j]]
    return render_title(vocab, ids)


def _pick(rng: np.random.Generator, items: list[str]) -> str:
    return items[int(rng.integers(0, len(items)))]


def _subset(rng: np.random.Generator, items: list[str], lo: int, hi: int) -> list[str]:
    k = int(rng.integers(lo, hi + 1))
    idx = np.sort(rng.choice(len(items), size=min(k, len(items)), replace=False))
    return [items[i] for i in idx]


def build_site(index: int, lang: str, kind: str, vocab: Vocabulary, latin: Vocabulary,
               rng: np.random.Generator) -> Site:
    """Draw one site's templates. ``latin`` spells domain names (URLs are ASCII)."""
    pool = POOLS[lang]
    # Brand ranks are drawn below 200,000 or the vocabulary's size (a small one: the warm-up's).
    brand = latin.words[int(rng.integers(2000, min(200_000, latin.size)))]
    brand2 = latin.words[int(rng.integers(2000, min(200_000, latin.size)))]
    domain = f"{brand}{'-' + brand2 if rng.random() < 0.4 else ''}{_pick(rng, pool['tld'])}"
    brand_local = vocab.capitalized[int(rng.integers(2000, min(200_000, vocab.size)))]
    suffix = _pick(rng, pool["company_suffix"])
    if lang == "ru":
        company = f"{suffix} «{brand_local}»"
    else:
        company = f"{brand_local} {suffix}"
    year = int(rng.integers(2019, 2025))
    nav_items = _subset(rng, pool["nav"][1:], 2, 7)
    nav = _pick(rng, pool["nav_sep"]).join([pool["nav"][0]] + nav_items)
    footer = " | ".join(_subset(rng, pool["footer"], 3, 7))
    copyright_ = _pick(rng, pool["copyright"]).format(company=company)
    crumb = _pick(rng, pool["crumb"]).replace("{home}", pool["home"])
    n_cat = int(rng.integers(4, 16))
    categories = [(_name(vocab, rng, 100, 20_000, int(rng.integers(1, 3))),
                   [_name(vocab, rng, 100, 40_000, int(rng.integers(1, 3))) for _ in range(int(rng.integers(2, 7)))])
                  for _ in range(n_cat)]
    disclaimer = " ".join(_subset(rng, pool["disclaimer"], 2, 4))
    about = pool["about"].format(company=company, founded=int(rng.integers(1995, 2018)), domain=domain) \
        if kind == "news" else None
    popular = [_name(vocab, rng, 30, 60_000, int(rng.integers(4, 10))) for _ in range(25)]
    phone = f"+{int(rng.integers(1, 9))} ({int(rng.integers(200, 999))}) {int(rng.integers(100, 999))}-" \
            f"{int(rng.integers(1000, 9999))}"
    contacts = _pick(rng, pool["contacts"]).format(
        phone=phone, domain=domain, street=_name(vocab, rng, 300, 20_000, 1),
        house=int(rng.integers(1, 200)), suite=int(rng.integers(1, 900))) if rng.random() < 0.6 else None
    sidebar = f"{_pick(rng, pool['sidebar'])}\n" + " · ".join(c for c, _subs in categories) \
        if rng.random() < 0.5 else None
    return Site(
        index=index, lang=lang, kind=kind, domain=domain, company=company, year=year, nav=nav,
        footer=footer, copyright=copyright_, crumb=crumb, social=_pick(rng, pool["social"]),
        cookie=_pick(rng, pool["cookie"]) if rng.random() < 0.7 else None,
        newsletter=_pick(rng, pool["newsletter"]) if rng.random() < 0.6 else None,
        disclaimer=disclaimer,
        read_also=_pick(rng, pool["read_also"]).format(company=company),
        listing=_pick(rng, pool["listing"]).format(), sort=_pick(rng, pool["sort"]),
        card=_pick(rng, pool["card"]).format(),
        product_box=_pick(rng, pool["product_box"]).format(threshold=int(rng.choice([50, 75, 100, 3000]))),
        about=about, not_found=pool["not_found"], contacts=contacts, sidebar=sidebar,
        categories=categories, popular_titles=popular,
        p_disclaimer=float(rng.choice([0.0, 0.1, 0.3, 0.8])), p_read_also=float(rng.choice([0.0, 0.5, 0.9])),
        p_cookie_page=float(rng.uniform(0.5, 1.0)), price_scale=float(np.exp(rng.uniform(1.5, 6.0))),
    )
