"""Class `media`: when voice is configured (MEDIA_API_KEY and MEDIA_API_SECRET), the keys look like
LiveKit's and a signed ListRooms call to MEDIA_API_URL succeeds (as the voice rooms call it, voice/media.py);
MEDIA_PUBLIC_URL suits the page's scheme. Not configured: voice is off, which is no error."""

from __future__ import annotations

import asyncio
import warnings

import aiohttp
from livekit import api as lk

from meadhall.config import Settings
from meadhall.system.doctor.findings import Finding, describe, error, ok, warning

KLASS = "media"
TIMEOUT = 3.0
MIN_SECRET = 32  # LiveKit refuses to start with a shorter secret


def check_keys(settings: Settings) -> list[Finding]:
    key, secret = settings.MEDIA_API_KEY, settings.MEDIA_API_SECRET
    if not key and not secret:
        return [ok(KLASS, "voice", "voice is off (MEDIA_API_KEY and MEDIA_API_SECRET unset)")]
    if not key or not secret:
        missing = "MEDIA_API_KEY" if not key else "MEDIA_API_SECRET"
        return [error(KLASS, "keys", f"{missing} is unset while the other media variable is set: voice stays off",
                      f"set {missing} to the key pair of the media server's `keys:` (livekit.yaml), or unset both")]
    found = [ok(KLASS, "voice", "voice is on (MEDIA_API_KEY and MEDIA_API_SECRET set)")]
    if len(secret) < MIN_SECRET or secret == key:
        found.append(warning(KLASS, "keys", (
            f"MEDIA_API_SECRET is {len(secret)} characters{' and equals the key' if secret == key else ''}: "
            f"LiveKit wants a random secret of at least {MIN_SECRET}"),
            "generate a pair (`livekit-server generate-keys`), put it into livekit.yaml `keys:` and into "
            "MEDIA_API_KEY / MEDIA_API_SECRET"))
    else:
        found.append(ok(KLASS, "keys", "MEDIA_API_KEY and MEDIA_API_SECRET are set"))
    return found


def check_public_url(settings: Settings) -> Finding:
    url = settings.MEDIA_PUBLIC_URL or ""
    if not url.startswith(("ws://", "wss://", "http://", "https://")):
        return error(KLASS, "public_url", f"MEDIA_PUBLIC_URL {url} is not a ws(s):// or http(s):// URL",
                     f"set MEDIA_PUBLIC_URL=wss://{settings.public_host}/rtc, or unset it")
    if settings.public_origin.startswith("https://") and url.startswith(("ws://", "http://")):
        return error(KLASS, "public_url", (
            f"MEDIA_PUBLIC_URL {url} is not encrypted while the client is served over https: browsers block it"),
            f"set MEDIA_PUBLIC_URL=wss://{settings.public_host}/rtc (through the TLS proxy), or unset it")
    return ok(KLASS, "public_url", f"clients connect for media to {url}")


async def check_server(settings: Settings) -> Finding:
    """One signed ListRooms call: 401/403 means the keys differ from the server's."""
    url = settings.MEDIA_API_URL
    try:
        api = lk.LiveKitAPI(url=url, api_key=settings.MEDIA_API_KEY, api_secret=settings.MEDIA_API_SECRET,
                            timeout=aiohttp.ClientTimeout(total=TIMEOUT), failover=False)
        try:
            with warnings.catch_warnings():
                # A short secret is reported above; PyJWT's warning about it would only repeat it on stderr.
                warnings.simplefilter("ignore")
                rooms = await asyncio.wait_for(api.room.list_rooms(lk.ListRoomsRequest()), TIMEOUT + 1)
        finally:
            await api.aclose()
    except lk.ServerError as err:
        if err.status in (401, 403):
            return error(KLASS, "server", (
                f"the media server at {url} refused the signed call (HTTP {err.status} {err.code}): "
                "MEDIA_API_KEY / MEDIA_API_SECRET are not a key pair it knows"),
                "set MEDIA_API_KEY and MEDIA_API_SECRET to a pair from the media server's `keys:` (livekit.yaml)")
        return error(KLASS, "server", f"the media server at {url} answered HTTP {err.status} {err.code}: {err.message}",
                     "check that MEDIA_API_URL is the LiveKit server's own address (http://host:7880), not a proxy "
                     "path")
    except Exception as err:  # unreachable, timed out, not HTTP: the finding
        reason = describe(err)
        return error(KLASS, "server", f"the media server at {url} cannot be reached: {reason}",
                     "start the media server (livekit-server), or set MEDIA_API_URL to its address, e.g. "
                     "MEDIA_API_URL=http://127.0.0.1:7880")
    return ok(KLASS, "server", f"the media server at {url} accepted a signed call ({len(rooms.rooms)} room(s) open)")


async def check(settings: Settings) -> list[Finding]:
    found = check_keys(settings)
    if not settings.voice_enabled:
        return found
    return [*found, check_public_url(settings), await check_server(settings)]
