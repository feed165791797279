// The gateway client (docs/gateway.md): HELLO, IDENTIFY by the session cookie (no token is sent),
// heartbeats, RESUME with growing back-off after a drop, INVALID_SESSION, and the close codes that
// forbid reconnecting. A rolling restart (RECONNECT, close 1012) reconnects at once: the node is going
// away on purpose and another one is ready, so waiting would only lengthen the gap. The socket and the
// timers are injected so the state machine is tested without a network (web/tests/gateway.test.ts,
// src/lib/gateway-reliability.test.ts).

export const Op = {
  DISPATCH: 0,
  HEARTBEAT: 1,
  IDENTIFY: 2,
  RESUME: 6,
  RECONNECT: 7,
  INVALID_SESSION: 9,
  HELLO: 10,
  HEARTBEAT_ACK: 11,
} as const;

export interface Frame {
  op: number;
  d: unknown;
  s?: number | null;
  t?: string | null;
}

export interface SocketLike {
  send(data: string): void;
  close(code?: number, reason?: string): void;
  onopen: ((ev: unknown) => void) | null;
  onmessage: ((ev: { data: unknown }) => void) | null;
  onclose: ((ev: { code: number; reason?: string }) => void) | null;
  onerror: ((ev: unknown) => void) | null;
}

export interface Timers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
  random(): number;
}

export type Phase =
  | "idle" // not started
  | "connecting" // socket opening, waiting for HELLO
  | "identifying" // IDENTIFY sent, waiting for READY
  | "resuming" // RESUME sent, waiting for the replay and RESUMED
  | "ready" // events flow
  | "waiting" // dropped, a reconnect is scheduled
  | "stopped"; // closed for good (signed out, session gone, replaced)

export interface GatewayOptions {
  url: () => Promise<string> | string;
  socket: (url: string) => SocketLike;
  timers?: Timers;
  onDispatch: (type: string, data: unknown) => void;
  onPhase?: (phase: Phase, detail?: string) => void;
  /** The session is gone (close 4004/4010 or INVALID_SESSION unauthorized/banned): sign in again. */
  onSessionEnded?: (reason: string) => void;
}

/** Close codes after which the client must not reconnect on its own (docs/gateway.md). */
const FINAL = new Map<number, string>([
  [4004, "unauthorized"],
  [4010, "session_invalidated"],
  [4012, "invalid_version"],
  [4013, "replaced"],
]);
/** Close codes after which the gateway session cannot be resumed: reconnect with IDENTIFY. */
const FRESH = new Set([4003, 4007]);
/** Close codes of a server that is going away on purpose (1012 follows RECONNECT; 1001 is a plain
 * shutdown): reconnect at once rather than after the back-off of an error. */
const RESTART = new Set([1001, 1012]);

export const BACKOFF_BASE_MS = 1000;
export const BACKOFF_MAX_MS = 30000;
/** A reconnect after a rolling restart is spread over this long, so the clients of a node that drains do
 * not all reach the next one in the same instant. */
export const RESTART_SPREAD_MS = 250;
/** A socket that opens no HELLO this long is given up: a dead node behind an address that swallows
 * packets leaves the browser's socket "connecting" for minutes. */
export const HELLO_TIMEOUT_MS = 10000;
/** How long a heartbeat sent to check the connection (after a sleep, the network back) may go unanswered. */
export const ALIVE_CHECK_MS = 5000;

const realTimers: Timers = {
  setTimeout: (fn, ms) => globalThis.setTimeout(fn, ms),
  clearTimeout: (h) => globalThis.clearTimeout(h as ReturnType<typeof setTimeout>),
  random: () => Math.random(),
};

export class GatewayClient {
  phase: Phase = "idle";
  sessionId: string | null = null;
  seq: number | null = null;
  attempts = 0;
  private ws: SocketLike | null = null;
  private heartbeatTimer: unknown = null;
  private retryTimer: unknown = null;
  private aliveTimer: unknown = null;
  private interval = 30000;
  private acked = true;
  /** A prompt reconnect was made and no session became ready since: a server that keeps asking to
   * reconnect gets the ordinary back-off rather than a tight loop. */
  private promptPending = false;
  private readonly timers: Timers;

  constructor(private readonly options: GatewayOptions) {
    this.timers = options.timers ?? realTimers;
  }

  start(): void {
    if (this.phase !== "idle" && this.phase !== "stopped") return;
    void this.open();
  }

