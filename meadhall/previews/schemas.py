"""Response model of the link-preview route (the OpenAPI source)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field


class LinkCard(BaseModel):
    title: str | None
    description: str | None
    image_url: str | None = Field(description="an http(s) URL the service checked and did not download")
    site_name: str | None


class LinkPreview(BaseModel):
    url: str = Field(description="the normalised URL: no fragment, the host lower-cased, a numeric address "
                                 "written as the address it names")
    status: Literal["ok", "empty", "blocked", "error"] = Field(description=(
        "`ok`: a card; `empty`: not HTML or no usable metadata; `blocked`: a scheme, credentials or an "
        "address (on any redirect) the service does not fetch; `error`: network or HTTP failure"))
    card: LinkCard | None = Field(description="only when `ok`")
    fetched_at: str
    expires_at: str = Field(description="until when this answer is cached: 1 day for `ok`, 1 hour for "
                                        "`empty` and `blocked`, 10 minutes for `error`")
