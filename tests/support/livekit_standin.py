"""A local stand-in for the parts of LiveKit's RoomService (Twirp) the voice rooms call, on 127.0.0.1.

It speaks what livekit-api's client sends: `POST /twirp/livekit.RoomService/<Method>` with a protobuf body and
`Authorization: Bearer <JWT>`; it checks the token (HS256 with the API secret, `iss` the API key, a `roomAdmin`
grant for the room the request names, `roomList` for ListRooms), records every accepted call, and answers
ListParticipants / ListRooms from `participants`, a table the test controls (room -> identities).

`connect` is a client connecting with a participant token, as LiveKit admits it (signature, expiry, the
room of the grant): the participant then holds the permissions of that token until UpdateParticipant
changes them (`permission_of`); ListParticipants reports them as LiveKit does.

Also here: webhooks signed as LiveKit signs them (a JWT whose `sha256` claim is the body's digest).
"""

from __future__ import annotations

import base64
import hashlib
import json
import socket
import time
from dataclasses import dataclass, field
from typing import Any

import jwt
from aiohttp import web
from google.protobuf.json_format import MessageToDict
from livekit import api as lk

# The protobuf classes differ per method, and the handler reads each request's own fields once it knows the
# method: typed as a common base, every one of those reads would be an error.
_REQUESTS: dict[str, tuple[type[Any], type[Any]]] = {
    "RemoveParticipant": (lk.RoomParticipantIdentity, lk.RemoveParticipantResponse),
    "UpdateParticipant": (lk.UpdateParticipantRequest, lk.ParticipantInfo),
    "MutePublishedTrack": (lk.MuteRoomTrackRequest, lk.MuteRoomTrackResponse),
    "MoveParticipant": (lk.MoveParticipantRequest, lk.MoveParticipantResponse),
    "ListParticipants": (lk.ListParticipantsRequest, lk.ListParticipantsResponse),
    "ListRooms": (lk.ListRoomsRequest, lk.ListRoomsResponse),
}


class Refused(Exception):
    """The stand-in refused a participant's connection (as LiveKit answers 401 to a bad or expired token)."""


def _permission(video: dict[str, Any]) -> lk.ParticipantPermission:
    """A token's video grant as the participant permission LiveKit derives from it."""
    sources = [getattr(lk.TrackSource, name.upper()) for name in video.get("canPublishSources", [])]
    return lk.ParticipantPermission(can_subscribe=bool(video.get("canSubscribe")),
                                    can_publish=bool(video.get("canPublish")),
                                    can_publish_data=bool(video.get("canPublishData")), can_publish_sources=sources)


_WIDEST = lk.ParticipantPermission(can_subscribe=True, can_publish=True, can_publish_data=True)


@dataclass
class Call:
    method: str
    room: str
    identity: str
    body: dict[str, Any]