  /** Closes for good (sign-out): no reconnect, the gateway session is forgotten. */
  stop(): void {
    this.setPhase("stopped");
    this.clearTimers();
    this.sessionId = null;
    this.seq = null;
    const ws = this.ws;
    this.ws = null;
    ws?.close(1000, "bye");
  }

  /** Drops the connection as a network failure would (also used when a heartbeat goes unanswered). */
  drop(reason = "no heartbeat acknowledgement"): void {
    const ws = this.ws;
    if (!ws) return;
    this.detach(ws);
    ws.close(4000, reason);
    this.scheduleReconnect();
  }

  /** Tries at once when a reconnect is waiting (the browser is back online, the tab is shown again): the
   * back-off protects the server from a client that fails, not a client that has a reason to hope. */
  reconnectNow(): void {
    if (this.phase !== "waiting") return;
    this.timers.clearTimeout(this.retryTimer);
    this.retryTimer = null;
    void this.open();
  }

  /** Asks the server at once whether this connection still lives: after the computer slept, a socket can
   * look open while its node forgot it long ago, and the next regular heartbeat may be 45 s away. No ACK
   * within ALIVE_CHECK_MS drops it (then RESUME, or IDENTIFY and the gap fill). */
  checkAlive(): void {
    const ws = this.ws;
    if (this.phase !== "ready" || !ws) return;
    this.acked = false;
    this.send({ op: Op.HEARTBEAT, d: this.seq });
    this.timers.clearTimeout(this.aliveTimer);
    this.aliveTimer = this.timers.setTimeout(() => {
      if (this.ws === ws && !this.acked) this.drop("no heartbeat acknowledgement after a wake");
    }, ALIVE_CHECK_MS);
  }

  private setPhase(phase: Phase, detail?: string): void {
    this.phase = phase;
    this.options.onPhase?.(phase, detail);
  }

  private async open(): Promise<void> {
    this.setPhase("connecting");
    let url: string;
    try {
      url = await this.options.url();
    } catch {
      this.scheduleReconnect();
      return;
    }
    if (this.phase !== "connecting") return; // stopped meanwhile
    const ws = this.options.socket(url);
    this.ws = ws;
    ws.onmessage = (ev) => this.receive(ws, ev.data);
    ws.onclose = (ev) => this.closed(ws, ev.code);
    ws.onerror = () => {
      /* a close event follows */
    };
    this.timers.clearTimeout(this.heartbeatTimer);
    this.heartbeatTimer = this.timers.setTimeout(() => {
      if (this.ws === ws && this.phase === "connecting") this.drop("no HELLO");
    }, HELLO_TIMEOUT_MS);
  }

  private send(frame: Frame): void {
    this.ws?.send(JSON.stringify(frame));
  }

  private receive(ws: SocketLike, raw: unknown): void {
    if (ws !== this.ws || typeof raw !== "string") return;
    let frame: Frame;
    try {
      frame = JSON.parse(raw) as Frame;
    } catch {
      return;
    }
    switch (frame.op) {
      case Op.HELLO:
        this.hello(frame.d as { heartbeat_interval: number });
        break;
      case Op.HEARTBEAT:
        this.send({ op: Op.HEARTBEAT, d: this.seq });
        break;
      case Op.HEARTBEAT_ACK:
        this.acked = true;
        break;
      case Op.DISPATCH:
        this.dispatch(frame);
        break;
      case Op.RECONNECT:
        // The node is draining: leave it now (its 1012 close would follow) and RESUME elsewhere.
        this.detach(ws);
        ws.close(4000, "reconnect requested");
        this.reconnectPromptly();
        break;
      case Op.INVALID_SESSION:
        this.invalidSession(frame.d as { reason: string; resumable: boolean });
        break;
    }
  }

  private hello(d: { heartbeat_interval: number }): void {
    this.interval = d.heartbeat_interval;
    this.acked = true;
    // The first heartbeat after interval × random[0,1), so reconnecting clients do not beat in step.
    this.beatAfter(this.interval * this.timers.random());
    if (this.sessionId !== null && this.seq !== null) {
      this.resume();
    } else {
      this.identify();
    }
  }

  private identify(): void {
    this.setPhase("identifying");
    this.sessionId = null;
    this.seq = null;
    this.send({ op: Op.IDENTIFY, d: { properties: { os: "web", browser: "meadhall-web", device: "browser" } } });
  }

