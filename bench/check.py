"""`python -m bench --check`: the budgeted workloads, measured beside a calibration, against bench/budgets.py.

The harness (bench/__main__.py) runs a suite's workloads with the suite's runs and requests, starts the server
a few extra times to time its start (`startup_probes`) and measures the CPU calibration (bench/calibrate.py)
before and after the workloads. This module turns the resulting JSON document into figures (FIGURES), compares
each with its budget at reference speed (`evaluate`), and prints the table (`table`). Nothing here times
anything, so tests/test_bench_check.py checks the arithmetic, the verdicts and the table on made-up documents.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from bench.budgets import BUDGETS, FULL, REFERENCE_CALIBRATION_MS, SHORT, Budget
from bench.harness import ServerProcess, median, mib, rnd, snapshot

# ---- the suites: which workloads, how many runs of how many operations ----------------------------------


@dataclass(frozen=True)
class Step:
    workload: str
    runs: int
    requests: int


# The short suite stays under 2 minutes on the 2-core VM (CI's `make bench-check`): the 64 users of
# gateway_fanout_50 are its longest setup. Enough operations per run that the 10 ms clock tick of /proc's CPU
# times is under 3 % of a run's CPU.
SUITES: dict[str, tuple[Step, ...]] = {
    SHORT: (Step("healthz", 5, 1500), Step("messages_send", 5, 200), Step("history_eight", 5, 300),
            Step("gateway_fanout_1", 3, 300), Step("gateway_fanout_50", 3, 300)),
    FULL: (Step("healthz", 5, 3000), Step("messages_send", 5, 1000), Step("history_eight", 5, 1000),
           Step("gateway_fanout_1", 3, 300), Step("gateway_fanout_50", 3, 300),
           Step("gateway_viewers_1000", 3, 300), Step("social_ready", 1, 200), Step("search_1m", 1, 270)),
}
STARTS = 3  # starts of the server whose start to ready and idle memory are taken (the measured server is one)
CALIBRATIONS = 3  # calibration processes before each workload, and after the last


def suite_steps(suite: str) -> dict[str, Step]:
    return {step.workload: step for step in SUITES[suite]}


def step_args(args: argparse.Namespace, workload: str) -> argparse.Namespace:
    """The options for one workload: in a check, the suite's runs and requests."""
    step = suite_steps(args.suite).get(workload) if args.check else None
    return argparse.Namespace(**{**vars(args), "runs": step.runs, "requests": step.requests}) if step else args


def budgets_of(suite: str) -> list[Budget]:
    """The budgets a suite enforces: the short one its own, the full one all."""
    return [b for b in BUDGETS if suite == FULL or b.suite == SHORT]


def server_cpu(requested: str | None) -> str | None:
    """The CPU to pin the server (and the calibration) to: the one asked for, else the last usable CPU when
    there are two or more (the load generator keeps the others), else none."""
    if requested:
        return requested
    usable = sorted(os.sched_getaffinity(0))
    return str(usable[-1]) if len(usable) > 1 else None


# ---- figures from the JSON document -------------------------------------------------------------------


def _summary(doc: dict[str, Any], workload: str, field: str) -> float | None:
    result = doc.get("workloads", {}).get(workload, {})
    if result.get("status") != "ok":
        return None
    value = result.get("summary", {}).get(field)
    return float(value) if value is not None else None


def _runs(doc: dict[str, Any], workload: str, field: str) -> list[float]:
    """A field of every run of a workload, or of its own figures (Samples.figures, the run's `figures`)."""
    result = doc.get("workloads", {}).get(workload, {})
    if result.get("status") != "ok":
        return []
    found = [run.get(field, run.get("figures", {}).get(field)) for run in result.get("runs", [])]
    return [float(value) for value in found if value is not None]


def _best_run(doc: dict[str, Any], workload: str, field: str) -> float | None:
    """The lowest run of a CPU-per-operation figure: other programs on the machine only ever add to it (a
    server that other programs keep waiting batches less and wakes up colder), the code's own cost is in
    every run."""
    found = _runs(doc, workload, field)
    return min(found) if found else None


def _starts(doc: dict[str, Any], field: str) -> list[float]:
    return [float(s[field]) for s in doc.get("server", {}).get("starts", []) if s.get(field) is not None]


def _best_start(doc: dict[str, Any]) -> float | None:
    found = _starts(doc, "startup_s")
    return min(found) if found else None  # noise only ever adds time to a start


