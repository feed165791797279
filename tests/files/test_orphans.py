"""Orphan files (docs/files.md; docs/operations.md): `meadhall orphan-files [--older-than-hours H] [--delete]` and the hourly
job. Unbound uploads older than the threshold, files whose holder went without them, content without a
row and abandoned spools are found; bound and recent files are not."""

from __future__ import annotations

import os
import time

from sqlalchemy import delete, update

from meadhall.db.schema import channels, invites
from meadhall.files.cleanup import JOB_EVERY, orphan_files
from tests.support.factories import file_ids
from tests.support.files import attached, png, stored, upload
from tests.support.guilds import room
from tests.support.http import API
from tests.support.messages import post
from tests.support.personas import hall


async def test_unbound_uploads_older_than_the_threshold(client, accounts, rt, clock, settings):
    h = await hall(client, accounts, rt)
    old = await attached(client, h.a, h.general, b"forgotten")
    sent = await attached(client, h.a, h.general, b"sent")
    await post(client, h.a, h.general, "x", attachment_ids=[sent["id"]])
    avatar = (await upload(client, h.b, "/users/@me/avatar", png())).json()["user"]["avatar"]
    clock.advance(hours=23)
    recent = await attached(client, h.b, h.general, b"recent")
    assert (await orphan_files(rt))["files"] == []
    clock.advance(hours=2)
    found = await orphan_files(rt)
    assert found == {"files": [{"id": old["id"], "size": 9, "created_at": old["created_at"]}], "deleted": 0}
    assert stored(settings, old["id"]).exists()  # listing deletes nothing
    # A shorter threshold also finds the recent one.
    assert [f["id"] for f in (await orphan_files(rt, older_than_hours=1))["files"]] == [old["id"], recent["id"]]
    done = await orphan_files(rt, remove=True)
    assert done["deleted"] == 1
    assert not stored(settings, old["id"]).exists()
    assert await file_ids(rt) == sorted(int(i) for i in (sent["id"], avatar, recent["id"]))
    assert (await orphan_files(rt, remove=True)) == {"files": [], "deleted": 0}


async def test_files_whose_holder_went_without_them(client, accounts, rt, clock, settings):
    """Holders removed behind the files domain's back (a cascade, a purge): the files are found."""
    h = await hall(client, accounts, rt)
    talk = await room(client, h.owner, h.id, name="talk")
    sent = await attached(client, h.a, talk["id"])
    await post(client, h.a, talk["id"], "x", attachment_ids=[sent["id"]])
    background = (await upload(client, h.owner, f"/channels/{talk['id']}/background", png())).json()[
        "channel"]["background_file_id"]
    r = await client.post(f"{API}/channels/{h.general}/invites", json={}, headers=h.a.headers)
    code = r.json()["invite"]["code"]
    invite_bg = (await upload(client, h.a, f"/invites/{code}/background", png())).json()["invite"][
        "background_file_id"]
    avatar = (await upload(client, h.b, "/users/@me/avatar", png())).json()["user"]["avatar"]
    icon = (await upload(client, h.owner, f"/guilds/{h.id}/icon", png())).json()["guild"]["icon_file_id"]
    async with rt.engine.begin() as conn:
        await conn.execute(delete(channels).where(channels.c.id == int(talk["id"])))  # cascades messages
        await conn.execute(delete(invites).where(invites.c.code == code))
    clock.advance(hours=25)
    found = await orphan_files(rt)
    assert sorted(f["id"] for f in found["files"]) == sorted([sent["id"], background, invite_bg])
    done = await orphan_files(rt, remove=True)
    assert done["deleted"] == 3
    for gone in (sent["id"], background, invite_bg):
        assert not stored(settings, gone).exists()
    assert await file_ids(rt) == sorted([int(avatar), int(icon)])
    # A holder pointing elsewhere also leaves its old file dangling.
    async with rt.engine.begin() as conn:
        from meadhall.db.schema import users

        await conn.execute(update(users).where(users.c.id == int(h.b.id)).values(avatar_file_id=None))
    assert [f["id"] for f in (await orphan_files(rt))["files"]] == [avatar]


async def test_content_without_a_row_and_abandoned_spools(client, accounts, rt, clock, settings):
    h = await hall(client, accounts, rt)
    kept = await attached(client, h.a, h.general)
    root = settings.DATA_DIR / "files"
    stray = root / "0a" / "266"
    stray.parent.mkdir(parents=True, exist_ok=True)
    stray.write_bytes(b"left by a crash")
    spool = root / "tmp" / "abc.part"
    spool.write_bytes(b"half an upload")
    fresh_spool = root / "tmp" / "def.part"
    fresh_spool.write_bytes(b"an upload in progress")
    old = time.time() - 2 * 86400
    for path in (stray, spool, stored(settings, kept["id"])):
        os.utime(path, (old, old))
    found = await orphan_files(rt)
    assert [f["id"] for f in found["files"]] == ["266"]
    done = await orphan_files(rt, remove=True)
    assert done["deleted"] == 2
    assert not stray.exists() and not spool.exists()
    assert fresh_spool.exists() and stored(settings, kept["id"]).exists()


async def test_job_runs_hourly_once_per_instance(client, accounts, rt, clock, app):
    h = await hall(client, accounts, rt)
    old = await attached(client, h.a, h.general)
    clock.advance(hours=25)
    [job] = [j for j in rt.jobs.jobs if j.name == "orphan-files"]
    assert job.every == JOB_EVERY == 3600 and job.leader_only
    assert await rt.jobs.run_once(job) is True
    assert await file_ids(rt) == []
    assert old["id"]
    # A second node in the same hour does not run it again.
    assert await rt.jobs.run_once(job) is False