  private resume(): void {
    this.setPhase("resuming");
    this.send({ op: Op.RESUME, d: { session_id: this.sessionId, seq: this.seq } });
  }

  private beatAfter(ms: number): void {
    this.timers.clearTimeout(this.heartbeatTimer);
    this.heartbeatTimer = this.timers.setTimeout(() => this.beat(), ms);
  }

  private beat(): void {
    if (!this.ws) return;
    if (!this.acked) {
      // No answer to the previous heartbeat: the connection is dead even if the socket says otherwise.
      this.drop();
      return;
    }
    this.acked = false;
    this.send({ op: Op.HEARTBEAT, d: this.seq });
    this.beatAfter(this.interval);
  }

  private dispatch(frame: Frame): void {
    if (typeof frame.s === "number") this.seq = frame.s;
    const type = frame.t ?? "";
    if (type === "READY") {
      this.sessionId = (frame.d as { session_id: string }).session_id;
      this.attempts = 0;
      this.promptPending = false;
      this.setPhase("ready");
    } else if (type === "RESUMED") {
      this.attempts = 0;
      this.promptPending = false;
      this.setPhase("ready");
    }
    this.options.onDispatch(type, frame.d);
  }

  private invalidSession(d: { reason: string; resumable: boolean }): void {
    if (d.resumable) {
      // A passing condition on the server: wait 1–5 s and RESUME again on this connection.
      this.timers.clearTimeout(this.retryTimer);
      this.retryTimer = this.timers.setTimeout(() => this.resume(), 1000 + 4000 * this.timers.random());
      return;
    }
    if (d.reason === "unauthorized" || d.reason === "banned") {
      this.end(d.reason);
      return;
    }
    // session_expired: the gateway session is gone but the connection stays open for a new IDENTIFY.
    this.options.onDispatch("SESSION_RESET", d);
    this.identify();
  }

  private closed(ws: SocketLike, code: number): void {
    if (ws !== this.ws) return;
    this.detach(ws);
    if (this.phase === "stopped") return;
    const final = FINAL.get(code);
    if (final) {
      this.end(final);
      return;
    }
    if (FRESH.has(code)) {
      this.sessionId = null;
      this.seq = null;
    }
    if (RESTART.has(code)) this.reconnectPromptly();
    else this.scheduleReconnect();
  }

  private end(reason: string): void {
    const ws = this.ws;
    if (ws) this.detach(ws);
    this.sessionId = null;
    this.seq = null;
    this.setPhase("stopped", reason);
    ws?.close(1000);
    this.options.onSessionEnded?.(reason);
  }

  private detach(ws: SocketLike): void {
    ws.onmessage = null;
    ws.onclose = null;
    ws.onerror = null;
    if (this.ws === ws) this.ws = null;
    this.clearTimers();
  }

  private clearTimers(): void {
    this.timers.clearTimeout(this.heartbeatTimer);
    this.timers.clearTimeout(this.retryTimer);
    this.timers.clearTimeout(this.aliveTimer);
    this.heartbeatTimer = null;
    this.retryTimer = null;
    this.aliveTimer = null;
  }

  /** The delay before reconnect attempt `n` (0-based): doubling from 1 s up to 30 s, with jitter. */
  static backoff(attempt: number, random: number): number {
    const base = Math.min(BACKOFF_MAX_MS, BACKOFF_BASE_MS * 2 ** attempt);
    return Math.round(base / 2 + (base / 2) * random);
  }

  /** After a rolling restart: a new connection within RESTART_SPREAD_MS, counted as no failure; a
   * second one before any session became ready falls back to the back-off. */
  private reconnectPromptly(): void {
    if (this.promptPending) {
      this.scheduleReconnect();
      return;
    }
    this.promptPending = true;
    const delay = Math.round(RESTART_SPREAD_MS * this.timers.random());
    this.setPhase("waiting", String(delay));
    this.timers.clearTimeout(this.retryTimer);
    this.retryTimer = this.timers.setTimeout(() => void this.open(), delay);
  }

  private scheduleReconnect(): void {
    const delay = GatewayClient.backoff(this.attempts, this.timers.random());
    this.attempts += 1;
    this.setPhase("waiting", String(delay));
    this.timers.clearTimeout(this.retryTimer);
    this.retryTimer = this.timers.setTimeout(() => void this.open(), delay);
  }
}
