"""The web client loses nothing when its node dies (docs/client.md, "Reconnects and resends"): a gateway
session that cannot be resumed is identified again and the room fills what it missed from history, each
message once; a send whose answer was lost is retried with the same nonce and shows once.

The page's WebSocket runs through a proxy in the test (Playwright's WebSocket routing), so the test can cut
the connection as a dead node would, hold the reconnect, and hold what the server sends."""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

import pytest

from meadhall.gateway.resume import RESUME_WINDOW
from tests.support.browser import (
    ORIGIN,
    PASSWORD,
    needs_chromium,
    needs_client,
    signed_in_context,
    watch_errors,
)
from tests.support.guilds import make_guild, make_invite
from tests.support.messages import history, post

pytestmark = [needs_chromium, needs_client]

WAIT = 10000
GATEWAY = re.compile(r"/gateway(\?|$)")


@pytest.fixture
def settings_overrides() -> dict[str, Any]:
    return {"PUBLIC_URL": ORIGIN, "RATE_LIMITS": {"global": "10000/60"}}


class GatewayProxy:
    """Sits between the page and the server's gateway: records what the page sends, can cut the live
    connection (both sides, as a killed node does), hold a new connection unconnected until released, and
    hold what the server sends until released (in order)."""

    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []
        self.hold_connections = False
        self.hold_frames = False
        self._held_frames: list[str] = []
        self._released = asyncio.Event()
        self._live: tuple[Any, Any] | None = None
        self.connections = 0

    def handle(self, ws: Any) -> Any:
        return self._handle(ws)

    async def _handle(self, ws: Any) -> None:
        self.connections += 1
        if self.hold_connections:
            await self._released.wait()
        server = ws.connect_to_server()
        self._live = (ws, server)

        def upward(message: str | bytes) -> None:
            if isinstance(message, str):
                self.sent.append(json.loads(message))
            server.send(message)

        def downward(message: str | bytes) -> None:
            if self.hold_frames:
                self._held_frames.append(message)  # type: ignore[arg-type]
            else:
                ws.send(message)

        ws.on_message(upward)
        server.on_message(downward)

    async def cut(self) -> None:
        assert self._live is not None
        ws, server = self._live
        self._live = None
        await server.close(code=1000)
        await ws.close(code=4000, reason="gone")

    def release_connections(self) -> None:
        self.hold_connections = False
        self._released.set()

    def release_frames(self) -> None:
        assert self._live is not None
        self.hold_frames = False
        ws, _server = self._live
        for frame in self._held_frames:
            ws.send(frame)
        self._held_frames = []

    async def restart(self) -> None:
        """What a draining node does (docs/gateway.md): RECONNECT, then close 1012."""
        assert self._live is not None
        ws, server = self._live
        self._live = None
        ws.send(json.dumps({"op": 7, "d": None}))
        await server.close(code=1000)
        await ws.close(code=1012, reason="restart")

    def ops(self) -> list[int]:
        return [f.get("op") for f in self.sent]


async def _hall(client: Any, accounts: Any) -> tuple[Any, Any, Any, str]:
    freya = await accounts.register("freya")
    thor = await accounts.register("thor")
    for who in (freya, thor):
        r = await client.post("/api/v1/users/@me/onboarding/complete", json={"display_name": who["user"]["username"]},
                              headers=who.headers)
        assert r.status_code == 200, r.text
    guild = await make_guild(client, freya, "Long Winter")
    room = guild["system_channel_id"]
    r = await client.post(f"/api/v1/invites/{(await make_invite(client, freya, room))['code']}", headers=thor.headers)
    assert r.status_code == 200, r.text
    return freya, thor, guild, room


async def _open(browser: Any, proxy: GatewayProxy, path: str) -> tuple[Any, Any, list[str]]:
    context = await signed_in_context(browser, ORIGIN, "freya", PASSWORD, viewport={"width": 1280, "height": 800})
    page = await context.new_page()
    errors = watch_errors(page)
    await page.route_web_socket(GATEWAY, proxy.handle)
    await page.goto(f"{ORIGIN}{path}")
    await page.wait_for_function("() => window.meadhallGateway?.phase === 'ready'", timeout=WAIT)
    return context, page, errors


async def _until(check: Any, what: str, seconds: float = 10) -> None:
    for _ in range(int(seconds / 0.02)):
        if check():
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"never: {what}")


