"""The web client's types are made from the service (docs/client.md, "Types from the interface"): the committed
files of web/src/lib/generated/ must be what a fresh generation writes, byte for byte, so a route, schema, event
type or permission changed on the service without regenerating fails here instead of drifting in the client."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import httpx
import pytest

from meadhall import client_types

ROOT = Path(__file__).resolve().parents[2]
GENERATED = ROOT / "web" / "src" / "lib" / "generated"
OPENAPI_TYPESCRIPT = ROOT / "web" / "node_modules" / "openapi-typescript" / "bin" / "cli.js"
REGENERATE = f"run `{client_types.REGENERATE}` and commit web/src/lib/generated/"


def _node() -> str | None:
    """The `node` that `make install` chose: the machine's, or the wheel's recorded in .venv/.node."""
    recorded = ROOT / ".venv" / ".node"
    folders = recorded.read_text(encoding="utf-8").splitlines()[:1] if recorded.is_file() else []
    return shutil.which("node", path=os.pathsep.join([*folders, os.environ.get("PATH", "")]))


def test_committed_document_and_names_are_what_the_service_generates() -> None:
    fresh = client_types.render()
    stale = sorted(name for name, text in fresh.items()
                   if not (GENERATED / name).is_file() or (GENERATED / name).read_text(encoding="utf-8") != text)
    assert not stale, f"web/src/lib/generated/{{{', '.join(stale)}}} differ from the service: {REGENERATE}"


def test_committed_openapi_types_are_what_openapi_typescript_makes_of_the_document(tmp_path: Path) -> None:
    node = _node()
    if node is None or not OPENAPI_TYPESCRIPT.is_file():
        pytest.skip("the client's packages are not installed (`make install` installs them)")
    out = tmp_path / "openapi.ts"
    subprocess.run([node, str(OPENAPI_TYPESCRIPT), str(GENERATED / "openapi.json"), "--output", str(out)],
                   cwd=ROOT / "web", check=True, capture_output=True, timeout=300)
    assert out.read_bytes() == (GENERATED / "openapi.ts").read_bytes(), (
        f"web/src/lib/generated/openapi.ts differs from what openapi-typescript makes of openapi.json: {REGENERATE}")


async def test_the_generated_document_is_the_one_served(client: httpx.AsyncClient) -> None:
    served = (await client.get("/api/v1/openapi.json")).json()
    assert json.loads((GENERATED / "openapi.json").read_text(encoding="utf-8")) == served, REGENERATE


def test_a_file_already_up_to_date_is_not_rewritten(tmp_path: Path) -> None:
    assert client_types.write(tmp_path) == ["events.ts", "openapi.json", "operations.ts", "permissions.ts"]
    assert client_types.write(tmp_path) == []
