"""The service's own words in the reader's language: the server-rendered pages (meadhall/web/pages.py) and the
Web Push notifications (meadhall/push/delivery.py). The client has its own catalogues (web/src/i18n/); these are
the few texts the service writes itself. API errors stay English (their `message` is for developers).

A catalogue is a flat JSON object per language (en.json, ru.json beside this file), read at its first use. A
message names its values in braces (`{name}`); a count is a plural: the key holds an object of CLDR plural
categories (`{"one": "{count} member", "other": "{count} members"}`), chosen by the language's rule below."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

LANGUAGES = ("en", "ru")
DEFAULT = "en"
_DIR = Path(__file__).parent
_PLACEHOLDER = re.compile(r"\{(\w+)\}")
_LANGUAGE_RANGE = re.compile(r"^[A-Za-z]{1,8}(?:-[A-Za-z0-9]{1,8})*$|^\*$")


def plural_category(lang: str, n: int) -> str:
    """The CLDR plural category of the whole number `n` (https://cldr.unicode.org, "Language Plural Rules"):
    English one/other; Russian one (1, 21, 31 … but not 11), few (2–4, 22–24 … but not 12–14), many (0, 5–20,
    25–30 …, 11–14), other (fractions, which a count never is)."""
    n = abs(n)
    if lang == "ru":
        if n % 10 == 1 and n % 100 != 11:
            return "one"
        if 2 <= n % 10 <= 4 and not 12 <= n % 100 <= 14:
            return "few"
        return "many"
    return "one" if n == 1 else "other"


@dataclass(frozen=True)
class Words:
    lang: str
    messages: dict[str, Any]

    def say(self, key: str, **values: Any) -> str:
        """The message `key` with its values filled in; a plural message picks its form by `count`. A key
        this language lacks falls back to English."""
        message = self.messages.get(key)
        if message is None:
            message = _catalogue(DEFAULT)[key]
        if isinstance(message, dict):
            count = int(values["count"])
            message = message.get(plural_category(self.lang, count)) or message["other"]
        return _PLACEHOLDER.sub(lambda m: str(values[m.group(1)]) if m.group(1) in values else m.group(0), message)


@cache
def _catalogue(lang: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((_DIR / f"{lang}.json").read_text(encoding="utf-8"))
    return data


@cache
def words(lang: str | None) -> Words:
    """The catalogue of `lang` (a language of LANGUAGES, or anything pick_language understands)."""
    chosen = lang if lang in LANGUAGES else pick_language(lang)
    return Words(chosen, _catalogue(chosen))


def _primary(tag: str) -> str:
    return tag.split("-", 1)[0].lower()


def pick_language(value: str | None) -> str:
    """The language to write in for an account's `locale` (`ru`, `ru-RU`) or an `Accept-Language` header
    (`de-DE, ru;q=0.8, en;q=0.5`): the first language we have, by descending quality (q=0 means "not this"),
    else English."""
    if not value:
        return DEFAULT
    ranked: list[tuple[float, int, str]] = []
    for index, part in enumerate(value.split(",")[:32]):
        tag, *params = (p.strip() for p in part.split(";"))
        tag = tag.replace("_", "-")  # a POSIX-style locale (ru_RU) names the same language
        if not tag or not _LANGUAGE_RANGE.match(tag):
            continue
        quality = 1.0
        for param in params:
            name, _, number = param.partition("=")
            if name.strip().lower() == "q":
                try:
                    quality = float(number)
                except ValueError:
                    quality = 0.0
        if quality > 0:
            ranked.append((-quality, index, tag))
    for _quality, _index, tag in sorted(ranked):
        lang = _primary(tag)
        if lang in LANGUAGES:
            return lang
        if tag == "*":
            return DEFAULT
    return DEFAULT
