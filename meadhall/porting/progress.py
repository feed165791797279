"""The progress bar of the porting commands (docs/migrating.md): on stderr, and only when stderr is a
terminal, so that logs, pipes and tests see nothing but the command's one JSON answer on stdout.

    with progress("Importing messages", total=n) as bar:
        for batch in batches:
            ...
            bar.advance(len(batch))

`total` may be None (not known yet, e.g. while a stream is read): the bar then shows the count and the
rate without a time left.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


class Bar:
    """What a step reports to; the silent base class does nothing (no terminal)."""

    def advance(self, count: int = 1) -> None:
        return None

    def retotal(self, total: int | None) -> None:
        return None

    def describe(self, label: str) -> None:
        return None


class _RichBar(Bar):
    def __init__(self, bar: Any, task: Any) -> None:
        self._bar = bar
        self._task = task

    def advance(self, count: int = 1) -> None:
        self._bar.advance(self._task, count)

    def retotal(self, total: int | None) -> None:
        self._bar.update(self._task, total=total)

    def describe(self, label: str) -> None:
        self._bar.update(self._task, description=label)


def _columns() -> tuple[Any, ...]:
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        ProgressColumn,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )
    from rich.text import Text

    class RateColumn(ProgressColumn):
        """Items per second (rich's own speed column counts bytes)."""

        def render(self, task: Any) -> Text:
            speed = task.finished_speed or task.speed
            return Text("" if speed is None else f"{speed:,.0f}/s")

    return (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), RateColumn(),
            TimeElapsedColumn(), TimeRemainingColumn())


@contextmanager
def progress(label: str, total: int | None = None, *, stream: Any = None) -> Iterator[Bar]:
    """A bar on `stream` (stderr) while the block runs when it is a terminal, else a silent `Bar`."""
    out = stream if stream is not None else sys.stderr
    if not out.isatty():
        yield Bar()
        return
    from rich.console import Console
    from rich.progress import Progress

    with Progress(*_columns(), console=Console(file=out), transient=True) as bar:
        yield _RichBar(bar, bar.add_task(label, total=total))
