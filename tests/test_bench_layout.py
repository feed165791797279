"""The benchmarks' layout (issue 34): every bench/ module stays small enough to read in one sitting. The test
reads source text only; it names every offender so one run shows all that is left to split."""

from __future__ import annotations

from pathlib import Path

BENCH = Path(__file__).resolve().parent.parent / "bench"
MAX_LINES = 499  # "under 500 lines"


def line_counts() -> dict[str, int]:
    return {path.relative_to(BENCH.parent).as_posix(): len(path.read_text(encoding="utf-8").splitlines())
            for path in sorted(BENCH.rglob("*.py")) if "__pycache__" not in path.parts}


def test_bench_modules_exist() -> None:
    counts = line_counts()
    assert "bench/__main__.py" in counts
    assert "bench/soak/run.py" in counts


def test_every_bench_module_is_under_500_lines() -> None:
    too_long = {name: n for name, n in line_counts().items() if n > MAX_LINES}
    assert not too_long, f"bench modules of 500 lines or more (split them by what they do): {too_long}"
