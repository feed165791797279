import { afterEach, describe, expect, it, vi } from "vitest";
import { call, configure, operationPath } from "./api";

type Sent = { url: string; init: RequestInit };

function answering(status: number, body: unknown): Sent[] {
  const sent: Sent[] = [];
  configure({
    fetch: vi.fn(async (url: RequestInfo | URL, init?: RequestInit) => {
      sent.push({ url: String(url), init: init ?? {} });
      return status === 204 ? new Response(null, { status }) : new Response(JSON.stringify(body), { status });
    }) as typeof fetch,
  });
  return sent;
}

afterEach(() => configure({ fetch: (...args) => fetch(...args) }));

describe("call", () => {
  it("fills and encodes the path parameters and uses the operation's method", async () => {
    const sent = answering(204, null);
    await call("addReaction", { path: { channel_id: "1", message_id: "2", emoji: "👍" } });
    expect(sent[0].url).toBe(`/api/v1/channels/1/messages/2/reactions/${encodeURIComponent("👍")}`);
    expect(sent[0].init.method).toBe("PUT");
    expect(sent[0].init.body).toBeUndefined();
  });

  it("sends the query, leaving out what is undefined", async () => {
    const sent = answering(200, { guilds: [], has_more: false });
    await call("listPublicGuilds", { query: { q: "hall", before: undefined } });
    expect(sent[0].url).toBe("/api/v1/guilds/public?q=hall");
    expect(sent[0].init.method).toBe("GET");
  });

  it("sends the body as JSON and answers the parsed JSON", async () => {
    const sent = answering(200, { passkey: { id: "9", name: "Laptop" } });
    const answer = await call("renamePasskey", { path: { passkey_id: "9" }, body: { name: "Laptop" } });
    expect(sent[0].url).toBe("/api/v1/auth/passkeys/9");
    expect(sent[0].init.method).toBe("PATCH");
    expect(sent[0].init.body).toBe(JSON.stringify({ name: "Laptop" }));
    expect((sent[0].init.headers as Record<string, string>)["Content-Type"]).toBe("application/json");
    expect(answer.passkey.name).toBe("Laptop");
  });

  it("answers undefined for a 204 and needs no arguments when the operation takes none", async () => {
    const sent = answering(204, null);
    const answer: undefined = await call("logoutAll");
    expect(answer).toBeUndefined();
    expect(sent[0].url).toBe("/api/v1/auth/logout-all");
    expect(sent[0].init.method).toBe("POST");
  });

  it("passes the request options on", async () => {
    const sent = answering(200, { passkeys: [] });
    const controller = new AbortController();
    await call("listPasskeys", undefined, { signal: controller.signal });
    expect(sent[0].init.signal).toBe(controller.signal);
  });

  it("refuses a path parameter left out", () => {
    expect(() => operationPath("getGuild", {})).toThrow(/guild_id/);
  });
});
