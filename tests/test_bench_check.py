"""`python -m bench --check` (bench/check.py, bench/budgets.py): the figures taken from a bench document, their
scaling by the calibration, the verdicts, the table and the exit code, on made-up documents. Nothing here
times anything: the real run is CI's `make bench-check`."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

import bench.__main__ as bench_main
from bench import budgets, calibrate, check
from bench.budgets import BUDGETS, FULL, REFERENCE_CALIBRATION_MS, SHORT, Budget

SHORT_KEYS = {"startup_s", "startup_cpu_s", "idle_rss_mib", "healthz_cpu_ms", "send_cpu_ms", "history_cpu_ms",
              "delivery_us_50"}


def _ok(cpu_ms_per_op: float, p95_ms: float = 1.0, figures: list[dict[str, float]] | None = None) -> dict[str, Any]:
    """A workload's result: its runs (CPU per operation: the given one, and a noisier run beside it)."""
    runs = [{"server_cpu_ms_per_op": cpu_ms_per_op * 1.3}, {"server_cpu_ms_per_op": cpu_ms_per_op}]
    runs = [{**run, "figures": f} for run, f in zip(runs * 3, figures, strict=False)] if figures else runs
    return {"status": "ok", "summary": {"server_cpu_ms_per_op": cpu_ms_per_op * 1.15, "p95_ms": p95_ms},
            "runs": runs}


def set_cpu(doc: dict[str, Any], workload: str, value: float) -> None:
    for run in doc["workloads"][workload]["runs"]:
        run["server_cpu_ms_per_op"] = value


def document(scale: float = 1.0) -> dict[str, Any]:
    """A bench document whose every figure is `scale` times a value under its budget at reference speed."""
    return {
        "server": {"starts": [{"startup_s": 1.0 * scale, "startup_cpu_s": 0.9 * scale, "idle_rss_mib": 95.0 * scale},
                              {"startup_s": 5.0 * scale, "startup_cpu_s": 1.0 * scale, "idle_rss_mib": 98.0 * scale},
                              {"startup_s": 1.2 * scale, "startup_cpu_s": 1.1 * scale, "idle_rss_mib": 110.0 * scale}]},
        "workloads": {
            "healthz": _ok(0.1 * scale),
            "messages_send": _ok(0.9 * scale),
            "history_eight": _ok(0.3 * scale),
            # (2.0 - 1.0) ms over 49 extra receivers: 20.4 us per receiver
            "gateway_fanout_1": _ok(3.0, figures=[{"server_cpu_ms_per_message": 1.0 * scale}]),
            "gateway_fanout_50": _ok(5.0, figures=[{"server_cpu_ms_per_message": 2.0 * scale}]),
            "gateway_viewers_1000": _ok(9.0, figures=[
                {"server_cpu_us_per_delivery": 20.0 * scale, "kib_per_connection_resume": 14.0 * scale},
                {"server_cpu_us_per_delivery": 22.0 * scale, "kib_per_connection_resume": 16.0 * scale},
                {"server_cpu_us_per_delivery": 90.0 * scale, "kib_per_connection_resume": 15.0 * scale}]),
            "social_ready": _ok(40.0, figures=[{"server_cpu_ms_per_ready": 25.0 * scale}]),
            "search_1m": _ok(2.0, p95_ms=4.0 * scale),
        },
    }


def rows_by_key(rows: list[check.Row]) -> dict[str, check.Row]:
    return {row.budget.key: row for row in rows}


def test_every_budget_has_a_figure_and_its_workloads_run_in_its_suite() -> None:
    assert {b.key for b in BUDGETS} == set(check.FIGURES)
    assert len({b.key for b in BUDGETS}) == len(BUDGETS)
    # The short suite's figures come from the short suite's workloads alone: a document with only those
    # gives every short budget a figure.
    doc = document()
    short_only = {**doc, "workloads": {k: v for k, v in doc["workloads"].items() if k in check.suite_steps(SHORT)}}
    rows = check.evaluate(short_only, SHORT, REFERENCE_CALIBRATION_MS)
    assert {row.budget.key for row in rows} == SHORT_KEYS
    assert all(row.verdict in ("ok", "shown") for row in rows), rows
    assert set(check.suite_steps(SHORT)) <= set(check.suite_steps(FULL))
    assert {row.budget.key for row in check.evaluate(doc, FULL, REFERENCE_CALIBRATION_MS)} == set(check.FIGURES)


