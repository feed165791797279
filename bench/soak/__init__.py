"""The soak and fault harness of issue 32: `python -m bench.soak --help`, `make soak`, `make soak-short`
(docs/reliability.md)."""

import sys


def say(text: str) -> None:
    """One progress line of the soak run, on stderr (stdout carries the run's one-line result)."""
    print(f"soak: {text}", file=sys.stderr, flush=True)
