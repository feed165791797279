"""`meadhall doctor` (docs/operations.md, "Checking a configuration"), run through the CLI against a good
configuration and against deliberately broken ones: each gives its class's exit code and a finding that
names the variable and the fix. Only loopback addresses are contacted."""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import shutil
import sqlite3
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from meadhall.db.migrate import shipped_revisions
from meadhall.push.keys import generate_keys
from tests.support.isolation import TEST_REDIS_URL, clean_env, fresh_postgres
from tests.support.livekit_standin import StandIn, closed_port_url
from tests.support.voice import MEDIA_KEY, MEDIA_SECRET

STRONG_KEY = secrets.token_urlsafe(48)
VAPID = generate_keys()


@pytest.fixture
def good(settings: Any, standin: StandIn) -> dict[str, str]:
    """A configuration where everything is right: an owner-only DATA_DIR, a generated key, voice against the
    stand-in, a VAPID pair, an intranet range let through."""
    settings.DATA_DIR.mkdir(parents=True, exist_ok=True)  # on PostgreSQL nothing has created it
    settings.DATA_DIR.chmod(0o700)
    return {"SECRET_KEY": STRONG_KEY, "PUBLIC_URL": "http://localhost:8000", "REDIS_URL": TEST_REDIS_URL or "",
            "MEDIA_API_KEY": MEDIA_KEY, "MEDIA_API_SECRET": MEDIA_SECRET, "MEDIA_API_URL": standin.url,
            "VAPID_PRIVATE_KEY": VAPID["private_key"], "VAPID_SUBJECT": "mailto:ops@example.com",
            "OUTBOUND_ALLOWED_NETWORKS": "10.1.2.0/24"}


async def doctor(cli: Any, env: dict[str, str], *args: str) -> tuple[int, dict[str, Any]]:
    r = await cli("doctor", "--json", *args, env=env)
    out = r.json
    assert out["exit_code"] == r.exit_code, out
    assert out["status"] == ("ok" if r.exit_code == 0 else "problems")
    return r.exit_code, out


def finding(out: dict[str, Any], klass: str, check: str) -> dict[str, Any]:
    [found] = [c for c in out["checks"] if (c["class"], c["check"]) == (klass, check)]
    return found


