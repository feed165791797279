"""The OpenAPI document against the running code (docs/architecture.md): schemathesis generates requests from
`/api/v1/openapi.json` for EVERY operation (examples, coverage, fuzzing and stateful phases; positive and
negative data; a fixed seed, so the run is the same each time) and checks each answer: no server error,
only documented status codes, content types and headers, bodies that match their schema, schema-valid
requests accepted and schema-invalid ones refused, 405 answers with `Allow`.

Every check runs except `ignored_auth`: it sends requests without credentials and expects 401, which
every authenticated operation answers (tests/test_openapi.py and the auth tests check it directly),
but it needs the provider-less auth this run replaces with a live session.

The run is in-process (ASGI) on SQLite, as one signed-in user who owns a guild with a room, a message,
a role, an invitation, a template and an attachment; the ids of those are offered for path parameters
half of the time, so that operations are exercised past their 404 as well. Rate limits are lifted."""

from __future__ import annotations

import io
import json
import time
import wave
from collections.abc import Iterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
import schemathesis
from argon2 import PasswordHasher
from hypothesis import strategies as st
from PIL import Image
from schemathesis.config import SchemathesisConfig
from schemathesis.config._checks import POSITIVE_DATA_ACCEPTANCE_EXPECTED_STATUSES
from schemathesis.engine import events, from_schema
from schemathesis.python import asgi
from schemathesis.specs.openapi.checks import is_unexpected_http_status_case

from meadhall.api.openapi import RULES_KEY
from meadhall.app import create_app
from meadhall.auth.security import Client
from meadhall.auth.sessions import create_session, live_session
from meadhall.config import Settings
from meadhall.core.crypto import token_digest
from meadhall.core.errors import AppError
from meadhall.core.ratelimit import BUCKETS
from meadhall.runtime import Runtime
from tests.support.outbound import VAPID, confine
from tests.support.personas import PASSWORD

# The run takes about 45 s alone (2 cores, about 4000 requests); under `pytest -n auto` it is one test on one worker.
SEED = 12_345
MAX_EXAMPLES = 8
SESSION_PATH = "/__test__/session"
EXCLUDED_CHECKS = {"ignored_auth"}


@pytest.fixture
def backend() -> str:
    """The document and the code do not depend on the database: SQLite only, so the run happens once."""
    return "sqlite"


@pytest.fixture
def settings_overrides() -> dict[str, Any]:
    # Voice on (calls and voice rooms answer more than 403 `voice.disabled`), with no media server listening:
    # a media server that is down fails no request.
    return {"RATE_LIMITS": {name: "1000000/1" for name in BUCKETS}, "MEDIA_API_KEY": "fuzz-media-key",
            "MEDIA_API_SECRET": "fuzz-media-secret-0123456789abcdef0123", "MEDIA_API_URL": "http://127.0.0.1:9",
            # Web Push on, so that subscriptions answer more than 403 `push.disabled`.
            "VAPID_PRIVATE_KEY": VAPID["private_key"]}


class Harness:
    """The app behind an ASGI wrapper that also answers SESSION_PATH (outside the document): the token of
    a live session of the test user, a new one when schemathesis signed out, revoked or rotated it."""

    def __init__(self, settings: Settings) -> None:
        self.rt = Runtime(settings)
        # Cheap hashes, as in tests/conftest.py: the run registers and signs in many times.
        self.rt.password_hasher = PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1)
        self.rt.code_hasher = PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1)
        confine(self.rt.outbound)  # fuzzed link previews and push endpoints never leave the loopback range
        self.app = create_app(settings, self.rt)
        self.user_id: int | None = None
        self.token: str | None = None
        inner = self.app.router.lifespan_context

        @asynccontextmanager
        async def lifespan(app: Any) -> Any:
            async with inner(app) as state:
                yield state
            await self.rt.close()

        self.app.router.lifespan_context = lifespan

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["path"] == SESSION_PATH:
            body = json.dumps({"token": await self._session()}).encode()
            await send({"type": "http.response.start", "status": 200,
                        "headers": [(b"content-type", b"application/json")]})
            await send({"type": "http.response.body", "body": body})
            return
        await self.app(scope, receive, send)

    async def _session(self) -> str:
        assert self.user_id is not None
        if self.token is not None:
            try:
                await live_session(self.rt, token_digest(self.token), self.rt.clock.now())
                return self.token
            except AppError:  # signed out or revoked by the run
                pass
        async with self.rt.uow() as uow:
            issued = await create_session(uow, self.user_id, Client("127.0.0.1", "schemathesis"), "password")
        self.token = issued.token
        return self.token


