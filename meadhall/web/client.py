"""Serving of the built web client (sources in web/, built by `make install` into meadhall/web/client/,
which git ignores; docs/client.md). Every client route answers the client's `index.html` (history
fallback: the client reads the path and draws the screen), never cached so a new build is picked up at
the next visit; the hashed files under /assets/ never change under one name, so they are cached for a
year. While no client is built the same routes answer the front page that says how to build it."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from fastapi import APIRouter, Request
from fastapi.responses import FileResponse, HTMLResponse, RedirectResponse, Response

from meadhall.api.openapi import errors
from meadhall.config import Settings
from meadhall.core.errors import AppError

CLIENT_DIR = Path(__file__).parent / "client"

# Vite names assets `<name>-<hash>.<ext>`; anything else (a dot-dot, a slash) never reaches the disk.
_ASSET_NAME = re.compile(r"^[A-Za-z0-9_-][A-Za-z0-9_.-]{0,127}$")
_ASSET_TYPES = {
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".webp": "image/webp",
    ".woff2": "font/woff2",
    ".json": "application/json",
    ".map": "application/json",
}

ASSET_HEADERS = {
    "Cache-Control": "public, max-age=31536000, immutable",
    "X-Content-Type-Options": "nosniff",
}

# The first path segments the client draws (docs/client.md, "Routes"); other paths keep answering
# the interface's JSON 404.
CLIENT_ROUTES = ("/login", "/register", "/channels/{rest:path}", "/settings", "/settings/{rest:path}",
                 "/admin", "/admin/{rest:path}")


@dataclass(frozen=True)
class BuiltClient:
    index: bytes
    assets: Path


def built_client(directory: Path | None = None) -> BuiltClient | None:
    """The client build in `directory` (default CLIENT_DIR), or None while none is built. Read at each
    request: `index.html` is small, and a build made while the service runs is served at once."""
    root = directory or CLIENT_DIR
    try:
        index = (root / "index.html").read_bytes()
    except (FileNotFoundError, NotADirectoryError):
        return None
    return BuiltClient(index=index, assets=root / "assets")


def _ws_pair(url: str) -> list[str]:
    """The origin of a ws(s):// or http(s):// address and its counterpart in the other scheme family:
    the media client reaches the same host by WebSocket and by HTTP."""
    scheme, rest = url.split("://", 1)
    host = rest.split("/", 1)[0]
    secure = scheme in ("wss", "https")
    return [f"{'wss' if secure else 'ws'}://{host}", f"{'https' if secure else 'http'}://{host}"]


def client_csp(settings: Settings) -> str:
    """Scripts and every other resource from the service only (no inline script, no third-party
    origin); requests may also reach the gateway and the media server (MEDIA_PUBLIC_URL). Inline style
    attributes are allowed: the virtualised message list positions its rows with them."""
    connect = ["'self'", *_ws_pair(settings.gateway_url)]
    if settings.MEDIA_PUBLIC_URL:
        connect += [src for src in _ws_pair(settings.MEDIA_PUBLIC_URL) if src not in connect]
    return "; ".join([
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self' 'unsafe-inline'",
        "img-src 'self' data: blob:",
        "media-src 'self' blob:",
        "font-src 'self'",
        f"connect-src {' '.join(connect)}",
        "worker-src 'self'",
        "object-src 'none'",
        "base-uri 'self'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    ])


# A page of the client opened on another host name than PUBLIC_URL's (the listen address 127.0.0.1, a
# LAN name) redirects there: the session cookie belongs to the host name the person signed in on, and the
# gateway the client then reaches is PUBLIC_URL's, which would not get it ("Your session has ended").
REDIRECT_RESPONSES: dict[int | str, dict[str, Any]] = {
    307: {"description": "Requested on another host name than PUBLIC_URL's: the same path and query there"}}


def _host_name(host: str) -> str | None:
    try:
        return urlsplit(f"//{host}").hostname
    except ValueError:
        return None


def redirect_to_public_host(request: Request, settings: Settings) -> RedirectResponse | None:
    """A redirect to the same path and query on PUBLIC_URL's origin when the request's `Host` names
    another host, else None. Host names are compared, not ports: cookies are kept per host name, and a
    reverse proxy in front of the service forwards the public host name (docs/deployment.md) on its own
    port."""
    wanted = _host_name(settings.public_host)
    asked = _host_name(request.headers.get("host", ""))
    if wanted is None or asked == wanted:
        return None
    target = settings.public_origin + request.url.path
    if request.url.query:
        target += f"?{request.url.query}"
    return RedirectResponse(target, status_code=307, headers={"Cache-Control": "no-store"})


# Told to the client when the page was requested without a session cookie: it is signed out for sure, so
# it draws sign-in without asking the service (whose 401 would be a console error on every signed-out
# load). With a cookie it asks, the cookie being HttpOnly and possibly ended. Not a secret: the browser
# knows whether it sent a cookie.
SIGNED_OUT_HINT = b'<meta name="meadhall-session" content="none">'


def index_response(client: BuiltClient, settings: Settings, *, signed_out: bool = False) -> HTMLResponse:
    body = client.index.replace(b"<head>", b"<head>" + SIGNED_OUT_HINT, 1) if signed_out else client.index
    return HTMLResponse(body, headers={
        "Cache-Control": "no-cache",
        # The page differs with the cookie (the signed-out hint): a cache must not hand one to the other.
        "Vary": "Cookie",
        "Content-Security-Policy": client_csp(settings),
        "X-Content-Type-Options": "nosniff",
        "Referrer-Policy": "same-origin",
    })


assets = APIRouter(tags=["pages"])


@assets.get("/assets/{name}", response_class=Response,
            responses={200: {"description": "The file, cached for a year (`immutable`: its name carries a digest)",
                             "content": {"application/javascript": {}, "text/css": {}}},
                       **errors("route.not_found")},
            summary="Built files of the web client", description="Hashed scripts, styles and images of the client.")
async def client_asset(name: str) -> Response:
    client = built_client()
    suffix = Path(name).suffix
    if client is None or not _ASSET_NAME.match(name) or suffix not in _ASSET_TYPES:
        raise AppError("route.not_found")
    path = client.assets / name
    if not path.is_file():
        raise AppError("route.not_found")
    return FileResponse(path, media_type=_ASSET_TYPES[suffix], headers=ASSET_HEADERS)


SERVICE_WORKER = "sw.js"
SERVICE_WORKER_HEADERS = {"Cache-Control": "no-cache", "X-Content-Type-Options": "nosniff"}


@assets.get("/sw.js", response_class=Response,
            responses={200: {"description": "The service worker, never cached (a new build is picked up at once)",
                             "content": {"text/javascript": {}}},
                       **errors("route.not_found")},
            summary="Service worker of the web client",
            description="Shows Web Push notifications and keeps the client's shell for offline starts; served at the root "
                        "so that its scope is the whole client.")
async def client_service_worker() -> Response:
    client = built_client()
    path = None if client is None else client.assets.parent / SERVICE_WORKER
    if path is None or not path.is_file():
        raise AppError("route.not_found")
    return FileResponse(path, media_type=_ASSET_TYPES[".js"], headers=SERVICE_WORKER_HEADERS)


ICONS = "icons"
# The icons of the installable app (web/public/icons/, copied into the build): their names never change with
# their content, so a day's cache, not a year's.
ICON_TYPES = {".png": "image/png", ".svg": "image/svg+xml"}
ICON_HEADERS = {"Cache-Control": "public, max-age=86400", "X-Content-Type-Options": "nosniff"}


@assets.get("/icons/{name}", response_class=Response,
            responses={200: {"description": "The icon", "content": {"image/png": {}, "image/svg+xml": {}}},
                       **errors("route.not_found")},
            summary="Icons of the installable web client",
            description="The icons the web app manifest and the page name (192, 512, maskable 512, Apple 180, SVG).")
async def client_icon(name: str) -> Response:
    client = built_client()
    suffix = Path(name).suffix
    if client is None or not _ASSET_NAME.match(name) or suffix not in ICON_TYPES:
        raise AppError("route.not_found")
    path = client.assets.parent / ICONS / name
    if not path.is_file():
        raise AppError("route.not_found")
    return FileResponse(path, media_type=ICON_TYPES[suffix], headers=ICON_HEADERS)
