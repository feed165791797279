"""Settings for CLI commands: the environment, with `--data-dir` overriding DATA_DIR."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from meadhall.config import Settings, load_settings

DataDir = Annotated[Path | None, typer.Option("--data-dir", help="Data directory (overrides DATA_DIR)")]


def settings_for(data_dir: Path | None, port: int | None = None) -> Settings:
    """`port` is the one `serve` listens on: PUBLIC_URL's default carries it (docs/reference/configuration.md)."""
    overrides: dict[str, object] = {}
    if data_dir:
        overrides["DATA_DIR"] = data_dir
    if port:
        overrides["PORT"] = port
    return load_settings(**overrides)
