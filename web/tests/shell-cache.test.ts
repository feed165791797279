import { describe, expect, it } from "vitest";
import source from "../public/sw.js?raw";
import { fillWorker, shellFiles } from "../plugins/shell-cache";

// The shell cache of the service worker (public/sw.js) and the build step that fills its list
// (plugins/shell-cache.ts); docs/client.md, "The installable app".

type Handler = (event: Record<string, unknown>) => void;

function load(network: (request: Request) => Promise<Response>) {
  const handlers: Record<string, Handler> = {};
  const stores = new Map<string, Map<string, Response>>();
  const key = (r: Request | string) => new URL(typeof r === "string" ? r : r.url, "https://chat.example").pathname;
  const open = async (name: string) => {
    if (!stores.has(name)) stores.set(name, new Map());
    const store = stores.get(name)!;
    return {
      match: async (r: Request | string) => store.get(key(r))?.clone(),
      put: async (r: Request | string, response: Response) => void store.set(key(r), response),
      add: async (r: Request) => void store.set(key(r), await network(r)),
    };
  };
  const caches = {
    open,
    keys: async () => [...stores.keys()],
    delete: async (name: string) => stores.delete(name),
  };
  const scope = {
    location: { origin: "https://chat.example" },
    addEventListener: (type: string, fn: Handler) => (handlers[type] = fn),
    skipWaiting: async () => undefined,
    clients: { claim: async () => undefined },
  };
  const built = fillWorker(source, ["/assets/index-abc.js"]);
  // A worker resolves relative URLs against its own address.
  const LocalRequest = function (url: string) {
    return new Request(new URL(url, "https://chat.example"));
  };
  new Function("self", "caches", "fetch", "Request", built)(scope, caches, network, LocalRequest);
  return { handlers, stores };
}

async function fire(handler: Handler, event: Record<string, unknown>): Promise<Response | undefined> {
  let waited: Promise<unknown> = Promise.resolve();
  let answered: Promise<Response> | undefined;
  handler({ ...event, waitUntil: (p: Promise<unknown>) => (waited = p), respondWith: (p: Promise<Response>) => (answered = p) });
  await waited;
  return answered ? await answered : undefined;
}

const page = (body: string) => new Response(body, { headers: { "Content-Type": "text/html; charset=utf-8" } });
const navigate = (path: string) => ({ request: { method: "GET", url: `https://chat.example${path}`, mode: "navigate" } });

describe("the shell cache", () => {
  it("keeps the shell at install, serves it without a network, never says 'signed out' from it", async () => {
    let online = true;
    const hint = '<meta name="meadhall-session" content="none">';
    const sw = load(async (request) => {
      if (!online) throw new TypeError("Failed to fetch");
      return new URL(request.url, "https://chat.example").pathname === "/" ? page(`<head>${hint}</head>`) : new Response("js");
    });
    await fire(sw.handlers.install, {});
    const [name] = [...sw.stores.keys()];
    expect(name).toMatch(/^meadhall-shell-[0-9a-f]{12}$/);
    expect([...sw.stores.get(name)!.keys()].sort()).toContain("/assets/index-abc.js");

    online = false;
    const answer = await fire(sw.handlers.fetch, navigate("/channels/1/2"));
    expect(await answer!.text()).toBe("<head></head>");
  });

  it("keeps what the page loaded before it was there, only hashed files", async () => {
    const sw = load(async () => new Response("x"));
    const paths = ["/assets/ru-abc.js", "/api/v1/users/@me", "/assets/../x", 3];
    await fire(sw.handlers.message, { data: { type: "keep", paths } });
    const [name] = [...sw.stores.keys()];
    expect([...sw.stores.get(name)!.keys()]).toEqual(["/assets/ru-abc.js"]);
  });

  it("never answers the interface, the gateway or files, and deletes older shells", async () => {
    const sw = load(async () => new Response("x"));
    for (const path of ["/api/v1/users/@me", "/gateway", "/files/1", "/invite/abc"]) {
      expect(await fire(sw.handlers.fetch, { request: { method: "GET", url: `https://chat.example${path}`, mode: "cors" } })).toBeUndefined();
    }
    sw.stores.set("meadhall-shell-old", new Map());
    sw.stores.set("someone-else", new Map());
    await fire(sw.handlers.activate, {});
    expect([...sw.stores.keys()]).toEqual(["someone-else"]);
  });
});

describe("the build's shell list", () => {
  it("holds the entry, what it imports, its styles and every language's first-frame words, not what loads on demand", () => {
    const css = new Set(["assets/index.css"]);
    const files = shellFiles({
      "assets/index.js": { type: "chunk", fileName: "assets/index.js", isEntry: true, imports: ["assets/api.js"], viteMetadata: { importedCss: css } },
      "assets/api.js": { type: "chunk", fileName: "assets/api.js", imports: [] },
      "assets/ru.js": { type: "chunk", fileName: "assets/ru.js", facadeModuleId: "/x/web/src/i18n/ru/ru.ts" },
      "assets/en.js": { type: "chunk", fileName: "assets/en.js", facadeModuleId: "/x/web/src/i18n/en/en.ts" },
      "assets/ru-screens.js": { type: "chunk", fileName: "assets/ru-screens.js", facadeModuleId: "/x/web/src/i18n/ru/ru-screens.ts" },
      "assets/livekit.js": { type: "chunk", fileName: "assets/livekit.js", facadeModuleId: "/x/node_modules/livekit.js" },
      "assets/index.css": { type: "asset", fileName: "assets/index.css" },
    });
    expect(files).toEqual(["/assets/api.js", "/assets/en.js", "/assets/index.css", "/assets/index.js", "/assets/ru.js"]);
    expect(() => fillWorker("no marker here", files)).toThrow();
  });
});
