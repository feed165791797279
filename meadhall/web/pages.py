"""GET /invite/{code}: the public invitation page (API.md 3.7.1). Works without a session; the session
(cookie or Bearer) only decides "already a member". Every value is HTML-escaped by Jinja2's autoescape."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse
from jinja2 import Environment, FileSystemLoader

from meadhall.api.client import client_ip
from meadhall.api.limits import take
from meadhall.api.openapi import errors
from meadhall.auth.deps import optional_principal
from meadhall.core.errors import AppError
from meadhall.guilds import invites

pages = APIRouter(tags=["pages"])

_templates = Environment(
    loader=FileSystemLoader(Path(__file__).parent / "templates"),
    autoescape=True,
    auto_reload=False,
    trim_blocks=True,
    lstrip_blocks=True,
)

HEADERS = {
    "Cache-Control": "no-store",
    "Content-Security-Policy": "default-src 'self'; img-src 'self'; script-src 'self'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}


def render(name: str, context: dict[str, Any], status_code: int = 200) -> HTMLResponse:
    html = _templates.get_template(name).render(**context)
    return HTMLResponse(html, status_code=status_code, headers=HEADERS)


@pages.get(
    "/invite/{code}",
    response_class=HTMLResponse,
    responses=errors("rate_limited"),
    summary="Public invitation page (HTML)",
    description="An HTML page with the guild name, description, member count, inviter and an "
                "“Accept invitation” button; an unknown, expired or used-up code answers a 404 HTML page.",
)
async def invite_page(request: Request, code: str) -> HTMLResponse:
    await take(request, "invites.preview", f"ip{client_ip(request)}")
    principal = await optional_principal(request)
    try:
        preview = await invites.preview_invite(request.app.state.runtime, principal, code)
    except AppError as err:
        if err.code != "invite.not_found":
            raise
        return render("invite_not_found.html", {}, status_code=404)
    return render("invite.html", {**preview, "signed_in": principal is not None})
