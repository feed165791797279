"""create_app(settings): routers, error handlers, middleware and the lifespan (migrate, bus)."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import gc
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import structlog
from fastapi import APIRouter, Depends, FastAPI
from fastapi.middleware.cors import CORSMiddleware
from starlette.routing import BaseRoute

from meadhall import __version__
from meadhall.accounts import presence, profile
from meadhall.accounts import routes as account_routes
from meadhall.accounts.passkeys import routes as passkey_routes
from meadhall.admin.audit import routes as admin_audit_routes
from meadhall.admin.deletion import routes as admin_deletion_routes
from meadhall.admin.guilds import routes as admin_guild_routes
from meadhall.admin.settings import routes as admin_settings_routes
from meadhall.admin.stats import routes as admin_stats_routes
from meadhall.admin.users import routes as admin_user_routes
from meadhall.api.errors import install_error_handlers
from meadhall.api.middleware import RequestMiddleware
from meadhall.api.openapi import build_openapi
from meadhall.api.routing import enforce_literal_precedence
from meadhall.auth.deps import global_limit
from meadhall.config import Settings, load_settings
from meadhall.files import routes as file_routes
from meadhall.files.access import register_fetch_rule
from meadhall.files.setup import install_files
from meadhall.gateway.setup import install_gateway, start_gateway, stop_gateway
from meadhall.guilds import routes as guild_routes
from meadhall.guilds.audit import routes as audit_routes
from meadhall.guilds.cosmetics import routes as cosmetic_routes
from meadhall.guilds.emojis import routes as emoji_routes
from meadhall.guilds.invites import routes as invite_routes
from meadhall.guilds.members import routes as member_routes
from meadhall.guilds.members import service as member_service
from meadhall.guilds.moderation import routes as ban_routes
from meadhall.guilds.roles import routes as role_routes
from meadhall.guilds.rooms import routes as room_routes
from meadhall.guilds.sounds import routes as sound_routes
from meadhall.guilds.styles import routes as style_routes
from meadhall.guilds.styles import views as style_views
from meadhall.guilds.templates import routes as template_routes
from meadhall.messages import guild_hooks
from meadhall.messages import routes as message_routes
from meadhall.messages.attachments import check_fetch_attachment
from meadhall.messages.webhooks import routes as webhook_routes
from meadhall.previews import routes as preview_routes
from meadhall.previews.setup import install_previews
from meadhall.push import routes as push_routes
from meadhall.push.settings import routes as push_settings_routes
from meadhall.push.setup import install_push
from meadhall.realtime.node_lease import RENEW_EVERY, NodeIdInUse, NodeLease
from meadhall.runtime import Runtime
from meadhall.social.calls import hooks as call_hooks
from meadhall.social.calls import routes as call_routes
from meadhall.social.calls.jobs import install_call_jobs
from meadhall.social.conversations import routes as conversation_routes
from meadhall.social.conversations import setup as conversation_setup
from meadhall.social.relationships import routes as relationship_routes
from meadhall.social.relationships import setup as relationship_setup
from meadhall.system import routes as system_routes
from meadhall.voice import routes as voice_routes
from meadhall.voice.setup import install_voice
from meadhall.web import docs as api_docs
from meadhall.web import pages as web_pages

API_PREFIX = "/api/v1"

log = structlog.get_logger("meadhall.app")


def api_routers() -> list[APIRouter]:
    """The /api/v1 routers in matching order: the message routes, by far the busiest, come first;
    /users/@me/... comes before /users/{user_id} (literal segments win over `{id}` segments, api/routing.py)."""
    return [
        message_routes.router, message_routes.reactions_and_pins, system_routes.api, guild_routes.me, style_routes.router,
        passkey_routes.router, account_routes.auth,
        account_routes.users, guild_routes.guilds, room_routes.guild_rooms, conversation_routes.any_channel,
        room_routes.rooms, member_routes.router,
        role_routes.router, ban_routes.router, emoji_routes.router, sound_routes.router, cosmetic_routes.router,
        template_routes.templates, audit_routes.audit, invite_routes.router, account_routes.avatar, message_routes.files,
        file_routes.router,
        guild_routes.images, room_routes.images, invite_routes.images,
        relationship_routes.router,
        conversation_routes.conversations, conversation_routes.icons,
        call_routes.router,
        voice_routes.router,
        preview_routes.router, push_routes.router, push_settings_routes.router,
        webhook_routes.router, webhook_routes.execution,
        admin_user_routes.router, admin_deletion_routes.router, admin_guild_routes.router,
        admin_settings_routes.router, admin_audit_routes.router, admin_stats_routes.router,
    ]


@functools.cache
def _included_api_routes() -> tuple[BaseRoute, ...]:
    """The /api/v1 routes as an app includes them, made once per process. FastAPI analyses each route's
    parameters and dependencies on an app's first request (0.4 s for ~200 routes), and keeps the result on
    the included route objects: every app of the process shares them (the tests and the two-node test make
    an app each). Nothing in them belongs to one app: handlers reach the runtime through the request."""
    holder = FastAPI(openapi_url=None, docs_url=None, redoc_url=None)
    for router in [*api_routers(), api_docs.router]:
        holder.include_router(router, prefix=API_PREFIX, dependencies=[Depends(global_limit)])
    return tuple(holder.router.routes)  # without docs, FastAPI adds no routes of its own


def include_api(app: FastAPI) -> None:
    """Each router is included directly under /api/v1, one level deep (an intermediate router adds a
    level of route matching to every request); every route passes the `global` bucket."""
    app.router.routes.extend(_included_api_routes())
    # The busiest endpoints also as plain routes, tried first (api/plain.py); the routers document them.
    app.router.routes[0:0] = [*message_routes.plain_routes(API_PREFIX),
                              *conversation_routes.plain_routes(API_PREFIX),
                              *account_routes.plain_routes(API_PREFIX)]


GC_YOUNG_THRESHOLD = 20_000
# A graceful stop's budget (docs/operations.md, "Restarts": out within 10 s even when Redis or the database
# hangs): seconds for the gateway's hand-over (its own wait for the bus is 2 s), for the connections to take
# their RECONNECT and close frames, and for writing the users' last activity.
DRAIN_GATEWAY_WITHIN = 2.5
DRAIN_CLOSE_WAIT = 1.0
DRAIN_PRESENCE_WITHIN = 1.5
LEASE_RELEASE_WITHIN = 0.3  # seconds for giving the NODE_ID back (realtime/node_lease.py)


async def take_node_id(rt: Runtime) -> NodeLease | None:
    """A serving process on a shared Redis holds its NODE_ID while it runs (realtime/node_lease.py); a second
    process with the same id does not start."""
    if rt.redis is None:
        return None
    lease = NodeLease(rt.redis, rt.redis_prefix, rt.settings.NODE_ID)
    try:
        await lease.take()
    except NodeIdInUse as err:
        log.error(str(err))
        raise
    rt.jobs.add("node-lease", RENEW_EVERY, lease.renew, leader_only=False)
    return lease


def create_app(settings: Settings | None = None, runtime: Runtime | None = None) -> FastAPI:
    settings = settings or load_settings()
    owns_runtime = runtime is None
    rt = runtime or Runtime(settings)

    drained = False

    async def drain() -> None:
        """The first step of a graceful stop, run once: the gateway hands its sessions over (several nodes)
        and asks its clients to reconnect (op 7, close 1012), then this node's users' last activity is
        written (one node: it was kept in this process's memory). `meadhall serve` runs it as soon as the
        signal arrives, before the server closes the WebSockets itself (cli/main.py); the lifespan's end
        runs it otherwise."""
        nonlocal drained
        if drained:
            return
        drained = True
        hub = app.state.hub
        served = list(hub.by_user)
        try:
            # Bounded: with Redis hung, the hand-over's publish would wait out its timeouts and retries.
            async with asyncio.timeout(DRAIN_GATEWAY_WITHIN):
                await stop_gateway(app, rt)
        except Exception:
            log.exception("gateway hand-over failed; asking the clients to reconnect all the same")
            with contextlib.suppress(Exception):
                await hub.shutdown()  # RECONNECT and 1012 still go out (a closing connection takes no more)
        # The close frames are queued on each connection: let them go out before the server closes the
        # sockets (bounded: a client that does not read is cut). Polled: the hub signals no event when its
        # last connection goes.
        deadline = time.monotonic() + DRAIN_CLOSE_WAIT
        while hub.connection_count() and time.monotonic() < deadline:  # noqa: ASYNC110
            await asyncio.sleep(0.02)
        if rt.redis is not None:
            return  # the users' last activity is in Redis, which outlives this process
        try:
            async with asyncio.timeout(DRAIN_PRESENCE_WITHIN):
                await presence.flush(rt, served)
        except Exception:
            log.exception("presence flush failed")

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        await rt.start()
        lease = await take_node_id(rt) if owns_runtime else None
        start_gateway(_app, rt)
        rt.jobs.start()
        if owns_runtime:
            # A served process: what start-up made (modules, routes, settings) leaves the collector's view,
            # so full collections stay short with thousands of connections open (docs/gateway.md).
            gc.collect()
            gc.freeze()
            # Young collections every 20,000 allocations instead of 700: a READY or a conversation list
            # allocates some 100,000 objects that live until the answer is sent, and the default made the
            # collector walk them over and over (READY 1.5 ms, and most of the list's tail; docs/benchmarks.md).
            gc.set_threshold(GC_YOUNG_THRESHOLD, 10, 10)
            # The one start-up line on a terminal (library chatter is off, meadhall/logs.py): where to
            # open the service. PUBLIC_URL, not the listen address, is the origin sessions work from.
            log.info("ready", public_url=settings.PUBLIC_URL, listen=getattr(_app.state, "listen", None))
        try:
            yield
        finally:
            await drain()
            await rt.run_stop_hooks()
            await rt.jobs.stop()
            if lease is not None:  # bounded: a hung Redis must not hold the stop; the lease then lapses by itself
                with contextlib.suppress(Exception):
                    async with asyncio.timeout(LEASE_RELEASE_WITHIN):
                        await lease.release()
            if owns_runtime:
                await rt.close()
                log.info("stopped")

    app = FastAPI(
        title="Meadhall API",
        version=__version__,
        openapi_url=None,  # served by system_routes inside /api/v1 so it passes the global bucket
        docs_url=None,  # served from local assets by web/docs.py at /api/v1/docs, never from a CDN
        redoc_url=None,
        lifespan=lifespan,
    )
    app.state.runtime = rt
    app.state.drain = drain
    install_error_handlers(app)
    app.include_router(system_routes.probes)
    app.include_router(web_pages.pages)
    include_api(app)
    install_gateway(app, rt)
    profile.on_public_change(member_service.announce_profile_to_guilds)
    register_fetch_rule("attachment", check_fetch_attachment)  # files know no domain: messages say who sees one
    guild_hooks.register()
    conversation_setup.register()  # messages and files know no conversations: the room and the icon rule
    presence.install()  # REST activity and public profile changes reach friends as presence
    presence.on_style_lookup(style_views.friends_style_views)  # accounts know no styles: guilds give them
    relationship_setup.register()  # accounts know no friends: relationships name them for presence
    call_hooks.register()  # conversations know no calls: the call ends with its conversation through this hook
    install_call_jobs(rt)
    install_voice(rt)  # guilds and calls know no voice rooms: their hooks, and the reconciliation job
    install_files(app, rt)
    install_previews(rt)  # the link-preview cache's expiry job
    install_push(rt)  # messages know no push: the send path's hook queues Web Push deliveries
    rt.serve_outbox()  # what CLI runs changed reaches the open connections (docs/architecture.md)
    # FastAPI's documented way to replace the document is to assign `app.openapi`; mypy refuses any
    # assignment to a method.
    app.openapi = lambda: build_openapi(app)  # type: ignore[method-assign]
    enforce_literal_precedence(app)
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
