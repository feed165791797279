"""Service configuration: every variable of API.md section 6, read from the environment.

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

    DATA_DIR: Path = Path("./data")
    DATABASE_URL: str | None = None
    REDIS_URL: str | None = None
    DOMAIN: str = "localhost"
    PUBLIC_URL: str | None = None
    TLS_ENABLED: bool | None = None
    HOST: str = "0.0.0.0"  # noqa: S104 - the documented default listen address
    PORT: int = Field(default=8000, ge=1, le=65535)
    NODE_ID: int = Field(default=0, ge=0, le=1023)
    REGISTRATION_ENABLED: bool = True
    MAX_UPLOAD_SIZE: int = Field(default=26_214_400, ge=1)
    UNFURL_ENABLED: bool = True
    VAPID_PRIVATE_KEY: str | None = None
    VAPID_SUBJECT: str | None = None
    MEDIA_API_KEY: str | None = None
    MEDIA_API_SECRET: str | None = None
    MEDIA_API_URL: str = "http://127.0.0.1:7880"
    MEDIA_PUBLIC_URL: str | None = None
    SECRET_KEY: str | None = None
    SESSION_TTL_DAYS: int = Field(default=30, ge=1, le=3650)
    SESSION_ROTATE_HOURS: int = Field(default=24, ge=1, le=87600)
    LEAKED_PASSWORDS_FILE: Path | None = None
    RATE_LIMITS: Annotated[dict[str, str], NoDecode] = Field(default_factory=dict)
    TRUST_PROXY: bool = False
    CORS_ALLOWED_ORIGINS: str = ""
    LOG_LEVEL: str = "info"
    METRICS_ENABLED: bool = False

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
        # would hand every signed-in session to every web site (API.md section 6).
        if any(o.strip() == "*" for o in value.split(",")):
            raise ValueError("'*' is refused: list the allowed origins, e.g. https://chat.example.com")
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
        # PUBLIC_URL and TLS_ENABLED default from each other (API.md section 6).
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
        """The SQLAlchemy async URL: aiosqlite for SQLite, asyncpg for PostgreSQL."""
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
    def domain_is_ip(self) -> bool:
        try:
            ipaddress.ip_address(self.DOMAIN.strip("[]"))
        except ValueError:
            return False
        return True

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
    """Create DATA_DIR owner-only (API.md section 6): it holds the database, the files and the key."""
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
