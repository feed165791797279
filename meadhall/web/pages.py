"""Pages outside /api/v1. GET /invite/{code}: the public invitation page (OpenAPI: invitePage); it works without a
session, the session (cookie or Bearer) only decides "already a member". GET / and the client routes: the
web client (meadhall/web/client.py), or while none is built a short page about the instance saying how to
build it (docs/client.md). GET /static/{name}: the pages' own scripts. Every value is HTML-escaped by
Jinja2's autoescape."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, Response

from meadhall import __version__
from meadhall.accounts import queries as account_queries
from meadhall.api.client import client_key
from meadhall.api.deps import RuntimeDep
from meadhall.api.limits import take
from meadhall.api.openapi import errors
from meadhall.auth.cookies import COOKIE_NAME
from meadhall.auth.deps import optional_principal
from meadhall.core.errors import AppError
from meadhall.core.words import Words, pick_language, words
from meadhall.guilds import queries as guild_queries
from meadhall.guilds.invites import service as invite_service
from meadhall.runtime import Runtime
from meadhall.web import client as web_client

if TYPE_CHECKING:
    from jinja2 import Environment

pages = APIRouter(tags=["pages"])

API_PREFIX = "/api/v1"
STATIC_DIR = Path(__file__).parent / "static"
_CONTENT_TYPES = {".js": "application/javascript; charset=utf-8", ".css": "text/css; charset=utf-8",
                  ".svg": "image/svg+xml"}


@dataclass(frozen=True)
class StaticFile:
    body: bytes
    content_type: str
    version: str  # content digest: the URL changes with the content, so it may be cached for a year


def _load_static() -> dict[str, StaticFile]:
    """The few files of STATIC_DIR, read once: the route serves only these names (no path from the URL
    ever reaches the file system)."""
    found = {}
    for path in sorted(STATIC_DIR.iterdir()):
        if path.is_file() and path.suffix in _CONTENT_TYPES:
            body = path.read_bytes()
            found[path.name] = StaticFile(body, _CONTENT_TYPES[path.suffix], hashlib.sha256(body).hexdigest()[:16])
    return found


STATIC = _load_static()


def static_url(name: str) -> str:
    return f"/static/{name}?v={STATIC[name].version}"


@cache
def _templates() -> Environment:
    """Built by the first page rendered: a node serving only the API and the built client never loads
    Jinja2 (issue 35, some 2 MiB)."""
    from jinja2 import Environment, FileSystemLoader

    templates = Environment(
        loader=FileSystemLoader(Path(__file__).parent / "templates"),
        autoescape=True,
        auto_reload=False,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    templates.globals["static_url"] = static_url
    return templates

STATIC_HEADERS = {
    "Cache-Control": "public, max-age=31536000, immutable",
    "X-Content-Type-Options": "nosniff",
}

HEADERS = {
    "Cache-Control": "no-store",
    "Content-Security-Policy": "default-src 'self'; img-src 'self'; script-src 'self'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}


def _say_markup(said: Words, key: str, **values: Any) -> Any:
    """A message whose values are markup (a `<strong>`, a `<code>`): the message's own text is escaped, the
    values are put in as they are when they are Markup (a Jinja2 `{% set %}` block), else escaped."""
    from markupsafe import Markup, escape

    tokens = {name: f"\x00{index}\x00" for index, name in enumerate(values)}
    text = str(escape(said.say(key, **tokens)))
    for name, token in tokens.items():
        text = text.replace(token, str(escape(values[name])))
    return Markup(text)  # noqa: S704  # every part escaped above


def render(name: str, context: dict[str, Any], status_code: int = 200, *, lang: str = "en") -> HTMLResponse:
    said = words(lang)
    html = _templates().get_template(name).render(
        **context, lang=said.lang, say=said.say,
        say_markup=lambda key, **values: _say_markup(said, key, **values))
    return HTMLResponse(html, status_code=status_code,
                        headers={**HEADERS, "Content-Language": said.lang, "Vary": "Accept-Language, Cookie"})


async def page_language(rt: Runtime, request: Request, user_id: int | None) -> str:
    """The language of a server-rendered page: the signed-in account's `locale`, else the browser's
    `Accept-Language` (by its q-values), else English (docs/client.md, "Languages")."""
    if user_id is not None:
        async with rt.read() as uow:
            user = await account_queries.select_user(uow.conn, user_id)
        if user is not None:
            return pick_language(user["locale"])
    return pick_language(request.headers.get("accept-language"))


@pages.get(
    "/invite/{code}",
    response_class=HTMLResponse,
    responses={**errors("rate_limited"),
               404: {"description": "An unknown, expired or used-up code: an HTML page",
                     "content": {"text/html": {"schema": {"type": "string"}}}}},
    summary="Public invitation page (HTML)",
    description="An HTML page with the guild name, description, member count, inviter and an "
                "“Accept invitation” button; an unknown, expired or used-up code answers a 404 HTML page.",
)
async def invite_page(request: Request, rt: RuntimeDep, code: str) -> HTMLResponse:
    await take(request, "invites.preview", client_key(request))
    principal = await optional_principal(request)
    lang = await page_language(rt, request, None if principal is None else principal.user_id)
    try:
        preview = await invite_service.access_invite_preview(rt, principal, code)
    except AppError as err:
        if err.code != "invite.not_found":
            raise
        return render("invite_not_found.html", {}, status_code=404, lang=lang)
    # A visitor without an account is offered registration first when this instance allows it (docs/client.md).
    return render("invite.html", {**preview, "signed_in": principal is not None,
                                  "registration_enabled": rt.settings.REGISTRATION_ENABLED}, lang=lang)


async def front_page(rt: Runtime, request: Request) -> Response:
    """The web client when it is built (on PUBLIC_URL's host: elsewhere a redirect there), else the page
    that says how to build it."""
    built = web_client.built_client()
    if built is not None:
        elsewhere = web_client.redirect_to_public_host(request, rt.settings)
        if elsewhere is not None:
            return elsewhere
        return web_client.index_response(built, rt.settings, signed_out=COOKIE_NAME not in request.cookies)
    settings = rt.settings
    principal = await optional_principal(request) if COOKIE_NAME in request.cookies else None
    lang = await page_language(rt, request, None if principal is None else principal.user_id)
    return render("home.html", {"public_url": settings.PUBLIC_URL, "host": settings.public_host,
                                "version": __version__, "api_prefix": API_PREFIX}, lang=lang)


@pages.get(
    "/",
    response_class=HTMLResponse,
    responses=web_client.REDIRECT_RESPONSES,
    summary="The web client (HTML), or a front page while no client is built",
    description="The web client's page (on another host name than PUBLIC_URL's, a redirect there); while no "
                "client is built, a short page naming the instance and "
                "its version, saying how to build the web client, with links to the OpenAPI document and "
                "the meta payload.",
)
async def home_page(request: Request, rt: RuntimeDep) -> Response:
    return await front_page(rt, request)


async def client_page(request: Request, rt: RuntimeDep) -> Response:
    """History fallback: every client route answers the same page, the client draws the screen."""
    return await front_page(rt, request)


async def client_subpage(request: Request, rt: RuntimeDep, rest: str) -> Response:
    """The same for the routes below a client route (`rest` is the client's business)."""
    del rest
    return await front_page(rt, request)


for _path in web_client.CLIENT_ROUTES:
    # One operation per route, named after its path (`/settings/{rest}` -> clientPageSettingsRest).
    _name = "".join(part.split(":")[0].strip("{}").capitalize() for part in _path.split("/") if part)
    pages.add_api_route(
        _path, client_subpage if "{rest" in _path else client_page, methods=["GET"], response_class=HTMLResponse,
        responses=web_client.REDIRECT_RESPONSES, operation_id=f"clientPage{_name}",
        summary=f"The web client at {_path.replace(':path', '')} (HTML)",
        description="History fallback: the web client's page (`no-cache`); the client draws the screen of this "
                    "route. Requested on another host name than PUBLIC_URL's, a redirect to the same path and "
                    "query there. While no client is built, the front page that says how to build it.")


@pages.get(
    "/static/{name}",
    response_class=Response,
    responses={200: {"content": {"application/javascript": {}}, "description": "The file"},
               **errors("route.not_found")},
    summary="Scripts of the server-rendered pages",
    description="Served with a one-year cache: the pages reference them with a content digest (`?v=`).",
)
async def static_file(name: str) -> Response:
    found = STATIC.get(name)
    if found is None:
        raise AppError("route.not_found")
    return Response(found.body, media_type=found.content_type, headers=STATIC_HEADERS)


# The installable app (docs/client.md, "The installable app"): the colours of the dark theme (web/src/app.css,
# `--bg-2`, the page's background), the icons the client build serves under /icons/ (web/public/icons/).
THEME_COLOR = "#1f2229"
SHORT_NAME_LENGTH = 12
MANIFEST_HEADERS = {"Cache-Control": "no-cache", "X-Content-Type-Options": "nosniff"}


def short_name(name: str) -> str:
    """At most SHORT_NAME_LENGTH characters (what a home screen shows under the icon): the whole name when it
    fits, else its first words that fit, else its first characters."""
    if len(name) <= SHORT_NAME_LENGTH:
        return name
    fitting = ""
    for word in name.split():
        candidate = f"{fitting} {word}".strip()
        if len(candidate) > SHORT_NAME_LENGTH:
            break
        fitting = candidate
    return fitting or name[:SHORT_NAME_LENGTH].rstrip()


def manifest(name: str | None) -> dict[str, Any]:
    name = (name or "").strip() or "Meadhall"
    return {
        "id": "/",
        "name": name,
        "short_name": short_name(name),
        "start_url": "/",
        "scope": "/",
        "display": "standalone",
        "theme_color": THEME_COLOR,
        "background_color": THEME_COLOR,
        "icons": [
            {"src": "/icons/icon-192.png", "sizes": "192x192", "type": "image/png", "purpose": "any"},
            {"src": "/icons/icon-512.png", "sizes": "512x512", "type": "image/png", "purpose": "any"},
            {"src": "/icons/icon-maskable-512.png", "sizes": "512x512", "type": "image/png", "purpose": "maskable"},
            {"src": "/icons/icon.svg", "sizes": "any", "type": "image/svg+xml", "purpose": "any"},
        ],
    }


@pages.get(
    "/manifest.webmanifest",
    response_class=Response,
    responses={200: {"content": {"application/manifest+json": {}}, "description": "The web app manifest"}},
    summary="Web app manifest of the installable client",
    description="Named after the main server (else “Meadhall”); standalone display, the client's colours and "
                "icons. Never cached without asking (`no-cache`): a renamed main server renames the app.",
)
async def web_manifest(rt: RuntimeDep) -> Response:
    async with rt.read() as uow:
        name = await guild_queries.select_main_guild_name(uow.conn)
    body = json.dumps(manifest(name), ensure_ascii=False, separators=(",", ":")).encode()
    return Response(body, media_type="application/manifest+json", headers=MANIFEST_HEADERS)


pages.include_router(web_client.assets)
