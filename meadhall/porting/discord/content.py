"""A message's text as Meadhall writes it: mentions as `<@local id>` tokens, and at most 4000 characters per
message (a longer one becomes consecutive messages)."""

from __future__ import annotations

import re

MAX_CONTENT = 4000
_RAW_MENTION = re.compile(r"<@!?(\d{1,20})>")


def rewrite_mentions(content: str, labelled: list[tuple[str, str]], local: dict[str, int]) -> tuple[str, list[int]]:
    """(content with mentions as `<@id>`, the local ids named). `labelled` is (source id, text after `@`) for
    each user the exporter listed in `mentions` (it writes them as `@nickname` or `@name`); raw `<@source_id>`
    tokens (an export without markdown formatting) are rewritten too. Longer labels first, so `@Ann Lee`
    is not taken for `@Ann`."""
    named: list[int] = []
    for source_id, label in sorted(labelled, key=lambda pair: len(pair[1]), reverse=True):
        target = local.get(source_id)
        if target is None or not label:
            continue
        token = f"@{label}"
        if token in content:
            content = content.replace(token, f"<@{target}>")
            named.append(target)

    def raw(match: re.Match[str]) -> str:
        target = local.get(match.group(1))
        if target is None:
            return match.group(0)
        named.append(target)
        return f"<@{target}>"

    content = _RAW_MENTION.sub(raw, content)
    return content, list(dict.fromkeys(named))


def split_content(content: str) -> list[str]:
    """At most MAX_CONTENT characters each, cut at the last line break or space of a part when there is
    one, never inside a `<@id>` token's neighbour word."""
    parts: list[str] = []
    rest = content
    while len(rest) > MAX_CONTENT:
        window = rest[:MAX_CONTENT]
        cut = max(window.rfind("\n"), window.rfind(" "))
        if cut < MAX_CONTENT // 2:
            cut = MAX_CONTENT
        parts.append(rest[:cut])
        rest = rest[cut:].lstrip("\n ") if cut < MAX_CONTENT else rest[cut:]
    parts.append(rest)
    return parts
