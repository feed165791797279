"""`meadhall serve` on a terminal (as `make run` runs it): once started it prints one plain line, "Open
<PUBLIC_URL>", the address to open (not the listen address 127.0.0.1, whose session cookie would not reach
PUBLIC_URL's gateway); the JSON `ready` line stays for machines. Piped (tests/cli/test_serve_output.py),
every line stays JSON."""

from __future__ import annotations

import json
import os
import pty
import re
import select
import signal
import subprocess
import time
from pathlib import Path

from tests.support.isolation import clean_env
from tests.support.processes import MEADHALL, STARTUP_TIMEOUT, free_port


def read_until(fd: int, needle: re.Pattern[bytes], timeout: float) -> bytes:
    seen = b""
    deadline = time.monotonic() + timeout
    while not needle.search(seen):
        left = deadline - time.monotonic()
        assert left > 0, seen.decode(errors="replace")
        ready, _, _ = select.select([fd], [], [], left)
        if ready:
            try:
                chunk = os.read(fd, 4096)
            except OSError:  # the terminal closed: the process ended
                break
            if not chunk:
                break
            seen += chunk
    return seen


def test_on_a_terminal_serve_says_which_address_to_open(tmp_path: Path) -> None:
    port = free_port()
    main, terminal = pty.openpty()
    proc = subprocess.Popen([str(MEADHALL), "serve", "--host", "127.0.0.1", "--port", str(port)],
                            env=clean_env(DATA_DIR=str(tmp_path / "data")), stdout=terminal,
                            stderr=subprocess.DEVNULL, cwd=tmp_path)
    os.close(terminal)
    try:
        output = read_until(main, re.compile(rb"Open [^\n]*\n"), STARTUP_TIMEOUT)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=10)
        os.close(main)
    lines = output.decode().replace("\r\n", "\n").splitlines()
    plain = [line for line in lines if not line.startswith("{")]
    assert plain == [f"Open http://localhost:{port}"], lines
    ready = [json.loads(line) for line in lines if line.startswith("{") and json.loads(line)["event"] == "ready"]
    assert len(ready) == 1 and ready[0]["public_url"] == f"http://localhost:{port}"
    assert lines.index(plain[0]) > lines.index(next(line for line in lines if '"ready"' in line))
