"""The CPU calibration of `python -m bench --check` (docs/budgets.md): a fixed pure-Python workload.

Each measurement is a fresh `python -m bench.calibrate` process, pinned with taskset to the server's CPU
when the server is pinned, that times its own CPU (time.process_time, not wall time: a process that waits
for the core while another program runs is not charged for it) over a fixed amount of work and prints the
seconds. A per-operation CPU figure of the server divided by this one is then the same on a faster or a
slower machine, as long as both are Python doing the same kind of work on the same core.

The work is what the server's own Python spends its time on: building and reading small dicts, formatting
strings, calling small functions and methods, encoding and decoding JSON, sorting. It never changes (a
change would move every ratio): a new calibration needs new reference figures (REFERENCE_CALIBRATION_MS).

Run alone: `python -m bench.calibrate` prints one measurement in milliseconds.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from dataclasses import dataclass

ROUNDS = 12_000  # about 100 ms of CPU on the reference machine


@dataclass
class _Row:
    id: int
    author: str
    content: str
    flags: int

    def as_event(self) -> dict[str, object]:
        return {"id": str(self.id), "author": {"name": self.author}, "content": self.content,
                "flags": self.flags, "mentions": [w[1:] for w in self.content.split() if w.startswith("@")]}


def work(rounds: int = ROUNDS) -> int:
    """The fixed workload; returns a checksum so that nothing can be skipped."""
    total = 0
    seen: dict[str, int] = {}
    for i in range(rounds):
        row = _Row(i, f"user{i % 97}", f"message {i} for @user{i % 13} about item {i * 7 % 101}", i & 7)
        event = row.as_event()
        text = json.dumps(event, separators=(",", ":"))
        back = json.loads(text)
        seen[back["author"]["name"]] = seen.get(back["author"]["name"], 0) + len(back["mentions"])
        total += len(text) + (row.flags << 1)
        if i % 50 == 0:
            total += sorted(seen.items(), key=lambda kv: (-kv[1], kv[0]))[0][1]
    return total


def once(rounds: int = ROUNDS) -> float:
    """CPU seconds of one pass of `work`, after a short unmeasured pass (imports, first allocations)."""
    work(rounds // 20)
    started = time.process_time()
    work(rounds)
    return time.process_time() - started


def measure(cpu: str | None, runs: int, rounds: int = ROUNDS) -> list[float]:
    """`runs` measurements in milliseconds, each in its own process (on CPU `cpu` when given)."""
    pin = ["taskset", "-c", cpu] if cpu else []
    found: list[float] = []
    for _ in range(runs):
        out = subprocess.run([*pin, sys.executable, "-m", "bench.calibrate", "--rounds", str(rounds)],
                             check=True, capture_output=True, text=True, timeout=120).stdout
        found.append(float(out.strip()))
    return found


def main(argv: list[str]) -> int:
    rounds = int(argv[argv.index("--rounds") + 1]) if "--rounds" in argv else ROUNDS
    print(f"{once(rounds) * 1000:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
