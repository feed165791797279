import { beforeEach, describe, expect, it } from "vitest";
import { ALIVE_CHECK_MS, GatewayClient, HELLO_TIMEOUT_MS, Op, RESTART_SPREAD_MS, type SocketLike, type Timers } from "./gateway";

// The gateway client when a node dies or drains (docs/client.md "Reconnects and resends"): a dropped socket
// is resumed promptly, a rolling restart at once, a lost session identified again.

class FakeSocket implements SocketLike {
  sent: any[] = [];
  closed: number | null = null;
  onopen: ((ev: unknown) => void) | null = null;
  onmessage: ((ev: { data: unknown }) => void) | null = null;
  onclose: ((ev: { code: number }) => void) | null = null;
  onerror: ((ev: unknown) => void) | null = null;
  send(data: string) {
    this.sent.push(JSON.parse(data));
  }
  close(code = 1000) {
    this.closed = code;
  }
  server(frame: object) {
    this.onmessage?.({ data: JSON.stringify(frame) });
  }
  drop(code: number) {
    this.onclose?.({ code });
  }
}

class FakeTimers implements Timers {
  now = 0;
  rnd = 0.5;
  private next = 1;
  private pending = new Map<number, { at: number; fn: () => void }>();
  setTimeout(fn: () => void, ms: number) {
    const id = this.next++;
    this.pending.set(id, { at: this.now + ms, fn });
    return id;
  }
  clearTimeout(handle: unknown) {
    this.pending.delete(handle as number);
  }
  random() {
    return this.rnd;
  }
  advance(ms: number) {
    const until = this.now + ms;
    for (;;) {
      const due = [...this.pending.entries()].filter(([, t]) => t.at <= until).sort((a, b) => a[1].at - b[1].at)[0];
      if (!due) break;
      this.pending.delete(due[0]);
      this.now = due[1].at;
      due[1].fn();
    }
    this.now = until;
  }
}

const flush = () => new Promise((r) => setTimeout(r, 0));
const HELLO = { op: Op.HELLO, d: { heartbeat_interval: 30000 } };

