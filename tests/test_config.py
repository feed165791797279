"""Configuration (docs/reference/configuration.md): every variable's default, the derived values, one-line errors naming
the bad variable (also through `meadhall serve`), and the generated secret key."""

from __future__ import annotations

import stat
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from meadhall import config
from meadhall.config import ConfigError, Settings, load_settings
from tests.support.isolation import CONFIG_VARIABLES, clean_env


@pytest.fixture(autouse=True)
def no_config_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Start every test from an environment without configuration variables, in an empty directory
    (the DATA_DIR default is relative)."""
    for name in CONFIG_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)


def test_every_variable_has_its_documented_default() -> None:
    s = load_settings()
    assert s.DATA_DIR == Path("./data")
    assert s.database_url == f"sqlite+aiosqlite:///{Path('./data/chat.db').resolve()}"
    assert s.REDIS_URL is None
    assert s.DOMAIN == "localhost"
    assert s.PUBLIC_URL == "http://localhost:8000"
    assert s.TLS_ENABLED is False
    assert s.HOST == "0.0.0.0"
    assert s.PORT == 8000
    assert s.NODE_ID == 0
    assert s.REGISTRATION_ENABLED is True
    assert s.MAX_UPLOAD_SIZE == 26_214_400
    assert s.UNFURL_ENABLED is True
    assert s.VAPID_PRIVATE_KEY is None
    assert s.VAPID_SUBJECT == "mailto:admin@localhost"
    assert s.MEDIA_API_KEY is None
    assert s.MEDIA_API_SECRET is None
    assert s.MEDIA_API_URL == "http://127.0.0.1:7880"
    assert s.MEDIA_PUBLIC_URL == "ws://localhost:8000/rtc"
    assert s.SECRET_KEY is None
    assert s.SESSION_TTL_DAYS == 30
    assert s.SESSION_ROTATE_HOURS == 24
    assert s.LEAKED_PASSWORDS_FILE is None  # None = the bundled list
    assert s.RATE_LIMITS == {}
    assert s.TRUST_PROXY is False
    assert s.cors_origins == []
    assert s.LOG_LEVEL == "info"
    assert s.METRICS_ENABLED is False
    # Derived switches off by default.
    assert s.voice_enabled is False
    assert s.web_push_enabled is False
    assert s.gateway_url == "ws://localhost:8000/gateway"


def test_every_section_6_variable_is_a_setting() -> None:
    assert set(CONFIG_VARIABLES) <= set(Settings.model_fields)


def test_values_come_from_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    values = {
        "DATA_DIR": str(tmp_path / "elsewhere"), "DOMAIN": "chat.example.com", "HOST": "127.0.0.1", "PORT": "9000",
        "NODE_ID": "1023", "REGISTRATION_ENABLED": "false", "MAX_UPLOAD_SIZE": "1048576",
        "UNFURL_ENABLED": "0", "SESSION_TTL_DAYS": "7", "SESSION_ROTATE_HOURS": "1", "TRUST_PROXY": "true",
        "CORS_ALLOWED_ORIGINS": "https://a.example, https://b.example/", "LOG_LEVEL": "DEBUG",
        "RATE_LIMITS": '{"auth.register": "1000/3600", "global": "5000/60"}', "REDIS_URL": "redis://r:6379/0",
        "MEDIA_API_KEY": "k", "MEDIA_API_SECRET": "s", "VAPID_PRIVATE_KEY": "pem",
    }
    for k, v in values.items():
        monkeypatch.setenv(k, v)
    s = load_settings()
    assert s.DATA_DIR == tmp_path / "elsewhere"
    assert s.database_url == f"sqlite+aiosqlite:///{tmp_path / 'elsewhere' / 'chat.db'}"
    assert (s.DOMAIN, s.HOST, s.PORT, s.NODE_ID) == ("chat.example.com", "127.0.0.1", 9000, 1023)
    assert (s.REGISTRATION_ENABLED, s.UNFURL_ENABLED, s.TRUST_PROXY) == (False, False, True)
    assert (s.MAX_UPLOAD_SIZE, s.SESSION_TTL_DAYS, s.SESSION_ROTATE_HOURS) == (1_048_576, 7, 1)
    assert s.cors_origins == ["https://a.example", "https://b.example"]
    assert s.LOG_LEVEL == "debug"
    assert s.RATE_LIMITS == {"auth.register": "1000/3600", "global": "5000/60"}
    assert s.REDIS_URL == "redis://r:6379/0"
    assert s.voice_enabled and s.web_push_enabled
    # Defaults that follow DOMAIN.
    assert s.PUBLIC_URL == "http://chat.example.com:9000"
    assert s.VAPID_SUBJECT == "mailto:admin@chat.example.com"
    assert s.MEDIA_PUBLIC_URL == "ws://chat.example.com:9000/rtc"


def test_https_public_url_turns_tls_on(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DOMAIN", "chat.example.com")
    monkeypatch.setenv("PUBLIC_URL", "https://chat.example.com/")
    s = load_settings()
    assert s.TLS_ENABLED is True
    assert s.PUBLIC_URL == "https://chat.example.com"
    assert s.MEDIA_PUBLIC_URL == "wss://chat.example.com/rtc"
    assert s.gateway_url == "wss://chat.example.com/gateway"


def test_tls_on_gives_an_https_public_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DOMAIN", "chat.example.com")
    monkeypatch.setenv("TLS_ENABLED", "true")
    s = load_settings()
    assert s.PUBLIC_URL == "https://chat.example.com"
    assert s.MEDIA_PUBLIC_URL == "wss://chat.example.com/rtc"


def test_explicit_values_are_not_overridden_by_derivation(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PUBLIC_URL", "http://chat.example.com")
    monkeypatch.setenv("TLS_ENABLED", "false")
    monkeypatch.setenv("VAPID_SUBJECT", "mailto:ops@example.com")
    monkeypatch.setenv("MEDIA_PUBLIC_URL", "wss://media.example.com/rtc")
    s = load_settings()
    assert (s.PUBLIC_URL, s.TLS_ENABLED) == ("http://chat.example.com", False)
    assert s.VAPID_SUBJECT == "mailto:ops@example.com"
    assert s.MEDIA_PUBLIC_URL == "wss://media.example.com/rtc"


@pytest.mark.parametrize(("url", "expected"), [
    ("postgres://u:p@db:5432/chat", "postgresql+asyncpg://u:p@db:5432/chat"),
    ("postgresql://u:p@db/chat", "postgresql+asyncpg://u:p@db/chat"),
    ("sqlite:////var/lib/meadhall/chat.db", "sqlite+aiosqlite:////var/lib/meadhall/chat.db"),
])
def test_database_url_gets_the_async_driver(monkeypatch: pytest.MonkeyPatch, url: str, expected: str) -> None:
    monkeypatch.setenv("DATABASE_URL", url)
    assert load_settings().database_url == expected


@pytest.mark.parametrize(("name", "value"), [
    ("PORT", "abc"),
    ("PORT", "70000"),
    ("NODE_ID", "5000"),
    ("NODE_ID", "-1"),
    ("RATE_LIMITS", "nope"),
    ("RATE_LIMITS", '{"bogus": "1/1"}'),
    ("RATE_LIMITS", '{"global": "fast"}'),
    ("RATE_LIMITS", '["global"]'),
    ("LOG_LEVEL", "loud"),
    ("PUBLIC_URL", "chat.example.com"),
    ("MAX_UPLOAD_SIZE", "0"),
    ("TLS_ENABLED", "maybe"),
])
def test_invalid_value_raises_one_line_naming_the_variable(monkeypatch: pytest.MonkeyPatch, name: str,
                                                           value: str) -> None:
    monkeypatch.setenv(name, value)
    with pytest.raises(ConfigError) as info:
        load_settings()
    message = str(info.value)
    assert "\n" not in message
    assert name in message


def test_serve_with_an_invalid_port_exits_with_one_line_naming_it(tmp_path: Path) -> None:
    env = clean_env(PORT="abc", DATA_DIR=str(tmp_path / "data"), SECRET_KEY="x" * 32)
    proc = subprocess.run([sys.executable, "-m", "meadhall.cli.main", "serve"], env=env, capture_output=True,
                          text=True, timeout=30, cwd=tmp_path)
    assert proc.returncode != 0
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert "PORT" in lines[0]
    assert "Traceback" not in proc.stderr
    assert proc.stdout == ""


def test_generated_secret_key_is_private_and_reused(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    first = load_settings(DATA_DIR=data_dir)
    key = first.secret_key()

    path = data_dir / "secret.key"
    assert path.is_file()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert len(key) >= 32
    assert path.read_bytes().strip() == key
    # The same process and a later start read the same key back.
    assert first.secret_key() == key
    assert load_settings(DATA_DIR=data_dir).secret_key() == key
    # Another data directory gets another key.
    assert load_settings(DATA_DIR=tmp_path / "other").secret_key() != key


def test_key_file_being_written_by_another_process_is_waited_for(tmp_path: Path) -> None:
    """A second node starting together may find the file created but still empty: it must read the key
    the first node writes, never use an empty key."""
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    path = data_dir / "secret.key"
    path.touch(mode=0o600)  # created (O_EXCL) by the other process, not yet written
    writer = threading.Timer(0.2, path.write_bytes, args=(b"written-by-the-other-node-0123456789",))
    writer.start()
    try:
        key = load_settings(DATA_DIR=data_dir).secret_key()
    finally:
        writer.join()
    assert key == b"written-by-the-other-node-0123456789"


def test_an_empty_key_file_is_an_error_naming_secret_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                                          ) -> None:
    monkeypatch.setattr(config, "SECRET_KEY_FILE_WAIT", 0.1)
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    (data_dir / "secret.key").touch()
    with pytest.raises(ConfigError) as info:
        load_settings(DATA_DIR=data_dir).secret_key()
    assert "SECRET_KEY" in str(info.value) and "\n" not in str(info.value)


def test_secret_key_variable_wins_and_writes_no_file(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("SECRET_KEY", "from-the-environment-0123456789abcdef")
    s = load_settings(DATA_DIR=tmp_path / "data")
    assert s.secret_key() == b"from-the-environment-0123456789abcdef"
    assert not (tmp_path / "data" / "secret.key").exists()


def test_empty_optional_variables_mean_unset(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("REDIS_URL", "SECRET_KEY", "VAPID_PRIVATE_KEY", "MEDIA_API_KEY", "MEDIA_API_SECRET"):
        monkeypatch.setenv(name, "")
    s: Any = load_settings()
    assert (s.REDIS_URL, s.SECRET_KEY, s.VAPID_PRIVATE_KEY, s.MEDIA_API_KEY, s.MEDIA_API_SECRET) == (None,) * 5


@pytest.mark.parametrize(("env", "public_url", "gateway"), [
    ({"PORT": "9000"}, "http://localhost:9000", "ws://localhost:9000/gateway"),
    ({"PORT": "80"}, "http://localhost", "ws://localhost/gateway"),
    ({"TLS_ENABLED": "true", "DOMAIN": "chat.example.com"}, "https://chat.example.com", "wss://chat.example.com/gateway"),
    ({"PUBLIC_URL": "https://chat.example.com/"}, "https://chat.example.com", "wss://chat.example.com/gateway"),
])
def test_public_url_default_carries_the_listen_port(monkeypatch: pytest.MonkeyPatch, env: dict[str, str],
                                                    public_url: str, gateway: str) -> None:
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    s = load_settings()
    assert s.PUBLIC_URL == public_url
    assert s.gateway_url == gateway


def test_serve_port_flag_is_the_port_of_the_default_public_url() -> None:
    from meadhall.cli.settings import settings_for
    assert settings_for(None, 8123).PUBLIC_URL == "http://localhost:8123"


@pytest.mark.parametrize("value", ["*", "https://a.example, *"])
def test_wildcard_cors_origin_is_refused_at_start(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv("CORS_ALLOWED_ORIGINS", value)
    with pytest.raises(ConfigError) as info:
        load_settings()
    assert "CORS_ALLOWED_ORIGINS" in str(info.value) and "*" in str(info.value)


def test_short_secret_key_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SECRET_KEY", "x" * 31)
    with pytest.raises(ConfigError) as info:
        load_settings()
    assert "SECRET_KEY" in str(info.value) and "32" in str(info.value)
    monkeypatch.setenv("SECRET_KEY", "x" * 32)
    assert load_settings().secret_key() == b"x" * 32


def test_metrics_switch_reads_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("METRICS_ENABLED", "true")
    assert load_settings().METRICS_ENABLED is True


def test_data_dir_is_created_owner_only(tmp_path: Path) -> None:
    s = load_settings(DATA_DIR=tmp_path / "fresh" / "data")
    s.secret_key()
    assert ((tmp_path / "fresh" / "data").stat().st_mode & 0o777) == 0o700
    assert ((tmp_path / "fresh" / "data" / "secret.key").stat().st_mode & 0o777) == 0o600
