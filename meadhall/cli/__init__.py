"""The `meadhall` command-line tool: each command is one service call as the system actor."""

import sys

# structlog imports rich (and pygments under it: some 4 MiB) for its console renderer's tracebacks whenever rich
# is installed, and typer brings rich along. Meadhall logs JSON (meadhall/logs.py) and never uses that renderer,
# so the tool, `serve` among its commands, imports structlog first with rich hidden; typer still imports rich
# itself when it renders a help page or an error.
if "structlog" not in sys.modules and "rich" not in sys.modules:
    sys.modules["rich"] = None  # type: ignore[assignment]
    try:
        import structlog  # noqa: F401
    finally:
        del sys.modules["rich"]
