"""A tour of the web client's screens for a person to look at: the app served in this process on SQLite in a
temporary DATA_DIR (as the browser tests serve it), a small community seeded through the API, and a
screenshot of every screen in the dark and the light theme at 1280x800 and on a 360x740 phone, with
axe-core's serious and critical findings written to axe.json beside them.

    .venv/bin/python -m tests.web.tour --out /tmp/shots [--only <substring>] [--sizes desktop,phone,phone390]
        [--phones-only] [--lang en,ru]

--sizes picks the sizes (desktop 1280x800, phone 360x740, phone390 390x844; default desktop and phone);
--phones-only is --sizes phone,phone390. --lang shoots each language in turn: for Russian every person's
account locale is set to "ru" (PATCH /users/@me: the account's locale decides once signed in) and the
browser's locale is ru-RU (for the signed-out screens); its shots end in "-ru".

Not a test module (pytest collects test_*.py only). Only loopback addresses are contacted: the service's
outbound client is confined to the loopback range, the link preview's page is served on 127.0.0.2, the media
server is the LiveKit stand-in on 127.0.0.1, and the browser resolves no name but localhost."""

from __future__ import annotations

import argparse
import asyncio
import functools
import io
import json
import shutil
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
from argon2 import PasswordHasher
from PIL import Image, ImageDraw

from meadhall.app import create_app
from meadhall.config import Settings
from meadhall.core.clock import MovableClock
from meadhall.core.ratelimit import BUCKETS
from meadhall.logs import configure_logging
from meadhall.push.keys import generate_keys
from meadhall.runtime import Runtime
from tests.support.accounts import login, totp_code
from tests.support.admin import admin_account
from tests.support.browser import (
    CHROMIUM,
    CLIENT_INDEX,
    ORIGIN,
    PASSWORD,
    PORT,
    ROOT,
    serious_axe_violations,
    signed_in_context,
    watch_errors,
)
from tests.support.calls import conversation
from tests.support.customisation import emoji_png, frame_png, upload_cosmetic, upload_emoji, upload_sound
from tests.support.factories import add_member
from tests.support.guilds import give, make_guild, make_invite, make_role, override, room
from tests.support.http import Api
from tests.support.imported import authored_message, imported_author
from tests.support.livekit_standin import StandIn
from tests.support.messages import post, react
from tests.support.outbound import ALLOWED, Site, confine, html
from tests.support.passkeys import add_passkey
from tests.support.personas import Account, Accounts
from tests.support.served import served
from tests.support.voice import MEDIA_KEY, MEDIA_SECRET, join, room_name, voice_room
from tests.support.webauthn import Authenticator

WAIT = 15000
SCHEMES = ("dark", "light")
SIZES = {"desktop": {"width": 1280, "height": 800}, "phone": {"width": 360, "height": 740},
         "phone390": {"width": 390, "height": 844}}
DEFAULT_SIZES = ("desktop", "phone")
BROWSER_LOCALES = {"en": "en-US", "ru": "ru-RU"}
# Further screenshots down a long screen, one viewport each.
MORE_SEGMENTS = 3
PREVIEW_PAGE = """<!doctype html><html><head><title>Fallback title</title>
<meta property="og:site_name" content="Mead Almanac">
<meta property="og:title" content="How to brew mead at home">
<meta property="og:description" content="Honey, water, yeast and patience: a season of brewing in six steps.">
</head><body><p>Brew.</p></body></html>"""


class TourClock(MovableClock):
    """The wall clock shifted by an offset: the seed is written over the past days, the screens are shot
    in the present (the browser compares times with its own clock), and a step-up window can be lapsed."""

    def __init__(self) -> None:
        super().__init__()
        self.offset = timedelta()

    def now(self) -> datetime:
        return datetime.now(UTC) + self.offset

    def advance(self, seconds: float = 0, **kwargs: float) -> datetime:
        self.offset += timedelta(seconds=seconds, **kwargs)
        return self.now()

    def set(self, when: datetime) -> None:
        self.offset = when - datetime.now(UTC)