def test_figures_are_taken_as_the_budgets_say() -> None:
    rows = rows_by_key(check.evaluate(document(), FULL, REFERENCE_CALIBRATION_MS))
    assert rows["startup_s"].measured == 1.0  # best of the starts: noise only adds time
    assert rows["startup_cpu_s"].measured == 1.0  # median
    assert rows["idle_rss_mib"].measured == 98.0  # median
    assert rows["send_cpu_ms"].measured == 0.9  # the best run, not the summary's median
    assert rows["delivery_us_50"].measured == pytest.approx(1000 / 49)
    assert rows["delivery_us_1000"].measured == 20.0  # CPU: the best run (noise only adds)
    assert rows["connection_kib"].measured == 15.0  # memory: the median of the runs
    assert rows["ready_cpu_ms"].measured == 25.0
    assert rows["search_p95_ms"].measured == 4.0


def test_cpu_and_time_figures_are_compared_at_reference_speed_memory_as_measured() -> None:
    # A machine whose Python is twice as slow takes twice the milliseconds and still passes.
    slow = rows_by_key(check.evaluate(document(2.0), FULL, 2 * REFERENCE_CALIBRATION_MS))
    fast = rows_by_key(check.evaluate(document(1.0), FULL, REFERENCE_CALIBRATION_MS))
    assert slow["send_cpu_ms"].measured == 1.8
    assert slow["send_cpu_ms"].at_reference == pytest.approx(0.9)
    assert slow["send_cpu_ms"].verdict == fast["send_cpu_ms"].verdict == "ok"
    # Memory does not scale with the calibration: twice the memory is twice the memory.
    assert slow["idle_rss_mib"].at_reference == 196.0
    assert slow["idle_rss_mib"].verdict == "over"
    assert fast["idle_rss_mib"].verdict == "ok"


def test_a_regression_of_two_times_fails_every_enforced_budget() -> None:
    """Today's figures pass; twice today's fails, at any machine speed: the margins stay under 2."""
    for speed in (0.5, 1.0, 3.0):
        calibration = REFERENCE_CALIBRATION_MS * speed
        for budget in BUDGETS:
            factor = speed if budget.scaled else 1.0
            assert check.evaluate_one(budget, budget.today * factor, calibration).verdict in ("ok", "shown")
            twice = check.evaluate_one(budget, 2 * budget.today * factor, calibration)
            if budget.enforced and budget.limit < 2 * budget.today:  # not where the target itself allows 2x
                assert twice.verdict == "over", budget.key


def test_the_limit_is_the_target_where_today_meets_it_with_the_margin_else_today_plus_the_margin() -> None:
    base = Budget("send_cpu_ms", "t", "ms", today=1.0, target=0.4, margin=1.5, scaled=True, suite=SHORT, reason="r")
    assert base.limit == 1.5  # worse than the target: no worse than today plus the margin
    met = dataclasses.replace(base, today=0.2)
    assert met.limit == 0.4  # met with room: the target itself
    close = dataclasses.replace(base, today=0.35)
    assert close.limit == pytest.approx(0.525)  # met, but within the margin: noise must not fail it
    untargeted = dataclasses.replace(base, target=None)
    assert untargeted.limit == 1.5


def test_verdicts_over_missing_and_shown() -> None:
    doc = document()
    set_cpu(doc, "messages_send", 100.0)
    doc["workloads"]["history_eight"] = {"status": "error", "reason": "boom"}
    doc["server"]["starts"][0]["startup_s"] = 100.0
    doc["server"]["starts"][2]["startup_s"] = 100.0
    rows = rows_by_key(check.evaluate(doc, SHORT, REFERENCE_CALIBRATION_MS))
    assert rows["send_cpu_ms"].verdict == "over"
    assert rows["history_cpu_ms"].verdict == "missing"
    assert rows["startup_s"].verdict == "shown"  # over, but wall time is not enforced
    assert not check.passed(list(rows.values()))
    assert check.passed([rows["startup_s"], rows["healthz_cpu_ms"]])


def test_the_table_names_each_figure_its_limit_and_verdict() -> None:
    doc = document()
    set_cpu(doc, "messages_send", 100.0)
    doc["workloads"].pop("history_eight")
    rows = check.evaluate(doc, SHORT, REFERENCE_CALIBRATION_MS * 1.1)
    text = check.table(rows, SHORT, REFERENCE_CALIBRATION_MS * 1.1)
    lines = text.splitlines()
    assert "1.10x as slow" in lines[0]
    assert len(lines) == 2 + len(SHORT_KEYS) + 1
    send = next(line for line in lines if line.startswith("send_cpu_ms"))
    assert "100 ms" in send and "90.9 ms" in send and "OVER BUDGET" in send
    assert "MISSING" in next(line for line in lines if line.startswith("history_cpu_ms"))
    assert "same" in next(line for line in lines if line.startswith("idle_rss_mib"))  # memory: not scaled
    assert lines[-1] == "budget check: FAILED: send_cpu_ms, history_cpu_ms"