@dataclass
class StandIn:
    key: str
    secret: str
    participants: dict[str, set[str]] = field(default_factory=dict)
    # (room, identity) -> what LiveKit lets that participant do; absent: the widest (a token of every source).
    permissions: dict[tuple[str, str], Any] = field(default_factory=dict)
    calls: list[Call] = field(default_factory=list)
    refused: list[tuple[str, str]] = field(default_factory=list)  # (method, why)
    supports_move: bool = True
    port: int = 0
    _runner: Any = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def of(self, method: str) -> list[Call]:
        return [c for c in self.calls if c.method == method]

    def connect(self, token: str, *, at: float | None = None) -> tuple[str, str]:
        """A client connecting with a participant token at time `at` (default now): (room, identity). Refused
        (`Refused`) for a bad signature, an expired token or a token without `roomJoin`."""
        try:
            claims = jwt.decode(token, self.secret, algorithms=["HS256"], issuer=self.key,
                                options={"require": ["exp", "iss", "sub"], "verify_exp": False, "verify_nbf": False})
        except jwt.PyJWTError as err:
            raise Refused(f"token: {err}") from None
        if float(claims["exp"]) <= (time.time() if at is None else at):
            raise Refused("token expired")
        video = claims.get("video", {})
        if not video.get("roomJoin") or not video.get("room"):
            raise Refused("no roomJoin grant")
        room, identity = str(video["room"]), str(claims["sub"])
        self.participants.setdefault(room, set()).add(identity)
        self.permissions[(room, identity)] = _permission(video)
        return room, identity

    def permission_of(self, room: str, identity: str) -> dict[str, Any]:
        """What the participant may do now: `can_publish_sources` (names, lower case) and `can_subscribe`."""
        perm = self.permissions.get((room, identity), _WIDEST)
        return {"can_publish_sources": sorted(lk.TrackSource.Name(s).lower() for s in perm.can_publish_sources),
                "can_publish": perm.can_publish, "can_subscribe": perm.can_subscribe}

    def _error(self, status: int, code: str, msg: str) -> web.Response:
        return web.Response(status=status, text=json.dumps({"code": code, "msg": msg}),
                            content_type="application/json")

    async def _handle(self, request: web.Request) -> web.Response:
        method = request.match_info["method"]
        if method not in _REQUESTS:
            return self._error(404, "bad_route", method)
        req_type, resp_type = _REQUESTS[method]
        if request.content_type != "application/protobuf":
            return self._error(400, "malformed", "protobuf expected")
        message = req_type.FromString(await request.read())
        room = getattr(message, "room", "")
        auth = request.headers.get("Authorization", "")
        try:
            claims = jwt.decode(auth.removeprefix("Bearer "), self.secret, algorithms=["HS256"], issuer=self.key,
                                options={"require": ["exp", "iss"]}, leeway=5)
        except jwt.PyJWTError as err:
            self.refused.append((method, f"token: {err}"))
            return self._error(401, "unauthenticated", str(err))
        video = claims.get("video", {})
        allowed = video.get("roomList") if method == "ListRooms" else (video.get("roomAdmin") and video.get("room") == room)
        if not allowed:
            self.refused.append((method, f"grant: {video}"))
            return self._error(403, "permission_denied", "no grant for this room")
        identity = getattr(message, "identity", "")
        self.calls.append(Call(method, room, identity, MessageToDict(message, preserving_proto_field_name=True)))
        present = self.participants.setdefault(room, set()) if room else set()
        if method == "MoveParticipant" and not self.supports_move:
            return self._error(501, "unimplemented", "MoveParticipant is a LiveKit Cloud feature")
        if method in ("RemoveParticipant", "UpdateParticipant", "MoveParticipant") and identity not in present:
            return self._error(404, "not_found", "participant not found")
        if method in ("RemoveParticipant", "MoveParticipant"):
            present.discard(identity)
            held = self.permissions.pop((room, identity), None)
        if method == "MoveParticipant":
            self.participants.setdefault(message.destination_room, set()).add(identity)
            if held is not None:
                self.permissions[(message.destination_room, identity)] = held
        if method == "UpdateParticipant" and message.HasField("permission"):
            self.permissions[(room, identity)] = message.permission
        if method == "ListParticipants":
            answer = resp_type(participants=[
                lk.ParticipantInfo(identity=i, permission=self.permissions.get((room, i), _WIDEST))
                for i in sorted(present)])
        elif method == "ListRooms":
            answer = resp_type(rooms=[lk.Room(name=n) for n, who in sorted(self.participants.items()) if who])
        elif method == "UpdateParticipant":
            answer = lk.ParticipantInfo(identity=identity, permission=message.permission)
        else:
            answer = resp_type()
        return web.Response(body=answer.SerializeToString(), content_type="application/protobuf")

    async def start(self) -> None:
        app = web.Application()
        app.router.add_post("/twirp/livekit.RoomService/{method}", self._handle)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", self.port))  # a restart (after `stop`) comes back at the same address
        self.port = sock.getsockname()[1]
        await web.SockSite(self._runner, sock).start()

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()


def closed_port_url() -> str:
    """An address where no media server listens (a server that is down)."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    return f"http://127.0.0.1:{port}"


def signed_webhook(key: str, secret: str, payload: dict[str, Any]) -> tuple[bytes, str]:
    """(body, Authorization value) as LiveKit sends a webhook: the JWT carries the body's SHA-256."""
    body = json.dumps(payload).encode()
    return body, sign_body(key, secret, body)


def sign_body(key: str, secret: str, body: bytes) -> str:
    """The Authorization value LiveKit would send with these bytes, whatever they are."""
    digest = base64.b64encode(hashlib.sha256(body).digest()).decode()
    return lk.AccessToken(key, secret).with_sha256(digest).to_jwt()


def webhook_event(event_id: str, kind: str, room: str, identity: str | None = None) -> dict[str, Any]:
    payload: dict[str, Any] = {"id": event_id, "event": kind, "room": {"name": room}, "createdAt": str(int(time.time()))}
    if identity is not None:
        payload["participant"] = {"identity": identity}
    return payload
