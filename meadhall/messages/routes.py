"""Routes of /channels/{id}/messages: parse, one service call, respond."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query, Request, Response
from fastapi.responses import JSONResponse

from meadhall.api.limits import remember
from meadhall.api.openapi import ID_SCHEMA, errors, rules
from meadhall.api.pagination import Pagination, page_params
from meadhall.api.plain import PlainRoute, json_body, json_response
from meadhall.auth.deps import Session, limited, plain_session, require_session
from meadhall.auth.sessions import Principal
from meadhall.core.limits import PAGE_DEFAULT, PAGE_MAX
from meadhall.messages import edit, history, presence_marks, search, send
from meadhall.messages import schemas as s

router = APIRouter(tags=["messages"])


def _rt(request: Request):  # type: ignore[no-untyped-def]
    return request.app.state.runtime


async def send_rate(request: Request, channel_id: str,
                    principal: Annotated[Principal, Depends(require_session)]) -> list[str]:
    """The `messages.send` bucket per user and room; an instance administrator passes (audited)."""
    decision, bypassed = await send.check_send_rate(_rt(request), principal, channel_id)
    remember(request, decision)
    return ["messages.send"] if bypassed else []


@router.post("/channels/{channel_id}/messages", status_code=201, response_model=s.MessageResponse,
             openapi_extra=rules({
                 "content": "a slash command (API.md 3.8.1) needs its text, `/ls` a mention of a member who "
                            "can view the room; a command alone is no content",
                 "attachment_ids": "unsent uploads of the caller to this room, each once",
                 "reply_to_id": "a message of this room"}),
             responses={200: {"model": s.MessageResponse, "description": "Repeated nonce: the first message"},
                        **errors("channel.not_found", "perm.denied", "channel.wrong_type")})
async def send_message(request: Request, channel_id: str, body: s.MessageCreate, principal: Session,
                       bypassed: Annotated[list[str], Depends(send_rate)]) -> JSONResponse:
    return await _send(request, channel_id, body, principal, bypassed)


async def _send(request: Request, channel_id: str, body: s.MessageCreate, principal: Principal,
                bypassed: list[str]) -> JSONResponse:
    draft = send.Draft(body.content, body.attachment_ids, body.nonce, body.reply_to_id)
    sent = await send.send_message(_rt(request), principal, channel_id, draft, bypassed)
    return json_response({"message": sent.message}, status_code=201 if sent.created else 200)


@router.get("/channels/{channel_id}/messages", response_model=s.MessagesResponse,
            responses=errors("channel.not_found", "perm.denied"))
async def list_messages(request: Request, channel_id: str, principal: Session, page: Pagination) -> JSONResponse:
    # Returned as a response: the service builds exactly the documented shape, and validating 50
    # messages again through the response model would double the cost of a page.
    return json_response(await history.list_messages(_rt(request), principal, channel_id, page))


# ---- the same two endpoints as plain routes (api/plain.py), matched before the ones above ------------


async def _plain_send(request: Request) -> Response | None:
    body = await json_body(request, s.MessageCreate)
    if body is None:
        return None
    channel_id = request.path_params["channel_id"]
    principal = await plain_session(request)
    return await _send(request, channel_id, body, principal, await send_rate(request, channel_id, principal))


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
    return await list_messages(request, request.path_params["channel_id"], principal, page)


def plain_routes(prefix: str) -> list[PlainRoute]:
    return [PlainRoute(f"{prefix}/channels/{{channel_id}}/messages", _plain_send, "POST"),
            PlainRoute(f"{prefix}/channels/{{channel_id}}/messages", _plain_list, "GET")]


# Registered before /messages/{message_id}, so that "search" is never read as a message id.
@router.get("/channels/{channel_id}/messages/search", response_model=s.MessagesResponse,
            openapi_extra=rules({"q": "1-200 characters after trimming, at least one word after normalising"}),
            dependencies=[limited("search")], responses=errors("channel.not_found", "perm.denied"))
async def search_messages(
    request: Request, channel_id: str, principal: Session,
    q: Annotated[str, Query(description="1-200 characters after trimming; every word must occur, the last "
                                        "one as a prefix; case-insensitive; no wildcard or query syntax")],
    before: Annotated[str | None, Query(description="Matches older than this id", json_schema_extra=ID_SCHEMA)] = None,
    limit: Annotated[int, Query(ge=1, le=PAGE_MAX)] = PAGE_DEFAULT,
) -> JSONResponse:
    request_ = search.SearchRequest(q, before, limit)
    return json_response(await search.search_messages(_rt(request), principal, channel_id, request_))


@router.get("/channels/{channel_id}/messages/{message_id}", response_model=s.MessageResponse,
            responses=errors("channel.not_found", "message.not_found", "perm.denied"))
async def get_message(request: Request, channel_id: str, message_id: str, principal: Session) -> dict:
    return await history.get_message(_rt(request), principal, channel_id, message_id)


@router.patch("/channels/{channel_id}/messages/{message_id}", response_model=s.MessageResponse,
              dependencies=[limited("messages.modify")],
              responses=errors("channel.not_found", "message.not_found", "perm.denied",
                               "message.edit_window_expired"))
async def edit_message(request: Request, channel_id: str, message_id: str, body: s.MessageEdit,
                       principal: Session) -> dict:
    return await edit.edit_message(_rt(request), principal, channel_id, message_id, body.content)


@router.delete("/channels/{channel_id}/messages/{message_id}", status_code=204,
               dependencies=[limited("messages.modify")],
               responses=errors("channel.not_found", "message.not_found", "perm.denied"))
async def delete_message(request: Request, channel_id: str, message_id: str, principal: Session) -> Response:
    await edit.delete_message(_rt(request), principal, channel_id, message_id)
    return Response(status_code=204)


@router.post("/channels/{channel_id}/typing", operation_id="sendTyping", status_code=204, dependencies=[limited("typing")],
             responses=errors("channel.not_found", "perm.denied"))
async def typing(request: Request, channel_id: str, principal: Session) -> Response:
    await presence_marks.typing(_rt(request), principal, channel_id)
    return Response(status_code=204)


@router.post("/channels/{channel_id}/ack", operation_id="ackChannel", response_model=s.ReadStateResponse,
             dependencies=[limited("read_states.ack")], responses=errors("channel.not_found", "message.not_found"))
async def ack(request: Request, channel_id: str, principal: Session, body: s.AckRequest | None = None) -> dict:
    return await presence_marks.ack(_rt(request), principal, channel_id, body.message_id if body else None)


@router.get("/users/@me/read-states", operation_id="listReadStates", response_model=s.ReadStatesResponse)
async def read_states(request: Request, principal: Session) -> dict:
    return await presence_marks.read_states(_rt(request), principal)
