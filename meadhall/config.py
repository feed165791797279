"""Service configuration: every variable of docs/reference/configuration.md, read from the environment.

Invalid values stop the start with one line naming the variable (see `load_settings`).
"""

from __future__ import annotations

import ipaddress
import json
import os
import secrets
import time
from pathlib import Path
from typing import Annotated, Any

from pydantic import Field, ValidationError, field_validator, model_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from meadhall.core.ratelimit import BUCKETS, parse_override

SECRET_KEY_MIN_BYTES = 32


class ConfigError(Exception):
    """A configuration value is invalid; the message is one line naming the variable."""


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="", case_sensitive=True, extra="ignore")

    DATA_DIR: Path = Field(default=Path("./data"), description=(
        "data directory: the SQLite database, uploaded files (`DATA_DIR/files/`) and the generated secret key; "
        "the CLI works against it"))
    DATABASE_URL: str | None = Field(default=None, description=(
        "SQLAlchemy URL, `sqlite:///path` or `postgresql://user@host/db` (driven through asyncpg); "
        "unset = `sqlite:///<DATA_DIR>/chat.db`"))
    REDIS_URL: str | None = Field(default=None, description=(
        "Redis for the event bus, rate limits, presence and resume buffers; unset = single-node mode with "
        "in-process equivalents; required for more than one node"))
    REDIS_MAX_CONNECTIONS: int = Field(default=100, ge=1, le=10_000, description=(
        "Redis connections one node opens for commands (the bus subscriber has its own); a command beyond "
        "them waits up to 3 s for one to come free, then the request answers 503 `service.unavailable`"))
    DOMAIN: str = Field(default="localhost", description=(
        "public host name: invitation links, WebAuthn RP ID; an IP address turns passkeys off"))
    PUBLIC_URL: str | None = Field(default=None, description=(
        "external origin (links, Origin checks, WebAuthn origin, gateway URL); unset = `https://<DOMAIN>` "
        "when TLS_ENABLED, else `http://<DOMAIN>:<PORT>` (`:80` left out)"))
    TLS_ENABLED: bool | None = Field(default=None, description=(
        "`wss://` rather than `ws://` for the gateway; unset = true when PUBLIC_URL starts with `https://` "
        "(the session cookie is `Secure` always)"))
    HOST: str = Field(default="0.0.0.0", description="listen address of `meadhall serve`")  # noqa: S104 - the documented default
    PORT: int = Field(default=8000, ge=1, le=65535, description="listen port of `meadhall serve`")
    NODE_ID: int = Field(default=0, ge=0, le=1023, description="snowflake node id; unique per node")
    REGISTRATION_ENABLED: bool = Field(default=True, description="whether anyone may register an account")
    MAX_UPLOAD_SIZE: int = Field(default=26_214_400, ge=1, description="attachment size limit in bytes; 25 MiB by default")
    UNFURL_ENABLED: bool = Field(default=True, description="`false` disables link previews")
    VAPID_PRIVATE_KEY: str | None = Field(default=None, description=(
        "Web Push key, PKCS#8 (PEM or base64url DER), the public key derived from it; unset = Web Push off"))
    VAPID_SUBJECT: str | None = Field(default=None, description=(
        "VAPID `sub` claim; unset = `mailto:admin@<DOMAIN>`"))
    OUTBOUND_ALLOWED_NETWORKS: str = Field(default="", description=(
        "comma-separated CIDRs (e.g. `10.1.2.0/24,127.0.0.2/32`) that the outbound address guard of link "
        "previews and Web Push lets through although private or loopback (docs/outbound.md); empty = none"))
    MEDIA_API_KEY: str | None = Field(default=None, description=(
        "media-server (LiveKit) API key; voice is on when key and secret are set"))
    MEDIA_API_SECRET: str | None = Field(default=None, description=(
        "media-server secret (signs its tokens, verifies its webhooks)"))
    MEDIA_API_URL: str = Field(default="http://127.0.0.1:7880", description=(
        "internal administration address of the media server"))
    MEDIA_PUBLIC_URL: str | None = Field(default=None, description=(
        "address clients connect to for media; unset = `ws(s)://<public host>/rtc`"))
    SECRET_KEY: str | None = Field(default=None, description=(
        "master key (at least 32 bytes) for field encryption, blind indexes and TOTP secrets; unset = "
        "generated at first start into `DATA_DIR/secret.key` (mode 0600). Back it up: without it emails and "
        "two-factor secrets cannot be read"))
    SESSION_TTL_DAYS: int = Field(default=30, ge=1, le=3650, description="sliding session lifetime in days")
    SESSION_ROTATE_HOURS: int = Field(default=24, ge=1, le=87600, description=(
        "token age in hours after which a session token is rotated on use"))
    LEAKED_PASSWORDS_FILE: Path | None = Field(default=None, description=(
        "local leaked-password list, one password per line; unset = the bundled list of 10 000"))
    RATE_LIMITS: Annotated[dict[str, str], NoDecode] = Field(default_factory=dict, description=(
        "JSON object overriding rate-limit buckets (docs/reference/limits.md) as `count/seconds`, e.g. "
        "`{\"auth.register\": \"1000/3600\", \"global\": \"5000/60\"}`"))
    TRUST_PROXY: bool = Field(default=False, description=(
        "when true, the client address comes from the last `X-Forwarded-For` entry (the one your proxy "
        "added), the scheme from `X-Forwarded-Proto`, and an incoming `X-Request-ID` is kept"))
    CORS_ALLOWED_ORIGINS: str = Field(default="", description=(
        "comma-separated origins allowed cross-origin with credentials (`*` refused); empty = same-origin only"))
    LOG_LEVEL: str = Field(default="info", description="`debug`, `info`, `warning`, `error` or `critical`")
    METRICS_ENABLED: bool = Field(default=False, description=(
        "when true, `GET /metrics` (outside `/api/v1`) answers the Prometheus text format; else 404"))

    @field_validator("DOMAIN")
    @classmethod
    def _domain(cls, value: str) -> str:
        value = value.strip()
        if not value or "/" in value or " " in value:
            raise ValueError("must be a bare host name such as chat.example.com")
        return value

    @field_validator("PUBLIC_URL")
    @classmethod
    def _public_url(cls, value: str | None) -> str | None:
        if value is None or value == "":
            return None
        value = value.rstrip("/")
        if not value.startswith(("http://", "https://")):
            raise ValueError("must start with http:// or https://")
        return value

    @field_validator("RATE_LIMITS", mode="before")
    @classmethod
    def _rate_limits(cls, value: Any) -> Any:
        if isinstance(value, str):
            try:
                value = json.loads(value) if value.strip() else {}
            except json.JSONDecodeError:
                raise ValueError('must be a JSON object like {"global": "5000/60"}') from None
        if not isinstance(value, dict):
            raise ValueError('must be a JSON object like {"global": "5000/60"}')
        for bucket, spec in value.items():
            if bucket not in BUCKETS:
                raise ValueError(f"unknown bucket {bucket!r}")
            parse_override(str(spec))
        return {str(k): str(v) for k, v in value.items()}

    @field_validator("LOG_LEVEL")
    @classmethod
    def _log_level(cls, value: str) -> str:
        value = value.lower()
        if value not in {"debug", "info", "warning", "error", "critical"}:
            raise ValueError("must be one of debug, info, warning, error, critical")
        return value

    @field_validator("CORS_ALLOWED_ORIGINS")
    @classmethod
    def _cors(cls, value: str) -> str:
        # Credentials (the session cookie) are allowed cross-origin for listed origins, so a wildcard
        # would hand every signed-in session to every web site (docs/reference/configuration.md).
        if any(o.strip() == "*" for o in value.split(",")):
            raise ValueError("'*' is refused: list the allowed origins, e.g. https://chat.example.com")
        return value

    @field_validator("OUTBOUND_ALLOWED_NETWORKS")
    @classmethod
    def _outbound_networks(cls, value: str) -> str:
        for part in value.split(","):
            if part.strip():
                try:
                    ipaddress.ip_network(part.strip(), strict=False)
                except ValueError:
                    raise ValueError(f"{part.strip()!r} is not a CIDR such as 10.1.2.0/24") from None
        return value

    @field_validator("SECRET_KEY")
    @classmethod
    def _secret_key(cls, value: str | None) -> str | None:
        # Every derived key (email encryption, blind index, TOTP secrets) is only as strong as this one.
        if value and len(value.encode()) < SECRET_KEY_MIN_BYTES:
            raise ValueError(f"must be at least {SECRET_KEY_MIN_BYTES} bytes long (leave it unset to generate one)")
        return value

    @field_validator("VAPID_PRIVATE_KEY", "MEDIA_API_KEY", "MEDIA_API_SECRET", "REDIS_URL", "SECRET_KEY")
    @classmethod
    def _empty_is_unset(cls, value: str | None) -> str | None:
        return value or None

    @model_validator(mode="after")
    def _derive(self) -> Settings:
        # PUBLIC_URL and TLS_ENABLED default from each other (docs/reference/configuration.md).
        if self.PUBLIC_URL is None:
            if self.TLS_ENABLED:
                self.PUBLIC_URL = f"https://{self.DOMAIN}"
            else:
                port = "" if self.PORT == 80 else f":{self.PORT}"
                self.PUBLIC_URL = f"http://{self.DOMAIN}{port}"
        if self.TLS_ENABLED is None:
            self.TLS_ENABLED = self.PUBLIC_URL.startswith("https://")
        if self.VAPID_SUBJECT is None:
            self.VAPID_SUBJECT = f"mailto:admin@{self.DOMAIN}"
        if self.MEDIA_PUBLIC_URL is None:
            scheme = "wss" if self.TLS_ENABLED else "ws"
            self.MEDIA_PUBLIC_URL = f"{scheme}://{self.public_host}/rtc"
        return self

    # ---- derived values -------------------------------------------------------------

    @property
    def database_url(self) -> str:
        """The SQLAlchemy async URL: `sqlite+aiosqlite` (served by the inline driver, db/engine.py) for
        SQLite, asyncpg for PostgreSQL."""
        url = self.DATABASE_URL or f"sqlite:///{(self.DATA_DIR / 'chat.db').resolve()}"
        for prefix, driver in (
            ("sqlite:", "sqlite+aiosqlite:"),
            ("postgresql:", "postgresql+asyncpg:"),
            ("postgres:", "postgresql+asyncpg:"),
        ):
            if url.startswith(prefix):
                return driver + url[len(prefix):]
        return url

    @property
    def public_origin(self) -> str:
        assert self.PUBLIC_URL is not None
        scheme, rest = self.PUBLIC_URL.split("://", 1)
        return f"{scheme}://{rest.split('/', 1)[0]}"

    @property
    def passkeys_enabled(self) -> bool:
        """WebAuthn needs a host name as its RP ID: a DOMAIN that is an IP address turns passkeys off."""
        try:
            ipaddress.ip_address(self.DOMAIN.strip("[]"))
        except ValueError:
            return True
        return False

    @property
    def public_host(self) -> str:
        """`host[:port]` of PUBLIC_URL."""
        return self.public_origin.split("://", 1)[1]

    @property
    def gateway_url(self) -> str:
        assert self.PUBLIC_URL is not None
        scheme = "wss" if self.TLS_ENABLED else "ws"
        return f"{scheme}://{self.PUBLIC_URL.split('://', 1)[1]}/gateway"

    @property
    def voice_enabled(self) -> bool:
        return bool(self.MEDIA_API_KEY and self.MEDIA_API_SECRET)

    @property
    def web_push_enabled(self) -> bool:
        return bool(self.VAPID_PRIVATE_KEY)

    @property
    def cors_origins(self) -> list[str]:
        return [o.strip().rstrip("/") for o in self.CORS_ALLOWED_ORIGINS.split(",") if o.strip()]

    def secret_key(self) -> bytes:
        """The master key: SECRET_KEY, else DATA_DIR/secret.key, generated (mode 0600) at first start."""
        if self.SECRET_KEY:
            return self.SECRET_KEY.encode()
        path = self.DATA_DIR / "secret.key"
        if path.exists():
            return _read_key_file(path)
        ensure_data_dir(self.DATA_DIR)
        key = secrets.token_urlsafe(48).encode()
        # O_EXCL: two processes starting together must not both write a different key.
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            return _read_key_file(path)
        with os.fdopen(fd, "wb") as fh:
            fh.write(key)
        return key


SECRET_KEY_FILE_WAIT = 5.0  # seconds


def ensure_data_dir(path: Path) -> None:
    """Create DATA_DIR owner-only (docs/reference/configuration.md): it holds the database, the files and the key."""
    path.mkdir(mode=0o700, parents=True, exist_ok=True)


def _read_key_file(path: Path) -> bytes:
    """The key in `path`. A process starting at the same moment may have created the file and not yet
    written it: wait for the content rather than use an empty key."""
    deadline = time.monotonic() + SECRET_KEY_FILE_WAIT
    while True:
        key = path.read_bytes().strip()
        if key:
            return key
        if time.monotonic() >= deadline:
            raise ConfigError(f"invalid configuration: SECRET_KEY: the key file {path} is empty")
        time.sleep(0.02)


def load_settings(**overrides: Any) -> Settings:
    """Read the environment; raise ConfigError with one line naming the bad variable."""
    try:
        return Settings(**overrides)
    except ValidationError as exc:
        err = exc.errors()[0]
        name = ".".join(str(p) for p in err["loc"]) or "configuration"
        message = str(err["msg"]).removeprefix("Value error, ")
        raise ConfigError(f"invalid configuration: {name}: {message}") from None
