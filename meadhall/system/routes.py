"""Routes: /healthz, /readyz, /metrics (outside /api/v1), /api/v1/meta, /api/v1/gateway."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response

from meadhall.api.deps import RuntimeDep
from meadhall.api.openapi import errors
from meadhall.core.errors import AppError
from meadhall.metrics import CONTENT_TYPE
from meadhall.system import service
from meadhall.system.schemas import GatewayInfo, Health, Meta, Readiness

probes = APIRouter(tags=["service"])
api = APIRouter(tags=["service"])


@probes.get("/healthz", operation_id="getHealth", response_model=Health, summary="Liveness")
async def healthz() -> dict[str, str]:
    return {"status": "ok"}


@probes.get(
    "/readyz",
    operation_id="getReadiness",
    response_model=Readiness,
    summary="Readiness: database and Redis",
    responses={503: {"model": Readiness, "description": "A dependency is down"}},
)
async def readyz(rt: RuntimeDep) -> JSONResponse:
    ok, checks = await service.readiness(rt)
    body = {"status": "ready" if ok else "not_ready", "checks": checks}
    return JSONResponse(body, status_code=200 if ok else 503)


@probes.get(
    "/metrics",
    operation_id="getMetrics",
    summary="Prometheus metrics of this process (METRICS_ENABLED)",
    response_class=Response,
    responses={200: {"description": "Prometheus text exposition format 0.0.4",
                     "content": {"text/plain": {"schema": {"type": "string"}}}},
               **errors("route.not_found")},
)
async def metrics(rt: RuntimeDep) -> Response:
    """Prometheus text format (docs in README, `METRICS_ENABLED`); an unknown route while it is off."""
    collected = rt.metrics
    if collected is None:
        raise AppError("route.not_found")
    return Response(collected.render(), media_type=CONTENT_TYPE)


@api.get("/meta", operation_id="getMeta", response_model=Meta, response_model_exclude_none=True, summary="Version, features, limits")
async def meta(rt: RuntimeDep) -> dict:
    return await service.meta(rt)


@api.get("/gateway", operation_id="getGateway", response_model=GatewayInfo, summary="WebSocket gateway address")
async def gateway(rt: RuntimeDep) -> dict[str, str]:
    return {"url": rt.settings.gateway_url}


@api.get("/openapi.json", operation_id="getOpenApi", summary="OpenAPI 3.1 document of this interface")
async def openapi_document(request: Request) -> JSONResponse:
    return JSONResponse(request.app.openapi())
