"""Server settings in a real headless Chromium (docs/client.md, "Server settings"): roles created and given
from their Members tab, a room override that hides a room from a member live, the overview renamed with an
icon and a public invitation seen by another member, ownership handed on, rooms and categories created,
moved and slowed as the service then holds them, the hierarchy's read-only roles and refusals in words, the
sections a plain member is offered, and no serious accessibility violation on Overview, Rooms and Roles."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from tests.support.browser import (
    ORIGIN,
    needs_chromium,
    needs_client,
    only_expected,
    open_page,
    serious_axe_violations,
)
from tests.support.factories import add_member
from tests.support.guilds import give, make_guild, make_role, room
from tests.support.http import Api

pytestmark = [needs_chromium, needs_client]

WAIT = 10000
# A 1x1 PNG for the server icon.
PNG = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==")


@pytest.fixture
def backend() -> str:
    return "sqlite"  # the client reads through the services the HTTP tests cover on both databases


@pytest.fixture
def settings_overrides() -> dict[str, Any]:
    return {"PUBLIC_URL": ORIGIN, "RATE_LIMITS": {"auth.register": "1000/60", "global": "10000/60"}}


def section_nav(page: Any) -> Any:
    return page.get_by_role("navigation", name="Server settings")


def rooms_nav(page: Any) -> Any:
    return page.get_by_role("navigation", name="Rooms")


async def test_a_role_override_hides_a_room_from_a_member_live(site, browser, client, accounts, rt):
    from playwright.async_api import expect

    freya = await accounts.register("freya")
    bjorn = await accounts.register("bjorn")
    guild = await make_guild(client, freya, "Longhouse")
    general = guild["system_channel_id"]
    secret = await room(client, freya, guild["id"], name="secret")
    await add_member(rt, guild["id"], bjorn)

    owner_ctx, page, owner_errors = await open_page(browser, "freya", f"/channels/{guild['id']}/settings/roles")
    bjorn_ctx, bjorn_page, bjorn_errors = await open_page(browser, "bjorn", f"/channels/{guild['id']}/{general}")
    await expect(rooms_nav(bjorn_page).get_by_role("link", name="secret")).to_be_visible(timeout=WAIT)

    # Roles: create "Guests" and give it to bjorn from the role's Members tab.
    await page.get_by_role("textbox", name="New role name").fill("Guests")
    await page.get_by_role("button", name="Create role").click()
    await expect(page.get_by_role("status").filter(has_text="Role Guests created")).to_be_visible(timeout=WAIT)
    roles_list = page.get_by_role("list", name="Roles, highest first")
    await expect(roles_list.get_by_role("button", name="Guests", exact=True)).to_have_attribute("aria-current", "true")
    await page.get_by_role("tab", name="Members").click()
    await page.get_by_role("button", name="Add members").click()
    await page.get_by_role("button", name="Add bjorn").click()
    await expect(page.get_by_role("list", name="Members with Guests")).to_contain_text("bjorn", timeout=WAIT)
    await expect(page.get_by_role("status").filter(has_text="bjorn now has Guests")).to_be_visible()
    member = await Api(client).get(f"/guilds/{guild['id']}/members/{bjorn.id}", freya, expect=200)
    guests = next(r for r in (await Api(client).get(f"/guilds/{guild['id']}/roles", freya, expect=200))["roles"]
                  if r["name"] == "Guests")
    assert member["member"]["roles"] == [guests["id"]]

    # The role editor's permissions, with axe on Roles (editor open).
    await page.get_by_role("tab", name="Permissions").click()
    await expect(page.get_by_role("switch", name="View rooms")).to_be_visible()
    assert await serious_axe_violations(page) == []

    # Rooms: "secret" gets an override for Guests with View rooms denied.
    await section_nav(page).get_by_role("link", name="Rooms and permissions").click()
    tree = page.get_by_role("list", name="Rooms and categories")
    await tree.get_by_role("button", name="secret", exact=True).click()
    await page.get_by_role("tab", name="Permissions").click()
    await page.get_by_role("button", name="Add override").click()
    await page.get_by_label("For a role").select_option(label="Guests")
    await page.get_by_role("button", name="Add role override").click()
    view = page.get_by_role("radiogroup", name="View rooms")
    await expect(view.get_by_role("radio", name="Inherit")).to_be_checked()
    # ADMINISTRATOR is never offered in a room, nor are server-wide permissions.
    await expect(page.get_by_role("radiogroup", name="Administrator")).to_have_count(0)
    await expect(page.get_by_role("radiogroup", name="Ban members")).to_have_count(0)
    await view.get_by_role("radio", name="Deny").check()
    assert await serious_axe_violations(page) == []
    await page.get_by_role("button", name="Save override").click()
    await expect(page.get_by_role("status").filter(has_text="Override for Guests saved")).to_be_visible(timeout=WAIT)
    await expect(page.get_by_role("list", name="Overrides")).to_contain_text("Guests")

    # bjorn's client loses the room live; "general" stays.
    await expect(rooms_nav(bjorn_page).get_by_role("link", name="secret")).to_have_count(0, timeout=WAIT)
    await expect(rooms_nav(bjorn_page).get_by_role("link", name="general")).to_be_visible()
    channel = (await Api(client).get(f"/channels/{secret['id']}", freya, expect=200))["channel"]
    assert channel["permission_overrides"] == [{"id": guests["id"], "type": "role", "allow": "", "deny": "VIEW_CHANNEL"}]

    for errors in (owner_errors, bjorn_errors):
        assert only_expected(errors) == []
    await owner_ctx.close()
    await bjorn_ctx.close()


async def test_overview_rename_icon_public_and_ownership(site, browser, client, accounts, rt):
    from playwright.async_api import expect

    freya = await accounts.register("freya")
    sif = await accounts.register("sif")
    guild = await make_guild(client, freya, "Longhouse")
    await add_member(rt, guild["id"], sif)

    ctx, page, errors = await open_page(browser, "freya", f"/channels/{guild['id']}/settings/overview")
    sif_ctx, sif_page, sif_errors = await open_page(browser, "sif", f"/channels/{guild['id']}/{guild['system_channel_id']}")
    servers = sif_page.get_by_role("navigation", name="Servers")
    await expect(servers.get_by_role("link", name="Longhouse")).to_be_visible(timeout=WAIT)

    name = page.get_by_role("textbox", name="Server name")
    await expect(name).to_have_value("Longhouse", timeout=WAIT)
    await name.fill("Mead Hall")
    await page.get_by_role("textbox", name="Description").fill("Where the mead flows")
    await page.get_by_role("button", name="Save changes").click()
    await expect(page.get_by_role("status").filter(has_text="Changes saved")).to_be_visible(timeout=WAIT)
    await expect(servers.get_by_role("link", name="Mead Hall")).to_be_visible(timeout=WAIT)

    await page.get_by_label("Server icon file").set_input_files(
        files=[{"name": "icon.png", "mimeType": "image/png", "buffer": PNG}])
    await expect(page.get_by_role("button", name="Remove server icon")).to_be_visible(timeout=WAIT)
    await expect(page.get_by_role("img", name="Current server icon")).to_be_visible()
    await expect(servers.get_by_role("link", name="Mead Hall").locator("img")).to_have_count(1, timeout=WAIT)

    # Public: the permanent invitation's link shows once saved.
    await page.get_by_role("switch", name="Public server").check()
    await page.get_by_role("button", name="Save changes").click()
    link = page.get_by_role("textbox", name="Public invitation link")
    await expect(link).to_be_visible(timeout=WAIT)
    server = (await Api(client).get(f"/guilds/{guild['id']}", freya, expect=200))["guild"]
    assert server["name"] == "Mead Hall" and server["description"] == "Where the mead flows"
    assert server["icon_file_id"] and server["public"] is True
    assert await link.input_value() == f"{ORIGIN}/invite/{server['public_invite_code']}"
    assert await serious_axe_violations(page) == []

    # Ownership goes to sif after a confirmation (the fresh sign-in counts as re-verified).
    await page.get_by_role("button", name="Choose sif as the new owner").click()
    dialog = page.get_by_role("dialog", name="Transfer ownership")
    await expect(dialog).to_contain_text("Make sif the owner of Mead Hall?")
    await dialog.get_by_role("button", name="Transfer ownership").click()
    # No longer the owner (and without a role managing the server), freya is offered only what she may use.
    await expect(section_nav(page).get_by_role("link", name="Overview")).to_have_count(0, timeout=WAIT)
    await expect(section_nav(page).get_by_role("link", name="Members")).to_be_visible()
    server = (await Api(client).get(f"/guilds/{guild['id']}", freya, expect=200))["guild"]
    assert server["owner_id"] == sif.id

    assert only_expected(errors) == [] and only_expected(sif_errors) == []
    await ctx.close()
    await sif_ctx.close()


async def test_rooms_created_moved_and_slowed(site, browser, client, accounts):
    from playwright.async_api import expect

    freya = await accounts.register("freya")
    guild = await make_guild(client, freya, "Longhouse")
    ctx, page, errors = await open_page(browser, "freya", f"/channels/{guild['id']}/settings/rooms")

    async def create(kind: str, name: str, category: str | None = None) -> None:
        await page.get_by_role("button", name="Create room").click()
        dialog = page.get_by_role("dialog", name="Create room")
        await dialog.get_by_role("radio", name=kind).check()
        await dialog.get_by_role("textbox", name="Category name" if kind == "Category" else "Room name").fill(name)
        if category:
            await dialog.get_by_label("Category", exact=True).select_option(label=category)
        await dialog.get_by_role("button", name="Create").click()
        await expect(page.get_by_role("status").filter(has_text=f"{name} created")).to_be_visible(timeout=WAIT)

    await create("Category", "Lodge")
    await create("Text room", "ale", "Lodge")
    await create("Voice room", "mead", "Lodge")
    in_lodge = page.get_by_role("list", name="Rooms in Lodge")
    await expect(in_lodge.get_by_role("listitem")).to_have_text(["ale", "mead"], timeout=WAIT)

    await page.get_by_role("button", name="Move mead up").click()
    await expect(in_lodge.get_by_role("listitem")).to_have_text(["mead", "ale"], timeout=WAIT)
    await expect(page.get_by_role("button", name="Move mead up")).to_be_disabled()

    await in_lodge.get_by_role("button", name="ale", exact=True).click()
    await page.get_by_role("combobox", name="Slowmode").select_option(label="30 seconds")
    await page.get_by_role("textbox", name="Topic").fill("Ale and stories")
    await page.get_by_role("button", name="Save changes").click()
    await expect(page.get_by_role("status").filter(has_text="Changes saved")).to_be_visible(timeout=WAIT)

    channels = (await Api(client).get(f"/guilds/{guild['id']}/channels", freya, expect=200))["channels"]
    by_name = {c["name"]: c for c in channels}
    lodge, ale, mead = by_name["Lodge"], by_name["ale"], by_name["mead"]
    assert lodge["type"] == "category" and mead["type"] == "voice" and ale["type"] == "text"
    assert ale["parent_id"] == lodge["id"] and mead["parent_id"] == lodge["id"]
    assert mead["position"] < ale["position"]
    assert ale["slowmode_seconds"] == 30 and ale["topic"] == "Ale and stories"

    # A voice room's user limit is offered and saved.
    await in_lodge.get_by_role("button", name="mead", exact=True).click()
    await page.get_by_role("spinbutton", name="User limit").fill("12")
    await page.get_by_role("button", name="Save changes").click()
    await expect(page.get_by_role("status").filter(has_text="Changes saved")).to_be_visible(timeout=WAIT)
    mead = (await Api(client).get(f"/channels/{mead['id']}", freya, expect=200))["channel"]
    assert mead["user_limit"] == 12

    # Deleting asks first.
    await page.get_by_role("button", name="Delete room").click()
    await page.get_by_role("dialog", name="Delete mead").get_by_role("button", name="Delete room").click()
    await expect(in_lodge.get_by_role("listitem")).to_have_text(["ale"], timeout=WAIT)
    assert await Api(client).get(f"/channels/{mead['id']}", freya, expect=404)

    assert only_expected(errors) == []
    await ctx.close()


async def test_hierarchy_is_read_only_and_refusals_are_in_words(site, browser, client, accounts, rt):
    from playwright.async_api import expect

    freya = await accounts.register("freya")
    sif = await accounts.register("sif")
    guild = await make_guild(client, freya, "Longhouse")
    gid = guild["id"]
    await add_member(rt, gid, sif)
    # A new role is placed at position 1, below the others: Elders (3) > Mods (2) > Helpers (1).
    await make_role(client, freya, gid, "Elders", "KICK_MEMBERS")
    mods = await make_role(client, freya, gid, "Mods", "VIEW_CHANNEL|MANAGE_ROLES|MANAGE_GUILD")
    await make_role(client, freya, gid, "Helpers", "SEND_MESSAGES")
    await give(client, freya, gid, sif, mods["id"])
    # No text room left: the server refuses to become public (422).
    await Api(client).delete(f"/channels/{guild['system_channel_id']}", freya, expect=204)

    ctx, page, errors = await open_page(browser, "sif", f"/channels/{gid}/settings/roles")
    roles_list = page.get_by_role("list", name="Roles, highest first")
    await expect(roles_list.get_by_role("listitem")).to_have_count(4, timeout=WAIT)

    # Elders (above) and Mods (her own highest) are read-only.
    for name in ("Elders", "Mods"):
        await roles_list.get_by_role("button", name=name, exact=True).click()
        await expect(page.get_by_role("note")).to_contain_text(f"{name} is at or above your highest role")
        await expect(page.get_by_role("textbox", name="Role name", exact=True)).to_be_disabled()
        await expect(page.get_by_role("button", name="Save changes")).to_have_count(0)
        await expect(page.get_by_role("button", name=f"Move {name} up")).to_be_disabled()

    # Helpers (below) is editable, but only with permissions sif holds.
    await roles_list.get_by_role("button", name="Helpers", exact=True).click()
    await expect(page.get_by_role("note")).to_have_count(0)
    await page.get_by_role("tab", name="Permissions").click()
    await expect(page.get_by_role("switch", name="Ban members")).to_be_disabled()
    await expect(page.get_by_role("switch", name="Manage roles")).to_be_enabled()
    assert await serious_axe_violations(page) == []

    # The server's own refusal shows in words.
    await section_nav(page).get_by_role("link", name="Overview").click()
    await page.get_by_role("switch", name="Public server").check()
    await page.get_by_role("button", name="Save changes").click()
    await expect(page.get_by_role("alert")).to_contain_text("a public server needs a text room", timeout=WAIT)
    # Helpers moved above sif by the owner meanwhile: the editor turns read-only live (ROLE_UPDATE).
    await section_nav(page).get_by_role("link", name="Roles").click()
    await roles_list.get_by_role("button", name="Helpers", exact=True).click()
    await expect(page.get_by_role("textbox", name="Role name", exact=True)).to_be_enabled()
    await Api(client).patch(f"/guilds/{gid}/roles", freya, expect=200, json={"roles": [{"id": mods["id"], "position": 1}]})
    await expect(page.get_by_role("note")).to_contain_text("Helpers is at or above your highest role", timeout=WAIT)
    await expect(page.get_by_role("textbox", name="Role name", exact=True)).to_be_disabled()

    assert only_expected(errors) == []
    await ctx.close()


async def test_a_plain_member_is_offered_only_what_they_may_use(site, browser, client, accounts, rt):
    from playwright.async_api import expect

    freya = await accounts.register("freya")
    bjorn = await accounts.register("bjorn")
    guild = await make_guild(client, freya, "Longhouse")
    await add_member(rt, guild["id"], bjorn)

    ctx, page, errors = await open_page(browser, "bjorn", f"/channels/{guild['id']}/settings/overview")
    nav = section_nav(page)
    await expect(nav.get_by_role("link", name="Members")).to_be_visible(timeout=WAIT)
    for name in ("Overview", "Rooms and permissions", "Roles"):
        await expect(nav.get_by_role("link", name=name)).to_have_count(0)
    await expect(page.get_by_role("heading", level=1, name="Overview")).to_have_count(0)
    await expect(page.get_by_role("textbox", name="Server name")).to_have_count(0)
    assert only_expected(errors) == []
    await ctx.close()


@pytest.mark.parametrize("scheme", ["dark"])
async def test_no_serious_accessibility_violation_in_the_dark_theme(site, browser, client, accounts, rt, scheme):
    from playwright.async_api import expect

    freya = await accounts.register("freya")
    guild = await make_guild(client, freya, "Longhouse")
    cat = await room(client, freya, guild["id"], name="Lodge", type="category")
    await room(client, freya, guild["id"], name="ale", parent_id=cat["id"])
    await make_role(client, freya, guild["id"], "Guests", "SEND_MESSAGES", color=0x3E7BFF, hoist=True)

    ctx, page, _ = await open_page(browser, "freya", f"/channels/{guild['id']}/settings/overview", color_scheme=scheme)
    await expect(page.get_by_role("textbox", name="Server name")).to_have_value("Longhouse", timeout=WAIT)
    assert await serious_axe_violations(page) == []

    await section_nav(page).get_by_role("link", name="Rooms and permissions").click()
    await page.get_by_role("list", name="Rooms and categories").get_by_role("button", name="ale", exact=True).click()
    await expect(page.get_by_role("textbox", name="Room name")).to_have_value("ale")
    assert await serious_axe_violations(page) == []
    await page.get_by_role("tab", name="Permissions").click()
    await page.get_by_role("button", name="Add override").click()
    await page.get_by_label("For a role").select_option(label="@user")
    await page.get_by_role("button", name="Add role override").click()
    await expect(page.get_by_role("radiogroup", name="Send messages")).to_be_visible()
    assert await serious_axe_violations(page) == []

    await section_nav(page).get_by_role("link", name="Roles").click()
    await page.get_by_role("list", name="Roles, highest first").get_by_role("button", name="Guests", exact=True).click()
    await expect(page.get_by_role("switch", name="Show separately")).to_be_checked()
    assert await serious_axe_violations(page) == []
    await ctx.close()
