"""Routes of reactions and pins (OpenAPI: addReaction, pinMessage, ...): parse, one service call, respond."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, Response
from pydantic import BaseModel

from meadhall.accounts.schemas import UserSummary
from meadhall.api.deps import RuntimeDep
from meadhall.api.openapi import ID_SCHEMA, errors, rules
from meadhall.auth.deps import PrincipalDep, limited
from meadhall.core.errors import validation_error
from meadhall.core.ids import parse_id
from meadhall.core.limits import PAGE_DEFAULT, PAGE_MAX
from meadhall.messages import pins, reactions
from meadhall.messages.emoji import EMOJI_PATTERN
from meadhall.messages.schemas import Message

router = APIRouter(tags=["reactions and pins"])

REACTION = "/channels/{channel_id}/messages/{message_id}/reactions/{emoji}"
PIN = "/channels/{channel_id}/pins/{message_id}"
_SEEN = ("channel.not_found", "message.not_found")
# The emoji path parameter (OpenAPI: addReaction): the pattern is the grammar of messages/emoji.py.
Emoji = Annotated[str, Path(description="A Unicode emoji sequence, or a custom emoji as `<:name:id>` or `name:id`. "
                                        "A custom emoji that does not exist answers 422 `reaction.invalid_emoji`.",
                            json_schema_extra={"pattern": EMOJI_PATTERN})]
UNKNOWN_CUSTOM = rules({"emoji": "a custom emoji must exist"}, code="reaction.invalid_emoji")


class ReactionUsersResponse(BaseModel):
    users: list[UserSummary]
    has_more: bool


class PinsResponse(BaseModel):
    messages: list[Message]


def _no_content() -> Response:
    return Response(status_code=204)


@router.put(REACTION, status_code=204, openapi_extra=UNKNOWN_CUSTOM, dependencies=[limited("reactions")],
            responses=errors(*_SEEN, "perm.denied", "reaction.invalid_emoji", "reaction.limit_reached"))
async def add_reaction(rt: RuntimeDep, channel_id: str, message_id: str, emoji: Emoji,
                       principal: PrincipalDep) -> Response:
    await reactions.do_add_reaction(rt, principal, channel_id, message_id, emoji)
    return _no_content()


@router.delete(REACTION, status_code=204, openapi_extra=UNKNOWN_CUSTOM, dependencies=[limited("reactions")],
               responses=errors(*_SEEN, "reaction.invalid_emoji"))
async def remove_own_reaction(rt: RuntimeDep, channel_id: str, message_id: str, emoji: Emoji,
                              principal: PrincipalDep) -> Response:
    await reactions.do_remove_own_reaction(rt, principal, channel_id, message_id, emoji)
    return _no_content()


@router.get(REACTION, response_model=ReactionUsersResponse, openapi_extra=UNKNOWN_CUSTOM,
            responses=errors(*_SEEN, "perm.denied", "reaction.invalid_emoji"))
async def list_reactors(rt: RuntimeDep, channel_id: str, message_id: str, emoji: Emoji, principal: PrincipalDep,
                        after: Annotated[str | None, Query(description="Users with a greater id", json_schema_extra=ID_SCHEMA)] = None,
                        limit: Annotated[int, Query(ge=1, le=PAGE_MAX)] = PAGE_DEFAULT) -> dict[str, Any]:
    cursor = None if after is None else parse_id(after)
    if after is not None and cursor is None:
        raise validation_error("after", "must be an id")
    return await reactions.access_reactors(rt, principal, channel_id, message_id, emoji,
                                           after=cursor, limit=limit)


@router.delete(REACTION + "/{user_id}", status_code=204, openapi_extra=UNKNOWN_CUSTOM, dependencies=[limited("reactions")],
               responses=errors(*_SEEN, "user.not_found", "perm.denied", "reaction.invalid_emoji"))
async def remove_user_reaction(rt: RuntimeDep, channel_id: str, message_id: str, emoji: Emoji, user_id: str,
                               principal: PrincipalDep) -> Response:
    await reactions.do_remove_user_reaction(rt, principal, channel_id, message_id, emoji, user_id)
    return _no_content()


@router.get("/channels/{channel_id}/pins", response_model=PinsResponse,
            responses=errors("channel.not_found", "perm.denied"))
async def list_pins(rt: RuntimeDep, channel_id: str, principal: PrincipalDep) -> dict[str, Any]:
    return await pins.access_pins(rt, principal, channel_id)


@router.put(PIN, status_code=204,
            responses=errors(*_SEEN, "perm.denied", "pin.limit_reached", "validation.failed"))
async def pin_message(rt: RuntimeDep, channel_id: str, message_id: str, principal: PrincipalDep) -> Response:
    await pins.do_pin_message(rt, principal, channel_id, message_id)
    return _no_content()


@router.delete(PIN, status_code=204, responses=errors(*_SEEN, "perm.denied", "pin.not_found"))
async def unpin_message(rt: RuntimeDep, channel_id: str, message_id: str, principal: PrincipalDep) -> Response:
    await pins.do_unpin_message(rt, principal, channel_id, message_id)
    return _no_content()
