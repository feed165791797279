"""Routes of /users/@me/relationships (docs/social.md): parse, one service call."""

from __future__ import annotations

from fastapi import APIRouter, Response

from meadhall.api.deps import RuntimeDep
from meadhall.api.openapi import errors, rules
from meadhall.auth.deps import PrincipalDep, limited
from meadhall.social.relationships import schemas as s
from meadhall.social.relationships import service

router = APIRouter(prefix="/users/@me/relationships", tags=["relationships"])


@router.get("", response_model=s.RelationshipsResponse)
async def list_relationships(rt: RuntimeDep, principal: PrincipalDep) -> dict:
    return await service.access_relationships(rt, principal)


@router.post("", status_code=201, response_model=s.RelationshipResponse, dependencies=[limited("relationships")],
             openapi_extra=rules({"username": "not your own username"}),
             responses=errors("user.not_found", "relationship.blocked", "relationship.already_exists"))
async def create_relationship(rt: RuntimeDep, body: s.FriendRequest, principal: PrincipalDep) -> dict:
    return {"relationship": await service.do_request_by_username(rt, principal, body.username)}


@router.put("/{user_id}", response_model=s.RelationshipResponse, dependencies=[limited("relationships")],
            openapi_extra=rules({"user_id": "not your own id"}),
            responses=errors("user.not_found", "relationship.blocked"))
async def update_relationship(rt: RuntimeDep, user_id: str, body: s.RelationshipChange,
                              principal: PrincipalDep) -> dict:
    return {"relationship": await service.do_update_relationship(rt, principal, user_id, body.type)}


@router.delete("/{user_id}", status_code=204, dependencies=[limited("relationships")],
               responses=errors("relationship.not_found"))
async def delete_relationship(rt: RuntimeDep, user_id: str, principal: PrincipalDep) -> Response:
    await service.do_delete_relationship(rt, principal, user_id)
    return Response(status_code=204)
