import { afterEach, describe, expect, it, vi } from "vitest";
import { configure } from "../src/lib/api";
import { clearDrafts, forgetPush, onSignOut, resetClientState } from "../src/lib/signout";

// What the browser keeps for a signed-in person is forgotten at sign-out (docs/client.md "Sessions").

class MemoryStorage {
  items = new Map<string, string>();
  get length() { return this.items.size; }
  key(i: number) { return [...this.items.keys()][i] ?? null; }
  getItem(k: string) { return this.items.get(k) ?? null; }
  setItem(k: string, v: string) { this.items.set(k, v); }
  removeItem(k: string) { this.items.delete(k); }
}

function browserWithSubscription(endpoint: string | null) {
  const unsubscribed: string[] = [];
  const subscription = endpoint === null ? null : {
    endpoint,
    unsubscribe: async () => { unsubscribed.push(endpoint); return true; },
  };
  vi.stubGlobal("navigator", {
    serviceWorker: { getRegistration: async () => ({ pushManager: { getSubscription: async () => subscription } }) },
  });
  return unsubscribed;
}

function serviceRecording(status = 204) {
  const calls: [string, string][] = [];
  configure({ fetch: (async (url: string, init: RequestInit) => {
    calls.push([init.method ?? "GET", url]);
    return new Response(null, { status });
  }) as typeof fetch });
  return calls;
}

afterEach(() => vi.unstubAllGlobals());

describe("sign-out", () => {
  it("clears every draft from localStorage and sessionStorage and keeps the rest", () => {
    const local = new MemoryStorage();
    const perTab = new MemoryStorage();
    local.setItem("draft:1", "half a sentence");
    local.setItem("draft:22", "another");
    local.setItem("theme", "dark");
    perTab.setItem("draft:3", "typed in this tab");
    vi.stubGlobal("localStorage", local);
    vi.stubGlobal("sessionStorage", perTab);

    clearDrafts();

    expect([...local.items.keys()]).toEqual(["theme"]);
    expect(perTab.length).toBe(0);
  });

  it("tells the service to delete this browser's subscription, then unsubscribes it", async () => {
    const endpoint = "https://push.example/send/abc";
    const unsubscribed = browserWithSubscription(endpoint);
    const calls = serviceRecording();

    await forgetPush(true);

    expect(calls).toEqual([["DELETE", `/api/v1/push/subscriptions?endpoint=${encodeURIComponent(endpoint)}`]]);
    expect(unsubscribed).toEqual([endpoint]);
  });

  it("unsubscribes even when the service already deleted it, and asks nothing once the session ended", async () => {
    const endpoint = "https://push.example/send/abc";
    let unsubscribed = browserWithSubscription(endpoint);
    serviceRecording(404);
    await forgetPush(true);
    expect(unsubscribed).toEqual([endpoint]);

    unsubscribed = browserWithSubscription(endpoint);
    const calls = serviceRecording();
    await forgetPush(false);
    expect(calls).toEqual([]);
    expect(unsubscribed).toEqual([endpoint]);
  });

  it("runs every module's reset, even when one of them fails", () => {
    const forgotten: string[] = [];
    const quiet = vi.spyOn(console, "error").mockImplementation(() => undefined);
    onSignOut(() => forgotten.push("members fetched"));
    onSignOut(() => { throw new Error("broken reset"); });
    onSignOut(() => forgotten.push("open room"));
    resetClientState();
    expect(forgotten).toEqual(["members fetched", "open room"]);
    expect(quiet).toHaveBeenCalledTimes(1);
    quiet.mockRestore();
  });

  it("does nothing without a subscription or a service worker", async () => {
    browserWithSubscription(null);
    const calls = serviceRecording();
    await forgetPush(true);
    vi.stubGlobal("navigator", {});
    await forgetPush(true);
    expect(calls).toEqual([]);
  });
});