def test_the_report_in_the_json_carries_the_ratio_to_the_calibration() -> None:
    rows = check.evaluate(document(), SHORT, 100.0)
    got = check.report(rows, SHORT, [90.0, 100.0, 130.0])
    assert got["passed"] is True and got["calibration_ms"] == 100.0
    send = got["budgets"]["send_cpu_ms"]
    assert send["ratio_to_calibration"] == pytest.approx(0.009)
    assert send["at_reference"] == pytest.approx(0.9 * REFERENCE_CALIBRATION_MS / 100.0, abs=1e-4)
    assert got["budgets"]["idle_rss_mib"]["ratio_to_calibration"] is None


@pytest.mark.parametrize(("scale", "code"), [(1.0, 0), (3.0, 1)])
def test_main_exits_non_zero_when_a_budget_is_over(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
                                                   scale: float, code: int) -> None:
    async def fake_run(args: Any, selected: list[Any]) -> dict[str, Any]:
        assert [wl.name for wl in selected] == list(check.suite_steps(SHORT))
        return {"server": document(scale)["server"], "workloads": document(scale)["workloads"],
                "calibration_ms": [REFERENCE_CALIBRATION_MS] * 3}

    monkeypatch.setattr(bench_main, "run_bench", fake_run)
    assert bench_main.main(["--check", "--short", "--no-save"]) == code
    out, err = capsys.readouterr()
    assert '"check"' in out and "budget check (short)" in err
    assert ("every budget held" in err) == (code == 0)


def test_check_mode_sets_its_suite_and_pins_the_server_when_it_can(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(check.os, "sched_getaffinity", lambda _pid: {0, 1})
    args = bench_main.parse_args(["--check", "--short"])
    assert args.workloads == ",".join(check.suite_steps(SHORT)) and args.server_cpu == "1"
    assert bench_main.parse_args(["--check", "--server-cpu", "0"]).server_cpu == "0"
    monkeypatch.setattr(check.os, "sched_getaffinity", lambda _pid: {0})
    assert bench_main.parse_args(["--check"]).server_cpu is None
    for wrong in (["--short"], ["--check", "--workloads", "healthz"]):
        with pytest.raises(SystemExit):
            bench_main.parse_args(wrong)


def test_the_calibration_work_is_fixed() -> None:
    assert calibrate.work(200) == calibrate.work(200)
    assert calibrate.main(["--rounds", "100"]) == 0
    assert budgets.CPU_MARGIN < 2 and budgets.MEMORY_MARGIN < 2 and budgets.TIME_MARGIN < 2


def test_a_figure_over_budget_is_measured_once_more_and_the_lower_counts() -> None:
    doc = document()
    set_cpu(doc, "messages_send", 100.0)
    for run in doc["workloads"]["gateway_fanout_50"]["runs"]:
        run["figures"]["server_cpu_ms_per_message"] = 100.0
    args = bench_main.parse_args(["--check", "--short"])
    shared = {"calibration_ms": [REFERENCE_CALIBRATION_MS]}
    assert check.measure_again(doc, args, shared, {}) == ["messages_send", "gateway_fanout_1", "gateway_fanout_50"]
    assert check.measure_again(document(), args, shared, {}) == []
    # Once only: a workload measured once more already is not measured again.
    assert check.measure_again(doc, args, shared, {"messages_send": {}}) == ["gateway_fanout_1", "gateway_fanout_50"]
    # Noise: the second measurement is under budget, and counts.
    doc["workloads_again"] = {"messages_send": _ok(0.8)}
    rows = rows_by_key(check.evaluate(doc, SHORT, REFERENCE_CALIBRATION_MS))
    assert rows["send_cpu_ms"].measured == 0.8 and rows["send_cpu_ms"].verdict == "ok"
    assert rows["delivery_us_50"].verdict == "over"  # not measured again here: the first figure stands
    # A real regression is over in both measurements.
    doc["workloads_again"] = {"messages_send": _ok(90.0)}
    assert rows_by_key(check.evaluate(doc, SHORT, REFERENCE_CALIBRATION_MS))["send_cpu_ms"].verdict == "over"
