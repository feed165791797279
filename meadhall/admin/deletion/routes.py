"""Routes of instance administration: soft deletion of an account (docs/admin.md "Soft deletion"). Parse,
one service call."""

from __future__ import annotations

from fastapi import APIRouter, Response

from meadhall.admin.deletion import service
from meadhall.api.deps import RuntimeDep
from meadhall.api.openapi import errors
from meadhall.auth.deps import PrincipalDep

router = APIRouter(tags=["instance"])


@router.delete("/instance/users/{user_id}", operation_id="deleteInstanceUser", status_code=204,
               responses=errors("perm.denied", "auth.step_up_required", "user.not_found", "user.owns_guilds"))
async def delete_instance_user(rt: RuntimeDep, user_id: str, principal: PrincipalDep) -> Response:
    await service.do_delete_user(rt, principal, user_id)
    return Response(status_code=204)
