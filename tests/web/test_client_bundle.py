"""The initial download of the built web client (docs/client.md, "Build and serving"): the JavaScript a
first visit loads before anything is clicked is at most 150 KB gzipped, and the settings screens, the
administration console and the media code (livekit-client) are chunks of their own that the client only
asks for when they are opened. Read through the service, from the page it answers at `/`."""

from __future__ import annotations

import gzip
import re

import pytest

from tests.support.browser import needs_client

pytestmark = [needs_client]

LIMIT = 150_000  # bytes, gzipped
# Vite names a lazily loaded chunk after the module that starts it.
ON_DEMAND = ("Settings", "GuildSettings", "Admin", "Users", "UserDetail", "AuditLog", "Servers", "Stats",
             "InstanceSettings", "livekit-client")
# Minified: `import{a as b}from"./api-x.js"` and `import(`./Settings-y.js`)` (any quote).
STATIC_IMPORT = re.compile(r'(?:\bfrom|\bimport)\s*["\'`]\./([\w.-]+\.js)["\'`]')
DYNAMIC_IMPORT = re.compile(r'import\(\s*["\'`]\./([\w.-]+\.js)["\'`]\s*\)')


@pytest.fixture
def backend() -> str:
    return "sqlite"  # serving reads no database


async def initial_scripts(client) -> dict[str, bytes]:
    """The entry script of `/` and everything it imports statically (and the page preloads), by name."""
    page = (await client.get("/")).text
    entries = re.findall(r'<script type="module"[^>]*src="/assets/([\w.-]+\.js)"', page)
    entries += re.findall(r'<link rel="modulepreload"[^>]*href="/assets/([\w.-]+\.js)"', page)
    assert entries, page
    loaded: dict[str, bytes] = {}
    todo = list(entries)
    while todo:
        name = todo.pop()
        if name in loaded:
            continue
        answer = await client.get(f"/assets/{name}")
        assert answer.status_code == 200, name
        loaded[name] = answer.content
        todo += STATIC_IMPORT.findall(answer.text)
    return loaded


def chunk_kind(name: str) -> str:
    """`GuildSettings-D-qESBp0.js` -> `GuildSettings` (the hash is 8 characters and may hold a dash)."""
    match = re.fullmatch(r"(.+)-[\w-]{8}\.js", name)
    assert match, name
    return match.group(1).removesuffix(".esm")


async def test_the_first_visit_loads_at_most_150_kb_of_gzipped_javascript(client):
    scripts = await initial_scripts(client)
    sizes = {name: len(gzip.compress(body, compresslevel=9)) for name, body in scripts.items()}
    assert sum(sizes.values()) <= LIMIT, sizes


async def test_the_first_frame_with_the_words_of_either_language_stays_under_150_kb(client):
    """The first-frame words of the reader's language are fetched before the client mounts (src/main.ts):
    the first download and the larger of the two first-frame catalogues stay within the same budget, and no
    catalogue is part of the first download itself (a reader never downloads the other language). The
    words of settings, server settings and administration are chunks of their own, fetched after."""
    scripts = await initial_scripts(client)
    catalogues: dict[str, int] = {}
    for body in scripts.values():
        for name in DYNAMIC_IMPORT.findall(body.decode()):
            if chunk_kind(name) in ("en", "ru", "en-screens", "ru-screens"):
                catalogues[chunk_kind(name)] = len(gzip.compress((await client.get(f"/assets/{name}")).content, 9))
    assert set(catalogues) == {"en", "ru", "en-screens", "ru-screens"}, catalogues
    assert not {chunk_kind(name) for name in scripts} & set(catalogues)
    first = sum(len(gzip.compress(body, compresslevel=9)) for body in scripts.values())
    assert first + max(catalogues["en"], catalogues["ru"]) <= LIMIT, (first, catalogues)


async def test_settings_administration_and_media_code_load_on_demand(client):
    scripts = await initial_scripts(client)
    initial_kinds = {chunk_kind(name) for name in scripts}
    assert not initial_kinds & set(ON_DEMAND), sorted(initial_kinds)
    # ...and they exist, reached by a dynamic import from the initial code or from another lazy chunk.
    lazy: dict[str, str] = {}
    todo = [name for body in scripts.values() for name in DYNAMIC_IMPORT.findall(body.decode())]
    while todo:
        name = todo.pop()
        if name in lazy or name in scripts:
            continue
        body = (await client.get(f"/assets/{name}")).text
        lazy[name] = body
        todo += DYNAMIC_IMPORT.findall(body) + STATIC_IMPORT.findall(body)
    lazy_kinds = {chunk_kind(name) for name in lazy}
    assert set(ON_DEMAND) <= lazy_kinds, sorted(set(ON_DEMAND) - lazy_kinds)