def _delivery_50(doc: dict[str, Any]) -> float | None:
    """Server CPU per extra receiver: (CPU per message to 50 receivers - to 1) / 49, in microseconds."""
    many = _best_run(doc, "gateway_fanout_50", "server_cpu_ms_per_message")
    one = _best_run(doc, "gateway_fanout_1", "server_cpu_ms_per_message")
    return None if many is None or one is None else (many - one) * 1000 / 49


# The workloads each figure comes from (what is measured once more when the figure is over its budget).
SOURCES: dict[str, tuple[str, ...]] = {
    "healthz_cpu_ms": ("healthz",), "send_cpu_ms": ("messages_send",), "history_cpu_ms": ("history_eight",),
    "delivery_us_50": ("gateway_fanout_1", "gateway_fanout_50"),
    "delivery_us_1000": ("gateway_viewers_1000",), "connection_kib": ("gateway_viewers_1000",),
    "ready_cpu_ms": ("social_ready",), "search_p95_ms": ("search_1m",),
}

FIGURES: dict[str, Callable[[dict[str, Any]], float | None]] = {
    "startup_s": _best_start,
    "startup_cpu_s": lambda doc: median(_starts(doc, "startup_cpu_s")),
    "idle_rss_mib": lambda doc: median(_starts(doc, "idle_rss_mib")),
    "healthz_cpu_ms": lambda doc: _best_run(doc, "healthz", "server_cpu_ms_per_op"),
    "send_cpu_ms": lambda doc: _best_run(doc, "messages_send", "server_cpu_ms_per_op"),
    "history_cpu_ms": lambda doc: _best_run(doc, "history_eight", "server_cpu_ms_per_op"),
    "delivery_us_50": _delivery_50,
    "delivery_us_1000": lambda doc: _best_run(doc, "gateway_viewers_1000", "server_cpu_us_per_delivery"),
    # Memory: the median of the runs (it is not inflated by other programs the way CPU is).
    "connection_kib": lambda doc: median(_runs(doc, "gateway_viewers_1000", "kib_per_connection_resume")),
    "ready_cpu_ms": lambda doc: _best_run(doc, "social_ready", "server_cpu_ms_per_ready"),
    "search_p95_ms": lambda doc: _summary(doc, "search_1m", "p95_ms"),
}


# ---- the verdicts -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Row:
    budget: Budget
    measured: float | None  # on this machine
    at_reference: float | None  # scaled to reference speed (memory: as measured)
    # "ok", "over", "missing" (the workload did not run, failed or gave no figure) or "shown" (not enforced)
    verdict: str

    @property
    def used(self) -> float | None:
        """The figure as a share of its limit (over 1.0: over budget)."""
        return None if self.at_reference is None else self.at_reference / self.budget.limit


def evaluate_one(budget: Budget, measured: float | None, calibration_ms: float) -> Row:
    """One figure against its budget: CPU and time at reference speed (REFERENCE_CALIBRATION_MS / this run's
    calibration: below 1 on a machine slower than the reference), memory as measured."""
    if measured is None:
        return Row(budget, None, None, "missing")
    at_reference = measured * REFERENCE_CALIBRATION_MS / calibration_ms if budget.scaled else measured
    verdict = "over" if at_reference > budget.limit else "ok"
    return Row(budget, measured, at_reference, verdict if budget.enforced else "shown")


def figure(doc: dict[str, Any], key: str) -> float | None:
    """A figure of the document; with workloads measured once more (`workloads_again`), the lower of the two
    measurements: noise on a busy machine only ever adds cost, a real regression shows in both."""
    found = [FIGURES[key](doc)]
    if doc.get("workloads_again"):
        found.append(FIGURES[key]({**doc, "workloads": {**doc.get("workloads", {}), **doc["workloads_again"]}}))
    measured = [f for f in found if f is not None]
    return min(measured) if measured else None


def evaluate(doc: dict[str, Any], suite: str, calibration_ms: float) -> list[Row]:
    """Every budget of the suite against the document's figures."""
    return [evaluate_one(budget, figure(doc, budget.key), calibration_ms) for budget in budgets_of(suite)]


def measure_again(doc: dict[str, Any], args: argparse.Namespace, shared: dict[str, Any],
                  again: dict[str, Any]) -> list[str]:
    """Right after a workload: the workloads behind the figures now over budget, to be measured once more
    at once, on the same server in the same state (a workload measured once more already is not again)."""
    names: list[str] = []
    for row in evaluate(doc, args.suite, median(shared["calibration_ms"]) or REFERENCE_CALIBRATION_MS):
        if row.verdict == "over":
            names += [name for name in SOURCES.get(row.budget.key, ()) if name not in names and name not in again]
    return names


