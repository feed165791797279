"""On a terminal, `meadhall import-discord` shows a progress bar on stderr with a count, a rate and the time
left (3.21), and stdout still carries only its JSON answer; without a terminal (every other test) stderr has
no bar. The command runs as a real process whose stderr is a pseudo-terminal."""

from __future__ import annotations

import asyncio
import json
import os
import pty
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.support.discord_export import import_command, write_large_export


def run_on_a_terminal(env: dict[str, str], *args: str) -> tuple[int, str, str]:
    """(exit code, stdout, what the terminal on stderr received)."""
    leader, follower = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "meadhall.cli.main", *args], env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=follower)
    os.close(follower)
    seen = bytearray()
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the terminal's other side closed: the process ended
            break
        if not chunk:
            break
        seen.extend(chunk)
    os.close(leader)
    assert proc.stdout is not None
    out = proc.stdout.read().decode()
    return proc.wait(timeout=60), out, seen.decode(errors="replace")


async def test_a_terminal_sees_count_rate_and_time_left(settings: Any, rt: Any, accounts: Any,
                                                        tmp_path: Path) -> None:
    await accounts.register("boss")
    folder = tmp_path / "export"
    await asyncio.to_thread(write_large_export, folder, 30_000, channels=2)
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path), "TERM": "xterm", "COLUMNS": "120",
           "DATA_DIR": str(settings.DATA_DIR), "DATABASE_URL": settings.DATABASE_URL,
           "SECRET_KEY": settings.SECRET_KEY, "DOMAIN": settings.DOMAIN, "REDIS_URL": "", "LOG_LEVEL": "warning"}
    code, out, terminal = await asyncio.to_thread(run_on_a_terminal, env, "import-discord", str(folder),
                                                  "--owner-email", "boss@example.com")
    assert code == 0, terminal[-2000:]
    assert json.loads(out.strip())["messages"] == 30_000
    assert "Importing messages" in terminal
    assert re.search(r"\d+/30000", terminal)  # the count
    assert re.search(r"[\d,]+/s", terminal)  # the rate
    assert re.search(r"\d:\d\d:\d\d", terminal)  # elapsed and time left

    # Not a terminal: nothing but the answer.
    code, stdout, stderr = await import_command(settings)("import-discord", str(folder), "--owner-email",
                                                          "boss@example.com", "--name", "Again")
    assert code == 0 and "Importing messages" not in stderr and json.loads(stdout.strip())["messages"] == 30_000
