"""A finding of `meadhall doctor` and the report built from them (docs/operations.md, "Checking a
configuration": the exit-code table)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

Severity = Literal["ok", "warning", "error"]

# From the most basic class to the most specific: the exit code is the one of the first class with an error,
# since a broken configuration or database usually explains what fails after it.
EXIT_CODES: dict[str, int] = {"config": 10, "storage": 11, "media": 12, "push": 13, "network": 14}


@dataclass(frozen=True)
class Finding:
    klass: str
    check: str
    severity: Severity
    message: str
    fix: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"class": self.klass, "check": self.check, "severity": self.severity, "message": self.message,
                "fix": self.fix}


def ok(klass: str, check: str, message: str) -> Finding:
    return Finding(klass, check, "ok", message)


def warning(klass: str, check: str, message: str, fix: str) -> Finding:
    return Finding(klass, check, "warning", message, fix)


def error(klass: str, check: str, message: str, fix: str) -> Finding:
    return Finding(klass, check, "error", message, fix)


def describe(err: BaseException, limit: int = 300) -> str:
    """An exception as one short line of a message (drivers' errors may span lines)."""
    if isinstance(err, TimeoutError):
        return "no answer within 3 s"
    text = " ".join(f"{type(err).__name__}: {err}".split())
    return text if len(text) <= limit else text[:limit - 1] + "…"


def exit_code(findings: list[Finding]) -> int:
    """0 when nothing is an error (warnings pass), else the code of the most basic class with an error."""
    failed = {f.klass for f in findings if f.severity == "error"}
    return next((code for klass, code in EXIT_CODES.items() if klass in failed), 0)


def report(findings: list[Finding]) -> dict[str, Any]:
    code = exit_code(findings)
    return {"status": "ok" if code == 0 else "problems", "exit_code": code,
            "checks": [f.as_dict() for f in findings]}
