"""Helpers of the outbound tests (docs/outbound.md, docs/push.md): every server here listens on the loopback
range, and `confine` makes the runtime's outbound client refuse anything else and resolve names from a table,
so test traffic never leaves the machine even when the guard under test is wrong."""

from __future__ import annotations

import asyncio
import base64
import datetime as dt
import ipaddress
import json
import socket
import ssl
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import http_ece
import jwt
from aiohttp import web
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from meadhall.push.keys import generate_keys

CANARY_HOST = "127.0.0.1"
PAGE_HOST = "127.0.0.2"
ALLOWED = "127.0.0.2/32"
VAPID = generate_keys()  # the service's Web Push key pair in the push tests
LOOPBACK = [ipaddress.ip_network("127.0.0.0/8"), ipaddress.ip_network("::1/128")]


def confine(outbound: Any, names: dict[str, list[str]] | None = None) -> dict[str, list[str]]:
    """Refuse every address outside the loopback range and resolve names only from `names` (returned, so a
    test may add to it); `localhost` resolves as on any machine."""
    table: dict[str, list[str]] = {"localhost": ["127.0.0.1", "::1"], **(names or {})}

    async def resolve(host: str, port: int, family: socket.AddressFamily) -> list[dict[str, Any]]:
        addresses = table.get(host.lower().rstrip("."))
        if not addresses:
            raise OSError(f"test resolver: unknown name {host}")
        return [{"hostname": host, "host": a, "port": port, "proto": 0, "flags": 0,
                 "family": socket.AF_INET6 if ":" in a else socket.AF_INET} for a in addresses]

    outbound.confine_to = list(LOOPBACK)
    outbound.resolve = resolve
    return table


class Canary:
    """A listener that must never be reached: it counts every connection."""

    def __init__(self) -> None:
        self.connections = 0
        self.server: asyncio.Server | None = None
        self.port = 0

    async def start(self) -> None:
        async def on_connect(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            self.connections += 1
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 40\r\n\r\n"
                         b"<title>the canary was reached</title>   ")
            await writer.drain()
            writer.close()

        self.server = await asyncio.start_server(on_connect, CANARY_HOST, 0)
        self.port = self.server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        assert self.server is not None
        self.server.close()
        await self.server.wait_closed()


Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


@dataclass
class Site:
    """An aiohttp server on PAGE_HOST (plain HTTP, or TLS with `ssl_context`) recording each request."""

    routes: dict[str, Handler]
    ssl_context: ssl.SSLContext | None = None
    requests: list[dict[str, Any]] = field(default_factory=list)
    port: int = 0
    runner: web.AppRunner | None = None

    async def start(self) -> None:
        async def dispatch(request: web.Request) -> web.StreamResponse:
            body = await request.read()
            self.requests.append({"path": request.path, "method": request.method, "headers": dict(request.headers),
                                  "body": body})
            handler = self.routes.get(request.path)
            if handler is None:
                return web.Response(status=404)
            return await handler(request)

        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", dispatch)
        self.runner = web.AppRunner(app, access_log=None)
        await self.runner.setup()
        site = web.TCPSite(self.runner, PAGE_HOST, 0, ssl_context=self.ssl_context)
        await site.start()
        self.port = self.runner.addresses[0][1]

    async def stop(self) -> None:
        assert self.runner is not None
        await self.runner.cleanup()

    async def __aenter__(self) -> Site:
        await self.start()
        return self

    async def __aexit__(self, *_exc: object) -> None:
        await self.stop()

    def url(self, path: str) -> str:
        scheme = "https" if self.ssl_context else "http"
        return f"{scheme}://{PAGE_HOST}:{self.port}{path}"

    def paths(self) -> list[str]:
        return [r["path"] for r in self.requests]


async def link_preview(api: Any, who: Any, url: str, expect: int | None = 200) -> Any:
    """GET /link-previews for `url` as `who` (the Api helper of tests/support/http.py)."""
    return await api.get("/link-previews", who, params={"url": url}, expect=expect)


