"""The emoji of a reaction (OpenAPI: addReaction, its emoji path parameter): a Unicode emoji sequence, or a custom
emoji written `<:name:id>` or `name:id` and matched by id. Responses and events use `<:name:id>`.

The Unicode check is a compact grammar of emoji sequences over emoji code-point ranges, not the full
RGI list (which would be a new dependency): it accepts every RGI sequence and rejects plain text."""

from __future__ import annotations

import re
from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncConnection

from meadhall.api.openapi import ID_PATTERN
from meadhall.core import permissions as perms
from meadhall.core.errors import AppError, permission_denied
from meadhall.core.ids import parse_id
from meadhall.guilds.emojis import queries as emoji_queries
from meadhall.guilds.members import queries as member_queries
from meadhall.messages.rooms import MessageRoom

P = perms.P
MAX_CODE_POINTS = 32
_CUSTOM = re.compile(r"<:(?P<n1>[A-Za-z0-9_]{2,32}):(?P<i1>[0-9]{1,19})>|(?P<n2>[A-Za-z0-9_]{2,32}):(?P<i2>[0-9]{1,19})")

ZWJ = 0x200D
VS16 = 0xFE0F
KEYCAP = 0x20E3
BLACK_FLAG = 0x1F3F4
CANCEL_TAG = 0xE007F
KEYCAP_BASES = frozenset(map(ord, "0123456789#*"))
_BASE_RANGES = (
    (0x1F000, 0x1FAFF), (0x2600, 0x27BF), (0x2300, 0x23FF), (0x2B00, 0x2BFF), (0x2194, 0x21AA),
    (0x25AA, 0x25FE), (0x2934, 0x2935),
)
_BASE_SINGLES = frozenset({0x00A9, 0x00AE, 0x203C, 0x2049, 0x2122, 0x2139, 0x24C2, 0x3030, 0x303D, 0x3297, 0x3299})


def _chars(*ranges: tuple[int, int]) -> str:
    """A regular-expression character class of code-point ranges, written as the characters themselves (an
    escape such as \\U0001F000 is Python's, not ECMA-262's: the literal form reads the same in both)."""
    return "[" + "".join(re.escape(chr(lo)) + ("-" + re.escape(chr(hi)) if hi > lo else "") for lo, hi in ranges) + "]"


def _pattern() -> str:
    """`is_unicode_emoji` and `_CUSTOM` (with a non-zero id of at most 2^63-1) as one regular expression, for
    the OpenAPI document: the same grammar, element by element. `(?!\\n)$` keeps a trailing line feed out
    (Python's `$` also matches before one)."""
    bases = sorted({(c, c) for c in _BASE_SINGLES} | set(_BASE_RANGES))
    ri = (0x1F1E6, 0x1F1FF)
    # Regional indicators are no base, so the range that holds them is cut around them.
    cut = [r for lo, hi in bases for r in ([(lo, ri[0] - 1), (ri[1] + 1, hi)] if lo <= ri[0] <= hi else [(lo, hi)])]
    vs, zwj, tone = re.escape(chr(VS16)), re.escape(chr(ZWJ)), _chars((0x1F3FB, 0x1F3FF))
    element = "|".join([
        f"[0-9#*]{vs}?{re.escape(chr(KEYCAP))}",
        _chars(ri) + "{2}",
        re.escape(chr(BLACK_FLAG)) + _chars((0xE0020, 0xE007E)) + "+" + re.escape(chr(CANCEL_TAG)),
        f"{_chars(*cut)}(?:{vs}{tone}?|{tone}{vs}?)?",
    ])
    unicode = f"(?=[\\s\\S]{{1,{MAX_CODE_POINTS}}}(?!\\n)$)(?:{element})(?:{zwj}(?:{element}))*"
    # What parse_id accepts (at most 19 digits, leading zeros allowed), not zero.
    emoji_id = "(?!0+(?:>|(?!\\n)$))" + ID_PATTERN.removeprefix("^").removesuffix("$")
    name = "[A-Za-z0-9_]{2,32}"
    return f"^(?:{unicode}|<:{name}:{emoji_id}>|{name}:{emoji_id})(?!\\n)$"


EMOJI_PATTERN = _pattern()


