"""The import workload (docs/benchmarks.md, "Imports"): `meadhall import-discord` of a generated
DiscordChatExporter export, in a subprocess against the bench server's database, as an operator runs it.

- `import_discord`: IMPORT_MESSAGES messages (default 100,000) over 4 channel files with 200 authors, replies,
  reactions, mentions, edits and pins (tests/support/discord_export.py writes them, streamed). One operation is
  one whole import into a new guild. Figures: messages per second (wall time of the command, start-up
  included), the importer's CPU time and messages per CPU second (the rate on an otherwise idle machine),
  and the peak resident memory of the import process (getrusage of the children: the largest child
  the bench waited for, which is the importer).

The export is written once per bench run and reused by every run (and the warm-up, which is a whole import too:
`--warmup 0 --runs 1` for a single measured import of a million messages).
"""

from __future__ import annotations

import asyncio
import json
import os
import resource
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.drivers import Context, OpError, Samples
from bench.workloads import register
from tests.support.discord_export import write_large_export

DEFAULT_MESSAGES = 100_000


def _messages() -> int:
    return int(os.environ.get("IMPORT_MESSAGES", DEFAULT_MESSAGES))


async def _export(ctx: Context, messages: int) -> Path:
    key = f"discord_export_{messages}"
    if key not in ctx.shared:
        # Beside the server's data directory: removed with it at the end of the bench run.
        folder = Path(tempfile.mkdtemp(prefix="discord-export-", dir=Path(ctx.data_dir).parent))
        await asyncio.to_thread(write_large_export, folder, messages)
        ctx.shared[key] = folder
    return Path(ctx.shared[key])


class ImportSamples(Samples):
    figures: dict[str, Any]


@register("import_discord", needs_users=1, max_ops=1,
          description="meadhall import-discord of a generated DiscordChatExporter export (IMPORT_MESSAGES messages, "
                      "default 100,000) in a subprocess; figures: messages/s and the importer's peak RSS")
async def import_discord(ctx: Context) -> Samples:
    messages = _messages()
    folder = await _export(ctx, messages)
    owner = ctx.users()[0]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    code, out, err = await ctx.cli("import-discord", str(folder), "--owner-email", owner["email"], limit=1800)
    wall = time.perf_counter() - started
    if code != 0:
        raise OpError(f"import-discord exited {code}: {err.strip()[-300:]}")
    result = json.loads(out.strip().splitlines()[-1])
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    peak_kib = after.ru_maxrss
    samples = ImportSamples(latencies=[wall], wall_s=wall)
    samples.figures = {
        "messages": int(result["messages"]),
        "messages_per_s": round(int(result["messages"]) / wall),
        "wall_s": round(wall, 2),
        # The importer's own CPU time (user + system): what the wall time would be on an idle core.
        "cpu_s": round(cpu, 2),
        "messages_per_cpu_s": round(int(result["messages"]) / cpu) if cpu else None,
        "peak_rss_mib": round(peak_kib / 1024, 1),
    }
    return samples
