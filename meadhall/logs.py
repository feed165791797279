"""structlog JSON lines on stdout. Request logs carry ids, routes, statuses and latencies only: no
headers, no query strings, no bodies, so tokens, passwords and codes never reach the log.

Records of standard-library loggers (Alembic, drivers, ...) are rendered as the same JSON lines, so that
stdout stays machine-readable at every level."""

from __future__ import annotations

import logging
import sys
from typing import TextIO

import structlog


def configure_logging(level: str = "info", stream: TextIO | None = None) -> None:
    """JSON lines to `stream` (stdout for the service; the CLI passes stderr, its stdout being the one
    JSON answer)."""
    stream = stream or sys.stdout
    numeric = getattr(logging, level.upper(), logging.INFO)
    shared: list[structlog.types.Processor] = [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
    ]
    handler = logging.StreamHandler(stream)
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            foreign_pre_chain=[*shared, structlog.stdlib.add_logger_name],
            processors=[
                structlog.stdlib.ProcessorFormatter.remove_processors_meta,
                structlog.processors.format_exc_info,
                structlog.processors.JSONRenderer(),
            ],
        )
    )
    root = logging.getLogger()
    for old in root.handlers[:]:
        root.removeHandler(old)
        old.close()
    root.addHandler(handler)
    # Libraries (Alembic's "Running upgrade", pool notes, uvicorn's start-up lines) speak only for
    # warnings unless LOG_LEVEL=debug: a terminal running `make run` or a CLI command shows Meadhall's
    # own lines (structlog, filtered below), not library chatter.
    root.setLevel(numeric if numeric <= logging.DEBUG else max(numeric, logging.WARNING))
    for noisy in ("uvicorn.access",):
        logging.getLogger(noisy).disabled = True
    structlog.configure(
        processors=[
            *shared,
            structlog.processors.format_exc_info,
            structlog.processors.JSONRenderer(),
        ],
        wrapper_class=structlog.make_filtering_bound_logger(numeric),
        logger_factory=structlog.PrintLoggerFactory(file=stream),
        cache_logger_on_first_use=False,
    )
