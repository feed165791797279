"""The user commands of `meadhall` (docs/operations.md), checked through their output and through HTTP."""

from __future__ import annotations

import asyncio
import fcntl
import json
import os
import select as io_select
import stat
import subprocess
import sys
import termios
import time
from pathlib import Path
from typing import Any

import pyotp
import pytest
from sqlalchemy import select

from meadhall.db.schema import audit_log
from tests.support.accounts import bearer, login
from tests.support.personas import PASSWORD as PASSWORD_OF_ACCOUNTS


async def test_create_user_single_can_sign_in_even_with_registration_disabled(cli, client):
    r = await cli("create-user", "--username", "bob", "--email", "bob@example.com",
                  env={"REGISTRATION_ENABLED": "false"})
    assert r.exit_code == 0, r.stderr
    out = r.json
    assert out["sessions_file"] is None
    [user] = out["users"]
    assert user["username"] == "bob" and user["email"] == "bob@example.com"
    assert len(user["password"]) == 20
    resp = await login(client, "bob", user["password"])
    assert resp.status_code == 200
    assert resp.json()["user"]["id"] == user["id"]


async def test_create_user_given_password_must_satisfy_policy(cli, client):
    r = await cli("create-user", "--username", "bob", "--email", "bob@example.com", "--password", "short")
    assert r.exit_code == 1
    assert r.error["code"] == "validation.failed"
    assert (await login(client, "bob", "short")).status_code == 401


async def test_bulk_names_and_emails(cli):
    r = await cli("create-user", "--count", "3", "--prefix", "load")
    assert r.exit_code == 0, r.stderr
    users = r.json["users"]
    assert [u["username"] for u in users] == ["load1", "load2", "load3"]
    # DOMAIN=localhost has no dot: the reserved example.invalid domain is used.
    assert [u["email"] for u in users] == [f"load{i}@example.invalid" for i in (1, 2, 3)]
    assert len({u["password"] for u in users}) == 3


async def test_bulk_uses_domain_with_a_dot(cli):
    r = await cli("create-user", "--count", "1", env={"DOMAIN": "chat.example.com"})
    assert r.exit_code == 0, r.stderr
    assert r.json["users"][0]["email"] == "user1@chat.example.com"


async def test_bulk_is_all_or_nothing(cli, client):
    assert (await cli("create-user", "--username", "p2", "--email", "other@example.com")).exit_code == 0
    r = await cli("create-user", "--count", "3", "--prefix", "p")
    assert r.exit_code == 1
    assert r.error["code"] == "user.username_taken"
    assert r.stdout.strip() == ""
    # p1 was not kept: it can be created now.
    again = await cli("create-user", "--username", "p1", "--email", "p1@example.invalid")
    assert again.exit_code == 0, again.stderr


async def test_sessions_file_is_private_and_tokens_work(cli, client, tmp_path):
    path = tmp_path / "creds.jsonl"
    r = await cli("create-user", "--count", "2", "--sessions", str(path))
    assert r.exit_code == 0, r.stderr
    out = r.json
    assert out["sessions_file"] == str(path)
    assert all("password" not in u for u in out["users"])
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert [set(x) for x in lines] == [{"id", "username", "email", "password", "token"}] * 2
    me = await client.get("/api/v1/users/@me", headers={"Authorization": f"Bearer {lines[0]['token']}"})
    assert me.status_code == 200 and me.json()["user"]["username"] == "user1"
    sessions = await client.get("/api/v1/auth/sessions", headers={"Authorization": f"Bearer {lines[0]['token']}"})
    [session] = sessions.json()["sessions"]
    assert session["method"] == "cli"
    assert session["step_up_expires_at"] is None  # CLI sessions are not stepped up
    assert (await login(client, lines[1]["username"], lines[1]["password"])).status_code == 200


async def test_sessions_file_is_never_overwritten(cli, client, tmp_path):
    path = tmp_path / "creds.jsonl"
    path.write_text("keep me\n")
    r = await cli("create-user", "--count", "1", "--sessions", str(path))
    assert r.exit_code == 1
    assert path.read_text() == "keep me\n"
    assert (await cli("create-user", "--count", "1")).exit_code == 0  # user1 was not created before


async def test_usage_errors_exit_2(cli):
    assert (await cli("create-user", "--username", "only")).exit_code == 2
    assert (await cli("create-user", "--count", "2", "--username", "x", "--email", "x@example.com")).exit_code == 2
    assert (await cli("make-admin")).exit_code == 2


