import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ApiError, configure, request, RESEND_BUDGET_MS, resend, resendable, resendDelay, wakeResends } from "./api";

// The resend rules of a message send (docs/client.md "Reconnects and resends"): what is tried again with the
// same nonce, after how long, for how long, and when it stops.

function answer(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { "Content-Type": "application/json", ...headers } });
}

const envelope = (code: string, message = "refused") => ({ error: { code, message } });

describe("resend rules", () => {
  let now: number;
  let slept: number[];
  let calls: { url: string; body: any }[];
  let answers: ((init: RequestInit) => Response | Promise<Response>)[];

  beforeEach(() => {
    now = 0;
    slept = [];
    calls = [];
    answers = [];
    configure({
      fetch: (async (url: string, init: RequestInit) => {
        calls.push({ url, body: init.body ? JSON.parse(init.body as string) : null });
        const next = answers.shift();
        if (!next) throw new Error("no answer planned");
        return next(init);
      }) as typeof fetch,
      sleep: async (ms) => {
        slept.push(ms);
        now += ms;
      },
      now: () => now,
      random: () => 0.5,
    });
  });

  afterEach(() => {
    configure({ sleep: (ms) => new Promise((r) => setTimeout(r, ms)), now: () => Date.now(), random: () => Math.random() });
  });

  const send = (settled?: () => boolean, retried: number[] = []) =>
    resend(() => request<{ message: { id: string } }>("/channels/1/messages", { retries: 0, method: "POST", body: { content: "hi", nonce: "n1" } }), {
      settled,
      onRetry: ({ delayMs }) => retried.push(delayMs),
    });

  const networkDown = () => {
    throw new TypeError("Failed to fetch");
  };

  it("tries again with the same nonce after no answer, and takes the repeat's 200 as the answer", async () => {
    answers.push(networkDown, () => answer(502, "<html>bad gateway</html>"), () => answer(200, { message: { id: "77" } }));
    const retried: number[] = [];
    const result = await send(undefined, retried);
    expect(result).toEqual({ message: { id: "77" } });
    expect(calls).toHaveLength(3);
    expect(new Set(calls.map((c) => c.body.nonce))).toEqual(new Set(["n1"]));
    expect(retried).toEqual([750, 1500]); // 1 s then 2 s, with jitter
  });

  it.each([408, 429, 502, 503, 504])("retries %i", async (status) => {
    answers.push(() => answer(status, envelope("any")), () => answer(201, { message: { id: "1" } }));
    expect(await send()).toEqual({ message: { id: "1" } });
    expect(calls).toHaveLength(2);
  });

  it.each([400, 401, 403, 404, 409, 413, 422, 500])("does not retry %i: the server's considered answer", async (status) => {
    answers.push(() => answer(status, envelope("perm.denied", "You cannot send here.")));
    const err = await send().catch((e) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(err.status).toBe(status);
    expect(calls).toHaveLength(1);
    expect(slept).toEqual([]);
  });

  it("honours a 503's Retry-After", async () => {
    answers.push(() => answer(503, envelope("service.unavailable"), { "Retry-After": "7" }), () => answer(201, { message: { id: "1" } }));
    await send();
    expect(slept).toEqual([7000]);
  });

  it("honours a 429's Retry-After and says so", async () => {
    answers.push(() => answer(429, { error: { code: "rate_limited", message: "slow", retry_after: 3 } }, { "Retry-After": "3" }),
      () => answer(201, { message: { id: "1" } }));
    const retried: number[] = [];
    await send(undefined, retried);
    expect(retried).toEqual([3000]);
  });

  it("does not wait out a Retry-After beyond the budget: it fails at once with the server's words", async () => {
    answers.push(() => answer(429, { error: { code: "rate_limited", message: "slow", retry_after: 120, bucket: "channel.slowmode" } },
      { "Retry-After": "120" }));
    const err = await send().catch((e) => e);
    expect(err.status).toBe(429);
    expect(err.message).toBe("Too many requests: this was not done. Try again in 2 minutes.");
    expect(slept).toEqual([]);
  });

  it("gives up after about a minute of no answer, with the last error", async () => {
    for (let i = 0; i < 50; i++) answers.push(networkDown);
    const err = await send().catch((e) => e);
    expect(err.status).toBe(0);
    expect(now).toBeLessThanOrEqual(RESEND_BUDGET_MS);
    expect(now).toBeGreaterThan(RESEND_BUDGET_MS - 8000);
    // Doubling from 1 s up to 8 s between attempts: 0.75, 1.5, 3, 6, then 6 s each (jitter 0.5).
    expect(slept.slice(0, 5)).toEqual([750, 1500, 3000, 6000, 6000]);
  });

  it("stops without another attempt once the echo settled the message", async () => {
    let echoed = false;
    answers.push(() => {
      echoed = true; // the MESSAGE_CREATE with the nonce came while the answer was lost
      throw new TypeError("Failed to fetch");
    });
    expect(await send(() => echoed)).toBeNull();
    expect(calls).toHaveLength(1);
  });

  it("a timeout counts as no answer", async () => {
    configure({ sleep: async (ms) => void slept.push(ms) });
    // A request that hangs until the client gives it up, as fetch does when its signal aborts.
    answers.push((init) => new Promise<Response>((_, reject) =>
      init.signal!.addEventListener("abort", () => reject(new DOMException("aborted", "AbortError")))));
    answers.push(() => answer(200, { message: { id: "5" } }));
    const result = await resend(() => request("/channels/1/messages", { retries: 0, timeout: 20, method: "POST", body: { nonce: "n" } }));
    expect(result).toEqual({ message: { id: "5" } });
    expect(calls).toHaveLength(2);
  });

  it("a request with a timeout lets go of its caller's signal once answered", async () => {
    // A view's signal outlives many requests: each must remove the listener it added, or they pile up.
    const listeners = new Set<unknown>();
    const caller = {
      addEventListener: (_: string, fn: unknown) => void listeners.add(fn),
      removeEventListener: (_: string, fn: unknown) => void listeners.delete(fn),
    } as unknown as AbortSignal;
    for (let i = 0; i < 3; i++) answers.push(() => answer(200, { ok: i }));
    for (let i = 0; i < 3; i++) await request("/users/@me", { signal: caller, timeout: 1000, method: "GET" });
    expect(calls).toHaveLength(3);
    expect(listeners.size).toBe(0);
  });

  it("a wait on a lost connection ends when the connection is back; a Retry-After is waited out", async () => {
    let release: (() => void) | null = null;
    configure({ sleep: (ms) => new Promise<void>((r) => { slept.push(ms); release = r; }) });
    answers.push(networkDown, () => answer(200, { message: { id: "9" } }));
    const pending = send();
    await new Promise((r) => setTimeout(r, 0));
    expect(slept).toEqual([750]);
    wakeResends();
    expect(await pending).toEqual({ message: { id: "9" } });

    answers.push(() => answer(503, envelope("service.unavailable"), { "Retry-After": "2" }), () => answer(200, { message: { id: "9" } }));
    let done = false;
    const second = send().then((r) => {
      done = true;
      return r;
    });
    await new Promise((r) => setTimeout(r, 0));
    wakeResends();
    await new Promise((r) => setTimeout(r, 0));
    expect(done).toBe(false);
    release!();
    expect(await second).toEqual({ message: { id: "9" } });
  });

  it("classifies and spaces as documented", () => {
    expect(resendable(new ApiError(0, { code: "network", message: "" }))).toBe(true);
    expect(resendable(new Error("x"))).toBe(false);
    expect(resendDelay(0, null, 0)).toBe(500);
    expect(resendDelay(0, null, 1)).toBe(1000);
    expect(resendDelay(10, null, 1)).toBe(8000);
    expect(resendDelay(0, 2.5, 0)).toBe(2500);
  });
});
