import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";

// The store after a lost gateway session and around a lost send answer (docs/client.md "Reconnects and
// resends"): every held room fills its gap from history, nothing twice; a send is retried with its nonce and
// shows once. The store runs as in the page, against a fake server and a fake WebSocket.

const ME = { id: "100", username: "astrid", display_name: "Astrid", avatar: null };
const OTHER = { id: "200", username: "bjorn", display_name: "Bjorn", avatar: null };
const ROOM = "500";
const OTHER_ROOM = "501";
const GONE_ROOM = "502";

interface Msg {
  id: string;
  channel_id: string;
  content: string;
  author: typeof ME;
  nonce?: string | null;
  mentions: string[];
  reactions: unknown[];
  kind: string;
  created_at: string;
}

let nextId = 1000;
function message(channelId: string, content: string, author = OTHER, nonce: string | null = null): Msg {
  nextId += 1;
  return { id: String(nextId), channel_id: channelId, content, author, nonce, mentions: [], reactions: [], kind: "default",
    created_at: new Date(nextId * 1000).toISOString() };
}

class FakeWebSocket {
  static all: FakeWebSocket[] = [];
  sent: any[] = [];
  onopen: any = null;
  onmessage: any = null;
  onclose: any = null;
  onerror: any = null;
  constructor(public url: string) {
    FakeWebSocket.all.push(this);
  }
  send(data: string) {
    this.sent.push(JSON.parse(data));
  }
  close() {}
  server(frame: object) {
    this.onmessage?.({ data: JSON.stringify(frame) });
  }
}

const tick = async (n = 5) => {
  for (let i = 0; i < n; i++) await new Promise((r) => setTimeout(r, 0));
};

async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (check()) return;
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error(`never: ${what}`);
}