def _post(client: Any, path: str, token: str, **kwargs: Any) -> dict[str, Any]:
    r = client.post(path, headers={"Authorization": f"Bearer {token}"}, **kwargs)
    assert r.status_code in (200, 201), r.text
    return r.json()


def _fixtures(harness: Harness) -> dict[str, list[str]]:
    """The owned objects whose ids path parameters may take."""
    with asgi.get_client(harness) as client:
        r = client.post("/api/v1/auth/register", json={"username": "fuzzer", "email": "fuzzer@example.com",
                                                        "password": PASSWORD})
        assert r.status_code == 201, r.text
        user = r.json()["user"]
        harness.user_id = int(user["id"])
        token = r.json()["token"]
        guild = _post(client, "/api/v1/guilds", token, json={"name": "Fuzz Hall"})["guild"]
        rooms = client.get(f"/api/v1/guilds/{guild['id']}/channels",
                           headers={"Authorization": f"Bearer {token}"}).json()["channels"]
        room = next(c for c in rooms if c["type"] == "text")
        base = f"/api/v1/channels/{room['id']}"
        message = _post(client, f"{base}/messages", token, json={"content": "hello"})["message"]
        role = _post(client, f"/api/v1/guilds/{guild['id']}/roles", token, json={"name": "Fuzzers"})["role"]
        invite = _post(client, f"{base}/invites", token, json={})["invite"]
        template = _post(client, "/api/v1/guild-templates", token,
                         json={"guild_id": guild["id"], "name": "Fuzz"})["template"]
        upload = _post(client, f"{base}/files", token,
                       files={"file": ("a.txt", b"hello", "text/plain")})["file"]
    return {"guild_id": [guild["id"]], "channel_id": [room["id"]], "message_id": [message["id"]],
            "role_id": [role["id"], guild["id"]], "target_id": [role["id"], user["id"]],
            "user_id": [user["id"]], "code": [invite["code"]], "template_id": [template["id"]],
            "file_id": [upload["id"]], "emoji": ["👍"]}


def _image(fmt: str, size: tuple[int, int], color: tuple[int, int, int]) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", size, color).save(out, format=fmt)
    return out.getvalue()


# The image slots declare their part types (`encoding.file.contentType`); random bytes sent as one of them
# would be refused by the decoding check, so the run draws small real images of the declared type.
for _type, _fmt in {"image/png": "PNG", "image/jpeg": "JPEG", "image/webp": "WEBP", "image/gif": "GIF"}.items():
    schemathesis.openapi.media_type(_type, st.sampled_from([_image(_fmt, (1, 1), (0, 0, 0)),
                                                            _image(_fmt, (16, 9), (200, 30, 90))]))


def _wav(frames: int) -> bytes:
    out = io.BytesIO()
    with wave.open(out, "wb") as sound:
        sound.setnchannels(1)
        sound.setsampwidth(2)
        sound.setframerate(8000)
        sound.writeframes(b"\0\0" * frames)
    return out.getvalue()


# Sound uploads declare audio types and are confirmed by reading the stream: the run draws small WAV files
# (the only strategy registered, so the only audio type the run declares).
schemathesis.openapi.media_type("audio/wav", st.sampled_from([_wav(80), _wav(800)]))


@schemathesis.check
def refused_only_under_stated_rules(ctx: Any, response: Any, case: Any) -> bool | None:
    """A schema-valid request answered 422 must be refused under a rule its operation states in `x-rules`
    (meadhall/api/openapi.py `rules`): one that depends on stored state (an unknown referenced id), on the
    clock (a time that must lie in the future) or relates two query parameters (`before` and `after`,
    which OpenAPI cannot relate). The answer's code must be the rule's, and for `validation.failed` every
    field it names must be a ruled one: a refusal under any constraint a schema CAN state is a finding.
    `positive_data_acceptance` lets 422 through (its other statuses stay as they are) and leaves it here."""
    if case.meta is None or is_unexpected_http_status_case(case) or not case.meta.generation.mode.is_positive:
        return None
    if response.status_code != 422:
        return None
    stated = case.operation.definition.raw.get(RULES_KEY, [])
    try:
        error = json.loads(response.content)["error"]
    except (ValueError, KeyError, TypeError):
        raise AssertionError(f"422 without the error envelope: {response.content[:200]!r}") from None
    ruled = {r["field"] for r in stated if r["code"] == error.get("code")}
    named = {d.get("field") for d in error.get("details") or [{"field": None}]}
    if error.get("code") != "validation.failed":
        named = {r["field"] for r in stated if r["code"] == error.get("code")} or {None}
    if not ruled or not named <= ruled:
        raise AssertionError(f"Schema-valid request refused under a rule the document does not state: "
                             f"{error.get('code')} {error.get('message')!r} (stated: {sorted(ruled) or 'none'})")
    return None


