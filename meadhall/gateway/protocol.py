"""Opcodes, close codes, limits and frame encoding of the gateway (docs/gateway.md)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

OP_DISPATCH = 0
OP_HEARTBEAT = 1
OP_IDENTIFY = 2
OP_RESUME = 6
OP_RECONNECT = 7
OP_INVALID_SESSION = 9
OP_HELLO = 10
OP_HEARTBEAT_ACK = 11

CLOSE_NORMAL = 1000
CLOSE_TOO_BIG = 1009
CLOSE_RESTART = 1012
CLOSE_UNKNOWN_ERROR = 4000
CLOSE_UNKNOWN_OPCODE = 4001
CLOSE_DECODE_ERROR = 4002
CLOSE_NOT_AUTHENTICATED = 4003
CLOSE_AUTH_FAILED = 4004
CLOSE_ALREADY_AUTHENTICATED = 4005
CLOSE_INVALID_SEQ = 4007
CLOSE_RATE_LIMITED = 4008
CLOSE_TIMED_OUT = 4009
CLOSE_INVALIDATED = 4010
CLOSE_BAD_VERSION = 4012
CLOSE_REPLACED = 4013  # the user went over the connection cap and this was the oldest connection

MAX_FRAME_BYTES = 64 * 1024
FRAMES_PER_WINDOW = 120
FRAME_WINDOW_S = 60.0


@dataclass
class Timing:
    """Time limits of a connection, in seconds. Fixed by the contract; tests shorten them."""

    heartbeat_interval: float = 30.0
    identify_deadline: float = 30.0
    # 1.5 x the interval (docs/gateway.md).
    heartbeat_timeout: float = 45.0
    # Close a client whose outgoing queue holds this many frames (it reads too slowly); it can RESUME.
    max_queued_frames: int = 512


def stale_after(timing: Timing) -> float:
    """Seconds after its last heartbeat when a connection's entry in the shared connection cap is taken
    for one of a crashed node: a live connection heartbeats within `heartbeat_timeout` or is closed."""
    return 2 * timing.heartbeat_timeout


def encode(op: int, d: Any = None) -> str:
    return json.dumps({"op": op, "d": d, "s": None, "t": None}, separators=(",", ":"))


def dispatch(seq: int, type_: str, payload: str) -> str:
    """A DISPATCH frame around an already encoded payload: the payload is encoded once per event."""
    return f'{{"op":0,"d":{payload},"s":{seq},"t":"{type_}"}}'


def hello(timing: Timing) -> str:
    return encode(OP_HELLO, {"heartbeat_interval": int(timing.heartbeat_interval * 1000)})


def invalid_session(reason: str, resumable: bool) -> str:
    return encode(OP_INVALID_SESSION, {"reason": reason, "resumable": resumable})


HEARTBEAT_ACK = encode(OP_HEARTBEAT_ACK)
RECONNECT = encode(OP_RECONNECT)