@dataclass(frozen=True)
class ParsedEmoji:
    """What the path says: `unicode` for a Unicode emoji, else the custom emoji's id (and name as written)."""

    unicode: str | None = None
    custom_id: int | None = None
    custom_name: str | None = None


@dataclass(frozen=True)
class CustomEmoji:
    id: int
    guild_id: int
    name: str

    @property
    def token(self) -> str:
        return custom_token(self.name, self.id)


def custom_token(name: str, emoji_id: int) -> str:
    return f"<:{name}:{emoji_id}>"


def _is_ri(cp: int) -> bool:
    return 0x1F1E6 <= cp <= 0x1F1FF


def _is_tag(cp: int) -> bool:
    return 0xE0020 <= cp <= 0xE007E


def _is_skin_tone(cp: int) -> bool:
    return 0x1F3FB <= cp <= 0x1F3FF


def _is_base(cp: int) -> bool:
    if _is_ri(cp) or cp in (ZWJ, VS16, KEYCAP):
        return False
    return cp in _BASE_SINGLES or any(lo <= cp <= hi for lo, hi in _BASE_RANGES)


def _element_end(cps: list[int], i: int) -> int | None:
    """Index after the emoji element starting at `i` (keycap, flag, tag sequence, or a base with its
    presentation selector and skin tone); None when no element starts there."""
    n, cp = len(cps), cps[i]
    if cp in KEYCAP_BASES:
        j = i + 1 + (i + 1 < n and cps[i + 1] == VS16)
        return j + 1 if j < n and cps[j] == KEYCAP else None
    if _is_ri(cp):
        return i + 2 if i + 1 < n and _is_ri(cps[i + 1]) else None
    if not _is_base(cp):
        return None
    j = i + 1
    if cp == BLACK_FLAG and j < n and _is_tag(cps[j]):
        while j < n and _is_tag(cps[j]):
            j += 1
        return j + 1 if j < n and cps[j] == CANCEL_TAG else None
    seen_vs = seen_tone = False
    while j < n:
        if cps[j] == VS16 and not seen_vs:
            seen_vs = True
        elif _is_skin_tone(cps[j]) and not seen_tone:
            seen_tone = True
        else:
            break
        j += 1
    return j


def is_unicode_emoji(text: str) -> bool:
    """One emoji sequence: elements joined by ZWJ, at most 32 code points."""
    cps = [ord(c) for c in text]
    if not cps or len(cps) > MAX_CODE_POINTS:
        return False
    i = 0
    while True:
        end = _element_end(cps, i)
        if end is None:
            return False
        if end == len(cps):
            return True
        if cps[end] != ZWJ or end + 1 == len(cps):
            return False
        i = end + 1


def parse_emoji(raw: str) -> ParsedEmoji:
    """The path parameter (already URL-decoded); 422 `reaction.invalid_emoji` when malformed."""
    match = _CUSTOM.fullmatch(raw)
    if match is not None:
        emoji_id = parse_id(match["i1"] or match["i2"])
        if emoji_id is None or emoji_id == 0:
            raise AppError("reaction.invalid_emoji")
        return ParsedEmoji(custom_id=emoji_id, custom_name=match["n1"] or match["n2"])
    if is_unicode_emoji(raw):
        return ParsedEmoji(unicode=raw)
    raise AppError("reaction.invalid_emoji")


async def find_custom_emoji(conn: AsyncConnection, emoji_id: int) -> CustomEmoji | None:
    """The custom emoji with this id, in any guild (docs/customisation.md); None when there is none."""
    row = await emoji_queries.select_emoji_by_id(conn, emoji_id)
    return None if row is None else CustomEmoji(row["id"], row["guild_id"], row["name"])


async def check_custom_emoji_use(conn: AsyncConnection, room: MessageRoom, user_id: int, emoji: CustomEmoji) -> None:
    """An emoji of another guild needs USE_EXTERNAL_EMOJIS here and membership of its guild (OpenAPI: addReaction)."""
    if emoji.guild_id == room.guild_id:
        return
    room.require(P.USE_EXTERNAL_EMOJIS)
    if not room.is_instance_admin and await member_queries.select_member(conn, emoji.guild_id, user_id) is None:
        raise permission_denied(None, "This emoji belongs to a server you are not a member of")
