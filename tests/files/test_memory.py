"""A 25 MiB attachment goes up and comes down through a real `meadhall serve` process without the server
ever holding the file in memory: its peak resident size (VmHWM, read from /proc) grows by far less than
the file while the file is streamed both ways."""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.support.isolation import clean_env
from tests.support.processes import free_port

MEADHALL = Path(sys.executable).parent / "meadhall"
MIB = 1024 * 1024
SIZE = 25 * MIB  # MAX_UPLOAD_SIZE by default (docs/reference/limits.md)
CHUNK = 64 * 1024
# Buffers of a streamed transfer (spool buffer, read chunks, socket buffers) stay well under this; holding
# the file would cost at least its 25 MiB.
ALLOWED_GROWTH = 10 * MIB

pytestmark = pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs /proc")


def _status(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    raise AssertionError(f"no {field} in /proc status")


class Peak:
    """The highest resident size of the server while a block runs: the kernel's peak (VmHWM), reset at
    the start when the kernel allows it (/proc/PID/clear_refs), and RSS sampled every millisecond by a
    thread (start-up work such as the 64 MiB argon2 hash of registration must not hide the transfer)."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.highest = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while not self._stop.is_set():
            self.highest = max(self.highest, _status(self.pid, "VmRSS"))
            time.sleep(0.001)

    def __enter__(self) -> Peak:
        self.reset = False
        try:
            Path(f"/proc/{self.pid}/clear_refs").write_text("5")
            self.reset = True
        except OSError:
            pass
        self.start = _status(self.pid, "VmRSS")
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        if self.reset:
            self.highest = max(self.highest, _status(self.pid, "VmHWM"))

    @property
    def growth(self) -> int:
        return self.highest - self.start


@pytest.fixture
def server(tmp_path: Path) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    assert MEADHALL.exists(), f"console script not installed at {MEADHALL}"
    port = free_port()
    env = clean_env(DATA_DIR=str(tmp_path / "data"), SECRET_KEY="memory-test-secret-0123456789abcdef",
                    LOG_LEVEL="warning", RATE_LIMITS='{"auth.register": "100/60"}')
    with open(tmp_path / "stderr", "wb") as err:
        proc = subprocess.Popen([str(MEADHALL), "serve", "--host", "127.0.0.1", "--port", str(port)], env=env,
                                stdout=subprocess.DEVNULL, stderr=err)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            assert proc.poll() is None, (tmp_path / "stderr").read_text()
            try:
                if httpx.get(f"{url}/healthz").status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, "server did not start"
            time.sleep(0.05)
        yield url, proc
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _body(size: int, boundary: str, digest: hashlib._Hash) -> Iterator[bytes]:
    """A multipart body generated on the fly: the client does not hold the file either."""
    yield (f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\n'
           "Content-Type: application/octet-stream\r\n\r\n").encode()
    block = os.urandom(CHUNK)
    sent = 0
    while sent < size:
        piece = block[: min(CHUNK, size - sent)]
        digest.update(piece)
        sent += len(piece)
        yield piece
    yield f"\r\n--{boundary}--\r\n".encode()


def _upload(client: httpx.Client, url: str, channel_id: str, size: int) -> tuple[dict, str]:
    digest = hashlib.sha256()
    boundary = "memoryboundary"
    r = client.post(f"{url}/api/v1/channels/{channel_id}/files", content=_body(size, boundary, digest),
                    headers={"Content-Type": f"multipart/form-data; boundary={boundary}"})
    assert r.status_code == 201, r.text
    return r.json()["file"], digest.hexdigest()


def _download(client: httpx.Client, url: str, file_id: str) -> tuple[int, str]:
    digest = hashlib.sha256()
    total = 0
    with client.stream("GET", f"{url}/files/{file_id}") as r:
        assert r.status_code == 200
        for chunk in r.iter_bytes(CHUNK):
            digest.update(chunk)
            total += len(chunk)
    return total, digest.hexdigest()


def test_25_mib_up_and_down_keeps_server_memory_flat(server: tuple[str, subprocess.Popen[bytes]]) -> None:
    url, proc = server
    with httpx.Client(timeout=120) as client:
        r = client.post(f"{url}/api/v1/auth/register", json={"username": "mem", "email": "mem@example.com",
                                                           "password": "correct horse battery staple"})
        assert r.status_code == 201, r.text
        client.headers["Authorization"] = f"Bearer {r.json()['token']}"
        r = client.post(f"{url}/api/v1/guilds", json={"name": "Memory"})
        channel_id = r.json()["guild"]["system_channel_id"]
        # Warm up every code path with a small file first, so the measure sees only the big one.
        small, _ = _upload(client, url, channel_id, MIB)
        _download(client, url, small["id"])

        with Peak(proc.pid) as up:
            uploaded, sent_digest = _upload(client, url, channel_id, SIZE)
        with Peak(proc.pid) as down:
            size, got_digest = _download(client, url, uploaded["id"])

    print(f"\nserver RSS growth: upload {up.growth / MIB:.1f} MiB, download {down.growth / MIB:.1f} MiB "
          f"(kernel peak reset: {up.reset})")
    assert uploaded["size"] == SIZE and uploaded["sha256"] == sent_digest
    assert (size, got_digest) == (SIZE, sent_digest)
    assert up.growth < ALLOWED_GROWTH, f"the upload raised the server's memory by {up.growth / MIB:.1f} MiB"
    assert down.growth < ALLOWED_GROWTH, f"the download raised the server's memory by {down.growth / MIB:.1f} MiB"
