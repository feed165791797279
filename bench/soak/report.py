"""The soak run's result: its figures with the promises judged on them (report), and its one-line summary."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from bench.harness import percentile
from bench.soak.client import GatewayClient, Senders
from bench.soak.verdict import summary

if TYPE_CHECKING:
    from bench.soak.run import Soak

RESUME_P99_LIMIT = 5.0
TERM_EXIT_LIMIT = 10.0
BACK_LIMIT = 5.0  # delivery must resume within this long of Redis / PostgreSQL / the disk coming back


def report(soak: Soak, verdict: Any, clients: list[GatewayClient], senders: Senders, sent_s: float) -> dict[str, Any]:
    """The run's figures (the --json document); the promises judged on them add to `verdict.failures`:
    delivery back after each fault, the SIGTERM exit time, the reconnects, the latency and memory budgets."""
    args = soak.args
    # The 5 s promise is for the clients of a node that died or restarted; after a Redis or PostgreSQL
    # outage the web client's back-off (up to 30 s) decides, so those are reported, not judged.
    kill_backs = [r for c in clients for r in c.reconnects if r.fault in ("kill", "term")]
    back = [r.back_s for r in kill_backs if r.back_s is not None]
    resume = [r.resume_s for r in kill_backs if r.resume_s is not None]
    never = sum(r.back_s is None for c in clients for r in c.reconnects)
    how: dict[str, dict[str, int]] = {}
    back_by: dict[str, list[float]] = {}
    for c in clients:
        for r in c.reconnects:
            kind = r.fault or "no fault"
            how.setdefault(kind, {})[r.how or "never"] = how.get(kind, {}).get(r.how or "never", 0) + 1
            if r.back_s is not None:
                back_by.setdefault(kind, []).append(r.back_s)
    invalid: dict[str, int] = {}
    closes: dict[str, int] = {}
    for c in clients:
        for k, v in c.invalid_sessions.items():
            invalid[k] = invalid.get(k, 0) + v
        for k, v in c.closes.items():
            closes[k] = closes.get(k, 0) + v
    faults = []
    for f in soak.faults:
        entry = {"kind": f.kind, "at_s": f.at, "node": f.node, "down_s": round(f.returned - f.started, 2),
                 "delivery_back_s": soak.delivery_back(f.returned), **f.notes}
        faults.append(entry)
        if f.kind in ("redis", "postgres", "disk") and (entry["delivery_back_s"] or math.inf) > BACK_LIMIT:
            verdict.failures.append(f"{f.kind}: delivery not back within {BACK_LIMIT:g} s of its return "
                                    f"({entry['delivery_back_s']})")
        if f.kind == "term" and (f.notes.get("exit_s") or math.inf) > TERM_EXIT_LIMIT:
            verdict.failures.append(f"SIGTERM: node exited after {f.notes.get('exit_s')} s "
                                    f"(limit {TERM_EXIT_LIMIT:g})")
        if "error" in f.notes:
            verdict.failures.append(f"fault {f.kind} not made: {f.notes['error']}")
    back_p99 = percentile(sorted(back), 99)
    if back_p99 is not None and back_p99 > RESUME_P99_LIMIT:
        verdict.failures.append(f"back after a fault p99 {back_p99:.2f} s (limit {RESUME_P99_LIMIT:g})")
    if never:
        verdict.failures.append(f"{never} lost connections never came back")
    gaps = sum(c.gaps for c in clients)
    quiet = summary(list(soak.latencies.quiet))
    faulty = summary(list(soak.latencies.faulty))
    if args.latency_budget_ms and (quiet["p99_ms"] or 0) > args.latency_budget_ms:
        verdict.failures.append(f"p99 delivery {quiet['p99_ms']} ms outside fault windows "
                                f"(budget {args.latency_budget_ms:g})")
    growth = {}
    for name, readings in soak.memory.items():
        warm, end = readings[1], readings[-1]
        if warm and end and int(name[4:]) not in soak.restarted:
            growth[name] = round((end - warm) / warm, 3)
            if args.memory_budget is not None and growth[name] > args.memory_budget:
                verdict.failures.append(f"{name} RSS grew {growth[name]:.1%} after warm-up "
                                        f"(budget {args.memory_budget:.0%})")
    return {
        "ok": verdict.ok,
        "failures": verdict.failures,
        "examples": verdict.examples,
        "setup": {"backend": "sqlite" if args.sqlite else "postgresql+redis",
                  "postgres": getattr(soak.pg, "kind", None), "nodes": args.nodes,
                  "connections": args.connections, "users": args.users, "senders": args.senders,
                  "guilds": args.guilds, "rooms_per_guild": args.rooms, "rate": args.rate,
                  "duration_s": args.duration, "faults": args.faults, "notes": soak.notes},
        "messages": {"sent": verdict.sent, "acknowledged": verdict.acknowledged, "stored": verdict.stored,
                     "lost": verdict.lost, "duplicated": verdict.duplicated, "gave_up": verdict.gave_up,
                     "wrong_id": verdict.wrong_id, "retried": senders.retried,
                     "answered_200_repeat": senders.repeats,
                     "send_rate": round(verdict.sent / sent_s, 1) if sent_s else None},
        "missed_by_send_second": soak.by_second(verdict.missed),
        "deliveries": {"dispatched": verdict.deliveries, "filled": verdict.filled, "missed": verdict.misses,
                       "doubled": verdict.doubles, "clients_missing": verdict.clients_missing,
                       "clients_doubled": verdict.clients_doubled, "s_gaps": gaps},
        "http": {"ok": soak.tally.ok, "503_in_window": soak.tally.in_window_503,
                 "5xx_in_window": soak.tally.in_window_5xx, "network_errors": soak.tally.network_errors,
                 "429": soak.tally.rate_limited, "errors": len(soak.tally.errors),
                 "error_examples": soak.tally.errors[:5]},
        "latency_ms": {"outside_faults": quiet, "inside_faults": faulty},
        "reconnects": {"after_node_fault": len(kill_backs), "how": how, "back_s": summary(back),
                       "back_s_by_fault": {k: summary(v) for k, v in back_by.items()},
                       "resume_to_resumed": summary(resume), "never_back": never,
                       "invalid_session": invalid, "closes": closes,
                       "reconnect_frames": sum(c.reconnect_frames for c in clients)},
        "faults": faults,
        "cpu_during_sending": soak.cpu,
        "memory_mib": {"readings": soak.memory, "labels": ["start", "after warm-up", "end"],
                       "growth_after_warmup": growth, "restarted": sorted(soak.restarted)},
    }


def line(result: dict[str, Any]) -> str:
    m, d, h, lat, rc = (result["messages"], result["deliveries"], result["http"], result["latency_ms"],
                        result["reconnects"])
    s = result["setup"]
    return (f"soak {'PASS' if result['ok'] else 'FAIL'}: {s['backend']} {s['nodes']} nodes, {s['connections']} "
            f"connections, {s['senders']} senders at {s['rate']:g}/s for {s['duration_s']:g} s, faults "
            f"[{s['faults']}] | sent {m['sent']} acked {m['acknowledged']} lost {m['lost']} duplicated "
            f"{m['duplicated']} gave-up {m['gave_up']} retried {m['retried']} | deliveries {d['dispatched']} "
            f"filled {d['filled']} missed {d['missed']} doubled {d['doubled']} | 5xx errors {h['errors']} 503 "
            f"in faults {h['503_in_window']} | p50/p99 {lat['outside_faults']['p50_ms']}/"
            f"{lat['outside_faults']['p99_ms']} ms (in faults {lat['inside_faults']['p50_ms']}/"
            f"{lat['inside_faults']['p99_ms']}) | back after node fault p99 {rc['back_s']['p99_ms']} ms "
            f"| reconnects {rc['how']} | harness cpu {result['cpu_during_sending'].get('harness_core_share')} core | RSS MiB {result['memory_mib']['readings']}")
