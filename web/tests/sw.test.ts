import { describe, expect, it } from "vitest";
import source from "../public/sw.js?raw";

// The service worker (public/sw.js) run against a stand-in of its global scope.
type Handler = (event: Record<string, unknown>) => void;

function load(windows: { url: string; focus: () => Promise<void>; navigate: (u: string) => Promise<void> }[] = []) {
  const handlers: Record<string, Handler> = {};
  const shown: { title: string; options: Record<string, unknown> }[] = [];
  const opened: string[] = [];
  const scope = {
    location: { origin: "https://chat.example" },
    addEventListener: (type: string, fn: Handler) => (handlers[type] = fn),
    skipWaiting: () => undefined,
    registration: { showNotification: async (title: string, options: Record<string, unknown>) => void shown.push({ title, options }) },
    clients: {
      claim: async () => undefined,
      matchAll: async () => windows,
      openWindow: async (url: string) => void opened.push(url),
    },
  };
  new Function("self", source)(scope);
  return { handlers, shown, opened };
}

async function fire(handler: Handler, event: Record<string, unknown>): Promise<void> {
  let waited: Promise<unknown> = Promise.resolve();
  handler({ ...event, waitUntil: (p: Promise<unknown>) => (waited = p) });
  await waited;
}

describe("service worker", () => {
  it("shows the notification of a push payload", async () => {
    const sw = load();
    const payload = { type: "message", title: "freya in #general", body: "hello", url: "/channels/1/2/3", tag: "channel:2" };
    await fire(sw.handlers.push, { data: { json: () => payload, text: () => JSON.stringify(payload) } });
    expect(sw.shown).toEqual([{ title: "freya in #general", options: { body: "hello", tag: "channel:2", data: { url: "/channels/1/2/3" } } }]);
  });

  it("never follows a link to another site, and has a title without one", async () => {
    const sw = load();
    await fire(sw.handlers.push, { data: { json: () => ({ body: "x", url: "https://evil.example/" }), text: () => "" } });
    expect(sw.shown[0].title).toBe("Meadhall");
    expect(sw.shown[0].options.data).toEqual({ url: "/channels/@me" });
  });

  it("on a click, opens the room, or takes an open client there", async () => {
    const sw = load();
    const closed: string[] = [];
    const notification = { data: { url: "/channels/1/2/3" }, close: () => closed.push("closed") };
    await fire(sw.handlers.notificationclick, { notification });
    expect(sw.opened).toEqual(["https://chat.example/channels/1/2/3"]);
    expect(closed).toEqual(["closed"]);

    const moves: string[] = [];
    const open = { url: "https://chat.example/channels/@me", focus: async () => void moves.push("focus"), navigate: async (u: string) => void moves.push(u) };
    const withWindow = load([open]);
    await fire(withWindow.handlers.notificationclick, { notification });
    expect(moves).toEqual(["focus", "https://chat.example/channels/1/2/3"]);
    expect(withWindow.opened).toEqual([]);
  });
});
