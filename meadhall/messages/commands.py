"""Slash commands parsed from `content` on send and mention tokens (OpenAPI: sendMessage). Pure."""

from __future__ import annotations

import re
from dataclasses import dataclass

from meadhall.core.errors import validation_error
from meadhall.core.ids import parse_id

USER_MENTION = re.compile(r"<@(\d{1,20})>")
CHANNEL_MENTION = re.compile(r"<#(\d{1,20})>")
_COMMAND = re.compile(r"^/(me|whisper|scream|ls)(?:[ \n](.*))?$", re.DOTALL)
_LS_TARGET = re.compile(r"^<@(\d{1,20})>[ \n](.*)$", re.DOTALL)

KINDS = {"me": "action", "whisper": "whisper", "scream": "scream", "ls": "private"}


@dataclass(frozen=True)
class Parsed:
    kind: str
    content: str
    recipient_id: int | None = None


def parse_command(content: str) -> Parsed:
    """Turn `/me x`, `/whisper x`, `/scream x`, `/ls <@id> x`, `//x` into (kind, stored content)."""
    if content.startswith("//"):
        return Parsed("normal", content[1:])
    match = _COMMAND.match(content)
    if match is None:
        return Parsed("normal", content)
    name, text = match.group(1), match.group(2) or ""
    if name == "ls":
        target = _LS_TARGET.match(text)
        if target is None or not target.group(2).strip():
            raise validation_error("content", "/ls needs a user mention and a text: /ls <@user_id> text")
        recipient = parse_id(target.group(1))
        return Parsed("private", target.group(2), recipient)
    if not text.strip():
        raise validation_error("content", f"/{name} needs a text")
    return Parsed(KINDS[name], text)


def _ids(pattern: re.Pattern[str], content: str) -> list[int]:
    """Distinct ids of the matching tokens, in order of first appearance."""
    seen: dict[int, None] = {}
    for raw in pattern.findall(content):
        value = parse_id(raw)
        if value is not None:
            seen.setdefault(value)
    return list(seen)


def mentioned_user_ids(content: str) -> list[int]:
    return _ids(USER_MENTION, content)


def mentioned_channel_ids(content: str) -> list[int]:
    return _ids(CHANNEL_MENTION, content)


def mentions_everyone(content: str) -> bool:
    return "@everyone" in content
