import { describe, expect, it } from "vitest";
import { api, ApiError, configure, describe as words, inTime, lockoutWords, MAX_SILENT_WAIT, request } from "../src/lib/api";

function answer(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(body === null ? null : JSON.stringify(body), { status, headers: { "Content-Type": "application/json", ...headers } });
}

describe("api", () => {
  it("sends same-origin requests with the cookie, JSON bodies, query strings", async () => {
    const calls: [string, RequestInit][] = [];
    configure({ fetch: (async (url: string, init: RequestInit) => {
      calls.push([url, init]);
      return answer(200, { ok: true });
    }) as typeof fetch });
    await request("/guilds", { method: "POST", body: { name: "x" } });
    await request("/channels/1/messages", { query: { before: "5", limit: 50, after: undefined }, method: "GET" });
    expect(calls[0][0]).toBe("/api/v1/guilds");
    expect(calls[0][1].credentials).toBe("same-origin");
    expect(calls[0][1].body).toBe('{"name":"x"}');
    expect(calls[1][0]).toBe("/api/v1/channels/1/messages?before=5&limit=50");
  });

  it("waits for Retry-After on 429 and tries again", async () => {
    const slept: number[] = [];
    const waits: number[] = [];
    let n = 0;
    configure({
      fetch: (async () => (n++ === 0
        ? answer(429, { error: { code: "rate_limited", message: "Slow down.", retry_after: 1.2, bucket: "x" } }, { "Retry-After": "2" })
        : answer(201, { message: { id: "1" } }))) as typeof fetch,
      sleep: async (ms) => void slept.push(ms),
    });
    const out = await request<{ message: { id: string } }>("/channels/1/messages", { onWait: (s) => waits.push(s), method: "POST", body: {} });
    expect(out.message.id).toBe("1");
    expect(slept).toEqual([2000]);
    expect(waits).toEqual([2]);
  });

  it("never waits silently for long: a lockout's Retry-After is an error with the time left, at once", async () => {
    const slept: number[] = [];
    let calls = 0;
    configure({
      fetch: (async () => {
        calls++;
        return answer(429, { error: { code: "rate_limited", message: "You are being rate limited", retry_after: 877.2,
          bucket: "auth.lockout" } }, { "Retry-After": "878" });
      }) as typeof fetch,
      sleep: async (ms) => void slept.push(ms),
    });
    const err = (await request("/auth/login", { method: "POST", body: { login: "a", password: "b" } }).catch((e: unknown) => e)) as ApiError;
    expect(err).toBeInstanceOf(ApiError);
    expect(err.status).toBe(429);
    expect(err.retryAfter).toBe(878);
    expect(err.bucket).toBe("auth.lockout");
    expect(err.message).toBe("Too many attempts. Try again in 15 minutes.");
    expect(calls).toBe(1);
    expect(slept).toEqual([]);
  });

  it("short waits add up to at most MAX_SILENT_WAIT seconds, then the refusal is said with the time left", async () => {
    const slept: number[] = [];
    let calls = 0;
    configure({
      fetch: (async () => {
        calls++;
        return answer(429, { error: { code: "rate_limited", message: "You are being rate limited", retry_after: 2,
          bucket: "messages.create" } }, { "Retry-After": "2" });
      }) as typeof fetch,
      sleep: async (ms) => void slept.push(ms),
    });
    const err = (await request("/channels/1/messages", { method: "POST", body: {} }).catch((e: unknown) => e)) as ApiError;
    expect(slept).toEqual([2000, 2000]); // a third 2 s wait would pass the 5 s bar
    expect(slept.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(MAX_SILENT_WAIT * 1000);
    expect(calls).toBe(3);
    expect(err.retryAfter).toBe(2);
    expect(err.message).toBe("Too many requests: this was not done. Try again in 2 seconds.");
  });

  it("says waits in seconds and minutes", () => {
    expect(inTime(0.2)).toBe("in 1 second");
    expect(inTime(40)).toBe("in 40 seconds");
    expect(inTime(60)).toBe("in 1 minute");
    expect(inTime(61)).toBe("in 2 minutes");
    expect(lockoutWords(900)).toBe("Too many attempts. Try again in 15 minutes.");
  });

  it("turns the error envelope into words", async () => {
    configure({ fetch: (async () => answer(422, { error: { code: "validation.failed", message: "Invalid", details: [{ field: "display_name", message: "too long" }] } })) as typeof fetch });
    const err = (await request("/users/@me", { method: "PATCH", body: {} }).catch((e: unknown) => e)) as ApiError;
    expect(err).toBeInstanceOf(ApiError);
    expect(err.code).toBe("validation.failed");
    expect(err.message).toBe("Display name: too long");
    expect(words(403, { code: "perm.denied", message: "You lack SEND_MESSAGES." })).toBe("You lack SEND_MESSAGES.");
    expect(words(502, null)).toBe("The server answered 502.");
  });

  it("a network failure is said in words", async () => {
    configure({ fetch: (async () => { throw new TypeError("Failed to fetch"); }) as typeof fetch });
    const err = (await request("/users/@me", { method: "GET" }).catch((e: unknown) => e)) as ApiError;
    expect(err.message).toMatch(/could not be reached/);
  });

  it("answers 204 with nothing", async () => {
    configure({ fetch: (async () => new Response(null, { status: 204 })) as typeof fetch });
    expect(await request("/channels/1/pins/2", { method: "PUT" })).toBeUndefined();
  });
});

describe("api.upload", () => {
  it("posts the fields, then the file as the part `file`, without a JSON content type", async () => {
    const calls: [string, RequestInit][] = [];
    configure({ fetch: (async (url: string, init: RequestInit) => {
      calls.push([url, init]);
      return answer(201, { emoji: { id: "9" } });
    }) as typeof fetch });
    const file = new File(["png"], "party.png", { type: "image/png" });
    const out = await api.upload<{ emoji: { id: string } }>("/guilds/1/emojis", file, { fields: { name: "party" } });
    expect(out.emoji.id).toBe("9");
    const [url, init] = calls[0];
    expect([url, init.method, init.credentials]).toEqual(["/api/v1/guilds/1/emojis", "POST", "same-origin"]);
    const form = init.body as FormData;
    expect([...form.keys()]).toEqual(["name", "file"]);
    expect((form.get("file") as File).name).toBe("party.png");
    expect((init.headers as Record<string, string>)["Content-Type"]).toBeUndefined();
  });

  it("names a blob's part as told and rewords a refusal for the file", async () => {
    let sent: FormData | null = null;
    configure({ fetch: (async (_url: string, init: RequestInit) => {
      sent = init.body as FormData;
      return answer(415, { error: { code: "file.unsupported_type", message: "Unsupported." } });
    }) as typeof fetch });
    const refusal = api.upload("/users/@me/avatar", new Blob(["x"]), {
      name: "avatar.webp",
      reword: (e) => ({ ...e, message: "That file is not an image the server accepts." }),
    });
    await expect(refusal).rejects.toMatchObject({ status: 415, code: "file.unsupported_type", message: "That file is not an image the server accepts." });
    expect((sent!.get("file") as File).name).toBe("avatar.webp");
  });

  it("waits out a long Retry-After when allowed more than the silent wait", async () => {
    const slept: number[] = [];
    let n = 0;
    configure({
      fetch: (async () => (n++ === 0
        ? answer(429, { error: { code: "rate_limited", message: "Slow down.", retry_after: 30 } }, { "Retry-After": "30" })
        : answer(201, { sound: { id: "1" } }))) as typeof fetch,
      sleep: async (ms) => void slept.push(ms),
    });
    await api.upload("/guilds/1/sounds", new File(["a"], "a.ogg"), { retries: 2, maxWait: Infinity });
    expect(slept).toEqual([30000]);
    n = 0;
    await expect(api.upload("/guilds/1/sounds", new File(["a"], "a.ogg"), { retries: 0 })).rejects.toBeInstanceOf(ApiError);
  });
});