async def test_reset_password_revokes_all_sessions(cli, client, accounts, capture_events):
    a = await accounts.register("alice")
    r = await cli("reset-password", "--email", "alice@example.com")
    assert r.exit_code == 0, r.stderr
    new_password = r.json["password"]
    assert r.json["user_id"] == a.id
    assert (await client.get("/api/v1/users/@me", headers=a.headers)).status_code == 401
    assert (await login(client, "alice", a["password"])).status_code == 401
    assert (await login(client, "alice", new_password)).status_code == 200


async def test_reset_password_with_given_password(cli, client, accounts):
    await accounts.register("alice")
    r = await cli("reset-password", "--email", "ALICE@example.com", "--password", "a fresh long passphrase")
    assert r.exit_code == 0, r.stderr
    assert "password" not in r.json
    assert (await login(client, "alice", "a fresh long passphrase")).status_code == 200
    weak = await cli("reset-password", "--email", "alice@example.com", "--password", "qwertyuiop")
    assert weak.exit_code == 1 and weak.error["code"] == "validation.failed"


async def test_unknown_email_is_user_not_found(cli):
    for command in ("reset-password", "make-admin", "remove-admin", "totp-setup", "totp-reset"):
        r = await cli(command, "--email", "nobody@example.com")
        assert r.exit_code == 1, command
        assert r.error["code"] == "user.not_found"
        assert r.stdout.strip() == ""


async def test_make_admin_requires_2fa_at_sign_in_and_is_audited(cli, client, accounts, rt):
    a = await accounts.register("alice")
    r = await cli("make-admin", "--email", "alice@example.com")
    assert r.exit_code == 0, r.stderr
    assert r.json == {"user_id": a.id, "is_instance_admin": True, "totp_enabled": False}
    resp = await login(client, "alice", a["password"])
    assert resp.status_code == 403
    assert resp.json()["error"]["code"] == "auth.2fa_enrollment_required"
    assert resp.json()["error"]["hint"] == "meadhall totp-setup --email alice@example.com"
    b = await accounts.register("bob")
    summary = await client.get(f"/api/v1/users/{a.id}", headers=b.headers)
    assert summary.json()["user"]["badges"] == ["instance_admin"]
    async with rt.engine.connect() as conn:
        rows = (await conn.execute(select(audit_log).where(audit_log.c.action == "instance.admin_grant"))).mappings().all()
    assert len(rows) == 1
    assert rows[0]["actor_id"] is None and rows[0]["target_id"] == int(a.id)


async def test_remove_admin_refuses_the_last_one(cli, accounts, rt):
    await accounts.register("alice")
    await accounts.register("bob")
    assert (await cli("make-admin", "--email", "alice@example.com")).exit_code == 0
    last = await cli("remove-admin", "--email", "alice@example.com")
    assert last.exit_code == 1 and last.error["code"] == "instance.last_admin"
    assert (await cli("make-admin", "--email", "bob@example.com")).exit_code == 0
    r = await cli("remove-admin", "--email", "alice@example.com")
    assert r.exit_code == 0, r.stderr
    assert r.json["is_instance_admin"] is False
    async with rt.engine.connect() as conn:
        actions = (await conn.execute(select(audit_log.c.action))).scalars().all()
    assert actions.count("instance.admin_revoke") == 1


async def test_totp_setup_then_sign_in_with_code_and_backup_code(cli, client, accounts):
    a = await accounts.register("alice")
    r = await cli("totp-setup", "--email", "alice@example.com")
    assert r.exit_code == 0, r.stderr
    out = r.json
    assert out["otpauth_url"].startswith("otpauth://totp/")
    assert len(out["backup_codes"]) == 8
    assert (await login(client, "alice", a["password"])).json()["error"]["code"] == "auth.2fa_required"
    code = pyotp.TOTP(out["secret"]).now()
    ok = await login(client, "alice", a["password"], totp_code=code)
    assert ok.status_code == 200 and ok.json()["totp_enabled"] is True
    ok2 = await login(client, "alice", a["password"], backup_code=out["backup_codes"][0])
    assert ok2.status_code == 200
    again = await cli("totp-setup", "--email", "alice@example.com")
    assert again.exit_code == 1 and again.error["code"] == "auth.2fa_already_enabled"
    forced = await cli("totp-setup", "--email", "alice@example.com", "--force")
    assert forced.exit_code == 0 and forced.json["secret"] != out["secret"]
    # The old backup codes were replaced.
    old = await login(client, "alice", a["password"], backup_code=out["backup_codes"][1])
    assert old.json()["error"]["code"] == "auth.invalid_code"


