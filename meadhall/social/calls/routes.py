"""Routes of /channels/{id}/call and /channels/{id}/calls (calls in direct conversations): parse, one
service call."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Body

from meadhall.api.deps import RuntimeDep
from meadhall.api.openapi import errors, rules
from meadhall.api.pagination import BeforePagination
from meadhall.auth.deps import PrincipalDep, limited
from meadhall.social.calls import schemas as s
from meadhall.social.calls import service

router = APIRouter(tags=["calls"])

_ROOM = ("channel.not_found", "channel.wrong_type")
# A server room the caller can view is answered 422, one they cannot view 404 (docs/social.md, "Calls").
_CONVERSATION_ONLY = rules({"channel_id": "a direct conversation; a server room you can view answers this"},
                           code="channel.wrong_type")


@router.post("/channels/{channel_id}/call", status_code=201, response_model=s.CallCredentialsResponse,
             dependencies=[limited("calls")], openapi_extra=_CONVERSATION_ONLY,
             responses=errors(*_ROOM, "voice.disabled", "relationship.blocked", "call.already_exists"))
async def start_call(rt: RuntimeDep, channel_id: str, principal: PrincipalDep,
                     body: Annotated[s.CallStart | None, Body()] = None) -> dict:
    return await service.do_start_call(rt, principal, channel_id, (body or s.CallStart()).media)


@router.get("/channels/{channel_id}/call", response_model=s.CallResponse, openapi_extra=_CONVERSATION_ONLY,
            responses=errors(*_ROOM, "call.not_found"))
async def get_call(rt: RuntimeDep, channel_id: str, principal: PrincipalDep) -> dict:
    return await service.access_call(rt, principal, channel_id)


@router.post("/channels/{channel_id}/call/join", response_model=s.CallCredentialsResponse,
             dependencies=[limited("calls")], openapi_extra=_CONVERSATION_ONLY,
             responses=errors(*_ROOM, "call.not_found", "voice.disabled", "relationship.blocked"))
async def join_call(rt: RuntimeDep, channel_id: str, principal: PrincipalDep) -> dict:
    return await service.do_join_call(rt, principal, channel_id)


@router.post("/channels/{channel_id}/call/decline", response_model=s.CallResponse, dependencies=[limited("calls")],
             openapi_extra=_CONVERSATION_ONLY, responses=errors(*_ROOM, "call.not_found", "call.invalid_state"))
async def decline_call(rt: RuntimeDep, channel_id: str, principal: PrincipalDep) -> dict:
    return await service.do_decline_call(rt, principal, channel_id)


@router.post("/channels/{channel_id}/call/leave", response_model=s.CallResponse, dependencies=[limited("calls")],
             openapi_extra=_CONVERSATION_ONLY, responses=errors(*_ROOM, "call.not_found", "call.invalid_state"))
async def leave_call(rt: RuntimeDep, channel_id: str, principal: PrincipalDep) -> dict:
    return await service.do_leave_call(rt, principal, channel_id)


@router.patch("/channels/{channel_id}/call/@me", response_model=s.CallResponse, openapi_extra=_CONVERSATION_ONLY,
              responses=errors(*_ROOM, "call.not_found", "call.invalid_state"))
async def update_call_flags(rt: RuntimeDep, channel_id: str, body: s.CallFlags, principal: PrincipalDep) -> dict:
    return await service.do_update_call_flags(rt, principal, channel_id, body.changes())


@router.get("/channels/{channel_id}/calls", response_model=s.CallsResponse, openapi_extra=_CONVERSATION_ONLY,
            responses=errors(*_ROOM))
async def list_calls(rt: RuntimeDep, channel_id: str, principal: PrincipalDep, page: BeforePagination) -> dict:
    return await service.access_call_history(rt, principal, channel_id, page)