def problems(out: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [(c["class"], c["check"], c["severity"]) for c in out["checks"] if c["severity"] != "ok"]


async def test_good_configuration_passes_every_check(cli, good, standin):
    code, out = await doctor(cli, good)
    assert code == 0 and problems(out) == []
    checks = {(c["class"], c["check"]) for c in out["checks"]}
    assert checks >= {("config", "domain"), ("config", "passkeys"), ("config", "tls"), ("config", "secret_key"),
                      ("storage", "data_dir_writable"), ("storage", "data_dir_mode"), ("storage", "free_space"),
                      ("storage", "database"), ("storage", "schema"), ("storage", "redis"), ("media", "keys"),
                      ("media", "server"), ("push", "vapid_key"), ("push", "vapid_subject"),
                      ("network", "outbound_networks")}
    assert all(c["fix"] is None and c["message"] for c in out["checks"])
    assert VAPID["public_key"] in finding(out, "push", "vapid_key")["message"]
    assert [c.method for c in standin.calls] == ["ListRooms"]  # the signed call reached the media server
    if TEST_REDIS_URL:
        assert "answers" in finding(out, "storage", "redis")["message"]


async def test_readable_report_without_json(cli, good):
    broken = {**good, "OUTBOUND_ALLOWED_NETWORKS": "0.0.0.0/0"}
    r = await cli("doctor", env=broken)
    assert r.exit_code == 14
    lines = r.stdout.splitlines()
    assert lines[0].startswith("ok      config/domain: DOMAIN localhost")
    [bad] = [i for i, ln in enumerate(lines) if ln.startswith("ERROR")]
    assert lines[bad].startswith("ERROR   network/outbound_networks: OUTBOUND_ALLOWED_NETWORKS: 0.0.0.0/0")
    assert lines[bad + 1].startswith("        fix: remove 0.0.0.0/0")
    assert lines[-1] == "1 error(s), 0 warning(s): exit code 14"
    ok = await cli("doctor", env=good)
    assert ok.exit_code == 0 and ok.stdout.splitlines()[-1] == "no errors, 0 warning(s)"


async def test_installed_command_prints_one_json_object_and_exits_with_the_class_code(good, settings):
    """As an operator runs it: a process of its own, the JSON alone on stdout, the class's exit status."""
    values = {**good, "DATA_DIR": str(settings.DATA_DIR), "DATABASE_URL": settings.DATABASE_URL,
              "OUTBOUND_ALLOWED_NETWORKS": "::/0"}
    env = clean_env(**{k: v for k, v in values.items() if v})
    done = await asyncio.to_thread(subprocess.run, [sys.executable, "-m", "meadhall.cli.main", "doctor", "--json"],
                                   env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 14, done.stderr
    out = json.loads(done.stdout)
    assert done.stdout.count("\n") == 1 and out["status"] == "problems" and out["exit_code"] == 14
    assert [c["check"] for c in out["checks"] if c["severity"] == "error"] == ["outbound_networks"]


async def test_voice_and_push_off_are_not_problems(cli, good):
    env = {**good, "MEDIA_API_KEY": "", "MEDIA_API_SECRET": "", "VAPID_PRIVATE_KEY": "", "REDIS_URL": ""}
    code, out = await doctor(cli, env)
    assert code == 0 and problems(out) == []
    assert finding(out, "media", "voice")["message"].startswith("voice is off")
    assert finding(out, "push", "vapid_key")["message"].startswith("Web Push is off")
    assert finding(out, "storage", "redis")["message"].startswith("REDIS_URL is unset")


# ---- config (10) ---------------------------------------------------------------------------------------

async def test_domain_not_the_public_url_host(cli, good):
    code, out = await doctor(cli, {**good, "DOMAIN": "chat.example.com", "PUBLIC_URL": "https://other.example.org"})
    assert code == 10
    assert problems(out) == [("config", "domain", "error")]
    found = finding(out, "config", "domain")
    assert "DOMAIN chat.example.com" in found["message"] and "passkeys" in found["message"]
    assert "DOMAIN=other.example.org" in found["fix"]


async def test_ip_domain_turns_passkeys_off_as_a_warning(cli, good):
    code, out = await doctor(cli, {**good, "DOMAIN": "127.0.0.1", "PUBLIC_URL": "http://127.0.0.1:8000"})
    assert code == 0
    assert problems(out) == [("config", "passkeys", "warning")]
    found = finding(out, "config", "passkeys")
    assert "auth.passkey_unsupported" in found["message"] and "DOMAIN=" in found["fix"]


async def test_http_public_url_on_a_public_host(cli, good):
    env = {**good, "DOMAIN": "chat.example.com", "PUBLIC_URL": "http://chat.example.com",
           "VAPID_SUBJECT": "mailto:ops@example.com"}
    code, out = await doctor(cli, env)
    assert code == 10
    assert ("config", "tls", "error") in problems(out)
    found = finding(out, "config", "tls")
    assert "Secure session cookie" in found["message"]
    assert "PUBLIC_URL=https://chat.example.com" in found["fix"]
    # https is what the cookie needs; TLS_ENABLED contradicting it breaks the gateway URL.
    code, out = await doctor(cli, {**env, "PUBLIC_URL": "https://chat.example.com", "MEDIA_PUBLIC_URL": "",
                                   "TLS_ENABLED": "false"})
    assert code == 10
    # ... and the media address derived from it (ws://), which an https page may not open either.
    assert problems(out) == [("config", "tls_enabled", "error"), ("media", "public_url", "error")]
    assert "TLS_ENABLED" in finding(out, "config", "tls_enabled")["fix"]
    code, out = await doctor(cli, {**env, "PUBLIC_URL": "https://chat.example.com"})
    assert code == 0 and problems(out) == []


@pytest.mark.parametrize("key, why", [
    ("a" * 40, "bits of entropy"),
    ("test-secret-key-not-for-production-0123456789", "not-for-production"),
    ("changeme-changeme-changeme-changeme-1", "changeme"),
])
async def test_weak_secret_key(cli, good, key, why):
    code, out = await doctor(cli, {**good, "SECRET_KEY": key})
    assert code == 10
    assert problems(out) == [("config", "secret_key", "error")]
    found = finding(out, "config", "secret_key")
    assert found["message"].startswith("SECRET_KEY is weak") and why in found["message"]
    assert "SECRET_KEY" in found["fix"] and "openssl rand -base64 48" in found["fix"]


async def test_configuration_that_does_not_load_is_a_config_finding(cli, good):
    code, out = await doctor(cli, {**good, "SECRET_KEY": "short"})
    assert code == 10
    [only] = out["checks"]
    assert (only["class"], only["check"], only["severity"]) == ("config", "load", "error")
    assert only["message"].startswith("invalid configuration: SECRET_KEY: must be at least 32 bytes")
    assert "SECRET_KEY" in only["fix"] and "openssl rand -base64 48" in only["fix"]
    code, out = await doctor(cli, {**good, "CORS_ALLOWED_ORIGINS": "*"})
    assert code == 10 and out["checks"][0]["message"].startswith("invalid configuration: CORS_ALLOWED_ORIGINS")
    assert "CORS_ALLOWED_ORIGINS=" in out["checks"][0]["fix"]


async def test_the_most_basic_class_decides_the_exit_code(cli, good):
    code, out = await doctor(cli, {**good, "SECRET_KEY": "a" * 40, "OUTBOUND_ALLOWED_NETWORKS": "0.0.0.0/0",
                                   "VAPID_PRIVATE_KEY": "nonsense"})
    assert code == 10
    assert {p for p in problems(out)} == {("config", "secret_key", "error"), ("push", "vapid_key", "error"),
                                          ("network", "outbound_networks", "error")}


# ---- storage (11) --------------------------------------------------------------------------------------

async def test_data_dir_readable_by_others(cli, good, settings):
    settings.DATA_DIR.chmod(0o755)
    code, out = await doctor(cli, good)
    assert code == 11
    assert problems(out) == [("storage", "data_dir_mode", "error")]
    found = finding(out, "storage", "data_dir_mode")
    assert "mode 0755" in found["message"] and found["fix"].startswith(f"chmod 0700 {settings.DATA_DIR}")
    settings.DATA_DIR.chmod(0o750)
    code, out = await doctor(cli, good)
    assert code == 0 and problems(out) == [("storage", "data_dir_mode", "warning")]


async def test_data_dir_that_cannot_be_written(cli, good, tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    code, out = await doctor(cli, {**good, "DATA_DIR": str(blocker)})
    assert code == 11
    assert finding(out, "storage", "data_dir")["message"] == f"DATA_DIR {blocker} is not a directory"
    assert "DATA_DIR=" in finding(out, "storage", "data_dir")["fix"]
    code, out = await doctor(cli, {**good}, "--data-dir", str(blocker / "data"))  # cannot be created either
    assert code == 11
    found = finding(out, "storage", "data_dir")
    assert "cannot be created" in found["message"] and "install -d -m 0700" in found["fix"]


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes through permission bits")
async def test_data_dir_without_write_permission(cli, good, settings):
    settings.DATA_DIR.chmod(0o500)
    try:
        code, out = await doctor(cli, good)
    finally:
        settings.DATA_DIR.chmod(0o700)
    assert code == 11 and finding(out, "storage", "data_dir_writable")["severity"] == "error"


@pytest.mark.parametrize("free, severity, code", [(50 * 2**20, "error", 11), (500 * 2**20, "warning", 0)])
async def test_little_free_space(cli, good, monkeypatch, free, severity, code):
    real = shutil.disk_usage
    monkeypatch.setattr(shutil, "disk_usage", lambda path: real(path)._replace(free=free))
    got, out = await doctor(cli, good)
    assert got == code
    assert problems(out) == [("storage", "free_space", severity)]
    assert finding(out, "storage", "free_space")["message"].startswith(f"{free // 2**20} MiB free under DATA_DIR")


async def test_generated_key_file_is_checked_when_secret_key_is_unset(cli, good, settings):
    key = settings.DATA_DIR / "secret.key"
    key.write_text(secrets.token_urlsafe(48))
    key.chmod(0o600)
    code, out = await doctor(cli, {**good, "SECRET_KEY": ""})
    assert code == 0 and finding(out, "storage", "secret_key_file")["severity"] == "ok"
    key.chmod(0o644)
    code, out = await doctor(cli, {**good, "SECRET_KEY": ""})
    assert code == 11
    assert problems(out) == [("storage", "secret_key_file", "error")]
    assert finding(out, "storage", "secret_key_file")["fix"] == f"chmod 0600 {key.resolve()}"


async def test_unreachable_database(cli, good):
    closed = closed_port_url().rsplit(":", 1)[1]
    code, out = await doctor(cli, {**good, "DATABASE_URL": f"postgresql://meadhall:pw@127.0.0.1:{closed}/meadhall"})
    assert code == 11
    assert problems(out) == [("storage", "database", "error")]
    found = finding(out, "storage", "database")
    assert f"127.0.0.1:{closed}" in found["message"] and "cannot be reached" in found["message"]
    assert "pw" not in found["message"]  # the password stays out of the report
    assert "DATABASE_URL" in found["fix"]


class LazyDatabase:
    """An empty PostgreSQL database made on first use and shared by the module's tests (creating one is slow).
    fresh_postgres runs its own event loop: entered on a worker thread, left at teardown outside any loop."""

    def __init__(self) -> None:
        self.database: Any = None
        self.url = ""

    async def get(self) -> str:
        if self.database is None:
            self.database = fresh_postgres()
            self.url = await asyncio.to_thread(self.database.__enter__)
        return self.url


@pytest.fixture(scope="module")
def stamp_database() -> Iterator[LazyDatabase]:
    lazy = LazyDatabase()
    yield lazy
    if lazy.database is not None:
        lazy.database.__exit__(None, None, None)


@asynccontextmanager
async def stamped(backend: str, tmp_path: Path, lazy: LazyDatabase, revision: str) -> AsyncIterator[str]:
    """A database of the kind under test holding only Alembic's stamp `revision`."""
    if backend == "sqlite":
        path = tmp_path / f"stamped-{uuid.uuid4().hex[:6]}.db"
        with sqlite3.connect(path) as db:
            db.execute("CREATE TABLE alembic_version (version_num VARCHAR(32) PRIMARY KEY)")
            db.execute("INSERT INTO alembic_version VALUES (?)", (revision,))
        yield f"sqlite:///{path}"
        return
    url = await lazy.get()
    conn = await asyncpg.connect(url)
    try:
        await conn.execute("CREATE TABLE IF NOT EXISTS alembic_version (version_num VARCHAR(32) PRIMARY KEY)")
        await conn.execute("DELETE FROM alembic_version")
        await conn.execute("INSERT INTO alembic_version VALUES ($1)", revision)
    finally:
        await conn.close()
    yield url


async def test_database_written_by_a_newer_version(cli, good, backend, tmp_path, stamp_database):
    async with stamped(backend, tmp_path, stamp_database, "9999_from_the_future") as url:
        code, out = await doctor(cli, {**good, "DATABASE_URL": url})
    assert code == 11
    assert problems(out) == [("storage", "schema", "error")]
    found = finding(out, "storage", "schema")
    assert "9999_from_the_future" in found["message"] and shipped_revisions()[-1] in found["message"]
    assert "meadhall restore" in found["fix"]


async def test_database_behind_is_a_warning(cli, good, backend, tmp_path, stamp_database):
    first = shipped_revisions()[0]
    async with stamped(backend, tmp_path, stamp_database, first) as url:
        code, out = await doctor(cli, {**good, "DATABASE_URL": url})
    assert code == 0
    assert problems(out) == [("storage", "schema", "warning")]
    assert first in finding(out, "storage", "schema")["message"]
    assert "meadhall migrate" in finding(out, "storage", "schema")["fix"]


async def test_unreachable_redis(cli, good):
    closed = closed_port_url().rsplit(":", 1)[1]
    code, out = await doctor(cli, {**good, "REDIS_URL": f"redis://127.0.0.1:{closed}/0"})
    assert code == 11
    assert problems(out) == [("storage", "redis", "error")]
    assert "REDIS_URL" in finding(out, "storage", "redis")["fix"]


# ---- media (12) ----------------------------------------------------------------------------------------

async def test_media_server_refuses_wrong_keys(cli, good, standin):
    code, out = await doctor(cli, {**good, "MEDIA_API_SECRET": "another-secret-0123456789abcdef0123456789"})
    assert code == 12
    assert problems(out) == [("media", "server", "error")]
    found = finding(out, "media", "server")
    assert "HTTP 401" in found["message"] and "MEDIA_API_KEY" in found["fix"] and "MEDIA_API_SECRET" in found["fix"]
    assert standin.calls == [] and [m for m, _ in standin.refused] == ["ListRooms"]


async def test_media_server_unreachable(cli, good):
    url = closed_port_url()
    code, out = await doctor(cli, {**good, "MEDIA_API_URL": url})
    assert code == 12
    assert problems(out) == [("media", "server", "error")]
    found = finding(out, "media", "server")
    assert f"the media server at {url} cannot be reached" in found["message"] and "MEDIA_API_URL=" in found["fix"]


async def test_half_configured_media_keys(cli, good):
    code, out = await doctor(cli, {**good, "MEDIA_API_SECRET": ""})
    assert code == 12
    assert problems(out) == [("media", "keys", "error")]
    assert finding(out, "media", "keys")["fix"].startswith("set MEDIA_API_SECRET")


# ---- push (13) -----------------------------------------------------------------------------------------

# Named ids: the generated key differs per process, and pytest-xdist workers must collect the same tests.
@pytest.mark.parametrize("key", ["nonsense", VAPID["public_key"], "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----"],
                         ids=["nonsense", "public-key", "truncated-pem"])
async def test_bad_vapid_key(cli, good, key):
    code, out = await doctor(cli, {**good, "VAPID_PRIVATE_KEY": key})
    assert code == 13
    assert problems(out) == [("push", "vapid_key", "error")]
    found = finding(out, "push", "vapid_key")
    assert found["message"].startswith("VAPID_PRIVATE_KEY is not a P-256 private key")
    assert "meadhall vapid-keys" in found["fix"]


async def test_vapid_subject(cli, good):
    code, out = await doctor(cli, {**good, "VAPID_SUBJECT": "ops@example.com"})
    assert code == 13
    assert problems(out) == [("push", "vapid_subject", "error")]
    assert "VAPID_SUBJECT=mailto:" in finding(out, "push", "vapid_subject")["fix"]
    code, out = await doctor(cli, {**good, "VAPID_SUBJECT": ""})
    assert code == 13 and "''" in finding(out, "push", "vapid_subject")["message"]
    code, out = await doctor(cli, {**good, "VAPID_SUBJECT": None})  # unset: the default, mailto:admin@localhost
    assert code == 0 and problems(out) == [("push", "vapid_subject", "warning")]
    assert "mailto:admin@localhost" in finding(out, "push", "vapid_subject")["message"]


# ---- network (14) --------------------------------------------------------------------------------------

@pytest.mark.parametrize("value, bad", [
    ("0.0.0.0/0", "0.0.0.0/0"), ("10.1.2.0/24,::/0", "::/0"), ("169.254.169.254/32", "169.254.169.254/32")])
async def test_dangerous_outbound_networks(cli, good, value, bad):
    code, out = await doctor(cli, {**good, "OUTBOUND_ALLOWED_NETWORKS": value})
    assert code == 14
    assert problems(out) == [("network", "outbound_networks", "error")]
    found = finding(out, "network", "outbound_networks")
    assert found["message"].startswith(f"OUTBOUND_ALLOWED_NETWORKS: {bad}")
    assert found["fix"].startswith(f"remove {bad}")


async def test_loopback_outbound_network_is_a_warning(cli, good):
    code, out = await doctor(cli, {**good, "OUTBOUND_ALLOWED_NETWORKS": "127.0.0.2/32,10.1.2.0/24"})
    assert code == 0
    assert problems(out) == [("network", "outbound_networks", "warning")]
    assert "OUTBOUND_ALLOWED_NETWORKS=10.1.2.0/24" in finding(out, "network", "outbound_networks")["fix"]
