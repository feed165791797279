"""What the soak breaks on purpose, all private to the run: a redis-server on its own port, a PostgreSQL
cluster under /tmp (or, when one cannot start, a TCP proxy in front of the machine's PostgreSQL that cuts
and restores connections), and a small tmpfs as the SQLite variant's DATA_DIR. Nothing here touches the
machine's own Redis or PostgreSQL: other people use them.
"""

from __future__ import annotations

import asyncio
import contextlib
import glob
import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

from bench.harness import free_port


class InfraError(Exception):
    pass


def _wait_port(port: int, limit: float, probe: bytes | None = None, expect: bytes = b"") -> None:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5) as sock:
                if probe is None:
                    return
                sock.sendall(probe)
                if sock.recv(64).startswith(expect):
                    return
        except OSError:
            pass
        time.sleep(0.05)
    raise InfraError(f"nothing answers on port {port} after {limit:.0f} s")


class PrivateRedis:
    """redis-server on a free port, keeping nothing (--save '' --appendonly no): a restart loses every key,
    every gateway session included, as a crashed Redis without persistence would."""

    def __init__(self, work: Path) -> None:
        self.port = free_port()
        self.log = work / "redis.log"
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        if shutil.which("redis-server") is None:
            raise InfraError("redis-server not found")
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(
                ["redis-server", "--bind", "127.0.0.1", "--port", str(self.port), "--save", "",
                 "--appendonly", "no", "--protected-mode", "no"],
                stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
        _wait_port(self.port, 10, b"PING\r\n", b"+PONG")

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(5)

    def stop(self) -> None:
        self.kill()


class PrivatePostgres:
    """A throw-away cluster (initdb + pg_ctl as the postgres user) on a private port and directory, so that
    the soak can restart PostgreSQL without stopping anyone else's."""

    def __init__(self, work: Path) -> None:
        self.port = free_port()
        self.dir = Path(f"/tmp/soak-pg-{os.getpid()}-{self.port}")
        self.bin = ""
        self.kind = "private cluster"

    def url(self, database: str) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def _as_postgres(self, *args: str, limit: float = 120) -> subprocess.CompletedProcess[str]:
        prefix = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
        return subprocess.run([*prefix, *args], capture_output=True, text=True, timeout=limit, check=False,
                              stdin=subprocess.DEVNULL)

    def start(self) -> None:
        found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
        if not found:
            raise InfraError("initdb not found under /usr/lib/postgresql")
        self.bin = str(Path(found[-1]).parent)
        self.dir.mkdir(mode=0o700)
        if os.geteuid() == 0:
            shutil.chown(self.dir, "postgres", "postgres")
        done = self._as_postgres(f"{self.bin}/initdb", "-D", str(self.dir / "data"), "-U", "postgres",
                                 "--auth=trust", "-E", "UTF8", "--no-instructions")
        if done.returncode != 0:
            raise InfraError(f"initdb failed: {(done.stderr or done.stdout).strip()[-300:]}")
        self.pg_start()

    def pg_start(self) -> None:
        # fsync off: the machine does not crash, only PostgreSQL stops, and the kernel keeps what was written.
        # synchronous_commit stays on: off would acknowledge commits an immediate stop then loses.
        options = (f"-p {self.port} -k {self.dir} -c listen_addresses=127.0.0.1 -c fsync=off "
                   "-c max_connections=200")
        done = self._as_postgres(f"{self.bin}/pg_ctl", "-D", str(self.dir / "data"), "-o", options,
                                 "-l", str(self.dir / "log"), "-w", "-t", "60", "start")
        if done.returncode != 0:
            raise InfraError(f"pg_ctl start failed: {(done.stderr or done.stdout).strip()[-300:]}")

    def pg_stop(self) -> None:
        # immediate: the connections are cut as by a crash, not asked to finish
        self._as_postgres(f"{self.bin}/pg_ctl", "-D", str(self.dir / "data"), "-m", "immediate", "-w",
                          "stop")

    def create_database(self, name: str) -> None:
        done = self._as_postgres(f"{self.bin}/psql", "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres",
                                 "-v", "ON_ERROR_STOP=1", "-qc", f'CREATE DATABASE "{name}"')
        if done.returncode != 0:
            raise InfraError(f"CREATE DATABASE failed: {done.stderr.strip()[-300:]}")

    def stop(self) -> None:
        if self.bin:
            self.pg_stop()
        shutil.rmtree(self.dir, ignore_errors=True)


class PostgresProxy:
    """The fallback when a private cluster cannot start: a TCP proxy in front of a PostgreSQL the soak may not
    restart. `cut()` closes every proxied connection and refuses new ones until `restore()`: to the nodes
    it looks like a PostgreSQL restart."""

    def __init__(self, upstream_host: str, upstream_port: int) -> None:
        self.upstream = (upstream_host, upstream_port)
        self.port = free_port()
        self.kind = "TCP proxy"
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()

    def url(self, database: str) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    async def restore(self) -> None:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", self.port, reuse_address=True)

    async def cut(self) -> None:
        if self._server is not None:
            self._server.close()
            self._server = None
        for writer in list(self._writers):
            writer.transport.abort()
        self._writers.clear()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection(*self.upstream)
        except OSError:
            writer.transport.abort()
            return
        self._writers.update((writer, up_writer))

        async def pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
            with contextlib.suppress(OSError, asyncio.IncompleteReadError):
                while chunk := await src.read(65536):
                    dst.write(chunk)
                    await dst.drain()
            dst.transport.abort()

        await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))
        self._writers.discard(writer)
        self._writers.discard(up_writer)


class SmallDisk:
    """A tmpfs of `size` as DATA_DIR, so that filling it with a ballast file is a full disk."""

    def __init__(self, path: Path, size: str) -> None:
        self.path = path
        self.size = size
        self.mounted = False
        self.ballast = path / "ballast.fill"

    def mount(self) -> str | None:
        """None when mounted, else why not (the disk fault is then skipped)."""
        self.path.mkdir(parents=True, exist_ok=True)
        if shutil.which("mount") is None:
            return "no mount command"
        done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={self.size}", "tmpfs", str(self.path)],
                              capture_output=True, text=True, check=False)
        if done.returncode != 0:
            return f"mount -t tmpfs not permitted: {done.stderr.strip()[:200]}"
        self.mounted = True
        return None

    def fill(self) -> int:
        """Write the ballast until ENOSPC; returns its bytes."""
        written = 0
        chunk = b"\0" * (1 << 20)
        with open(self.ballast, "wb", buffering=0) as fh:
            while True:
                try:
                    written += fh.write(chunk)
                except OSError:
                    if len(chunk) <= 512:
                        break
                    chunk = chunk[:len(chunk) // 8]
        return written

    def free(self) -> None:
        self.ballast.unlink(missing_ok=True)

    def unmount(self) -> None:
        if self.mounted:
            subprocess.run(["umount", "-l", str(self.path)], capture_output=True, check=False)
            self.mounted = False


def kill_tree(proc: subprocess.Popen[bytes], sig: int = signal.SIGKILL) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, sig)