async def test_totp_reset_disables_second_factor(cli, client, accounts):
    a = await accounts.register("alice")
    assert (await cli("totp-setup", "--email", "alice@example.com")).exit_code == 0
    r = await cli("totp-reset", "--email", "alice@example.com")
    assert r.exit_code == 0, r.stderr
    assert r.json == {"user_id": a.id, "totp_enabled": False}
    # Not an administrator: the sessions stay (docs/operations.md deletes them for administrators only).
    assert (await client.get(ME, headers=a.headers)).status_code == 200
    assert (await login(client, "alice", a["password"])).status_code == 200
    again = await cli("totp-reset", "--email", "alice@example.com")
    assert again.exit_code == 1 and again.error["code"] == "auth.2fa_not_enabled"


ME = "/api/v1/users/@me"


async def admin_view_of(client, headers, owner) -> int:
    """The status of GET /guilds/{id} of a guild the caller is no member of: 200 only for administrators."""
    r = await client.post("/api/v1/guilds", json={"name": "Elsewhere"}, headers=owner.headers)
    assert r.status_code == 201, r.text
    return (await client.get(f"/api/v1/guilds/{r.json()['guild']['id']}", headers=headers)).status_code


async def test_make_admin_deletes_the_sessions_opened_before_it(cli, client, accounts):
    """A session opened without the administrator's second factor never holds the power (docs/operations.md)."""
    a = await accounts.register("alice")
    other = await login(client, "alice", a["password"])
    client.cookies.clear()
    for _ in range(2):  # the second answer comes from the session cache
        assert (await client.get(ME, headers=a.headers)).status_code == 200
    assert (await cli("make-admin", "--email", "alice@example.com")).exit_code == 0
    for headers in (a.headers, bearer(other.json()["token"])):
        r = await client.get(ME, headers=headers)
        assert r.status_code == 401 and r.json()["error"]["code"] == "auth.unauthorized"
    # Granting again (already an administrator) changes nothing.
    assert (await cli("make-admin", "--email", "alice@example.com")).exit_code == 0


async def test_create_user_admin_sessions_hold_administrator_power(cli, client, accounts, tmp_path):
    owner = await accounts.register("owner")
    path = tmp_path / "admin.jsonl"
    r = await cli("create-user", "--username", "root", "--email", "root@example.com", "--admin",
                  "--sessions", str(path))
    assert r.exit_code == 0, r.stderr
    [line] = [json.loads(x) for x in path.read_text().splitlines()]
    me = await client.get(ME, headers=bearer(line["token"]))
    assert me.status_code == 200 and me.json()["user"]["is_instance_admin"] is True
    assert await admin_view_of(client, bearer(line["token"]), owner) == 200
    assert await admin_view_of(client, owner.headers, owner) == 200  # the owner is a member
    assert await admin_view_of(client, (await accounts.register("bob")).headers, owner) == 404


async def test_remove_admin_deletes_no_session(cli, client, accounts, tmp_path):
    await accounts.register("owner")  # a second administrator, so that root's removal is allowed
    path = tmp_path / "admins.jsonl"
    assert (await cli("create-user", "--username", "root", "--email", "root@example.com", "--admin",
                      "--sessions", str(path))).exit_code == 0
    assert (await cli("make-admin", "--email", "owner@example.com")).exit_code == 0
    token = json.loads(path.read_text())["token"]
    assert (await cli("remove-admin", "--email", "root@example.com")).exit_code == 0
    assert (await client.get(ME, headers=bearer(token))).status_code == 200
    assert await admin_view_of(client, bearer(token), (await accounts.register("carol"))) == 404