describe("gateway client under node failures", () => {
  let sockets: FakeSocket[];
  let timers: FakeTimers;
  let events: [string, any][];
  let client: GatewayClient;
  const last = () => sockets[sockets.length - 1];

  /** Advances the fake clock `ms` and lets the awaited url() of a reconnect run. */
  const wait = async (ms: number) => {
    timers.advance(ms);
    await flush();
  };

  beforeEach(async () => {
    sockets = [];
    timers = new FakeTimers();
    events = [];
    client = new GatewayClient({
      url: () => "ws://localhost:8000/gateway",
      socket: () => {
        const s = new FakeSocket();
        sockets.push(s);
        return s;
      },
      timers,
      onDispatch: (t, d) => events.push([t, d]),
    });
    client.start();
    await flush();
    last().server(HELLO);
    last().server({ op: Op.DISPATCH, t: "READY", s: 1, d: { session_id: "gs1" } });
    last().server({ op: Op.DISPATCH, t: "MESSAGE_CREATE", s: 2, d: { id: "10" } });
  });

  it("resumes within a second of a killed node's dropped socket", async () => {
    timers.rnd = 1; // the longest jitter
    last().drop(1006);
    expect(client.phase).toBe("waiting");
    await wait(999);
    expect(sockets).toHaveLength(1);
    await wait(1);
    expect(sockets).toHaveLength(2);
    last().server(HELLO);
    expect(last().sent[0]).toEqual({ op: Op.RESUME, d: { session_id: "gs1", seq: 2 } });
  });

  it("tries again within 3 s of the kill when the first reconnect fails too (a load balancer still sending to the dead node)", async () => {
    timers.rnd = 1; // the longest jitter
    last().drop(1006);
    await wait(1000);
    last().drop(1006); // refused
    await wait(1999);
    expect(sockets).toHaveLength(2);
    await wait(1);
    expect(sockets).toHaveLength(3); // 3 s after the kill
    last().server(HELLO);
    last().server({ op: Op.DISPATCH, t: "RESUMED", s: 3, d: { replayed: 0 } });
    expect(client.phase).toBe("ready");
    expect(client.attempts).toBe(0);
  });

  it("reconnects at once after RECONNECT, without the back-off of an error, and resumes", async () => {
    // A back-off already grown by earlier failures does not apply to a restart either.
    client.attempts = 4;
    last().server({ op: Op.RECONNECT, d: null });
    expect(sockets[0].closed).not.toBeNull();
    expect(client.phase).toBe("waiting");
    await wait(RESTART_SPREAD_MS / 2);
    expect(sockets).toHaveLength(2);
    // The server's own 1012 close of the old socket arrives late: it is ignored.
    sockets[0].drop(1012);
    expect(sockets).toHaveLength(2);
    last().server(HELLO);
    expect(last().sent[0]).toEqual({ op: Op.RESUME, d: { session_id: "gs1", seq: 2 } });
    last().server({ op: Op.DISPATCH, t: "RESUMED", s: 3, d: { replayed: 0 } });
    expect(client.phase).toBe("ready");
  });

  it("reconnects at once on close 1012 alone, and 1001", async () => {
    for (const code of [1012, 1001]) {
      const before = sockets.length;
      last().drop(code);
      await wait(RESTART_SPREAD_MS);
      expect(sockets).toHaveLength(before + 1);
      last().server(HELLO);
      expect(last().sent[0].op).toBe(Op.RESUME);
      last().server({ op: Op.DISPATCH, t: "RESUMED", s: 3, d: { replayed: 0 } });
    }
  });

  it("falls back to the back-off when the server keeps asking to reconnect before any session is ready", async () => {
    last().server({ op: Op.RECONNECT, d: null });
    await wait(RESTART_SPREAD_MS);
    expect(sockets).toHaveLength(2);
    last().server(HELLO);
    last().server({ op: Op.RECONNECT, d: null }); // again, before RESUMED
    await wait(RESTART_SPREAD_MS);
    expect(sockets).toHaveLength(2);
    await wait(GatewayClient.backoff(0, 0.5));
    expect(sockets).toHaveLength(3);
  });

  it("gives up a socket that opens no HELLO and tries another", async () => {
    last().drop(1006);
    await wait(1000);
    expect(sockets).toHaveLength(2);
    await wait(HELLO_TIMEOUT_MS - 1);
    expect(sockets[1].closed).toBeNull();
    await wait(1);
    expect(sockets[1].closed).toBe(4000);
    expect(client.phase).toBe("waiting");
    await wait(GatewayClient.backoff(1, 0.5));
    expect(sockets).toHaveLength(3);
    last().server(HELLO); // a HELLO in time keeps the socket (the heartbeat takes over)
    await wait(HELLO_TIMEOUT_MS);
    expect(sockets[2].closed).toBeNull();
  });

  it("identifies again when the resume is refused as not resumable, and dispatches the new READY", async () => {
    last().drop(1006);
    await wait(1000);
    last().server(HELLO);
    expect(last().sent[0].op).toBe(Op.RESUME);
    last().server({ op: Op.INVALID_SESSION, d: { reason: "session_expired", resumable: false } });
    expect(last().sent[1].op).toBe(Op.IDENTIFY);
    expect(last().closed).toBeNull();
    last().server({ op: Op.DISPATCH, t: "READY", s: 1, d: { session_id: "gs2" } });
    expect(client.sessionId).toBe("gs2");
    expect(client.seq).toBe(1);
    expect(events.map((e) => e[0])).toEqual(["READY", "MESSAGE_CREATE", "SESSION_RESET", "READY"]);
  });

  it("tries at once when told the network is back, and not while connected", async () => {
    last().drop(1006);
    await wait(1000);
    last().drop(1006);
    expect(client.phase).toBe("waiting");
    client.reconnectNow();
    await flush();
    expect(sockets).toHaveLength(3);
    last().server(HELLO);
    last().server({ op: Op.DISPATCH, t: "RESUMED", s: 3, d: { replayed: 0 } });
    client.reconnectNow();
    await flush();
    expect(sockets).toHaveLength(3);
    // The cancelled timer of the skipped wait opens nothing later (heartbeats are answered meanwhile).
    await wait(15000);
    last().server({ op: Op.HEARTBEAT_ACK, d: null });
    await wait(20000);
    expect(sockets).toHaveLength(3);
  });

  it("checks the connection at once after a wake and drops it when the server does not answer", async () => {
    client.checkAlive();
    expect(last().sent.at(-1)).toEqual({ op: Op.HEARTBEAT, d: 2 });
    await wait(ALIVE_CHECK_MS - 1);
    expect(sockets[0].closed).toBeNull();
    await wait(1);
    expect(sockets[0].closed).toBe(4000);
    expect(client.phase).toBe("waiting");
    await wait(1000);
    last().server(HELLO);
    expect(last().sent[0]).toEqual({ op: Op.RESUME, d: { session_id: "gs1", seq: 2 } });
  });

  it("keeps a connection that answers the check, and the regular heartbeats go on", async () => {
    client.checkAlive();
    last().server({ op: Op.HEARTBEAT_ACK, d: null });
    await wait(ALIVE_CHECK_MS);
    expect(sockets[0].closed).toBeNull();
    await wait(15000); // the regular beat (interval × 0.5) follows
    last().server({ op: Op.HEARTBEAT_ACK, d: null });
    await wait(30000);
    expect(sockets[0].closed).toBeNull();
    expect(sockets).toHaveLength(1);
    expect(last().sent.filter((f) => f.op === Op.HEARTBEAT).length).toBeGreaterThanOrEqual(3);
  });

  it("checks nothing while not connected", async () => {
    last().drop(1006);
    client.checkAlive();
    expect(sockets[0].sent.filter((f) => f.op === Op.HEARTBEAT)).toHaveLength(0);
  });
});
