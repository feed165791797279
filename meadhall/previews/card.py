"""A page's card (docs/outbound.md): OpenGraph first, then the Twitter card, then `<title>` and
`<meta name="description">`. The image URL is resolved against the page and checked by the outbound address
rules, never downloaded: a card must not point a client at an address the service itself would refuse."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from yarl import URL

from meadhall.integrations.outbound import RefusedURL, url_target
from meadhall.integrations.outbound.addresses import Network

FIELD_LENGTH = {"title": 300, "description": 1000, "site_name": 200, "image_url": 2048}


def parse_card(body: bytes, charset: str | None, page: URL, allowed: Sequence[Network] = ()
               ) -> dict[str, Any] | None:
    """The card of an HTML page, or None when it has no usable metadata (no title and no description)."""
    html = body.decode(charset or "utf-8", errors="replace") if _known(charset) else body.decode("utf-8", "replace")
    from selectolax.lexbor import LexborHTMLParser  # with the first preview, not at start

    tree = LexborHTMLParser(html)
    metas: dict[str, str] = {}
    for node in tree.css("meta"):
        key = (node.attributes.get("property") or node.attributes.get("name") or "").strip().lower()
        content = node.attributes.get("content")
        if key and content and key not in metas:
            metas[key] = content
    title_node = tree.css_first("title")
    title = _first(metas, "og:title", "twitter:title") or (title_node.text() if title_node else None)
    description = _first(metas, "og:description", "twitter:description", "description")
    site_name = _first(metas, "og:site_name", "application-name")
    image = _image(_first(metas, "og:image", "og:image:url", "og:image:secure_url", "twitter:image",
                          "twitter:image:src"), page, allowed)
    card = {"title": _clip(title, "title"), "description": _clip(description, "description"),
            "image_url": image, "site_name": _clip(site_name, "site_name")}
    if not card["title"] and not card["description"]:
        return None
    return card


def _known(charset: str | None) -> bool:
    if not charset:
        return False
    try:
        "".encode(charset)
    except LookupError:
        return False
    return True


def _first(metas: dict[str, str], *keys: str) -> str | None:
    for key in keys:
        value = metas.get(key, "").strip()
        if value:
            return value
    return None


def _clip(value: str | None, field: str) -> str | None:
    if value is None:
        return None
    value = " ".join(value.split())
    return value[:FIELD_LENGTH[field]] or None


def _image(raw: str | None, page: URL, allowed: Sequence[Network]) -> str | None:
    if not raw:
        return None
    try:
        url = url_target(page.join(URL(raw.strip())), allowed)
    except (RefusedURL, ValueError):
        return None
    text = str(url)
    return text if len(text) <= FIELD_LENGTH["image_url"] else None