async def test_totp_reset_of_an_administrator_deletes_their_sessions(cli, client, accounts, tmp_path):
    await accounts.register("alice")
    assert (await cli("make-admin", "--email", "alice@example.com")).exit_code == 0
    secret = (await cli("totp-setup", "--email", "alice@example.com")).json["secret"]
    signed_in = await login(client, "alice", PASSWORD_OF_ACCOUNTS, totp_code=pyotp.TOTP(secret).now())
    client.cookies.clear()
    assert signed_in.status_code == 200, signed_in.text
    token = signed_in.json()["token"]
    assert (await client.get(ME, headers=bearer(token))).status_code == 200
    r = await cli("totp-reset", "--email", "alice@example.com")
    assert r.exit_code == 0, r.stderr
    assert (await client.get(ME, headers=bearer(token))).status_code == 401
    # Until enrolled again, the password alone does not sign the administrator in.
    again = await login(client, "alice", PASSWORD_OF_ACCOUNTS)
    assert again.status_code == 403 and again.json()["error"]["code"] == "auth.2fa_enrollment_required"


def test_real_process_prints_one_json_object(tmp_path):
    """The console script itself: one JSON object on stdout, exit 0; errors on stderr, exit 1."""
    import subprocess
    import sys
    from pathlib import Path

    exe = Path(sys.executable).parent / "meadhall"
    env = {**os.environ, "SECRET_KEY": "k" * 40, "DATA_DIR": str(tmp_path / "d")}
    env.pop("DATABASE_URL", None)
    env.pop("REDIS_URL", None)
    ok = subprocess.run([str(exe), "create-user", "--username", "z1", "--email", "z1@example.com"],
                        capture_output=True, text=True, env=env, timeout=60)
    assert ok.returncode == 0, ok.stderr
    assert len(ok.stdout.strip().splitlines()) == 1
    assert json.loads(ok.stdout)["users"][0]["username"] == "z1"
    dup = subprocess.run([str(exe), "create-user", "--username", "Z1", "--email", "other@example.com"],
                         capture_output=True, text=True, env=env, timeout=60)
    assert dup.returncode == 1
    assert dup.stdout == ""
    assert json.loads(dup.stderr.strip().splitlines()[-1])["error"]["code"] == "user.username_taken"


# ---- passwords typed, not passed as arguments; bulk hashing --------------------------------------------------------


def run_cli(cli_env: dict[str, str], *args: str, **kw: Any) -> subprocess.CompletedProcess[str]:
    """The console script in a process of its own (no controlling terminal), on the test's database."""
    exe = Path(sys.executable).parent / "meadhall"
    env = {**os.environ, **cli_env}
    return subprocess.run([str(exe), *args], capture_output=True, text=True, env=env, timeout=60,
                          start_new_session=True, **kw)


@pytest.mark.parametrize("flag", [["--password-prompt"], ["--password", "-"]])
async def test_create_user_reads_the_password_from_standard_input(cli_env, client, flag):
    passphrase = "typed, never on the command line"
    r = await asyncio.to_thread(run_cli, cli_env, "create-user", "--username", "bob", "--email", "bob@example.com",
                                *flag, input=passphrase + "\n")
    assert r.returncode == 0, r.stderr
    assert len(r.stdout.strip().splitlines()) == 1
    assert (await login(client, "bob", passphrase)).status_code == 200


async def test_reset_password_reads_the_password_from_standard_input(cli_env, client, accounts):
    await accounts.register("alice")
    r = await asyncio.to_thread(run_cli, cli_env, "reset-password", "--email", "alice@example.com",
                                "--password-prompt", input="a brand new passphrase\n")
    assert r.returncode == 0, r.stderr
    assert "password" not in json.loads(r.stdout)
    assert (await login(client, "alice", "a brand new passphrase")).status_code == 200


async def test_prompted_password_must_satisfy_the_policy_and_not_be_empty(cli_env, client):
    weak = await asyncio.to_thread(run_cli, cli_env, "create-user", "--username", "bob", "--email",
                                   "bob@example.com", "--password-prompt", input="qwertyuiop\n")
    assert weak.returncode == 1 and json.loads(weak.stderr.splitlines()[-1])["error"]["code"] == "validation.failed"
    empty = await asyncio.to_thread(run_cli, cli_env, "create-user", "--username", "bob", "--email",
                                    "bob@example.com", "--password-prompt", input="")
    assert empty.returncode == 2 and empty.stdout == ""
    assert (await login(client, "bob", "qwertyuiop")).status_code == 401


async def test_bulk_takes_no_password(cli):
    assert (await cli("create-user", "--count", "2", "--password-prompt")).exit_code == 2
    assert (await cli("create-user", "--count", "2", "--password", "a long enough passphrase")).exit_code == 2


