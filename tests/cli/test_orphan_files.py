"""`meadhall orphan-files [--older-than-hours H] [--delete]` (docs/operations.md) against the test database: one
JSON object listing the orphans, deletion with --delete, usage errors exit 2. The search itself is
tested in tests/files/test_orphans.py."""

from __future__ import annotations

from tests.support.factories import file_ids
from tests.support.files import attached, stored
from tests.support.personas import hall


async def test_cli_orphan_files(client, accounts, rt, clock, settings, cli):
    h = await hall(client, accounts, rt)
    f = await attached(client, h.a, h.general, b"abc")
    listed = await cli("orphan-files", "--older-than-hours", "0")
    assert listed.exit_code == 0, listed.stderr
    assert listed.json == {"files": [{"id": f["id"], "size": 3, "created_at": f["created_at"]}], "deleted": 0}
    assert (await cli("orphan-files")).json == {"files": [], "deleted": 0}  # 24 hours by default
    deleted = await cli("orphan-files", "--older-than-hours", "0", "--delete")
    assert deleted.exit_code == 0, deleted.stderr
    assert deleted.json["deleted"] == 1
    assert await file_ids(rt) == [] and not stored(settings, f["id"]).exists()
    bad = await cli("orphan-files", "--older-than-hours", "-1")
    assert bad.exit_code == 2
