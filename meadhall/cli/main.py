"""Entry point of the `meadhall` console script."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Annotated, Any

import typer

from meadhall.cli import (
    audit_verify,
    backup,
    bootstrap,
    doctor,
    files,
    porting_archive,
    porting_claim,
    porting_discord,
    push,
    users,
)
from meadhall.cli.output import fail, run
from meadhall.cli.settings import DataDir, settings_for
from meadhall.config import ConfigError, Settings
from meadhall.logs import configure_logging

app = typer.Typer(add_completion=False, no_args_is_help=True, help="Meadhall chat service")


@app.command()
def serve(
    host: Annotated[str | None, typer.Option(help="Listen address (default HOST)")] = None,
    port: Annotated[int | None, typer.Option(help="Listen port (default PORT)")] = None,
    data_dir: DataDir = None,
) -> None:
    """Run the HTTP and WebSocket service (migrates first)."""
    import uvicorn

    from meadhall.app import create_app
    from meadhall.gateway import wire as gateway_wire
    try:
        settings = settings_for(data_dir, port)
    except ConfigError as err:
        fail("validation.failed", str(err))
    configure_logging(settings.LOG_LEVEL)
    migrate_before_serving(settings, data_dir)
    refuse_taken_node_id(settings)
    service = create_app(settings)
    service.state.listen = f"{host or settings.HOST}:{port or settings.PORT}"
    if sys.stdout.isatty():
        announce_on_start(service, settings)
    config = uvicorn.Config(
        service,
        host=host or settings.HOST,
        port=port or settings.PORT,
        # uvicorn's own handlers and levels stay out: its records go through meadhall/logs.py like
        # every library's (JSON, warnings only unless LOG_LEVEL=debug).
        log_config=None,
        log_level=None,
        access_log=False,
        proxy_headers=settings.TRUST_PROXY,
        forwarded_allow_ips="*" if settings.TRUST_PROXY else None,
        ws_max_size=64 * 1024,
        # The gateway's direct frame writes (gateway/wire.py); the gateway never compresses frames.
        ws=gateway_wire.PROTOCOL, ws_per_message_deflate=False,
        timeout_graceful_shutdown=GRACEFUL_REQUESTS,
    )
    graceful_server(config, service).run()


# Seconds a stopping node lets in-flight requests finish. With the app's drain (at most 5 s, app.py, and well
# under a second when Redis and the database answer) and the stop hooks (1.5 s), a stop ends within the 10 s
# that rolling restarts allow (docs/operations.md, "Restarts").
GRACEFUL_REQUESTS = 3


def graceful_server(config: Any, service: Any) -> Any:
    """uvicorn's server with a rolling restart's order on SIGTERM (docs/operations.md, "Restarts"): stop
    listening at once, so new connections go to other nodes; let the app drain (gateway clients get RECONNECT
    and close 1012 from the hub, which resumes them elsewhere; uvicorn would close them with 1012 but without
    op 7, before the lifespan's end); then uvicorn's own shutdown: in-flight requests finish, the lifespan
    ends. The process exits 0: a SIGTERM that was served out is not raised again. (Built here because uvicorn
    is imported only when serving.)"""
    import uvicorn

    class GracefulServer(uvicorn.Server):
        async def shutdown(self, sockets: Any = None) -> None:
            for server in self.servers:
                server.close()
            drain = getattr(service.state, "drain", None)
            if drain is not None and not self.force_exit:
                await drain()
            await super().shutdown(sockets)

        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            with super().capture_signals():
                yield
                # uvicorn raises a captured signal again once served, which ends the process with it
                # (status -15); an orderly stop is a success.
                self._captured_signals[:] = [s for s in self._captured_signals if s != signal.SIGTERM]

    return GracefulServer(config)


def announce_on_start(service: Any, settings: Settings) -> None:
    """On a terminal, once started: one plain line naming the address to open, PUBLIC_URL. The JSON
    `ready` line stays for machines; it also names the listen address (127.0.0.1 under `make run`), which a
    person may open by mistake, and the session cookie set there never reaches PUBLIC_URL's gateway."""
    started = service.router.lifespan_context

    @asynccontextmanager
    async def lifespan(app: Any) -> AsyncIterator[Any]:
        async with started(app) as state:
            print(f"Open {settings.PUBLIC_URL}", flush=True)
            yield state

    service.router.lifespan_context = lifespan


def refuse_taken_node_id(settings: Settings) -> None:
    """Before serving on a shared Redis: a NODE_ID that another running node holds stops the start with one
    line, after waiting for a lease that may be lapsing (realtime/node_lease.py). The lifespan then takes it."""
    url = settings.REDIS_URL
    if not url:
        return
    from meadhall.realtime.node_lease import NodeIdInUse, NodeLease
    from meadhall.runtime import redis_client

    async def go() -> None:
        client = redis_client(url)
        try:
            await NodeLease(client, "meadhall", settings.NODE_ID).wait_free()
        finally:
            await client.aclose()

    try:
        asyncio.run(go())
    except NodeIdInUse as err:
        fail("node.id_in_use", str(err))
    except Exception:  # noqa: S110 (an unreachable Redis is the start-up's to report, with its own words)
        pass


@app.command()
def migrate(data_dir: DataDir = None) -> None:
    """Apply pending numbered migrations."""

    async def go() -> dict[str, Any]:
        from meadhall.db.engine import create_engine
        from meadhall.db.migrate import SchemaTooNew
        from meadhall.db.migrate import migrate as do_migrate

        settings = settings_for(data_dir)
        engine = create_engine(settings.database_url)
        try:
            return {"applied": await do_migrate(engine)}
        except SchemaTooNew as err:
            fail("schema.too_new", str(err))
            raise  # not reached: fail() exits
        finally:
            await engine.dispose()

    run(go)


def refuse_newer_schema(settings: Settings) -> str | None:
    """Before serving: a database written by a newer Meadhall stops the start with one line (the same
    check inside the start-up migration would end in a traceback). Returns the database's revision."""
    from meadhall.db.engine import create_engine
    from meadhall.db.migrate import SchemaTooNew, check_known, schema_revision

    async def go() -> str | None:
        engine = create_engine(settings.database_url)
        try:
            revision = await schema_revision(engine)
            check_known(revision)
            return revision
        finally:
            await engine.dispose()

    try:
        return asyncio.run(go())
    except SchemaTooNew as err:
        fail("schema.too_new", str(err))
        raise  # not reached: fail() exits


def migrate_before_serving(settings: Settings, data_dir: Path | None) -> None:
    """Refuse a newer schema; migrate one behind head in a child process (cli/first_migration.py)."""
    from meadhall.cli.first_migration import migrate_in_child
    from meadhall.db.migrate import shipped_revisions

    if refuse_newer_schema(settings) != shipped_revisions()[-1]:
        migrate_in_child(data_dir)


users.register(app)
bootstrap.register(app)
files.register(app)
backup.register(app)
push.register(app)
audit_verify.register(app)
doctor.register(app)
porting_discord.register(app)
porting_archive.register(app)
porting_claim.register(app)


def main() -> None:
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    # The database, stored files and the key are for the service's user only (docs/reference/configuration.md).
    os.umask(0o077)
    # Commands answer with one JSON object on stdout: their logs go to stderr (`serve` moves them back).
    level = os.environ.get("LOG_LEVEL", "info").lower()
    configure_logging(level if level in {"debug", "info", "warning", "error", "critical"} else "info",
                      stream=sys.stderr)
    app()


if __name__ == "__main__":
    main()