def html(body: str, status: int = 200, content_type: str = "text/html") -> Handler:
    async def handler(_request: web.Request) -> web.StreamResponse:
        return web.Response(status=status, body=body.encode(), content_type=content_type, charset="utf-8")
    return handler


def redirect(location: str | Callable[[], str], status: int = 302) -> Handler:
    async def handler(_request: web.Request) -> web.StreamResponse:
        return web.Response(status=status, headers={"Location": location() if callable(location) else location})
    return handler


# ---- TLS with a CA made for the test ----------------------------------------------------------------------

@dataclass
class TestCA:
    server: ssl.SSLContext  # the push service's certificate for 127.0.0.2
    client: ssl.SSLContext  # the default verification, trusting the test CA as well


def make_ca(tmp: Path) -> TestCA:
    now = dt.datetime.now(dt.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Meadhall test CA")])
    ca = (x509.CertificateBuilder().subject_name(ca_name).issuer_name(ca_name).public_key(ca_key.public_key())
          .serial_number(x509.random_serial_number()).not_valid_before(now - dt.timedelta(minutes=5))
          .not_valid_after(now + dt.timedelta(days=1))
          .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
          .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                       content_commitment=False, key_encipherment=False, data_encipherment=False,
                                       key_agreement=False, encipher_only=False, decipher_only=False), critical=True)
          .sign(ca_key, hashes.SHA256()))
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (x509.CertificateBuilder().subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, PAGE_HOST)]))
            .issuer_name(ca_name).public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(minutes=5)).not_valid_after(now + dt.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address(PAGE_HOST))]),
                           critical=False)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .sign(ca_key, hashes.SHA256()))
    pem = serialization.Encoding.PEM
    (tmp / "ca.pem").write_bytes(ca.public_bytes(pem))
    (tmp / "cert.pem").write_bytes(cert.public_bytes(pem) + ca.public_bytes(pem))
    (tmp / "key.pem").write_bytes(key.private_bytes(pem, serialization.PrivateFormat.PKCS8,
                                                    serialization.NoEncryption()))
    server = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    server.load_cert_chain(tmp / "cert.pem", tmp / "key.pem")
    client = ssl.create_default_context()
    client.load_verify_locations(tmp / "ca.pem")
    return TestCA(server, client)


# ---- a browser's side of Web Push --------------------------------------------------------------------------

def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def b64url_decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


@dataclass
class Browser:
    """What `pushManager.subscribe` makes: a P-256 key pair and a 16-byte secret."""

    key: ec.EllipticCurvePrivateKey = field(default_factory=lambda: ec.generate_private_key(ec.SECP256R1()))
    auth: bytes = field(default_factory=lambda: bytes(range(16)))

    def keys(self) -> dict[str, str]:
        point = self.key.public_key().public_bytes(serialization.Encoding.X962,
                                                   serialization.PublicFormat.UncompressedPoint)
        return {"p256dh": b64url(point), "auth": b64url(self.auth)}

    def decrypt(self, body: bytes) -> dict[str, Any]:
        """RFC 8291: the `aes128gcm` record decrypted with this browser's key and secret."""
        plain = http_ece.decrypt(body, private_key=self.key, auth_secret=self.auth, version="aes128gcm")
        return json.loads(plain)


def vapid_claims(authorization: str, public_key: str) -> dict[str, Any]:
    """Verify an RFC 8292 `vapid t=<jwt>,k=<key>` header against the service's public key; the JWT's claims."""
    scheme, _, params = authorization.partition(" ")
    assert scheme == "vapid"
    parts = dict(p.strip().split("=", 1) for p in params.split(","))
    assert parts["k"] == public_key
    point = b64url_decode(parts["k"])
    key = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), point)
    return jwt.decode(parts["t"], key, algorithms=["ES256"], options={"verify_aud": False})
