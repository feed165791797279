"""`meadhall doctor` (docs/operations.md, "Checking a configuration"): checks the configuration the service
would read and says how to fix each finding. Unlike the other commands it exits with a code per class of
problem (findings.EXIT_CODES) and reports problems on stdout: finding them is its success."""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Annotated, Any

import typer

from meadhall.cli.settings import DataDir, settings_for

_MARKS = {"ok": "ok     ", "warning": "WARNING", "error": "ERROR  "}


def render(result: dict[str, Any]) -> str:
    """The readable report: one line per check, the fix indented under a problem, a summary last."""
    lines = []
    for item in result["checks"]:
        lines.append(f"{_MARKS[item['severity']]} {item['class']}/{item['check']}: {item['message']}")
        if item["fix"]:
            lines.append(f"        fix: {item['fix']}")
    problems = [i for i in result["checks"] if i["severity"] != "ok"]
    errors = sum(1 for i in problems if i["severity"] == "error")
    if result["exit_code"]:
        lines.append(f"{errors} error(s), {len(problems) - errors} warning(s): exit code {result['exit_code']}")
    else:
        lines.append(f"no errors, {len(problems)} warning(s)")
    return "\n".join(lines) + "\n"


def register(app: typer.Typer) -> None:
    """Adds the command to the tool."""

    @app.command()
    def doctor(
        data_dir: DataDir = None,
        as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object instead of a report")] = False,
    ) -> None:
        """Check the configuration (exit 0, or 10 config, 11 storage, 12 media, 13 push, 14 network)."""
        from meadhall.system.doctor.run import diagnose

        result = asyncio.run(diagnose(lambda: settings_for(data_dir)))
        sys.stdout.write(json.dumps(result) + "\n" if as_json else render(result))
        sys.stdout.flush()
        raise typer.Exit(result["exit_code"])