describe("store after a lost session and a lost answer", () => {
  let rooms: Record<string, Msg[]>;
  let requests: string[];
  let posts: any[];
  let postHook: ((m: Msg, created: boolean) => Response | void) | null;
  let forbidden: Set<string>;
  let mod: typeof import("./store.svelte");

  function ready(seq = 1) {
    const guild = {
      id: "300", name: "Hall", system_channel_id: ROOM, voice_states: [], emojis: [], roles: [],
      channels: [ROOM, OTHER_ROOM, GONE_ROOM].map((id, i) => ({ id, type: "text", name: `r${i}`, position: i, last_message_id: null })),
      member: { guild_id: "300", user: ME, roles: [] },
    };
    return { op: 0, t: "READY", s: seq, d: { session_id: `gs${seq}`, user: ME, guilds: [guild], dm_channels: [], read_states: [] } };
  }

  function page(list: Msg[], query: URLSearchParams): { messages: Msg[]; has_more: boolean } {
    const limit = Number(query.get("limit") ?? 50);
    const after = query.get("after");
    const sorted = [...list].sort((a, b) => Number(a.id) - Number(b.id));
    if (after) {
      const later = sorted.filter((m) => Number(m.id) > Number(after));
      return { messages: later.slice(0, limit).reverse(), has_more: later.length > limit };
    }
    return { messages: sorted.slice(-limit).reverse(), has_more: sorted.length > limit };
  }

  beforeEach(async () => {
    vi.resetModules();
    // The fresh modules hold a fresh catalogue: English again, as tests/setup-i18n.ts loads it.
    await (await import("../i18n/index.svelte")).setLanguage("en");
    FakeWebSocket.all = [];
    rooms = { [ROOM]: [], [OTHER_ROOM]: [], [GONE_ROOM]: [] };
    requests = [];
    posts = [];
    postHook = null;
    forbidden = new Set();
    const loc = { pathname: "/", search: "", hash: "" };
    vi.stubGlobal("location", loc);
    vi.stubGlobal("history", { pushState() {}, replaceState() {} });
    vi.stubGlobal("window", { addEventListener() {}, location: loc });
    vi.stubGlobal("document", { addEventListener() {}, querySelector: () => null, visibilityState: "visible" });
    vi.stubGlobal("localStorage", { getItem: () => null, setItem() {}, removeItem() {}, length: 0, key: () => null });
    vi.stubGlobal("WebSocket", FakeWebSocket);
    const api = await import("./api");
    api.configure({
      sleep: async () => undefined,
      fetch: (async (input: string, init: RequestInit) => {
        const url = new URL(input, "http://localhost");
        const method = init.method ?? "GET";
        requests.push(`${method} ${url.pathname}${url.search}`);
        const json = (status: number, body: unknown) =>
          new Response(JSON.stringify(body), { status, headers: { "Content-Type": "application/json" } });
        if (url.pathname === "/api/v1/users/@me") return json(200, { user: ME });
        if (url.pathname === "/api/v1/gateway") return json(200, { url: "ws://localhost/gateway" });
        const m = url.pathname.match(/^\/api\/v1\/channels\/(\d+)\/(messages|ack)$/);
        if (m && forbidden.has(m[1])) return json(403, { error: { code: "perm.denied", message: "No." } });
        if (m && m[2] === "ack") return json(200, { read_state: { channel_id: m[1], last_read_message_id: null, mention_count: 0 } });
        if (m && method === "GET") return json(200, page(rooms[m[1]], url.searchParams));
        if (m && method === "POST") {
          const body = JSON.parse(init.body as string);
          posts.push(body);
          let stored = rooms[m[1]].find((x) => x.nonce === body.nonce && x.author.id === ME.id);
          const created = !stored;
          if (!stored) {
            stored = message(m[1], body.content, ME, body.nonce);
            rooms[m[1]].push(stored);
          }
          const instead = postHook?.(stored, created);
          if (instead) return instead;
          return json(created ? 201 : 200, { message: stored });
        }
        return json(404, { error: { code: "not_found", message: "?" } });
      }) as typeof fetch,
    });
    mod = await import("./store.svelte");
    await mod.boot();
    await tick();
    ws().server({ op: 10, d: { heartbeat_interval: 30000 } });
    ws().server(ready());
  });

  afterEach(() => {
    vi.unstubAllGlobals();
  });

  const ws = () => FakeWebSocket.all[FakeWebSocket.all.length - 1];
  const held = (room = ROOM) => mod.store.messages[room]?.items.map((m) => m.content) ?? [];

  /** The server loses the session: a resume is refused as not resumable and the client identifies again. */
  async function loseSession() {
    ws().server({ op: 9, d: { reason: "session_expired", resumable: false } });
    expect(ws().sent.at(-1).op).toBe(2);
    requests = [];
    ws().server(ready(1));
  }

  async function openRoomWith(count: number) {
    for (let i = 0; i < count; i++) rooms[ROOM].push(message(ROOM, `m${i}`));
    mod.setOpenChannel(ROOM);
    await until(() => held().length === Math.min(count, 50), "the room loaded");
  }

  it("fetches what came after the newest held message, merged once with live events", async () => {
    await openRoomWith(3);
    const missed = [message(ROOM, "missed 1"), message(ROOM, "missed 2")];
    rooms[ROOM].push(...missed);
    await loseSession();
    // A live event of the new session arrives while the gap is fetched, and one of the missed ones again.
    const live = message(ROOM, "live");
    rooms[ROOM].push(live);
    ws().server({ op: 0, t: "MESSAGE_CREATE", s: 2, d: live });
    ws().server({ op: 0, t: "MESSAGE_CREATE", s: 3, d: missed[1] });
    await until(() => mod.store.messages[ROOM].fresh, "the gap filled");
    expect(held()).toEqual(["m0", "m1", "m2", "missed 1", "missed 2", "live"]);
    expect(requests.filter((r) => r.startsWith("GET /api/v1/channels/500/"))).toEqual([
      `GET /api/v1/channels/500/messages?after=${rooms[ROOM][2].id}&limit=100`,
    ]);
  });

  it("pages through a longer gap until caught up", async () => {
    await openRoomWith(2);
    for (let i = 0; i < 250; i++) rooms[ROOM].push(message(ROOM, `g${i}`));
    await loseSession();
    await until(() => mod.store.messages[ROOM].fresh, "the gap filled");
    expect(held()).toEqual(["m0", "m1", ...Array.from({ length: 250 }, (_, i) => `g${i}`)]);
    expect(requests.filter((r) => r.includes("/500/messages"))).toHaveLength(3);
  });

  it("reloads the room at its newest page when the gap is longer than the bound", async () => {
    await openRoomWith(2);
    const missed = mod.CATCH_UP_PAGES * 100 + 30;
    for (let i = 0; i < missed; i++) rooms[ROOM].push(message(ROOM, `g${i}`));
    await loseSession();
    await until(() => mod.store.messages[ROOM].fresh, "the room reloaded");
    expect(held()).toEqual(Array.from({ length: 50 }, (_, i) => `g${missed - 50 + i}`));
    expect(mod.store.messages[ROOM].hasMore).toBe(true);
    expect(requests.filter((r) => r.includes("/500/messages"))).toHaveLength(mod.CATCH_UP_PAGES + 1);
  });

  it("fills every held room, not only the open one, and forgets a room it may no longer read", async () => {
    for (const room of [OTHER_ROOM, GONE_ROOM]) {
      rooms[room].push(message(room, `${room} old`));
      mod.setOpenChannel(room);
      await until(() => held(room).length === 1, `room ${room} loaded`);
    }
    await openRoomWith(1);
    rooms[OTHER_ROOM].push(message(OTHER_ROOM, "while away"));
    forbidden.add(GONE_ROOM);
    await loseSession();
    await until(() => mod.store.messages[OTHER_ROOM].fresh && !mod.store.messages[GONE_ROOM], "both rooms handled");
    expect(held(OTHER_ROOM)).toEqual([`${OTHER_ROOM} old`, "while away"]);
    // The open room is asked first.
    expect(requests.filter((r) => r.includes("after="))[0]).toContain(`/channels/${ROOM}/`);
  });

  it("a first READY (nothing held) fetches the open room's newest page only", async () => {
    rooms[ROOM].push(message(ROOM, "first"));
    mod.setOpenChannel(ROOM);
    await until(() => held().length === 1, "loaded");
    expect(requests.some((r) => r.includes("after="))).toBe(false);
  });

  it("retries a send whose answer was lost, with the same nonce, and shows it once", async () => {
    await openRoomWith(1);
    let lose = true;
    postHook = () => {
      if (lose) {
        lose = false;
        throw new TypeError("Failed to fetch"); // stored, but the answer never came
      }
    };
    await mod.send(ROOM, "hello hall", null);
    expect(posts).toHaveLength(2);
    expect(posts[0].nonce).toBe(posts[1].nonce);
    expect(rooms[ROOM].filter((m) => m.content === "hello hall")).toHaveLength(1);
    expect(held().filter((c) => c === "hello hall")).toHaveLength(1);
    expect(mod.outbox.items).toEqual([]);
    // The echo that follows changes nothing.
    ws().server({ op: 0, t: "MESSAGE_CREATE", s: 2, d: rooms[ROOM].at(-1) });
    expect(held().filter((c) => c === "hello hall")).toHaveLength(1);
  });

  it("stops retrying when the echo with the nonce came first", async () => {
    await openRoomWith(1);
    postHook = (stored, created) => {
      if (created) {
        ws().server({ op: 0, t: "MESSAGE_CREATE", s: 2, d: stored });
        throw new TypeError("Failed to fetch");
      }
    };
    await mod.send(ROOM, "echoed", null);
    expect(posts).toHaveLength(1);
    expect(held().filter((c) => c === "echoed")).toHaveLength(1);
    expect(mod.outbox.items).toEqual([]);
  });

  it("shows a refused send as failed at once, with Retry", async () => {
    await openRoomWith(1);
    forbidden.add(ROOM);
    await mod.send(ROOM, "refused", null);
    expect(posts).toHaveLength(0);
    expect(mod.outbox.items).toHaveLength(1);
    expect(mod.outbox.items[0].status).toBe("failed");
    expect(mod.outbox.items[0].error).toBe("No.");
    forbidden.delete(ROOM);
    await mod.retry(mod.outbox.items[0].nonce);
    expect(mod.outbox.items).toEqual([]);
    expect(held().filter((c) => c === "refused")).toHaveLength(1);
  });

  it("settles a send waiting out a Retry-After when the gap fill finds it with its nonce", async () => {
    await openRoomWith(1);
    const api = await import("./api");
    api.configure({ sleep: () => new Promise<void>(() => undefined) }); // the Retry-After is never over
    // Stored, but answered 503 with a long Retry-After (a node failing after its commit), and the session's
    // echo lost with the session: only the gap fill can tell.
    postHook = (_stored, created) =>
      created ? new Response(JSON.stringify({ error: { code: "service.unavailable", message: "Busy." } }),
        { status: 503, headers: { "Content-Type": "application/json", "Retry-After": "30" } }) : undefined;
    void mod.send(ROOM, "stored, answer lost", null);
    await until(() => posts.length === 1 && mod.outbox.items[0]?.error !== null, "the first attempt failed");
    expect(mod.outbox.items).toHaveLength(1);
    expect(mod.outbox.items[0].error).toBe("The server is busy; trying again in 30 s.");
    await loseSession();
    await until(() => mod.store.messages[ROOM].fresh, "the gap filled");
    expect(held().filter((c) => c === "stored, answer lost")).toHaveLength(1);
    expect(mod.outbox.items).toEqual([]);
    expect(posts).toHaveLength(1);
  });
});
