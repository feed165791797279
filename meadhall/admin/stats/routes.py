"""Routes of instance administration: statistics (docs/admin.md, "Statistics"). Parse, one service call."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from meadhall.admin.stats import schemas as s
from meadhall.admin.stats import service
from meadhall.api.deps import RuntimeDep
from meadhall.api.openapi import errors
from meadhall.auth.deps import PrincipalDep

router = APIRouter(tags=["instance"])


@router.get("/instance/stats", operation_id="getInstanceStats", response_model=s.InstanceStatsResponse,
            responses=errors("perm.denied"))
async def get_instance_stats(
    rt: RuntimeDep,
    principal: PrincipalDep,
    days: Annotated[int, Query(ge=1, le=365, description="Days of the range, ending today (UTC)")] = 30,
) -> dict:
    return await service.access_instance_stats(rt, principal, days)
