"""A stand-in for the built web client: a few files in a temporary folder that the service serves in place
of meadhall/web/client, so that serving is tested without running the client build."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def stand_in_client(monkeypatch: Any, tmp_path: Path, files: dict[str, str | bytes]) -> Path:
    """Writes `files` (path under the client folder: content) and serves that folder; its path."""
    root = tmp_path / "client"
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)
    monkeypatch.setattr("meadhall.web.client.CLIENT_DIR", root)
    return root
