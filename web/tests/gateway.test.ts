import { beforeEach, describe, expect, it } from "vitest";
import { GatewayClient, Op, type SocketLike, type Timers } from "../src/lib/gateway";

class FakeSocket implements SocketLike {
  sent: any[] = [];
  closed: number | null = null;
  onopen: ((ev: unknown) => void) | null = null;
  onmessage: ((ev: { data: unknown }) => void) | null = null;
  onclose: ((ev: { code: number }) => void) | null = null;
  onerror: ((ev: unknown) => void) | null = null;
  constructor(public url: string) {}
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
    return 0.5;
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

describe("gateway client", () => {
  let sockets: FakeSocket[];
  let timers: FakeTimers;
  let events: [string, any][];
  let ended: string[];
  let client: GatewayClient;

  beforeEach(async () => {
    sockets = [];
    timers = new FakeTimers();
    events = [];
    ended = [];
    client = new GatewayClient({
      url: () => "ws://localhost:8000/gateway",
      socket: (url) => {
        const s = new FakeSocket(url);
        sockets.push(s);
        return s;
      },
      timers,
      onDispatch: (t, d) => events.push([t, d]),
      onSessionEnded: (r) => ended.push(r),
    });
    client.start();
    await flush();
  });

  const last = () => sockets[sockets.length - 1];
  const ready = (s = last(), seq = 1) => s.server({ op: Op.DISPATCH, t: "READY", s: seq, d: { session_id: "gs1" } });

  it("identifies by cookie (no token) after HELLO and becomes ready", () => {
    expect(client.phase).toBe("connecting");
    last().server({ op: Op.HELLO, d: { heartbeat_interval: 30000 } });
    expect(last().sent[0].op).toBe(Op.IDENTIFY);
    expect(last().sent[0].d.token).toBeUndefined();
    expect(client.phase).toBe("identifying");
    ready();
    expect(client.phase).toBe("ready");
    expect(client.sessionId).toBe("gs1");
    expect(events[0][0]).toBe("READY");
  });

  it("beats first after interval × random, then every interval, with the last seq", () => {
    last().server({ op: Op.HELLO, d: { heartbeat_interval: 30000 } });
    ready(last(), 7);
    timers.advance(14999);
    expect(last().sent.filter((f) => f.op === Op.HEARTBEAT)).toHaveLength(0);
    timers.advance(1);
    expect(last().sent.at(-1)).toEqual({ op: Op.HEARTBEAT, d: 7 });
    last().server({ op: Op.HEARTBEAT_ACK, d: null });
    timers.advance(30000);
    expect(last().sent.filter((f) => f.op === Op.HEARTBEAT)).toHaveLength(2);
  });

  it("answers a server's heartbeat request at once", () => {
    last().server({ op: Op.HELLO, d: { heartbeat_interval: 30000 } });
    ready(last(), 3);
    last().server({ op: Op.HEARTBEAT, d: null });
    expect(last().sent.at(-1)).toEqual({ op: Op.HEARTBEAT, d: 3 });
  });

  it("treats a missing heartbeat ACK as a dead connection and resumes on a new one", async () => {
    last().server({ op: Op.HELLO, d: { heartbeat_interval: 30000 } });
    ready(last(), 4);
    timers.advance(15000); // first beat, never acknowledged
    timers.advance(30000); // the next tick finds no ACK
    expect(sockets[0].closed).toBe(4000);
    expect(client.phase).toBe("waiting");
    timers.advance(30000);
    await flush();
    expect(sockets).toHaveLength(2);
    last().server({ op: Op.HELLO, d: { heartbeat_interval: 30000 } });
    expect(last().sent[0]).toEqual({ op: Op.RESUME, d: { session_id: "gs1", seq: 4 } });
    expect(client.phase).toBe("resuming");
  });

  it("resumes after a drop, replays in order and is ready again on RESUMED", async () => {
    last().server({ op: Op.HELLO, d: { heartbeat_interval: 30000 } });
    ready(last(), 1);
    last().server({ op: Op.DISPATCH, t: "MESSAGE_CREATE", s: 2, d: { id: "1" } });
    last().drop(1006);
    expect(client.phase).toBe("waiting");
    timers.advance(GatewayClient.backoff(0, 0.5));
    await flush();
    const s2 = last();
    s2.server({ op: Op.HELLO, d: { heartbeat_interval: 30000 } });
    expect(s2.sent[0]).toEqual({ op: Op.RESUME, d: { session_id: "gs1", seq: 2 } });
    s2.server({ op: Op.DISPATCH, t: "MESSAGE_CREATE", s: 3, d: { id: "2" } });
    s2.server({ op: Op.DISPATCH, t: "RESUMED", s: 4, d: { replayed: 1 } });
    expect(client.phase).toBe("ready");
    expect(client.seq).toBe(4);
    expect(events.map((e) => e[0])).toEqual(["READY", "MESSAGE_CREATE", "MESSAGE_CREATE", "RESUMED"]);
    expect(client.attempts).toBe(0);
  });

  it("backs off more after each failed reconnect, up to 30 s", async () => {
    expect(GatewayClient.backoff(0, 0)).toBe(500);
    expect(GatewayClient.backoff(0, 1)).toBe(1000);
    expect(GatewayClient.backoff(3, 1)).toBe(8000);
    expect(GatewayClient.backoff(10, 1)).toBe(30000);
    last().drop(1006);
    timers.advance(GatewayClient.backoff(0, 0.5));
    await flush();
    last().drop(1006);
    expect(client.attempts).toBe(2);
    timers.advance(GatewayClient.backoff(1, 0.5) - 1);
    await flush();
    expect(sockets).toHaveLength(2);
    timers.advance(1);
    await flush();
    expect(sockets).toHaveLength(3);
  });

  it("identifies again on the same connection when the session expired", () => {
    last().server({ op: Op.HELLO, d: { heartbeat_interval: 30000 } });
    ready(last(), 5);
    last().drop(1006);
    return (async () => {
      timers.advance(2000);
      await flush();
      const s2 = last();
      s2.server({ op: Op.HELLO, d: { heartbeat_interval: 30000 } });
      s2.server({ op: Op.INVALID_SESSION, d: { reason: "session_expired", resumable: false } });
      expect(s2.sent.at(-1).op).toBe(Op.IDENTIFY);
      expect(client.sessionId).toBeNull();
      expect(events.at(-1)![0]).toBe("SESSION_RESET");
      expect(s2.closed).toBeNull();
    })();
  });

  it("retries RESUME after 1–5 s when the server asks (resumable)", () => {
    last().server({ op: Op.HELLO, d: { heartbeat_interval: 30000 } });
    ready(last(), 2);
    last().server({ op: Op.INVALID_SESSION, d: { reason: "retry", resumable: true } });
    timers.advance(2999);
    expect(last().sent.filter((f) => f.op === Op.RESUME)).toHaveLength(0);
    timers.advance(1);
    expect(last().sent.at(-1)).toEqual({ op: Op.RESUME, d: { session_id: "gs1", seq: 2 } });
  });

  it.each([
    [4004, "unauthorized"],
    [4010, "session_invalidated"],
    [4013, "replaced"],
  ])("does not reconnect after close %i", async (code, reason) => {
    last().server({ op: Op.HELLO, d: { heartbeat_interval: 30000 } });
    ready();
    last().drop(code);
    expect(client.phase).toBe("stopped");
    expect(ended).toEqual([reason]);
    timers.advance(120000);
    await flush();
    expect(sockets).toHaveLength(1);
  });

  it("ends the session on INVALID_SESSION unauthorized", () => {
    last().server({ op: Op.HELLO, d: { heartbeat_interval: 30000 } });
    last().server({ op: Op.INVALID_SESSION, d: { reason: "unauthorized", resumable: false } });
    expect(client.phase).toBe("stopped");
    expect(ended).toEqual(["unauthorized"]);
  });

  it("reconnects with IDENTIFY after close 4007 (bad seq)", async () => {
    last().server({ op: Op.HELLO, d: { heartbeat_interval: 30000 } });
    ready(last(), 9);
    last().drop(4007);
    timers.advance(2000);
    await flush();
    last().server({ op: Op.HELLO, d: { heartbeat_interval: 30000 } });
    expect(last().sent[0].op).toBe(Op.IDENTIFY);
  });

  it("follows RECONNECT with a resume on a new connection", async () => {
    last().server({ op: Op.HELLO, d: { heartbeat_interval: 30000 } });
    ready(last(), 6);
    last().server({ op: Op.RECONNECT, d: null });
    expect(sockets[0].closed).not.toBeNull();
    timers.advance(2000);
    await flush();
    last().server({ op: Op.HELLO, d: { heartbeat_interval: 30000 } });
    expect(last().sent[0]).toEqual({ op: Op.RESUME, d: { session_id: "gs1", seq: 6 } });
  });

  it("stop() closes for good", async () => {
    last().server({ op: Op.HELLO, d: { heartbeat_interval: 30000 } });
    ready();
    client.stop();
    expect(sockets[0].closed).toBe(1000);
    timers.advance(120000);
    await flush();
    expect(sockets).toHaveLength(1);
    expect(client.phase).toBe("stopped");
  });
});
