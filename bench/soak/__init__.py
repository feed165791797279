"""The soak and fault harness of issue 32: `python -m bench.soak --help`, `make soak`, `make soak-short`
(docs/reliability.md)."""
