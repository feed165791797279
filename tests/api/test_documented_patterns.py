"""The schemas the OpenAPI document states for fields checked in code accept exactly what the checks
accept: every string a schema's pattern generates passes its check, and, over an alphabet of the
characters that matter (separators, whitespace, controls, the edges of each rule), schema and check agree.
Without this the schemathesis run would only find a disagreement when it happened to draw one.

Two stated departures (accounts/field_schemas.py): a locale's surrounding whitespace, which the check
ignores and the schema leaves out, and an email's lengths, stated as a rule of the operation."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from meadhall.accounts import validation
from meadhall.accounts.field_schemas import (
    DISPLAY_NAME_SCHEMA,
    EMAIL_SCHEMA,
    LOCALE_SCHEMA,
    STATUS_EMOJI_SCHEMA,
    USERNAME_SCHEMA,
)
from meadhall.api.openapi import OVERRIDE_PERMISSIONS_PATTERN
from meadhall.core.errors import AppError
from meadhall.guilds.rooms.schemas import OverridePut
from meadhall.messages.emoji import EMOJI_PATTERN, parse_emoji

# Derandomized: the suite must give the same answer on every run (a new counterexample is found here).
FAST = settings(max_examples=400, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))


def accepts(check: Callable[[str], object], value: str) -> bool:
    try:
        check(value)
    except (ValueError, AppError):
        return False
    return True


def matches(schema: str | dict, value: str) -> bool:
    """As a JSON Schema validator reads a `pattern` (re.search) and a `maxLength` (code points)."""
    if isinstance(schema, str):
        schema = {"pattern": schema}
    return re.search(schema["pattern"], value) is not None and len(value) <= schema.get("maxLength", len(value))


EMOJI_PARTS = ["\u200d", "\ufe0f", "\u20e3", "\U0001F44D", "\U0001F3FB", "\U0001F1E6", "\U0001F1FF", "\U0001F3F4",
               "\U000E0067", "\U000E007F", "\u00a9", "\u2764", "1", "#", "a", "_", "<", ">", ":", "0", "9", "\n", " "]
CASES: list[tuple[str, str | dict, Callable[[str], object], list[str]]] = [
    ("override permissions", OVERRIDE_PERMISSIONS_PATTERN, lambda v: OverridePut(type="role", allow=v),
     ["ADMINISTRATOR", "SEND_MESSAGES", "VIEW_CHANNEL", "|", " ", "\t", "\n", "x", "send_messages"]),
    ("emoji", EMOJI_PATTERN, parse_emoji, EMOJI_PARTS),
    ("username", USERNAME_SCHEMA, validation.check_username,
     ["a", "Z", "0", "_", ".", "-", " ", "\t", "\n", "\x1c", "\u00e9", "ab", "abcdefghij"]),
    ("locale", LOCALE_SCHEMA, validation.check_locale,  # no surrounding whitespace: see above
     ["en", "pt", "-", "BR", "x", "1", "abcdefgh", "_", "E", "\u00e9"]),
    ("display name", DISPLAY_NAME_SCHEMA, validation.check_display_name,
     ["a", " ", "\t", "\n", "\x00", "\x1c", "\x85", "\u2028", "\u00a0", "\u0416", "abcdefghijklmnop"]),
    ("status emoji", STATUS_EMOJI_SCHEMA, validation.check_custom_status_emoji,
     ["<", ">", ":", "a", "_", "1", "\U0001F44D", "\u3000", " ", "\n", "\x00", "\u00e9", "<:ab:1>", "\u2764" * 30]),
    ("email", EMAIL_SCHEMA, validation.check_email,  # short values: the lengths are a stated rule
     ["a", "@", ".", "-", " ", "\n", "\x00", "\"", ":", "/", "\\", "\u00e9", "example", "\u2028"]),
]


@pytest.mark.parametrize(("name", "pattern", "check", "alphabet"), CASES, ids=[c[0] for c in CASES])
def test_what_the_pattern_matches_the_check_accepts(name, pattern, check, alphabet):
    @FAST
    @given(st.from_regex(pattern if isinstance(pattern, str) else pattern["pattern"]))
    def run(value: str) -> None:
        local, _, domain = value.strip().rpartition("@")
        if name == "email" and (len(local) > 64 or len(domain) > 253 or len(value.strip()) > 254):
            return  # the lengths are a stated rule, not the pattern's
        if matches(pattern, value):  # the pattern alone may allow more than maxLength
            assert accepts(check, value), f"{name}: the schema allows {value!r}, the check refuses it"
    run()


@pytest.mark.parametrize(("name", "pattern", "check", "alphabet"), CASES, ids=[c[0] for c in CASES])
def test_pattern_and_check_agree(name, pattern, check, alphabet):
    @settings(max_examples=1500, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
    @given(st.lists(st.sampled_from(alphabet), max_size=12).map("".join))
    def run(value: str) -> None:
        assert matches(pattern, value) == accepts(check, value), f"{name}: {value!r}"
    run()


@pytest.mark.parametrize("value", ["👍", "<:party:1>", "party:9223372036854775807", "7\ufe0f\u20e3",
                                   "\U0001F3F4\U000E0067\U000E0062\U000E007F"])
def test_known_good_emojis_match(value):
    assert matches(EMOJI_PATTERN, value) and accepts(parse_emoji, value)


@pytest.mark.parametrize("value", ["👍\n", "party:0", "<:party:000>", "party:9223372036854775808", "x", ""])
def test_known_bad_emojis_do_not_match(value):
    assert not matches(EMOJI_PATTERN, value) and not accepts(parse_emoji, value)