def picture(seed: int, size: int = 256, letter: str = "") -> bytes:
    """An avatar-like picture: a two-colour gradient with a ring, distinct per seed."""
    palette = [(214, 92, 62), (66, 135, 245), (72, 176, 120), (170, 90, 200), (230, 170, 40), (40, 170, 190),
               (200, 70, 120), (120, 120, 140)]
    a, b = palette[seed % len(palette)], palette[(seed * 3 + 1) % len(palette)]
    image = Image.new("RGB", (size, size))
    draw = ImageDraw.Draw(image)
    for y in range(size):
        t = y / size
        draw.line([(0, y), (size, y)], fill=tuple(int(a[i] * (1 - t) + b[i] * t) for i in range(3)))
    draw.ellipse((size * 0.2, size * 0.2, size * 0.8, size * 0.8), outline=(255, 255, 255), width=size // 16)
    if letter:
        draw.rectangle((size * 0.42, size * 0.3, size * 0.58, size * 0.7), fill=(255, 255, 255))
    buf = io.BytesIO()
    image.save(buf, "PNG")
    return buf.getvalue()


@dataclass
class Community:
    """What the seed made, for the screens to find."""

    people: dict[str, Account] = field(default_factory=dict)
    guild: dict[str, Any] = field(default_factory=dict)
    general: str = ""
    announcements: str = ""
    lounge: str = ""
    dm: str = ""
    admin: Account | None = None
    preview_origin: str = ""


class Tour:
    def __init__(self, out: Path, only: str | None, sizes: tuple[str, ...] = DEFAULT_SIZES) -> None:
        self.out, self.only, self.sizes = out, only, sizes
        self.lang = "en"
        self.clock = TourClock()
        self.community = Community()
        self.axe: dict[str, list[str]] = {}
        self.errors: dict[str, list[str]] = {}
        self.shots: list[str] = []
        self.fresh = 0
        self.client: httpx.AsyncClient
        self.api: Api
        self.accounts: Accounts
        self.rt: Runtime
        self.browser: Any = None
        self.contexts: dict[str, Any] = {}

    # ---- the seed ----------------------------------------------------------------------------------------

    async def person(self, username: str, display: str, seed: int) -> Account:
        account = await self.accounts.register(username)
        # The welcome card of a new account is done with: the screens are of people who have settled in.
        await self.api.post("/users/@me/onboarding/complete", account, json={"display_name": display}, expect=200)
        await self.api.post("/users/@me/avatar", account, expect=200,
                            files={"file": ("avatar.png", picture(seed, letter=display[0]), "image/png")})
        self.community.people[username] = account
        self.clock.advance(minutes=7)
        return account

    async def seed(self, preview: Site, standin: StandIn) -> None:
        c, api, rt = self.community, self.api, self.rt
        self.clock.set(datetime.now(UTC) - timedelta(days=3))
        freya = await self.person("freya", "Freya", 0)
        thor = await self.person("thor", "Thor Odinson", 1)
        sif = await self.person("sif", "Sif", 2)
        bjorn = await self.person("bjorn", "Björn Ironside", 3)
        ingrid = await self.person("ingrid", "Ingrid", 4)
        loki = await self.person("loki", "Loki", 5)
        astrid = await self.person("astrid", "Astrid Shieldmaiden of Fjords", 6)
        await api.patch("/users/@me", freya, json={"bio": "Keeper of the mead hall.", "custom_status": "Brewing",
                                                   "timezone": "Europe/Oslo"})

        guild = await make_guild(self.client, freya, "Mead Hall", description="Where the mead flows and the skalds sing")
        c.guild, c.general = guild, guild["system_channel_id"]
        gid = guild["id"]
        await api.post(f"/guilds/{gid}/icon", freya, expect=200,
                       files={"file": ("icon.png", picture(7, 128), "image/png")})
        for account in (thor, sif, bjorn, ingrid, loki, astrid):
            await add_member(rt, gid, account)
            self.clock.advance(minutes=13)
        hall = await room(self.client, freya, gid, name="Great hall", type="category")
        await api.patch(f"/channels/{c.general}", freya, json={"parent_id": hall["id"],
                                                                "topic": "Talk of the day, news and stories"})
        c.announcements = (await room(self.client, freya, gid, name="announcements", parent_id=hall["id"],
                                      topic="News from the jarl"))["id"]
        await room(self.client, freya, gid, name="sagas-and-stories-of-the-long-winter-nights", parent_id=hall["id"])
        voice = await room(self.client, freya, gid, name="Voice", type="category")
        c.lounge = await voice_room(self.client, freya, gid, "Lounge", parent_id=voice["id"])
        await voice_room(self.client, freya, gid, "Fireside", parent_id=voice["id"], user_limit=4)

        # Roles: made top-down (each new one takes position 1).
        jarl = await make_role(self.client, freya, gid, "Jarl", "MANAGE_GUILD|KICK_MEMBERS|MODERATE_MEMBERS|MANAGE_MESSAGES",
                               color=0xE0A526, hoist=True)
        skald = await make_role(self.client, freya, gid, "Skald", "PRIORITY_SPEAKER", color=0x3E7BFF, hoist=True)
        await make_role(self.client, freya, gid, "Guests", "")
        await give(self.client, freya, gid, thor, jarl["id"])
        await give(self.client, freya, gid, sif, skald["id"])
        await give(self.client, freya, gid, bjorn, skald["id"])
        await override(self.client, freya, c.announcements, gid, "role", deny="SEND_MESSAGES")
        await override(self.client, freya, c.announcements, jarl["id"], "role", allow="SEND_MESSAGES|MENTION_EVERYONE")

        # A conversation in general, a reaction, a link with a preview card.
        lines = [(thor, "Good morning, hall! Who is bringing the honey for the next batch?"),
                 (sif, "I have two jars from the farm by the river."),
                 (bjorn, "I will bring the yeast. Last time it took three weeks to get going."),
                 (freya, "Thank you both. The cauldron is clean and ready."),
                 (ingrid, "Can someone explain how long it needs to age? This is my first winter here."),
                 (freya, f"This page explains it well: {preview.url('/mead.html')}")]
        sent = jars = None
        for who, text in lines:
            sent = await post(self.client, who, c.general, text)
            jars = sent if "two jars" in text else jars
            self.clock.advance(minutes=4)
        assert sent is not None and jars is not None
        await react(self.client, thor, c.general, sent["id"])

        # A pinned message, and one written in markdown (a quote, a spoiler, a code block).
        await api.put(f"/channels/{c.general}/pins/{jars['id']}", freya)
        await post(self.client, bjorn, c.general, "\n".join([
            "> The ice was old", "> and the mead was young.", "Who spilled it? ||Loki, of course.|| The recipe:",
            "```", "honey  3 kg", "water  9 l", "yeast  1 packet, after the water has cooled", "```"]))
        self.clock.advance(minutes=3)
        await post(self.client, thor, c.announcements, "The honey harvest is in: the jarl's share waits in the cellar.")

        # Customisation: an emoji, a sound, a frame worn by freya.
        await upload_emoji(self.client, freya, gid, "mead", data=emoji_png())
        await upload_sound(self.client, freya, gid, "Horn")
        await upload_sound(self.client, freya, gid, "Door creak", "interface", palette_event="voice_join")
        ring = await upload_cosmetic(self.client, freya, gid, "Gold ring", "frame", data=frame_png())
        await api.patch(f"/guilds/{gid}/roles/{jarl['id']}", freya, json={"frame_id": ring["id"]})
        await give(self.client, freya, gid, freya, jarl["id"])
        await api.put("/users/@me/styles", freya, expect=200,
                      json={"scope": "guild", "guild_id": gid, "frame_id": ring["id"], "color": 0xE0A526})

        # A webhook posting a build result (made after re-verifying, as the service asks).
        await api.post("/auth/step-up", freya, json={"password": PASSWORD}, expect=200)
        hook = (await api.post(f"/channels/{c.general}/webhooks", freya, expect=201,
                               json={"name": "Build server"}))["webhook"]
        path = hook["url"].removeprefix(ORIGIN)
        r = await self.client.post(path, json={"content": "Build 128 passed: all 412 checks are green."})
        assert r.status_code in (200, 201, 204), r.text
        # An imported author (docs/imported-authors.md): a member whose history came from another service.
        self.clock.advance(minutes=2)
        gunnar = await imported_author(rt, "gunnar_old", gid, display_name="Gunnar the Old")
        await authored_message(rt, c.general, gunnar.id, "In my day the mead was brewed in the longhouse by the sea.")

        # Moderation: an invitation, a ban with its reason, a timeout.
        await api.put(f"/guilds/{gid}/bans/{loki.id}", freya, json={"reason": "Spamming every room with riddles"})
        until = (datetime.now(UTC) + timedelta(days=1)).isoformat()
        await api.patch(f"/guilds/{gid}/members/{ingrid.id}", freya, json={"timeout_until": until})
        await api.post("/guild-templates", freya, expect=201,
                       json={"guild_id": gid, "name": "Mead Hall plan", "description": "Rooms and roles of the hall"})

        # Another server freya is in, owned by thor; it and sif's are public (Discover servers lists them).
        other = await make_guild(self.client, thor, "Shieldwall", description="Training at dawn, every day")
        await add_member(rt, other["id"], freya)
        await api.patch(f"/guilds/{other['id']}", thor, json={"public": True})
        skalds = await make_guild(self.client, sif, "Skalds' Circle", description="Verses, riddles and long sagas")
        await api.patch(f"/guilds/{skalds['id']}", sif, json={"public": True})

        # Friends with thor, and a conversation for the calls.
        await api.request("POST", "/users/@me/relationships", freya, json={"username": "thor"}, expect=None)
        await api.request("PUT", f"/users/@me/relationships/{freya.id}", thor, json={"type": "friend"}, expect=None)
        c.dm = await conversation(api, freya, thor)
        await post(self.client, thor, c.dm, "Are you coming to the hall tonight?")

        # A passkey of freya's.
        await api.post("/auth/step-up", freya, json={"password": PASSWORD}, expect=200)
        await add_passkey(self.client, freya, Authenticator(origin=ORIGIN), name="Work laptop")

        # The administrator, and the clock back at the present.
        c.admin = await admin_account(self.client, self.accounts, rt, "odin")
        await api.patch("/users/@me", c.admin, json={"display_name": "Odin"})
        self.clock.set(datetime.now(UTC))
        # Made in the present, so that they are still running when the screens are shot.
        await make_invite(self.client, freya, c.general, max_uses=10, max_age=86400)
        await make_invite(self.client, thor, c.announcements)
        # Thor is in the voice room (listed by the service; the stand-in is the media server).
        await join(api, thor, c.lounge)
        # Present on the media server too, or the reconciliation would clear him as a ghost after a minute.
        standin.participants[room_name(gid, c.lounge)] = {thor.id}

    # ---- signing in -----------------------------------------------------------------------------------

    async def context(self, who: str) -> Any:
        """One signed-in browser context per person, reused by their screens."""
        if who in self.contexts:
            return self.contexts[who]
        if who == "":
            ctx = await self.browser.new_context(locale=BROWSER_LOCALES[self.lang])
        elif who == "odin":
            ctx = await self.admin_context()
        else:
            ctx = await self.person_context(who)
        self.contexts[who] = ctx
        return ctx

    async def person_context(self, who: str) -> Any:
        ctx = await signed_in_context(self.browser, ORIGIN, who, PASSWORD, locale=BROWSER_LOCALES[self.lang])
        await self.speak(ctx)
        return ctx

    async def speak(self, ctx: Any) -> None:
        """The signed-in account of `ctx` in the tour's language (its locale decides the client's words)."""
        page = await ctx.new_page()
        await page.goto(f"{ORIGIN}/healthz")
        status = await page.evaluate(
            """async (locale) => (await fetch('/api/v1/users/@me', {method: 'PATCH',
                 headers: {'Content-Type': 'application/json'}, body: JSON.stringify({locale})})).status""", self.lang)
        assert status == 200, status
        await page.close()

    async def switch_language(self, lang: str) -> None:
        """Shots from here on in `lang`: the cached contexts go (new ones are made in that locale)."""
        self.lang = lang
        for ctx in self.contexts.values():
            await ctx.close()
        self.contexts.clear()

    async def admin_context(self) -> Any:
        admin = self.community.admin
        assert admin is not None
        ctx = await self.browser.new_context(locale=BROWSER_LOCALES[self.lang])
        page = await ctx.new_page()
        await page.goto(f"{ORIGIN}/healthz")
        self.clock.advance(30)  # each 30-second step's code is accepted once
        status = await page.evaluate(
            """async ([login, password, totp_code]) => (await fetch('/api/v1/auth/login', {method: 'POST',
                 headers: {'Content-Type': 'application/json'}, body: JSON.stringify({login, password, totp_code})})).status""",
            ["odin", PASSWORD, totp_code(admin["totp_secret"], self.clock)])
        assert status == 200, status
        await page.close()
        await self.speak(ctx)
        return ctx

    async def signed_in(self, username: str) -> Account:
        """`username` with a new session of the API client (the seed's tokens are days old by the tour's clock)."""
        account = self.community.people[username]
        r = await login(self.client, username, PASSWORD)
        assert r.status_code == 200, r.text
        return Account(token=r.json()["token"], user=account["user"], password=PASSWORD)

    async def fresh_person(self) -> str:
        self.fresh += 1
        name = f"sigrid{self.fresh}"
        await self.person(name, "Sigrid", 8 + self.fresh)
        return name

    # ---- shooting ---------------------------------------------------------------------------------------

    async def shoot(self, screen: Screen) -> None:
        variants = [(scheme, size) for size in self.sizes for scheme in SCHEMES
                    if not (screen.phones_only and size == "desktop")]
        for scheme, size in variants:
            name = f"{screen.name}-{size}-{scheme}" + ("" if self.lang == "en" else f"-{self.lang}")
            who = await self.fresh_person() if screen.who == "fresh" else screen.who
            ctx = await self.context(who) if screen.who != "fresh" else await self.person_context(who)
            page = await ctx.new_page()
            errors = watch_errors(page)
            await page.set_viewport_size(SIZES[size])
            await page.emulate_media(color_scheme=scheme, reduced_motion="reduce")
            started = time.monotonic()
            try:
                path = screen.path(self.community) if callable(screen.path) else screen.path
                await page.goto(f"{ORIGIN}{path}")
                await screen.ready(page, self, size)
                await page.wait_for_timeout(400)
                await self.capture(page, name, screen.segments)
                self.axe[name] = await serious_axe_violations(page)
            except Exception as exc:  # a screen that could not be reached is reported, the tour goes on
                self.errors.setdefault(name, []).append(f"tour: {type(exc).__name__}: {exc}".splitlines()[0])
                await page.screenshot(path=str(self.out / f"{name}-FAILED.png"))
            finally:
                # Closed first: a page still open would rejoin what the clean-up leaves.
                await page.close()
                if screen.after is not None:
                    await screen.after(self)
                # The refusals a screen shows on purpose (sign-in asks who is there, the step-up's 403, the
                # lockout's 429, the unsent messages' 503 and lost connection) and the media server's absence (the
                # service answers /rtc with 404) are not errors of the screen.
                noise = [e for e in errors if not any(w in e.lower() for w in (
                    "rtc", "livekit", "websocket", "signal", "401", "403", "404", "429", "503",
                    "err_internet_disconnected"))]
                if noise:
                    self.errors.setdefault(name, []).extend(noise)
                if screen.who == "fresh":
                    await ctx.close()
            print(f"{name}: {time.monotonic() - started:.1f} s, axe {len(self.axe.get(name, []))}", file=sys.stderr)

    async def capture(self, page: Any, name: str, segments: bool) -> None:
        await page.screenshot(path=str(self.out / f"{name}.png"))
        self.shots.append(name)
        if not segments:
            return
        # The tallest scrolled area (the settings' content, a message list, or the page itself).
        handle = await page.evaluate_handle("""() => {
            const all = [document.scrollingElement, ...document.querySelectorAll('*')].filter((el) => {
              if (!el || el.scrollHeight <= el.clientHeight + 24 || el.clientHeight < 200) return false;
              const style = getComputedStyle(el);
              return el === document.scrollingElement || /(auto|scroll)/.test(style.overflowY);
            });
            all.sort((a, b) => (b.clientHeight * b.clientWidth) - (a.clientHeight * a.clientWidth));
            return all[0] || null;
        }""")
        element = handle.as_element()
        if element is None:
            return
        for n in range(1, MORE_SEGMENTS + 1):
            moved = await element.evaluate("""(el) => { const before = el.scrollTop;
                el.scrollTop = before + el.clientHeight * 0.85; return el.scrollTop > before + 8; }""")
            if not moved:
                break
            await page.wait_for_timeout(250)
            await page.screenshot(path=str(self.out / f"{name}-more{n}.png"))
            self.shots.append(f"{name}-more{n}")


Ready = Callable[[Any, Tour, str], Awaitable[None]]


@dataclass
class Screen:
    name: str
    who: str  # a username, "odin" (the administrator), "" (signed out) or "fresh" (a new account per shot)
    path: str | Callable[[Community], str]
    ready: Ready
    segments: bool = True
    after: Callable[[Tour], Awaitable[None]] | None = None
    phones_only: bool = False  # a screen of the phone layout only (not shot at the desktop size)


# ---- the screens ----------------------------------------------------------------------------------------

@functools.cache
def _catalogue(lang: str) -> dict[str, str]:
    """Every message of the client's catalogue in `lang`, by its full key (web/src/i18n/<lang>/<area>.json)."""
    out: dict[str, str] = {}
    for path in sorted((ROOT / "web" / "src" / "i18n" / lang).glob("*.json")):
        out.update({f"{path.stem}.{k}": v for k, v in json.loads(path.read_text()).items()})
    return out


def say(tour: Tour, english: str) -> str:
    """The words the client shows in the tour's language for a fixed English text (the first message whose
    English is exactly that), so that a screen is recognised whichever language it speaks."""
    if tour.lang == "en":
        return english
    target = _catalogue(tour.lang)
    for key, text in _catalogue("en").items():
        if text == english and key in target:
            return target[key]
    return english


def heading(name: str) -> Ready:
    async def ready(page: Any, tour: Tour, _size: str) -> None:
        from playwright.async_api import expect
        await expect(page.get_by_role("heading", name=say(tour, name), exact=True).first).to_be_visible(timeout=WAIT)
        await expect(page.get_by_role("status").filter(has_text=say(tour, "Loading…").rstrip("…"))).to_have_count(
            0, timeout=WAIT)
    return ready


def then(first: Ready, second: Ready) -> Ready:
    async def ready(page: Any, tour: Tour, size: str) -> None:
        await first(page, tour, size)
        await second(page, tour, size)
    return ready


def click(role: str, name: str, exact: bool = True, *, within: str | None = None) -> Ready:
    async def ready(page: Any, _tour: Tour, _size: str) -> None:
        scope = page.get_by_role("list", name=within) if within else page
        target = scope.get_by_role(role, name=name, exact=exact).first
        await target.click(timeout=WAIT)
    return ready


def visible(role: str, name: str, exact: bool = True) -> Ready:
    async def ready(page: Any, _tour: Tour, _size: str) -> None:
        from playwright.async_api import expect
        await expect(page.get_by_role(role, name=name, exact=exact).first).to_be_visible(timeout=WAIT)
    return ready


def text(value: str) -> Ready:
    async def ready(page: Any, tour: Tour, _size: str) -> None:
        from playwright.async_api import expect
        await expect(page.get_by_text(say(tour, value)).first).to_be_visible(timeout=WAIT)
    return ready


async def open_nav_on_phone(page: Any, _tour: Tour, size: str) -> None:
    from playwright.async_api import expect
    if size.startswith("phone"):
        await page.get_by_role("button", name="Open navigation").click(timeout=WAIT)
        await expect(page.get_by_role("navigation", name="Rooms")).to_be_visible(timeout=WAIT)
        await page.wait_for_timeout(300)


# The event Chromium sends when the app can be installed (headless Chromium never does): the client keeps it
# and offers the one-time "Install Meadhall" hint.
FAKE_INSTALL_PROMPT = """() => {
  const e = new Event('beforeinstallprompt', {cancelable: true});
  e.prompt = async () => {};
  window.dispatchEvent(e);
}"""


IPHONE_SAFARI = ("Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) "
                 "Version/17.5 Mobile/15E148 Safari/604.1")


async def install_hint(page: Any, _tour: Tour, _size: str) -> None:
    from playwright.async_api import expect
    await expect(page.get_by_text("all 412 checks").first).to_be_visible(timeout=WAIT)
    await page.evaluate(FAKE_INSTALL_PROMPT)
    await expect(page.get_by_role("region", name=page_words(_tour, "install"))).to_be_visible(timeout=WAIT)


async def install_hint_ios(page: Any, _tour: Tour, _size: str) -> None:
    """The words for iOS Safari: the page again with an iPhone's user agent (the hint reads it)."""
    from playwright.async_api import expect
    cdp = await page.context.new_cdp_session(page)
    await cdp.send("Emulation.setUserAgentOverride", {"userAgent": IPHONE_SAFARI})
    await page.reload()
    await expect(page.get_by_text("all 412 checks").first).to_be_visible(timeout=WAIT)
    await expect(page.get_by_role("region", name=page_words(_tour, "install"))).to_be_visible(timeout=WAIT)


async def pull_to_refresh(page: Any, _tour: Tour, _size: str) -> None:
    """A finger pulling down the top of a short room's history (touch through the debugging protocol),
    held while the screenshot is taken: the refresh indicator."""
    from playwright.async_api import expect
    await expect(page.get_by_role("log", name="Messages")).to_be_visible(timeout=WAIT)
    cdp = await page.context.new_cdp_session(page)
    await cdp.send("Emulation.setTouchEmulationEnabled", {"enabled": True, "maxTouchPoints": 5})
    box = await page.get_by_role("log", name="Messages").bounding_box()
    x, y = box["x"] + box["width"] / 2, box["y"] + 30
    await cdp.send("Input.dispatchTouchEvent", {"type": "touchStart", "touchPoints": [{"x": x, "y": y}]})
    for i in range(1, 9):
        await cdp.send("Input.dispatchTouchEvent", {"type": "touchMove", "touchPoints": [{"x": x, "y": y + 20 * i}]})
    await expect(page.get_by_role("status").filter(has_text=page_words(_tour, "release"))).to_be_visible(timeout=WAIT)


def page_words(tour: Tour, which: str) -> str:
    return {"en": {"release": "Release to refresh", "install": "Install Meadhall"},
            "ru": {"release": "Отпустите, чтобы обновить", "install": "Установить Meadhall"}}[tour.lang][which]


async def crop_dialog(page: Any, _tour: Tour, _size: str) -> None:
    from playwright.async_api import expect
    await expect(page.get_by_role("button", name="Change avatar")).to_be_visible(timeout=WAIT)
    await page.get_by_label("Choose an avatar picture").set_input_files(
        files=[{"name": "shield.png", "mimeType": "image/png", "buffer": picture(11, 480)}])
    await expect(page.get_by_role("dialog", name="Crop your avatar")).to_be_visible(timeout=WAIT)


async def two_factor_setup(page: Any, _tour: Tour, _size: str) -> None:
    from playwright.async_api import expect
    await page.get_by_role("button", name="Set up two-factor authentication").click(timeout=WAIT)
    qr = page.get_by_role("img", name="QR code", exact=False)
    await expect(qr).to_be_visible(timeout=WAIT)
    await qr.scroll_into_view_if_needed()


async def backup_codes(page: Any, tour: Tour, size: str) -> None:
    from playwright.async_api import expect
    await two_factor_setup(page, tour, size)
    secret = await page.get_by_role("textbox", name="Secret key").input_value()
    await page.get_by_role("textbox", name="Authentication code").fill(totp_code(secret, tour.clock))
    await page.get_by_role("button", name="Enable").click()
    codes = page.get_by_role("list", name="Backup codes")
    await expect(codes.get_by_role("listitem")).to_have_count(8, timeout=WAIT)
    await codes.scroll_into_view_if_needed()


async def step_up(page: Any, tour: Tour, _size: str) -> None:
    from playwright.async_api import expect
    await expect(page.get_by_role("heading", name="Password")).to_be_visible(timeout=WAIT)
    tour.clock.advance(601)  # the sign-in's step-up window has lapsed
    await page.get_by_label("New password", exact=True).fill("a completely new passphrase")
    await page.get_by_label("Confirm new password").fill("a completely new passphrase")
    await page.get_by_role("button", name="Change password").click()
    await expect(page.get_by_role("dialog", name="Confirm it's you")).to_be_visible(timeout=WAIT)


async def override_editor(page: Any, _tour: Tour, _size: str) -> None:
    from playwright.async_api import expect
    await page.get_by_role("list", name="Rooms and categories").get_by_role("button", name="announcements",
                                                                              exact=True).click(timeout=WAIT)
    await page.get_by_role("tab", name="Permissions").click()
    overrides = page.get_by_role("list", name="Overrides")
    await overrides.get_by_role("button").filter(has_text="Jarl").click(timeout=WAIT)
    await expect(page.get_by_role("radiogroup", name="Send messages")).to_be_visible(timeout=WAIT)


async def role_permissions(page: Any, _tour: Tour, _size: str) -> None:
    from playwright.async_api import expect
    await page.get_by_role("list", name="Roles, highest first").get_by_role("button", name="Jarl",
                                                                             exact=True).click(timeout=WAIT)
    await page.get_by_role("tab", name="Permissions").click()
    await expect(page.get_by_role("switch", name="View rooms")).to_be_visible(timeout=WAIT)


async def manage_member(page: Any, _tour: Tour, _size: str) -> None:
    from playwright.async_api import expect
    await page.get_by_role("button", name="Manage Thor Odinson", exact=True).click(timeout=WAIT)
    await expect(page.get_by_role("dialog", name="Manage Thor Odinson")).to_be_visible(timeout=WAIT)


async def join_lounge(page: Any, tour: Tour, size: str) -> None:
    from playwright.async_api import expect
    await open_nav_on_phone(page, tour, size)
    await page.get_by_role("navigation", name="Rooms").get_by_role("link", name="Lounge", exact=True).click(timeout=WAIT)
    await page.wait_for_timeout(1500)
    # On a phone, opening a room closes the navigation drawer; the voice panel is under the room's header.
    await expect(page.get_by_role("region", name="Voice")).to_be_visible(timeout=WAIT)


async def soundboard(page: Any, tour: Tour, size: str) -> None:
    from playwright.async_api import expect
    await join_lounge(page, tour, size)
    await page.get_by_role("region", name="Voice").get_by_role("button", name="Soundboard").click(timeout=WAIT)
    await expect(page.get_by_role("region", name="Soundboard").get_by_role("button", name="Play Horn")).to_be_visible(
        timeout=WAIT)


async def leave_lounge(tour: Tour) -> None:
    # Not asserted: a page that never connected may have left already.
    await tour.api.request("POST", f"/channels/{tour.community.lounge}/voice/leave", tour.community.people["freya"],
                           expect=None)


async def thor_calls(page: Any, tour: Tour, _size: str) -> None:
    from playwright.async_api import expect
    await expect(page.get_by_role("textbox", name="Message @Thor Odinson")).to_be_visible(timeout=WAIT)
    await tour.api.post(f"/channels/{tour.community.dm}/call", await tour.signed_in("thor"), expect=201)
    await expect(page.get_by_role("button", name="Accept call").first).to_be_visible(timeout=WAIT)


async def in_call(page: Any, tour: Tour, size: str) -> None:
    from playwright.async_api import expect
    await thor_calls(page, tour, size)
    await page.get_by_role("button", name="Accept call").first.click()
    view = page.get_by_role("region", name="Call").first
    await expect(view.get_by_role("button", name="Leave call")).to_be_visible(timeout=WAIT)
    await page.wait_for_timeout(1500)


async def end_call(tour: Tour) -> None:
    for who in ("freya", "thor"):
        await tour.api.request("POST", f"/channels/{tour.community.dm}/call/leave", await tour.signed_in(who),
                               expect=None)


async def room_shown(page: Any, tour: Tour, size: str) -> None:
    """The room shown (READY has come), then on a phone the navigation opened: the drawer closes whenever the
    route settles, so opening it sooner can be undone."""
    from playwright.async_api import expect
    await expect(page.get_by_role("textbox", name="Message #general")).to_be_visible(timeout=WAIT)
    await open_nav_on_phone(page, tour, size)


async def room_menu(page: Any, tour: Tour, size: str) -> None:
    from playwright.async_api import expect
    await room_shown(page, tour, size)
    await page.get_by_role("navigation", name="Rooms").get_by_role("link", name="general").click(button="right",
                                                                                                 timeout=WAIT)
    await expect(page.get_by_role("menu", name="Room options")).to_be_visible(timeout=WAIT)


async def server_menu(page: Any, tour: Tour, size: str) -> None:
    from playwright.async_api import expect
    await room_shown(page, tour, size)
    await page.get_by_role("button", name="Mead Hall", exact=True).click(timeout=WAIT)
    await expect(page.get_by_role("menu", name="Mead Hall")).to_be_visible(timeout=WAIT)


async def notification_settings(page: Any, tour: Tour, size: str) -> None:
    from playwright.async_api import expect
    await room_menu(page, tour, size)
    await page.get_by_role("menu", name="Room options").get_by_role("menuitem", name="Notification settings").click()
    await expect(page.get_by_role("dialog", name="Notification settings")).to_be_visible(timeout=WAIT)


async def pins_panel(page: Any, _tour: Tour, _size: str) -> None:
    from playwright.async_api import expect
    await page.get_by_role("button", name="Pinned messages").click(timeout=WAIT)
    await expect(page.get_by_role("region", name="Pinned messages").get_by_text("two jars")).to_be_visible(timeout=WAIT)


async def server_search(page: Any, _tour: Tour, _size: str) -> None:
    from playwright.async_api import expect
    box = page.get_by_role("textbox", name="Search", exact=True)
    await box.click(timeout=WAIT)  # on a phone a magnifier until used
    await box.fill("honey")
    await box.press("Enter")
    await expect(page.get_by_role("region", name="Search results").get_by_role("heading")).to_have_count(
        2, timeout=WAIT)  # general and announcements


async def discover_servers(page: Any, _tour: Tour, size: str) -> None:
    from playwright.async_api import expect
    await expect(page.get_by_role("heading", name="Friends")).to_be_visible(timeout=WAIT)
    if size.startswith("phone"):  # the server bar is in the navigation drawer
        await page.get_by_role("button", name="Open navigation").click(timeout=WAIT)
    await page.get_by_role("navigation", name="Servers").get_by_role("button", name="Discover servers").click(
        timeout=WAIT)
    region = page.get_by_role("region", name="Public servers")
    await expect(region.get_by_role("heading", name="Skalds' Circle", exact=True)).to_be_visible(timeout=WAIT)


async def markdown_message(page: Any, _tour: Tour, _size: str) -> None:
    from playwright.async_api import expect
    code = page.get_by_role("log", name="Messages").get_by_text("after the water has cooled")
    await expect(code).to_be_visible(timeout=WAIT)
    await page.get_by_role("log", name="Messages").get_by_role("article").filter(has_text="The ice was old") \
        .scroll_into_view_if_needed()


async def unsent_messages(page: Any, tour: Tour, _size: str) -> None:
    """Three sends the service never takes (docs/client.md "Reconnects and resends"): one without a connection
    and one the service says it cannot take now (503 with Retry-After), both still sending and retried by
    themselves, and one refused (Not sent, with Retry and Discard). Nothing reaches the service."""
    from playwright.async_api import expect

    async def refuse(route: Any) -> None:
        if route.request.method != "POST":
            await route.continue_()
            return
        content = json.loads(route.request.post_data or "{}").get("content", "")
        if "busy" in content:
            await route.fulfill(status=503, headers={"Retry-After": "30"}, json={"error": {
                "code": "service.unavailable", "message": "The service is briefly unavailable."}})
        elif "refused" in content:
            await route.fulfill(status=403, json={"error": {
                "code": "perm.denied", "message": "You cannot send messages in this room."}})
        else:  # no connection (a request held unanswered would be let through when the page closes)
            await route.abort("internetdisconnected")

    await room_shown(page, tour, "desktop")
    await page.route("**/api/v1/channels/*/messages", refuse)
    composer = page.get_by_role("textbox", name="Message #general")
    for text in ("On my way with the honey", "The hall is busy tonight", "This one is refused"):
        await composer.fill(text)
        await composer.press("Enter")
    log = page.get_by_role("log", name="Messages")
    await expect(log.get_by_text("Not sent: You cannot send messages in this room.")).to_be_visible(timeout=WAIT)
    await expect(log.get_by_text("The server is busy; trying again in 30 s.")).to_be_visible(timeout=WAIT)
    await expect(log.get_by_text("No answer yet; trying again…")).to_be_visible(timeout=WAIT)


async def sign_in_lockout(page: Any, _tour: Tour, _size: str) -> None:
    """Five wrong passwords lock a login for 15 minutes (the first shot does it; the later ones find it locked)."""
    from playwright.async_api import expect
    await page.get_by_role("textbox", name="Username or email").fill("ragnar", timeout=WAIT)
    alert = page.get_by_role("alert")
    for attempt in range(6):
        await page.get_by_label("Password", exact=True).fill(f"not the password {attempt}")
        await page.get_by_role("button", name="Sign in", exact=True).click()
        await expect(alert).to_be_visible(timeout=WAIT)
        if "Too many attempts" in await alert.inner_text():
            return
    await expect(alert).to_contain_text("Too many attempts", timeout=WAIT)


async def imported_profile(page: Any, _tour: Tour, _size: str) -> None:
    """The profile card of an imported author, opened from their name on their message."""
    from playwright.async_api import expect
    message = page.get_by_role("article").filter(has_text="brewed in the longhouse")
    await message.get_by_role("button", name="Gunnar the Old").click(timeout=WAIT)
    await expect(page.get_by_role("dialog", name="Gunnar the Old")).to_be_visible(timeout=WAIT)


async def imported_filter(page: Any, _tour: Tour, _size: str) -> None:
    from playwright.async_api import expect
    await page.get_by_role("checkbox", name="Imported authors").check(timeout=WAIT)
    await expect(page.get_by_role("status").filter(has_text="1 user match")).to_be_visible(timeout=WAIT)


def guild_path(section: str) -> Callable[[Community], str]:
    return lambda c: f"/channels/{c.guild['id']}/settings/{section}"


SCREENS = [
    # User settings.
    Screen("user-profile", "freya", "/settings/profile", heading("My profile")),
    Screen("user-avatar-crop", "freya", "/settings/profile", crop_dialog, segments=False),
    Screen("user-security", "freya", "/settings/security", heading("Security")),
    Screen("user-2fa-qr", "freya", "/settings/security", then(heading("Security"), two_factor_setup)),
    Screen("user-2fa-backup-codes", "fresh", "/settings/security", then(heading("Security"), backup_codes)),
    Screen("user-devices", "freya", "/settings/sessions", heading("Devices")),
    Screen("user-passkeys", "freya", "/settings/passkeys", heading("Passkeys")),
    Screen("user-notifications", "freya", "/settings/notifications", heading("Notifications")),
    Screen("user-appearance", "freya", "/settings/appearance", heading("Appearance")),
    Screen("user-styles", "freya", "/settings/styles", heading("Personal styles")),
    # Server settings.
    Screen("server-overview", "freya", guild_path("overview"), heading("Overview")),
    Screen("server-rooms", "freya", guild_path("rooms"),
           then(heading("Rooms and permissions"), click("button", "general", within="Rooms and categories"))),
    Screen("server-overrides", "freya", guild_path("rooms"), then(heading("Rooms and permissions"), override_editor)),
    Screen("server-roles", "freya", guild_path("roles"),
           then(heading("Roles"), click("button", "Jarl", within="Roles, highest first"))),
    Screen("server-role-permissions", "freya", guild_path("roles"), then(heading("Roles"), role_permissions)),
    Screen("server-members", "freya", guild_path("members"), heading("Members")),
    Screen("server-member-manage", "freya", guild_path("members"), then(heading("Members"), manage_member),
           segments=False),
    Screen("server-invites", "freya", guild_path("invites"), heading("Invitations")),
    Screen("server-bans", "freya", guild_path("bans"), heading("Bans")),
    Screen("server-audit-log", "freya", guild_path("audit-log"), heading("Audit log")),
    Screen("server-templates", "freya", guild_path("templates"), heading("Templates")),
    Screen("server-webhooks", "freya", guild_path("webhooks"), heading("Webhooks")),
    Screen("server-emoji", "freya", guild_path("emojis"), heading("Emoji")),
    Screen("server-sounds", "freya", guild_path("sounds"), heading("Sounds")),
    Screen("server-cosmetics", "freya", guild_path("cosmetics"), heading("Cosmetics")),
    # Rooms, voice and calls.
    Screen("chat-webhook-and-preview", "freya", lambda c: f"/channels/{c.guild['id']}/{c.general}",
           then(text("all 412 checks"), visible("complementary", "Link preview: How to brew mead at home"))),
    Screen("chat-imported-profile", "freya", lambda c: f"/channels/{c.guild['id']}/{c.general}", imported_profile,
           segments=False),
    Screen("room-list-voice", "freya", lambda c: f"/channels/{c.guild['id']}/{c.general}",
           then(then(text("all 412 checks"), open_nav_on_phone), visible("list", "In Lounge"))),
    Screen("voice-panel", "freya", lambda c: f"/channels/{c.guild['id']}/{c.general}", join_lounge,
           after=leave_lounge),
    Screen("soundboard", "freya", lambda c: f"/channels/{c.guild['id']}/{c.general}", soundboard,
           after=leave_lounge),
    Screen("call-ringing", "freya", lambda c: f"/channels/@me/{c.dm}", thor_calls, segments=False, after=end_call),
    Screen("call-view", "freya", lambda c: f"/channels/@me/{c.dm}", in_call, segments=False, after=end_call),
    Screen("room-menu", "freya", lambda c: f"/channels/{c.guild['id']}/{c.general}", room_menu, segments=False),
    Screen("server-menu", "freya", lambda c: f"/channels/{c.guild['id']}/{c.general}", server_menu, segments=False),
    Screen("notification-settings", "freya", lambda c: f"/channels/{c.guild['id']}/{c.general}",
           notification_settings, segments=False),
    Screen("pins-panel", "freya", lambda c: f"/channels/{c.guild['id']}/{c.general}", pins_panel, segments=False),
    Screen("server-search", "freya", lambda c: f"/channels/{c.guild['id']}/{c.general}", server_search),
    Screen("phone-install-hint", "freya", lambda c: f"/channels/{c.guild['id']}/{c.general}", install_hint,
           segments=False, phones_only=True),
    Screen("phone-install-hint-ios", "freya", lambda c: f"/channels/{c.guild['id']}/{c.general}", install_hint_ios,
           segments=False, phones_only=True),
    Screen("phone-pull-refresh", "freya", lambda c: f"/channels/@me/{c.dm}", pull_to_refresh, segments=False,
           phones_only=True),
    Screen("chat-markdown", "freya", lambda c: f"/channels/{c.guild['id']}/{c.general}", markdown_message,
           segments=False),
    Screen("chat-unsent", "freya", lambda c: f"/channels/{c.guild['id']}/{c.general}", unsent_messages,
           segments=False),
    Screen("discover-servers", "freya", "/channels/@me", discover_servers),
    Screen("sign-in", "", "/login", visible("button", "Sign in with a passkey")),
    Screen("sign-in-lockout", "", "/login", sign_in_lockout, segments=False),
    # Administration.
    Screen("admin-users", "odin", "/admin/users", then(heading("Users"), text("users"))),
    Screen("admin-users-imported", "odin", "/admin/users", then(heading("Users"), imported_filter)),
    Screen("admin-user-detail", "odin", lambda c: f"/admin/users/{c.people['thor'].id}", heading("Actions")),
    Screen("admin-servers", "odin", "/admin/servers", heading("Servers")),
    Screen("admin-settings", "odin", "/admin/settings", heading("Settings")),
    Screen("admin-audit", "odin", "/admin/audit", heading("Audit log")),
    Screen("admin-stats", "odin", "/admin/stats", heading("Statistics")),
    # Last: it moves the service's clock on by ten minutes, for a new account each time.
    Screen("step-up-dialog", "fresh", "/settings/security", step_up, segments=False),
]


async def run(out: Path, only: str | None, sizes: tuple[str, ...] = DEFAULT_SIZES,
              langs: tuple[str, ...] = ("en",)) -> int:
    from playwright.async_api import async_playwright

    if CHROMIUM is None or not CLIENT_INDEX.exists():
        print("needs Debian's chromium and the built client (make client)", file=sys.stderr)
        return 2
    configure_logging("warning")
    tour = Tour(out, only, sizes)
    standin = StandIn(MEDIA_KEY, MEDIA_SECRET)
    await standin.start()
    preview = Site({"/mead.html": html(PREVIEW_PAGE)})
    await preview.start()
    tmp = Path(tempfile.mkdtemp(prefix="meadhall-tour-"))
    settings = Settings(
        DATA_DIR=tmp / "data", DATABASE_URL=f"sqlite:///{tmp / 'data' / 'chat.db'}",
        SECRET_KEY="tour-secret-key-not-for-production-0123456789", DOMAIN="localhost", PUBLIC_URL=ORIGIN, LOG_LEVEL="warning",
        OUTBOUND_ALLOWED_NETWORKS=ALLOWED, VAPID_PRIVATE_KEY=generate_keys()["private_key"],
        MEDIA_API_KEY=MEDIA_KEY, MEDIA_API_SECRET=MEDIA_SECRET, MEDIA_API_URL=standin.url,
        RATE_LIMITS={name: "100000/60" for name in BUCKETS if name not in ("auth.lockout", "channel.slowmode")})
    (tmp / "data").mkdir(parents=True)
    rt = Runtime(settings, clock=tour.clock, redis_prefix="tour")
    # Cheap hashes: the tour signs in often; the production parameters are not what is looked at here.
    rt.password_hasher = PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1)
    rt.code_hasher = PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1)
    confine(rt.outbound)
    await rt.start()
    tour.rt = rt
    app = create_app(settings, rt)
    try:
        async with served(app, PORT), httpx.AsyncClient(base_url=ORIGIN) as client, async_playwright() as p:
            tour.client, tour.api, tour.accounts = client, Api(client), Accounts(client)
            await tour.seed(preview, standin)
            # No name but localhost resolves in the browser: it cannot reach past the loopback range.
            tour.browser = await p.chromium.launch(executable_path=CHROMIUM, args=[
                "--no-sandbox", "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost"])
            try:
                for lang in langs:
                    await tour.switch_language(lang)
                    for screen in SCREENS:
                        if only is None or only in screen.name:
                            await tour.shoot(screen)
            finally:
                for ctx in tour.contexts.values():
                    await ctx.close()
                await tour.browser.close()
    finally:
        await rt.close()
        await preview.stop()
        await standin.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    # A partial tour (--only) updates the findings of its shots and keeps the others'.
    path = out / "axe.json"
    before = json.loads(path.read_text(encoding="utf-8")) if only is not None and path.exists() else {}
    findings = {k: v for k, v in before.get("serious_or_critical", {}).items() if only is None or only not in k}
    findings.update({k: v for k, v in tour.axe.items() if v})
    checked = {k for k in before.get("screens_checked", []) if only is None or only not in k} | set(tour.axe)
    errors = {k: v for k, v in before.get("errors", {}).items() if only is None or only not in k}
    errors.update(tour.errors)
    report = {"serious_or_critical": findings, "screens_checked": sorted(checked), "errors": errors}
    path.write_text(json.dumps(report, indent=2, ensure_ascii=False), encoding="utf-8")
    print(f"{len(tour.shots)} screenshots in {out}; axe findings on {len(report['serious_or_critical'])} of "
          f"{len(tour.axe)} screens; errors on {len(tour.errors)}", file=sys.stderr)
    return 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=Path("/tmp/shots"))
    parser.add_argument("--only", help="only the screens whose name contains this")
    parser.add_argument("--sizes", default=",".join(DEFAULT_SIZES),
                        help=f"comma-separated sizes among {', '.join(SIZES)} (default: %(default)s)")
    parser.add_argument("--phones-only", action="store_true", help="only the phone sizes (phone, phone390)")
    parser.add_argument("--lang", default="en", help="comma-separated languages among en, ru (default: en)")
    args = parser.parse_args()
    sizes = tuple(n for n in SIZES if n != "desktop") if args.phones_only else tuple(args.sizes.split(","))
    langs = tuple(args.lang.split(","))
    if unknown := [n for n in sizes if n not in SIZES] + [n for n in langs if n not in BROWSER_LOCALES]:
        parser.error(f"unknown size or language: {', '.join(unknown)}")
    args.out.mkdir(parents=True, exist_ok=True)
    for old in args.out.glob("*.png"):
        if args.only is None or args.only in old.name:
            old.unlink()
    sys.exit(asyncio.run(run(args.out, args.only, sizes, langs)))


if __name__ == "__main__":
    main()
