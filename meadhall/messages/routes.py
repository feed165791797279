"""Routes of /channels/{id}/messages, reactions, pins, typing, acknowledgements and attachment uploads:
parse, one service call, respond."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path, Query, Request, Response
from fastapi.responses import JSONResponse

from meadhall.api.deps import RuntimeDep, runtime_of
from meadhall.api.limits import remember
from meadhall.api.multipart import multipart_file
from meadhall.api.openapi import ID_SCHEMA, errors, rules, with_rules
from meadhall.api.pagination import Pagination, page_params
from meadhall.api.plain import PlainRoute, encoded_response, json_body, json_response
from meadhall.auth.deps import PrincipalDep, limited, plain_session, require_session
from meadhall.auth.sessions import Principal
from meadhall.core.errors import validation_error
from meadhall.core.ids import parse_id
from meadhall.core.limits import PAGE_DEFAULT, PAGE_MAX
from meadhall.files.schemas import UPLOAD_BODY, UPLOAD_ERRORS, FileResponse
from meadhall.messages import (
    attachments,
    edit,
    history,
    pins,
    reactions,
    read_states,
    search,
    send,
    typing_indicators,
)
from meadhall.messages import schemas as s
from meadhall.messages.emoji import EMOJI_PATTERN
from meadhall.runtime import Runtime

router = APIRouter(tags=["messages"])
reactions_and_pins = APIRouter(tags=["reactions and pins"])
# Attachment uploads keep the `files` tag they have always been documented under.
files = APIRouter(tags=["files"])


async def send_rate(request: Request, channel_id: str,
                    principal: Annotated[Principal, Depends(require_session)]) -> list[str]:
    """The `messages.send` bucket per user and room; an instance administrator passes (audited)."""
    decision, bypassed = await send.check_send_rate(runtime_of(request), principal, channel_id)
    remember(request, decision)
    return ["messages.send"] if bypassed else []


# Every route of a room's messages refuses a category, which holds none (messages/rooms.py).
MESSAGE_ROOM = rules({"channel_id": "a room that holds messages (a category holds none)"}, code="channel.wrong_type")

# sendMessage and listMessages are also served by plain routes (api/plain.py, below): they are the two
# requests clients make most, and FastAPI's dependency solving and body handling cost about 0.4 ms of
# server CPU per send, about as much as the message service itself (docs/benchmarks.md, "Plain routes for
# send and history": with the other changes listed there, CPU per send 1.9 -> 0.7 ms, per page 2.7 ->
# 1.0 ms). The routes here stay the documented interface and answer whatever the plain routes decline.
@router.post("/channels/{channel_id}/messages", status_code=201, response_model=s.MessageResponse,
             openapi_extra=with_rules(rules({
                 "content": "a slash command needs its text, `/ls` a mention of a member who "
                            "can view the room; a command alone is no content",
                 "attachment_ids": "unsent uploads of the caller to this room, each once",
                 "reply_to_id": "a message of this room"}), MESSAGE_ROOM),
             responses={200: {"model": s.MessageResponse, "description": "Repeated nonce: the first message"},
                        **errors("channel.not_found", "perm.denied", "relationship.blocked",
                                  "channel.wrong_type")})
async def send_message(rt: RuntimeDep, channel_id: str, body: s.MessageCreate, principal: PrincipalDep,
                       bypassed: Annotated[list[str], Depends(send_rate)]) -> JSONResponse:
    return await _send(rt, channel_id, body, principal, bypassed)


async def _send(rt: Runtime, channel_id: str, body: s.MessageCreate, principal: Principal,
                bypassed: list[str]) -> JSONResponse:
    draft = send.Draft(body.content, body.attachment_ids, body.nonce, body.reply_to_id)
    sent = await send.do_send_message(rt, principal, channel_id, draft, bypassed)
    return json_response({"message": sent.message}, status_code=201 if sent.created else 200)


@router.get("/channels/{channel_id}/messages", openapi_extra=MESSAGE_ROOM,
            response_model=s.MessagesResponse,
            responses=errors("channel.not_found", "perm.denied", "channel.wrong_type"))
async def list_messages(rt: RuntimeDep, channel_id: str, principal: PrincipalDep, page: Pagination) -> Response:
    # Returned as a response: the views are exactly the documented shape, and validating 50 messages
    # again through the response model would double the cost of a page. The service encodes the answer
    # (a kept page often answers with the bytes it gave the previous reader).
    body = await history.access_history(rt, principal, channel_id, history.Cursor(page.before, page.after,
                                                                                  page.limit))
    return encoded_response(body)


# ---- the same two endpoints as plain routes (api/plain.py), matched before the ones above ------------


async def _plain_send(request: Request) -> Response | None:
    body = await json_body(request, s.MessageCreate)
    if body is None:
        return None
    channel_id = request.path_params["channel_id"]
    principal = await plain_session(request)
    bypassed = await send_rate(request, channel_id, principal)
    return await _send(runtime_of(request), channel_id, body, principal, bypassed)


def _query_int(raw: str | None, default: int, low: int, high: int) -> int | None:
    if raw is None:
        return default
    value = int(raw) if raw.isascii() and raw.isdigit() and len(raw) <= 6 else None
    return value if value is not None and low <= value <= high else None


async def _plain_list(request: Request) -> Response | None:
    query = request.query_params
    limit = _query_int(query.get("limit"), PAGE_DEFAULT, 1, PAGE_MAX)
    if limit is None:
        return None
    principal = await plain_session(request)
    page = await page_params(before=query.get("before"), after=query.get("after"), limit=limit)
    return await list_messages(runtime_of(request), request.path_params["channel_id"], principal, page)


def plain_routes(prefix: str) -> list[PlainRoute]:
    return [PlainRoute(f"{prefix}/channels/{{channel_id}}/messages", _plain_send, "POST"),
            PlainRoute(f"{prefix}/channels/{{channel_id}}/messages", _plain_list, "GET")]


# A room's search and the server-wide one take the same words and paging.
SearchWords = Annotated[str, Query(description="1-200 characters after trimming; every word must occur, the last "
                                               "one as a prefix; case-insensitive; no wildcard or query syntax")]
SearchBefore = Annotated[str | None, Query(description="Matches older than this id", json_schema_extra=ID_SCHEMA)]
SEARCH_RULES = {"q": "1-200 characters after trimming, at least one word after normalising"}


# Registered before /messages/{message_id}, so that "search" is never read as a message id.
@router.get("/channels/{channel_id}/messages/search", response_model=s.MessagesResponse,
            openapi_extra=with_rules(rules(SEARCH_RULES), MESSAGE_ROOM),
            dependencies=[limited("search")], responses=errors("channel.not_found", "perm.denied", "channel.wrong_type"))
async def search_messages(
    rt: RuntimeDep, channel_id: str, principal: PrincipalDep,
    q: SearchWords,
    before: SearchBefore = None,
    limit: Annotated[int, Query(ge=1, le=PAGE_MAX)] = PAGE_DEFAULT,
) -> JSONResponse:
    return json_response(await search.search_room_messages(rt, principal, channel_id, search.SearchRequest(q, before, limit)))


@router.get("/guilds/{guild_id}/messages/search", response_model=s.MessagesResponse,
            openapi_extra=rules(SEARCH_RULES),
            dependencies=[limited("search")], responses=errors("guild.not_found", "channel.not_found"))
async def search_guild_messages(
    rt: RuntimeDep, guild_id: str, principal: PrincipalDep,
    q: SearchWords,
    channel_id: Annotated[str | None, Query(description="Only this room (one the caller may search)",
                                            json_schema_extra=ID_SCHEMA)] = None,
    author_id: Annotated[str | None, Query(description="Only messages by this user (an unknown one finds "
                                                       "nothing)", json_schema_extra=ID_SCHEMA)] = None,
    before: SearchBefore = None,
    limit: Annotated[int, Query(ge=1, le=PAGE_MAX)] = PAGE_DEFAULT,
) -> JSONResponse:
    """Every room of the server the caller may search (VIEW_CHANNEL and READ_MESSAGE_HISTORY), newest first
    across rooms; private messages only for their two parties (docs/search.md)."""
    request = search.GuildSearchRequest(q, before, limit, channel_id=channel_id, author_id=author_id)
    return json_response(await search.search_guild_messages(rt, principal, guild_id, request))


@router.get("/channels/{channel_id}/messages/{message_id}", openapi_extra=MESSAGE_ROOM,
            response_model=s.MessageResponse,
            responses=errors("channel.not_found", "message.not_found", "perm.denied", "channel.wrong_type"))
async def get_message(rt: RuntimeDep, channel_id: str, message_id: str, principal: PrincipalDep) -> dict[str, Any]:
    return {"message": await history.access_message(rt, principal, channel_id, message_id)}


@router.patch("/channels/{channel_id}/messages/{message_id}", openapi_extra=MESSAGE_ROOM,
              response_model=s.MessageResponse,
              dependencies=[limited("messages.modify")],
              responses=errors("channel.not_found", "message.not_found", "perm.denied",
                               "relationship.blocked", "message.edit_window_expired", "channel.wrong_type"))
async def edit_message(rt: RuntimeDep, channel_id: str, message_id: str, body: s.MessageEdit,
                       principal: PrincipalDep) -> dict[str, Any]:
    return {"message": await edit.do_edit_message(rt, principal, channel_id, message_id, body.content)}


@router.delete("/channels/{channel_id}/messages/{message_id}", openapi_extra=MESSAGE_ROOM,
               status_code=204,
               dependencies=[limited("messages.modify")],
               responses=errors("channel.not_found", "message.not_found", "perm.denied", "channel.wrong_type"))
async def delete_message(rt: RuntimeDep, channel_id: str, message_id: str, principal: PrincipalDep) -> Response:
    await edit.do_delete_message(rt, principal, channel_id, message_id)
    return Response(status_code=204)


@router.post("/channels/{channel_id}/typing", openapi_extra=MESSAGE_ROOM,
             operation_id="sendTyping", summary="Typing", status_code=204,
             dependencies=[limited("typing")],
             responses=errors("channel.not_found", "perm.denied", "relationship.blocked", "channel.wrong_type"))
async def send_typing(rt: RuntimeDep, channel_id: str, principal: PrincipalDep) -> Response:
    await typing_indicators.do_send_typing(rt, principal, channel_id)
    return Response(status_code=204)


@router.post("/channels/{channel_id}/ack", openapi_extra=MESSAGE_ROOM,
             operation_id="ackChannel", summary="Ack", response_model=s.ReadStateResponse,
             dependencies=[limited("read_states.ack")], responses=errors("channel.not_found", "message.not_found", "channel.wrong_type"))
async def ack_channel(rt: RuntimeDep, channel_id: str, principal: PrincipalDep, body: s.AckRequest | None = None
                      ) -> dict[str, Any]:
    return {"read_state": await read_states.do_ack(rt, principal, channel_id, body.message_id if body else None)}


@router.get("/users/@me/read-states", operation_id="listReadStates", summary="Read States",
            response_model=s.ReadStatesResponse)
async def list_read_states(rt: RuntimeDep, principal: PrincipalDep) -> dict[str, Any]:
    return {"read_states": await read_states.access_read_states(rt, principal)}


# ---- reactions and pins --------------------------------------------------------------------------

REACTION = "/channels/{channel_id}/messages/{message_id}/reactions/{emoji}"
PIN = "/channels/{channel_id}/pins/{message_id}"
_SEEN = ("channel.not_found", "message.not_found", "channel.wrong_type")  # categories hold no messages
# The emoji path parameter (OpenAPI: addReaction): the pattern is the grammar of messages/emoji.py.
Emoji = Annotated[str, Path(description="A Unicode emoji sequence, or a custom emoji as `<:name:id>` or `name:id`. "
                                        "A custom emoji that does not exist answers 422 `reaction.invalid_emoji`.",
                            json_schema_extra={"pattern": EMOJI_PATTERN})]
UNKNOWN_CUSTOM = with_rules(rules({"emoji": "a custom emoji must exist"}, code="reaction.invalid_emoji"),
                            MESSAGE_ROOM)


def _no_content() -> Response:
    return Response(status_code=204)


@reactions_and_pins.put(REACTION, status_code=204, openapi_extra=UNKNOWN_CUSTOM, dependencies=[limited("reactions")],
            responses=errors(*_SEEN, "perm.denied", "reaction.invalid_emoji", "reaction.limit_reached"))
async def add_reaction(rt: RuntimeDep, channel_id: str, message_id: str, emoji: Emoji,
                       principal: PrincipalDep) -> Response:
    await reactions.do_add_reaction(rt, principal, channel_id, message_id, emoji)
    return _no_content()


@reactions_and_pins.delete(REACTION, status_code=204, openapi_extra=UNKNOWN_CUSTOM, dependencies=[limited("reactions")],
               responses=errors(*_SEEN, "reaction.invalid_emoji"))
async def remove_own_reaction(rt: RuntimeDep, channel_id: str, message_id: str, emoji: Emoji,
                              principal: PrincipalDep) -> Response:
    await reactions.do_remove_own_reaction(rt, principal, channel_id, message_id, emoji)
    return _no_content()


@reactions_and_pins.get(REACTION, response_model=s.ReactionUsersResponse, openapi_extra=UNKNOWN_CUSTOM,
            responses=errors(*_SEEN, "perm.denied", "reaction.invalid_emoji"))
async def list_reactors(rt: RuntimeDep, channel_id: str, message_id: str, emoji: Emoji, principal: PrincipalDep,
                        after: Annotated[str | None, Query(description="Users with a greater id", json_schema_extra=ID_SCHEMA)] = None,
                        limit: Annotated[int, Query(ge=1, le=PAGE_MAX)] = PAGE_DEFAULT) -> dict[str, Any]:
    cursor = None if after is None else parse_id(after)
    if after is not None and cursor is None:
        raise validation_error("after", "must be an id")
    return await reactions.access_reactors(rt, principal, channel_id, message_id, emoji,
                                           after=cursor, limit=limit)


@reactions_and_pins.delete(REACTION + "/{user_id}", status_code=204, openapi_extra=UNKNOWN_CUSTOM, dependencies=[limited("reactions")],
               responses=errors(*_SEEN, "user.not_found", "perm.denied", "reaction.invalid_emoji"))
async def remove_user_reaction(rt: RuntimeDep, channel_id: str, message_id: str, emoji: Emoji, user_id: str,
                               principal: PrincipalDep) -> Response:
    await reactions.do_remove_user_reaction(rt, principal, channel_id, message_id, emoji, user_id)
    return _no_content()


@reactions_and_pins.get("/channels/{channel_id}/pins", openapi_extra=MESSAGE_ROOM, response_model=s.PinsResponse,
                        responses=errors("channel.not_found", "perm.denied", "channel.wrong_type"))
async def list_pins(rt: RuntimeDep, channel_id: str, principal: PrincipalDep) -> dict[str, Any]:
    return await pins.access_pins(rt, principal, channel_id)


@reactions_and_pins.put(PIN, openapi_extra=MESSAGE_ROOM, status_code=204,
                        responses=errors(*_SEEN, "perm.denied", "pin.limit_reached", "validation.failed"))
async def pin_message(rt: RuntimeDep, channel_id: str, message_id: str, principal: PrincipalDep) -> Response:
    await pins.do_pin_message(rt, principal, channel_id, message_id)
    return _no_content()


@reactions_and_pins.delete(PIN, openapi_extra=MESSAGE_ROOM,
                           status_code=204, responses=errors(*_SEEN, "perm.denied", "pin.not_found"))
async def unpin_message(rt: RuntimeDep, channel_id: str, message_id: str, principal: PrincipalDep) -> Response:
    await pins.do_unpin_message(rt, principal, channel_id, message_id)
    return _no_content()

@files.post("/channels/{channel_id}/files", status_code=201, response_model=FileResponse,
            dependencies=[limited("uploads")], openapi_extra=with_rules(UPLOAD_BODY, MESSAGE_ROOM),
            responses=errors("channel.not_found", "perm.denied", "channel.wrong_type", *UPLOAD_ERRORS))
async def upload_attachment(request: Request, rt: RuntimeDep, channel_id: str, principal: PrincipalDep
                            ) -> dict[str, Any]:
    return await attachments.do_upload_attachment(rt, principal, channel_id, multipart_file(request))
