"""Routes of direct conversations (docs/social.md): /users/@me/channels, the recipients and icon of a
conversation, and GET/PATCH/DELETE /channels/{id} for guild rooms and conversations alike: parse, one
service call."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response
from fastapi.responses import JSONResponse

from meadhall.api.deps import RuntimeDep, runtime_of
from meadhall.api.multipart import multipart_file
from meadhall.api.openapi import errors, rules, with_rules
from meadhall.api.plain import PlainRoute, json_response
from meadhall.auth.deps import PrincipalDep, limited, plain_session
from meadhall.files import slots
from meadhall.files.schemas import IMAGE_UPLOAD_BODY, UPLOAD_ERRORS
from meadhall.guilds.rooms import schemas as rs
from meadhall.social.conversations import channels, members, opening, views
from meadhall.social.conversations import schemas as cs
from meadhall.social.conversations.group import ConversationIcon

conversations = APIRouter(tags=["conversations"])
any_channel = APIRouter(tags=["channels"])  # a guild room or a conversation
icons = APIRouter(tags=["files"])

# A guild room the caller can view is answered 422, one they cannot view 404 (docs/social.md).
_CONVERSATION_ONLY = rules({"channel_id": "a direct conversation; a server room you can view answers this"},
                           code="channel.wrong_type")
_GROUP_ONLY = rules({"channel_id": "a group conversation; a one-to-one conversation answers this"},
                    code="dm.not_group")


@conversations.post("/users/@me/channels", status_code=201, response_model=cs.ConversationResponse,
                    dependencies=[limited("dm.open")], openapi_extra=rules({"recipient_id": "another user"}),
                    responses={200: {"description": "The pair's conversation already existed",
                                     "model": cs.ConversationResponse},
                               **errors("user.not_found", "relationship.blocked", "auth.origin_mismatch")})
async def open_conversation(rt: RuntimeDep, body: cs.OpenConversation, principal: PrincipalDep,
                            response: Response) -> dict:
    opened = await opening.do_open_conversation(rt, principal, body.recipient())
    if not opened.created:
        response.status_code = 200
    return {"channel": opened.channel}


@conversations.get("/users/@me/channels", response_model=cs.ConversationsResponse, responses=errors())
async def list_conversations(rt: RuntimeDep, principal: PrincipalDep) -> JSONResponse:
    # Encoded with orjson, without a second pass through the response model (the views already have its
    # shape, and the OpenAPI tests hold them to it): a list of 300 conversations spent most of its time there.
    return json_response(await views.access_conversations(rt, principal))


@conversations.post("/users/@me/channels/group", status_code=201, response_model=cs.ConversationResponse,
                    dependencies=[limited("dm.open")],
                    openapi_extra=rules({"recipient_ids": "distinct users, yourself not among them"}),
                    responses=errors("user.not_found", "relationship.blocked", "auth.origin_mismatch"))
async def create_group_conversation(rt: RuntimeDep, body: cs.GroupCreate, principal: PrincipalDep) -> dict:
    return {"channel": await opening.do_create_group(rt, principal, body.recipients(), body.name)}


@conversations.put("/channels/{channel_id}/recipients/{user_id}", response_model=cs.ConversationResponse,
                   openapi_extra=_CONVERSATION_ONLY,
                   responses=errors("channel.not_found", "user.not_found", "relationship.blocked", "dm.full",
                                    "channel.wrong_type", "perm.denied"))
async def add_recipient(rt: RuntimeDep, channel_id: str, user_id: str, principal: PrincipalDep) -> dict:
    return {"channel": await members.do_add_recipient(rt, principal, channel_id, user_id)}


@conversations.delete("/channels/{channel_id}/recipients/{user_id}", status_code=204,
                      openapi_extra=with_rules(_CONVERSATION_ONLY, rules(
                          {"user_id": "yourself in a one-to-one conversation"}, code="dm.not_group")),
                      responses=errors("channel.not_found", "recipient.not_found", "perm.denied", "dm.not_group",
                                       "channel.wrong_type"))
async def remove_recipient(rt: RuntimeDep, channel_id: str, user_id: str, principal: PrincipalDep) -> Response:
    await members.do_remove_recipient(rt, principal, channel_id, user_id)
    return Response(status_code=204)


@any_channel.get("/channels/{channel_id}", response_model=cs.AnyChannelResponse,
                 responses=errors("channel.not_found"))
async def get_channel(rt: RuntimeDep, channel_id: str, principal: PrincipalDep) -> dict:
    return await channels.access_any_channel(rt, principal, channel_id)


@any_channel.patch("/channels/{channel_id}", response_model=cs.AnyChannelResponse,
                   openapi_extra=with_rules(_GROUP_ONLY, rules({
                       "parent_id": "a category of this server; none for a category", "user_limit": "only for a voice room",
                       "topic": "none for a category", "slowmode_seconds": "none for a category"})),
                   responses=errors("channel.not_found", "perm.denied", "dm.not_group"))
async def update_channel(rt: RuntimeDep, channel_id: str, body: rs.ChannelPatch, principal: PrincipalDep) -> dict:
    return await channels.do_update_any_channel(rt, principal, channel_id, body.changes())


@any_channel.delete("/channels/{channel_id}", status_code=204, responses=errors("channel.not_found", "perm.denied"))
async def delete_channel(rt: RuntimeDep, channel_id: str, principal: PrincipalDep) -> Response:
    await channels.do_delete_any_channel(rt, principal, channel_id)
    return Response(status_code=204)


@icons.post("/channels/{channel_id}/icon", response_model=cs.ConversationResponse,
            dependencies=[limited("uploads")], openapi_extra=with_rules(IMAGE_UPLOAD_BODY, _CONVERSATION_ONLY, _GROUP_ONLY),
            responses=errors("channel.not_found", "perm.denied", "dm.not_group", "channel.wrong_type",
                             *UPLOAD_ERRORS))
async def set_conversation_icon(request: Request, rt: RuntimeDep, channel_id: str, principal: PrincipalDep) -> dict:
    return await slots.set_image(rt, ConversationIcon(principal, channel_id), multipart_file(request),
                                 uploader_id=principal.user_id)


@icons.delete("/channels/{channel_id}/icon", response_model=cs.ConversationResponse,
              openapi_extra=with_rules(_CONVERSATION_ONLY, _GROUP_ONLY),
              responses=errors("channel.not_found", "perm.denied", "dm.not_group", "channel.wrong_type"))
async def remove_conversation_icon(rt: RuntimeDep, channel_id: str, principal: PrincipalDep) -> dict:
    return await slots.remove_image(rt, ConversationIcon(principal, channel_id))


# ---- plain routes (api/plain.py), matched before the documented ones above -----------------------------


# The conversation list is also a plain route: with 300 conversations, FastAPI's routing and dependency
# solving were a tenth of its server CPU. It takes no parameters, so it never declines.
async def _plain_list_conversations(request: Request) -> Response:
    principal = await plain_session(request)
    return await list_conversations(runtime_of(request), principal)


def plain_routes(prefix: str) -> list[PlainRoute]:
    return [PlainRoute(f"{prefix}/users/@me/channels", _plain_list_conversations, "GET")]