class Terminal:
    """A pseudo-terminal that becomes the controlling terminal of one child process (stdin and stderr;
    stdout stays a pipe for the JSON answer)."""

    def __init__(self) -> None:
        self.master, self.slave = os.openpty()
        self.seen = b""
        self.pos = 0  # output before this was matched already

    def start(self, cli_env: dict[str, str], *args: str) -> subprocess.Popen[bytes]:
        def take_terminal() -> None:  # in the child, after setsid: make stdin's terminal the controlling one
            fcntl.ioctl(0, termios.TIOCSCTTY, 0)

        exe = Path(sys.executable).parent / "meadhall"
        proc = subprocess.Popen([str(exe), *args], stdin=self.slave, stdout=subprocess.PIPE, stderr=self.slave,
                                env={**os.environ, **cli_env, "TERM": "xterm", "COLUMNS": "100"},
                                start_new_session=True, preexec_fn=take_terminal)  # noqa: PLW1509
        os.close(self.slave)
        return proc

    def read_until(self, text: bytes, timeout: float = 30) -> None:
        """Wait for `text` in the output after the previous match (getpass discards typed-ahead input,
        so each line is typed only once its prompt shows)."""
        deadline = time.monotonic() + timeout
        while text not in self.seen[self.pos:]:
            left = deadline - time.monotonic()
            assert left > 0, f"{text!r} not shown; terminal: {self.seen!r}"
            ready, _, _ = io_select.select([self.master], [], [], left)
            if ready:
                try:
                    chunk = os.read(self.master, 4096)
                except OSError:  # the child closed the terminal
                    chunk = b""
                assert chunk, f"{text!r} not shown; terminal: {self.seen!r}"
                self.seen += chunk
        self.pos = self.seen.index(text, self.pos) + len(text)

    def drain(self) -> None:
        while io_select.select([self.master], [], [], 0.2)[0]:
            try:
                chunk = os.read(self.master, 4096)
            except OSError:
                return
            if not chunk:
                return
            self.seen += chunk

    def wait(self, proc: subprocess.Popen[bytes], timeout: float) -> None:
        """Until the child exits, reading what it draws: a terminal holds a few kilobytes, and a child
        whose progress bar fills it would wait for a reader forever."""
        deadline = time.monotonic() + timeout
        while proc.poll() is None:
            assert time.monotonic() < deadline, f"still running after {timeout} s; terminal: {self.seen[-500:]!r}"
            self.drain()

    def type(self, line: str) -> None:
        os.write(self.master, line.encode() + b"\n")

    def close(self) -> None:
        os.close(self.master)


def test_on_a_terminal_the_password_is_hidden_and_asked_twice(cli_env):
    term = Terminal()
    proc = term.start(cli_env, "create-user", "--username", "tty", "--email", "tty@example.com", "--password-prompt")
    try:
        term.read_until(b"Password: ")
        term.type("first try of a passphrase")
        term.read_until(b"Repeat for confirmation: ")
        term.type("second try, not the same")
        term.read_until(b"do not match")  # asked again
        term.read_until(b"Password: ")
        term.type("one good passphrase here")
        term.read_until(b"Repeat for confirmation: ")
        term.type("one good passphrase here")
        out, _ = proc.communicate(timeout=60)
        term.drain()
    finally:
        if proc.poll() is None:
            proc.kill()
        term.close()
    assert proc.returncode == 0
    assert json.loads(out)["users"][0]["password"] == "one good passphrase here"
    assert b"passphrase" not in term.seen  # never echoed


def test_bulk_on_a_terminal_shows_progress_and_creates_every_user(cli_env, tmp_path):
    term = Terminal()
    proc = term.start(cli_env, "create-user", "--count", "10", "--prefix", "tty")  # real hashes: a few
    try:
        term.wait(proc, timeout=120)
        out, _ = proc.communicate(timeout=10)
        term.drain()
    finally:
        if proc.poll() is None:
            proc.kill()
        term.close()
    assert proc.returncode == 0, term.seen
    assert [u["username"] for u in json.loads(out)["users"]] == [f"tty{i}" for i in range(1, 11)]
    assert b"Hashing passwords" in term.seen
    # Without a terminal, no progress bar: nothing but the JSON answer on stdout and no drawing on stderr.
    plain = run_cli(cli_env, "create-user", "--count", "3", "--prefix", "pipe")
    assert plain.returncode == 0, plain.stderr
    assert "Hashing" not in plain.stderr and "\x1b[" not in plain.stderr
