"""The service's own words (meadhall/core/words/): CLDR plural categories for English and Russian, the
language picked from an account's locale or an Accept-Language header, and catalogues that match."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from meadhall.core.words import LANGUAGES, pick_language, plural_category, words

WORDS = Path(__file__).parents[2] / "meadhall" / "core" / "words"
CATEGORIES = {"en": {"one", "other"}, "ru": {"one", "few", "many", "other"}}


@pytest.mark.parametrize(("n", "expected"), [
    (0, "many"), (1, "one"), (2, "few"), (4, "few"), (5, "many"), (11, "many"), (12, "many"), (14, "many"),
    (20, "many"), (21, "one"), (22, "few"), (25, "many"), (101, "one"), (111, "many"), (112, "many"),
    (122, "few"), (1001, "one"), (1_000_000, "many")])
def test_russian_plural_categories_follow_cldr(n: int, expected: str) -> None:
    assert plural_category("ru", n) == expected


@pytest.mark.parametrize(("n", "expected"), [(0, "other"), (1, "one"), (2, "other"), (21, "other")])
def test_english_plural_categories_follow_cldr(n: int, expected: str) -> None:
    assert plural_category("en", n) == expected


def test_member_counts_are_said_with_their_plural_forms() -> None:
    ru, en = words("ru"), words("en")
    assert [ru.say("invite.members", count=n) for n in (1, 2, 5, 11, 21, 22, 0)] == [
        "1 участник", "2 участника", "5 участников", "11 участников", "21 участник", "22 участника",
        "0 участников"]
    assert [en.say("invite.members", count=n) for n in (1, 2, 0)] == ["1 member", "2 members", "0 members"]
    assert en.say("push.inRoom", name="Ann", room="general") == "Ann in #general"
    assert ru.say("push.inRoom", name="Аня", room="general") == "Аня в #general"


@pytest.mark.parametrize(("value", "expected"), [
    (None, "en"), ("", "en"), ("ru", "ru"), ("ru-RU", "ru"), ("RU_ru", "ru"), ("en-GB", "en"), ("de", "en"),
    ("de-DE, ru;q=0.8, en;q=0.5", "ru"), ("en;q=0.4, ru;q=0.9", "ru"), ("ru;q=0, en", "en"),
    ("fr, de;q=0.9", "en"), ("*", "en"), ("ru-RU,ru;q=0.9,en-US;q=0.8,en;q=0.7", "ru"), ("ru;q=abc, en", "en"),
    ("<script>", "en")])
def test_the_language_is_picked_from_a_locale_or_an_accept_language_header(value: str | None,
                                                                            expected: str) -> None:
    assert pick_language(value) == expected
    assert words(value).lang == expected


def test_the_catalogues_hold_the_same_messages_with_the_same_values() -> None:
    catalogues = {lang: json.loads((WORDS / f"{lang}.json").read_text(encoding="utf-8")) for lang in LANGUAGES}
    assert catalogues["en"].keys() == catalogues["ru"].keys()
    for key, english in catalogues["en"].items():
        for lang, catalogue in catalogues.items():
            message = catalogue[key]
            forms = message if isinstance(message, dict) else {"other": message}
            if isinstance(english, dict):
                assert set(forms) == CATEGORIES[lang], (lang, key)
            assert all(forms.values()), (lang, key)
            placeholders = {frozenset(re.findall(r"\{(\w+)\}", form)) for form in forms.values()}
            english_forms = english if isinstance(english, dict) else {"other": english}
            assert placeholders == {frozenset(re.findall(r"\{(\w+)\}", f)) for f in english_forms.values()}, key
    assert "\\u" not in (WORDS / "ru.json").read_text(encoding="utf-8")
