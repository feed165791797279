"""A message's text as Meadhall writes it: mentions as `<@local id>` tokens, and at most 4000 characters per
message (a longer one becomes consecutive messages)."""

from __future__ import annotations

import re

MAX_CONTENT = 4000
_RAW_MENTION = r"<@!?(\d{1,20})>"
# A token a cut must not go through: `<@id>`, `<#id>`, `<:name:id>`, `<a:name:id>` (no spaces in any).
_TOKEN = re.compile(r"<[@#:a][^<>\s]{0,100}>")


def rewrite_mentions(content: str, labelled: list[tuple[str, str]], local: dict[str, int]) -> tuple[str, list[int]]:
    """(content with mentions as `<@id>`, the local ids named). `labelled` is (source id, text after `@`) for
    each user the exporter listed in `mentions` (it writes them as `@nickname` or `@name`); raw `<@source_id>`
    tokens (an export without markdown formatting) are rewritten too. Everything is replaced in one pass over
    the text, so a token written here is never read again (a label `5` inside `<@777>`); longer labels are
    tried first, so `@Ann Lee` is not taken for `@Ann`."""
    targets: dict[str, int] = {}
    for source_id, label in sorted(labelled, key=lambda pair: len(pair[1]), reverse=True):
        target = local.get(source_id)
        if target is not None and label:
            targets.setdefault(label, target)
    labels = "|".join(re.escape(label) for label in targets)
    pattern = re.compile(_RAW_MENTION + (f"|@({labels})" if labels else ""))
    named: list[int] = []

    def replace(match: re.Match[str]) -> str:
        target = local.get(match.group(1)) if match.group(1) is not None else targets[match.group(2)]
        if target is None:
            return match.group(0)
        named.append(target)
        return f"<@{target}>"

    content = pattern.sub(replace, content)
    return content, list(dict.fromkeys(named))


def split_content(content: str) -> list[str]:
    """At most MAX_CONTENT characters each, cut at the last line break or space of a part when there is
    one, else at the limit, but never through a token (`<@id>`, an emoji): the cut moves before it."""
    parts: list[str] = []
    rest = content
    while len(rest) > MAX_CONTENT:
        window = rest[:MAX_CONTENT]
        cut = max(window.rfind("\n"), window.rfind(" "))
        if cut < MAX_CONTENT // 2:
            cut = MAX_CONTENT
            for token in _TOKEN.finditer(rest, max(0, cut - 110), cut + 110):
                if token.start() < cut < token.end() and token.start() > 0:
                    cut = token.start()
                    break
        parts.append(rest[:cut])
        rest = rest[cut:].lstrip("\n ") if cut < MAX_CONTENT else rest[cut:]
    parts.append(rest)
    return parts
