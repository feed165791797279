"""GET /api/v1/docs: interactive documentation (Swagger UI 5) of /api/v1/openapi.json. Every asset is
served by the service itself from the `fastapi-offline` package, never from a CDN, so the page works on
a network without Internet access; the page's Content-Security-Policy allows scripts from the service
only (the start-up script is a file too, not inline)."""

from __future__ import annotations

from importlib.resources import files
from typing import Annotated

from fastapi import APIRouter, Path
from fastapi.responses import FileResponse, HTMLResponse, Response

from meadhall.api.openapi import errors
from meadhall.core.errors import AppError

router = APIRouter(tags=["service"])

_ASSETS = files("fastapi_offline") / "static"
_TYPES = {"swagger-ui-bundle.js": "text/javascript", "swagger-ui.css": "text/css", "favicon.png": "image/png"}
START_SCRIPT = "docs.js"
# Any other name answers 404 `route.not_found`, like a path that does not exist.
Asset = Annotated[str, Path(json_schema_extra={"enum": [*_TYPES, START_SCRIPT]})]

HEADERS = {
    # Swagger UI sets inline styles and shows data: images; scripts and requests stay on this origin.
    "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; "
                               "script-src 'self'; connect-src 'self'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}

PAGE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Meadhall API</title>
<link rel="icon" href="docs/favicon.png">
<link rel="stylesheet" href="docs/swagger-ui.css">
</head>
<body>
<div id="swagger-ui"></div>
<script src="docs/swagger-ui-bundle.js"></script>
<script src="docs/docs.js"></script>
</body>
</html>
"""

START = """window.ui = SwaggerUIBundle({
  url: "openapi.json",
  dom_id: "#swagger-ui",
  deepLinking: true,
  layout: "BaseLayout",
  presets: [SwaggerUIBundle.presets.apis],
});
"""


@router.get("/docs", response_class=HTMLResponse, operation_id="getApiDocs",
            summary="Interactive documentation (Swagger UI) of this interface")
async def api_docs() -> HTMLResponse:
    return HTMLResponse(PAGE, headers=HEADERS)


@router.get("/docs/{asset}", operation_id="getApiDocsAsset", summary="A file of the documentation page",
            response_class=Response,
            responses={200: {"content": {t: {} for t in sorted(set(_TYPES.values()))}, "description": "The file"},
                       **errors("route.not_found")})
async def api_docs_asset(asset: Asset) -> Response:
    if asset == START_SCRIPT:
        return Response(START, media_type="text/javascript", headers=HEADERS)
    if asset not in _TYPES:
        raise AppError("route.not_found")
    path = _ASSETS / asset
    return FileResponse(str(path), media_type=_TYPES[asset], headers={**HEADERS, "Cache-Control": "public, max-age=86400"})