def passed(rows: list[Row]) -> bool:
    return all(row.verdict in ("ok", "shown") for row in rows)


def report(rows: list[Row], suite: str, calibration: list[float]) -> dict[str, Any]:
    """The check's part of the JSON document."""
    calibration_ms = median(calibration) or 0.0
    return {
        "suite": suite,
        "passed": passed(rows),
        "calibration_ms": rnd(calibration_ms),
        "calibration_runs_ms": [rnd(c) for c in calibration],
        "reference_calibration_ms": REFERENCE_CALIBRATION_MS,
        "budgets": {row.budget.key: {
            "unit": row.budget.unit,
            "measured": rnd(row.measured, 4),
            # The machine-independent figure: measured / this run's calibration (CPU and time figures only).
            "ratio_to_calibration": rnd(row.measured / calibration_ms, 6)
            if row.budget.scaled and row.measured is not None and calibration_ms else None,
            "at_reference": rnd(row.at_reference, 4),
            "limit": rnd(row.budget.limit, 4),
            "today": row.budget.today,
            "target": row.budget.target,
            "used": rnd(row.used),
            "verdict": row.verdict,
        } for row in rows},
    }


def _number(value: float | None, unit: str) -> str:
    if value is None:
        return "-"
    return f"{value:.3g} {unit}" if value < 100 else f"{value:.0f} {unit}"


def table(rows: list[Row], suite: str, calibration_ms: float) -> str:
    """The verdicts as a plain-text table, one line per budget."""
    speed = calibration_ms / REFERENCE_CALIBRATION_MS
    lines = [f"budget check ({suite}): calibration {calibration_ms:.1f} ms CPU, reference {REFERENCE_CALIBRATION_MS} "
             f"ms: this machine runs Python {speed:.2f}x as slow; CPU and time figures are compared at reference "
             "speed, memory as measured",
             f"{'figure':<18} {'measured':>11} {'at reference':>13} {'limit':>11} {'target':>11} {'used':>6}  verdict"]
    for row in rows:
        b = row.budget
        used = "-" if row.used is None else f"{row.used:.0%}"
        verdict = {"ok": "ok", "over": "OVER BUDGET", "missing": "MISSING (not measured)",
                   "shown": "shown, not enforced"}[row.verdict]
        lines.append(f"{b.key:<18} {_number(row.measured, b.unit):>11} "
                     f"{_number(row.at_reference, b.unit) if b.scaled else 'same':>13} "
                     f"{_number(b.limit, b.unit):>11} {_number(b.target, b.unit):>11} {used:>6}  {verdict}")
    failed = [row.budget.key for row in rows if row.verdict in ("over", "missing")]
    lines.append(f"budget check: {'FAILED: ' + ', '.join(failed) if failed else 'every budget held'}")
    return "\n".join(lines)


# ---- start to ready --------------------------------------------------------------------------------------


def start_record(server: ServerProcess) -> dict[str, Any]:
    """A server just ready: its start to ready (wall), the CPU it spent on it, and its resident memory."""
    now = snapshot(server.pid)
    return {"startup_s": rnd(server.startup_s), "startup_cpu_s": rnd(now.cpu_s), "idle_rss_mib": mib(now.rss_kib)}


async def startup_probes(make: Callable[[int], ServerProcess], count: int) -> list[dict[str, Any]]:
    """Start, wait for ready, measure and stop `count` servers, one after the other (before the measured
    one starts: they share its DATA_DIR, migrated and with its users)."""
    found = []
    for i in range(count):
        server = make(i)
        server.start()
        try:
            await server.wait_ready()
            found.append(start_record(server))
        finally:
            server.stop()
    return found


def conclude(doc: dict[str, Any], suite: str, calibration: list[float]) -> bool:
    """Evaluate, add the check to the document, print the table to stderr; True when every budget held."""
    calibration_ms = median(calibration)
    if not calibration_ms:
        print("budget check: no calibration was measured (the run stopped early)", file=sys.stderr)
        return False
    rows = evaluate(doc, suite, calibration_ms)
    doc["check"] = report(rows, suite, calibration)
    print(table(rows, suite, calibration_ms), file=sys.stderr, flush=True)
    return passed(rows)
