"""create_app(settings): routers, error handlers, middleware and the lifespan (migrate, bus)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import APIRouter, Depends, FastAPI
from fastapi.middleware.cors import CORSMiddleware

from meadhall import __version__
from meadhall.accounts import routes as account_routes
from meadhall.api.errors import install_error_handlers
from meadhall.api.middleware import RequestMiddleware
from meadhall.api.openapi import build_openapi
from meadhall.auth.deps import global_limit
from meadhall.config import Settings, load_settings
from meadhall.guilds import routes as guild_routes
from meadhall.guilds import routes_audit as audit_routes
from meadhall.guilds import routes_invites as invite_routes
from meadhall.guilds import routes_members as member_routes
from meadhall.guilds import routes_templates as template_routes
from meadhall.messages import routes as message_routes
from meadhall.messages import routes_reactions as reaction_routes
from meadhall.runtime import Runtime
from meadhall.system import routes as system_routes
from meadhall.web import pages as web_pages

API_PREFIX = "/api/v1"


def api_router() -> APIRouter:
    """Every /api/v1 route passes the `global` bucket."""
    router = APIRouter(prefix=API_PREFIX, dependencies=[Depends(global_limit)])
    # Routes are matched in order: the message routes, by far the busiest, come first.
    router.include_router(message_routes.router)
    router.include_router(reaction_routes.router)
    router.include_router(system_routes.api)
    # /users/@me/... before /users/{user_id}: literal segments win (API.md 3).
    router.include_router(guild_routes.me)
    router.include_router(account_routes.auth)
    router.include_router(account_routes.users)
    router.include_router(guild_routes.guilds)
    router.include_router(guild_routes.rooms)
    router.include_router(member_routes.router)
    router.include_router(template_routes.templates)
    router.include_router(audit_routes.audit)
    router.include_router(invite_routes.router)
    return router


def create_app(settings: Settings | None = None, runtime: Runtime | None = None) -> FastAPI:
    settings = settings or load_settings()
    owns_runtime = runtime is None
    rt = runtime or Runtime(settings)

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        await rt.start()
        try:
            yield
        finally:
            if owns_runtime:
                await rt.close()

    app = FastAPI(
        title="Meadhall API",
        version=__version__,
        openapi_url=None,  # served by system_routes inside /api/v1 so it passes the global bucket
        docs_url=None,  # no interactive page: its assets would come from a CDN, which may be unreachable
        redoc_url=None,
        lifespan=lifespan,
    )
    app.state.runtime = rt
    install_error_handlers(app)
    app.include_router(system_routes.probes)
    app.include_router(web_pages.pages)
    app.include_router(api_router())
    app.openapi = lambda: build_openapi(app)  # type: ignore[method-assign]
    if settings.cors_origins:
        app.add_middleware(
            CORSMiddleware,
            allow_origins=settings.cors_origins,
            allow_credentials=True,
            allow_methods=["*"],
            allow_headers=["*"],
            expose_headers=["X-Session-Token", "Retry-After", "X-RateLimit-Limit", "X-RateLimit-Remaining",
                            "X-RateLimit-Reset", "X-RateLimit-Reset-After", "X-RateLimit-Bucket"],
        )
    app.add_middleware(RequestMiddleware)
    return app