async def test_a_session_that_cannot_resume_fills_the_gap_from_history_once(site, browser, client, accounts, app,
                                                                            clock):
    from playwright.async_api import expect

    freya, thor, guild, room = await _hall(client, accounts)
    await post(client, thor, room, "Before the storm")
    proxy = GatewayProxy()
    context, page, errors = await _open(browser, proxy, f"/channels/{guild['id']}/{room}")
    log = page.get_by_role("log", name="Messages")
    await expect(log).to_contain_text("Before the storm", timeout=WAIT)
    asked: list[str] = []
    page.on("request", lambda r: asked.append(r.url) if "/messages" in r.url and r.method == "GET" else None)

    # The node dies: the connection drops, the page's reconnect finds nobody yet.
    proxy.hold_connections = True
    await proxy.cut()
    hub = app.state.hub
    await _until(lambda: not hub.connected(int(freya["user"]["id"])), "the server saw the connection close")
    await post(client, thor, room, "Missed one")
    await post(client, thor, room, "Missed two")
    # Longer than the resume window: the session is gone when the page comes back.
    clock.advance(seconds=RESUME_WINDOW + 60)
    await _until(lambda: proxy.connections == 2, "the page tried to reconnect")
    assert await page.evaluate("() => window.meadhallGateway.phase") == "connecting"
    proxy.release_connections()

    for text in ("Before the storm", "Missed one", "Missed two"):
        await expect(log.get_by_role("article").filter(has_text=text)).to_have_count(1, timeout=WAIT)
    # It tried to resume, was told it could not, and identified again on the same connection; the room asked
    # for what came after the newest message it held, rather than starting again from its newest page.
    ops = proxy.ops()
    assert ops[ops.index(6):][:2] == [6, 2], ops
    newest = next(m for m in (await history(client, freya, room))["messages"] if m["content"] == "Before the storm")
    assert asked == [f"{ORIGIN}/api/v1/channels/{room}/messages?after={newest['id']}&limit=100"], asked
    # Live again: a new message arrives once too.
    await post(client, thor, room, "After the storm")
    await expect(log.get_by_role("article").filter(has_text="After the storm")).to_have_count(1, timeout=WAIT)
    texts = await log.get_by_role("article").evaluate_all("els => els.map(e => e.innerText)")
    order = [t for want in ("Before the storm", "Missed one", "Missed two", "After the storm")
             for t in [next(i for i, x in enumerate(texts) if want in x)]]
    assert order == sorted(order), texts
    assert errors == []
    await context.close()


async def test_a_send_whose_answer_was_lost_is_retried_with_its_nonce_and_shows_once(site, browser, client,
                                                                                     accounts):
    from playwright.async_api import expect

    freya, _thor, guild, room = await _hall(client, accounts)
    proxy = GatewayProxy()
    context, page, errors = await _open(browser, proxy, f"/channels/{guild['id']}/{room}")
    posts: list[dict[str, Any]] = []
    statuses: list[int] = []

    async def lose_first_answer(route: Any) -> None:
        if route.request.method != "POST":
            await route.continue_()
            return
        posts.append(json.loads(route.request.post_data or "{}"))
        response = await route.fetch()  # the server stores the message ...
        statuses.append(response.status)
        if len(posts) == 1:
            await route.abort("connectionreset")  # ... and its answer never reaches the page
        else:
            await route.fulfill(response=response)

    await page.route(f"**/api/v1/channels/{room}/messages", lose_first_answer)
    # The echo on the gateway is held too, so that only the retry can settle the message.
    proxy.hold_frames = True
    composer = page.get_by_role("textbox", name=re.compile("^Message"))
    await composer.fill("Mead for everyone")
    await composer.press("Enter")
    log = page.get_by_role("log", name="Messages")
    await _until(lambda: len(statuses) == 2, "the send was retried", seconds=15)
    assert statuses == [201, 200]
    assert posts[0]["nonce"] and posts[1]["nonce"] == posts[0]["nonce"]
    await expect(log.get_by_role("article").filter(has_text="Mead for everyone")).to_have_count(1, timeout=WAIT)
    proxy.release_frames()  # the late echo changes nothing
    await post(client, freya, room, "Second round")
    await expect(log.get_by_role("article").filter(has_text="Second round")).to_have_count(1, timeout=WAIT)
    await expect(log.get_by_role("article").filter(has_text="Mead for everyone")).to_have_count(1)
    await expect(log.locator("article.pending")).to_have_count(0)
    stored = await history(client, freya, room)
    assert [m["content"] for m in stored["messages"]].count("Mead for everyone") == 1
    assert [e for e in errors if "ERR_CONNECTION_RESET" not in e] == []
    await context.close()


async def test_a_rolling_restart_resumes_at_once_and_misses_nothing(site, browser, client, accounts):
    from playwright.async_api import expect

    _freya, thor, guild, room = await _hall(client, accounts)
    proxy = GatewayProxy()
    context, page, errors = await _open(browser, proxy, f"/channels/{guild['id']}/{room}")
    log = page.get_by_role("log", name="Messages")
    # Earlier failures grew the back-off; a restart is no failure and does not wait it out.
    await page.evaluate("() => { window.meadhallGateway.attempts = 5; }")
    started = asyncio.get_running_loop().time()
    await proxy.restart()
    await post(client, thor, room, "Said during the restart")
    await _until(lambda: proxy.connections == 2, "the page reconnected")
    await page.wait_for_function("() => window.meadhallGateway.phase === 'ready'", timeout=WAIT, polling=20)
    took = asyncio.get_running_loop().time() - started
    assert took < 2, took  # the back-off of a sixth failed attempt would be 16–32 s
    # Resumed, not identified again.
    assert [op for op in proxy.ops() if op in (2, 6)] == [2, 6], proxy.ops()
    await expect(log.get_by_role("article").filter(has_text="Said during the restart")).to_have_count(1, timeout=WAIT)
    assert errors == []
    await context.close()