def _config(fixtures: dict[str, list[str]]) -> SchemathesisConfig:
    checks: dict[str, Any] = {name: {"enabled": False} for name in EXCLUDED_CHECKS}
    checks["positive_data_acceptance"] = {"expected-statuses": [*POSITIVE_DATA_ACCEPTANCE_EXPECTED_STATUSES, "422"]}
    return SchemathesisConfig.from_dict({
        "seed": SEED,
        "generation": {"mode": "all", "max-examples": MAX_EXAMPLES, "deterministic": True,
                       "database": "none"},
        "checks": checks,
        "phases": {"stateful": {"enabled": True, "max-steps": 6}},
        "dictionaries": {name: {"values": values} for name, values in fixtures.items()},
        "parameters": {name: {"dictionary": name, "probability": 0.5} for name in fixtures},
    })


def run(harness: Harness) -> tuple[dict[tuple[str, str], str], int, dict[str, Any]]:
    """({(operation, finding): description}, requests sent, {phase: (status, stateful transitions)})."""
    fixtures = _fixtures(harness)
    schema = schemathesis.openapi.from_asgi("/api/v1/openapi.json", harness, config=_config(fixtures))

    @schema.auth(refresh_interval=None)
    class LiveSession:
        def get(self, case: Any, ctx: Any) -> str:
            with asgi.get_client(harness) as client:
                return client.get(SESSION_PATH).json()["token"]

        def set(self, case: Any, data: str, ctx: Any) -> None:
            case.headers = {**(case.headers or {}), "Authorization": f"Bearer {data}"}

    findings: dict[tuple[str, str], str] = {}
    sent = 0
    phases: dict[str, Any] = {}
    for event in from_schema(schema).execute():
        if isinstance(event, events.PhaseStarted) and event.payload is not None:
            phases[f"{event.phase.name}.transitions"] = event.payload.transitions_selected
        elif isinstance(event, events.PhaseFinished):
            phases[str(event.phase.name)] = str(event.status)
        elif isinstance(event, events.ScenarioFinished):
            sent += len(event.recorder.interactions)
            for case_id, failure in _failures(event.recorder):
                findings.setdefault((failure.operation, failure.title), _describe(
                    failure, event.recorder.interactions.get(case_id)))
        elif isinstance(event, events.NonFatalError):
            findings.setdefault((event.label, "error"), f"error in {event.label}: {event.info.format()}")
        elif isinstance(event, events.FatalError):
            raise event.exception
        elif isinstance(event, events.EngineFinished):
            for failure in event.failures:
                findings.setdefault((failure.operation, failure.title), f"{failure.operation}: {failure.title}")
    return findings, sent, phases


def _describe(failure: Any, interaction: Any) -> str:
    """The finding with the request and the answer that show it (bodies cut short)."""
    text = f"{failure.operation}: {failure.title}\n  {failure.message}"
    if interaction is not None:
        request, response = interaction.request, interaction.response
        body = (request.body or b"")[:300]
        text += f"\n  {request.method} {request.uri} {body!r}"
        if response is not None:
            text += f"\n  -> {response.status_code} {response.content[:300]!r}"
    return text


def _failures(recorder: Any) -> Iterator[tuple[str, Any]]:
    for case_id, checks in recorder.checks.items():
        for check in checks:
            if check.failure_info is not None:
                yield case_id, check.failure_info.failure


def test_the_document_describes_exactly_what_the_code_does(settings: Settings) -> None:
    harness = Harness(settings)
    started = time.monotonic()
    try:
        findings, sent, phases = run(harness)
    finally:
        asgi.shutdown_lifespans()
    elapsed = time.monotonic() - started
    assert not findings, (f"{len(findings)} findings in {sent} requests ({elapsed:.0f} s):\n\n"
                          + "\n\n".join(findings.values()))
    # The run must reach the operations, or it proves nothing; the stateful phase must run on links that
    # schemathesis infers from the document (ids in answers feeding the path parameters of other operations).
    assert sent > 1000, f"only {sent} requests"
    stateful = {k: v for k, v in phases.items() if k.lower().startswith("stateful")}
    assert any(v == "success" for v in stateful.values()), phases
    assert any(isinstance(v, int) and v > 0 for v in stateful.values()), phases
