"""Every upload purpose obeys the media limits set through instance administration (docs/admin.md, "Media
limits"; docs/reference/limits.md): lowered below a file's size, the upload answers 413 `file.too_large`;
raised again, the same file is accepted. Attachments follow MAX_UPLOAD_SIZE instead and are left alone."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.admin import admin_account
from tests.support.conversations import group
from tests.support.customisation import wav
from tests.support.files import attach, png_of_size
from tests.support.guilds import make_guild, make_invite
from tests.support.http import Api, assert_error

IMAGE = png_of_size(3000)
SOUND = wav(0.25)  # 4 044 bytes
assert len(SOUND) > 3000


class Setup:
    """An administrator owning a server (its general room, an invitation, a webhook) and a group conversation."""

    def __init__(self, api: Api, admin: Any, guild: dict[str, Any], invite: str, webhook: str, group_id: str) -> None:
        self.api, self.admin, self.guild, self.invite, self.webhook, self.group = (
            api, admin, guild, invite, webhook, group_id)

    @property
    def general(self) -> str:
        return str(self.guild["system_channel_id"])


@pytest.fixture
async def setup(client, accounts, rt) -> Setup:
    api, admin = Api(client), await admin_account(client, accounts, rt, "root")
    friends = [await accounts.register(n) for n in ("bob", "carol")]
    guild = await make_guild(client, admin, "Hall")
    invite = await make_invite(client, admin, guild["system_channel_id"])
    hook = await api.post(f"/channels/{guild['system_channel_id']}/webhooks", admin, json={"name": "Hook"},
                          expect=201)
    conv = await group(api, admin, *friends)
    return Setup(api, admin, guild, invite["code"], hook["webhook"]["id"], conv["id"])


# purpose -> (setting, path, file, extra form fields, content type, success status)
def purposes(s: Setup) -> dict[str, tuple[str, str, bytes, dict[str, str], str, int]]:
    g = s.guild["id"]
    image, sound = ("image/png", 200), ("audio/wav", 201)
    return {
        "user avatar": ("avatar_max_bytes", "/users/@me/avatar", IMAGE, {}, *image),
        "webhook avatar": ("avatar_max_bytes", f"/webhooks/{s.webhook}/avatar", IMAGE, {}, *image),
        "conversation icon": ("avatar_max_bytes", f"/channels/{s.group}/icon", IMAGE, {}, *image),
        "guild icon": ("guild_image_max_bytes", f"/guilds/{g}/icon", IMAGE, {}, *image),
        "guild banner": ("guild_image_max_bytes", f"/guilds/{g}/banner", IMAGE, {}, *image),
        "guild splash": ("guild_image_max_bytes", f"/guilds/{g}/splash", IMAGE, {}, *image),
        "room background": ("guild_image_max_bytes", f"/channels/{s.general}/background", IMAGE, {}, *image),
        "invite background": ("guild_image_max_bytes", f"/invites/{s.invite}/background", IMAGE, {}, *image),
        "emoji": ("emoji_max_bytes", f"/guilds/{g}/emojis", IMAGE, {"name": "mead"}, "image/png", 201),
        "sound": ("sound_max_bytes", f"/guilds/{g}/sounds", SOUND, {"name": "horn", "kind": "soundboard"}, *sound),
        "gallery": ("gallery_max_bytes", f"/guilds/{g}/cosmetics", IMAGE, {"name": "ring", "kind": "frame"},
                    "image/png", 201),
    }


PURPOSES = ["user avatar", "webhook avatar", "conversation icon", "guild icon", "guild banner", "guild splash",
            "room background", "invite background", "emoji", "sound", "gallery"]


async def set_limit(s: Setup, name: str, value: int) -> None:
    body = await s.api.patch("/instance/settings", s.admin, json={"media_limits": {name: value}})
    assert body["settings"]["media_limits"][name] == value


async def send(s: Setup, path: str, data: bytes, fields: dict[str, str], content_type: str) -> Any:
    name = "file.wav" if content_type.startswith("audio") else "file.png"
    return await s.api.request("POST", path, s.admin, expect=None, data=fields,
                               files={"file": (name, data, content_type)})


@pytest.mark.parametrize("purpose", PURPOSES)
async def test_upload_obeys_its_media_limit(setup, purpose):
    setting, path, data, fields, content_type, ok = purposes(setup)[purpose]
    await set_limit(setup, setting, len(data) - 1)
    r = await send(setup, path, data, fields, content_type)
    assert_error(r, 413, "file.too_large")
    await set_limit(setup, setting, len(data))
    r = await send(setup, path, data, fields, content_type)
    assert r.status_code == ok, r.text


async def test_a_limit_governs_only_its_own_purposes(setup, client):
    """The lowest emoji limit leaves avatars and attachments alone."""
    await set_limit(setup, "emoji_max_bytes", 1024)
    await set_limit(setup, "gallery_max_bytes", 1024)
    r = await send(setup, "/users/@me/avatar", IMAGE, {}, "image/png")
    assert r.status_code == 200, r.text
    r = await attach(client, setup.admin, setup.general, IMAGE, "big.png", "image/png")
    assert r.status_code == 201, r.text
    r = await send(setup, f"/guilds/{setup.guild['id']}/emojis", IMAGE, {"name": "mead"}, "image/png")
    assert_error(r, 413, "file.too_large")
