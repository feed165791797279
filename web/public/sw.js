// Meadhall's service worker: shows the Web Push notifications the service sends (docs/push.md) and, on
// a click, brings the client to the message's room; keeps the client's shell so that a start without a
// network shows the client saying it is offline (docs/client.md, "The installable app"). Served
// same-origin at /sw.js (scope: the whole client).
"use strict";

const BUILD = { version: "dev", files: [] }; // meadhall-shell: written by the build (web/plugins/shell-cache.ts)
const PREFIX = "meadhall-shell-";
const CACHE = PREFIX + BUILD.version;
const SHELL = "/";
// Never from a cache: the interface, the gateway, the files (private, and their own caching), the
// server-rendered pages and their scripts.
const NEVER = ["/api/", "/gateway", "/files/", "/invite/", "/static/", "/healthz", "/readyz", "/metrics", "/sw.js"];
// Told to the client by the service when the page was asked for without a session cookie
// (meadhall/web/client.py): a kept shell must not say so, the cookie may exist by now.
const SIGNED_OUT_HINT = '<meta name="meadhall-session" content="none">';

self.addEventListener("install", (event) => {
  event.waitUntil((async () => {
    const cache = await caches.open(CACHE);
    // One by one: a file that fails (a build replaced meanwhile) must not cost the notifications their worker.
    await Promise.all([SHELL, ...BUILD.files].map((path) =>
      cache.add(new Request(path, { cache: "reload" })).catch(() => undefined)));
    await self.skipWaiting();
  })());
});

self.addEventListener("activate", (event) => {
  event.waitUntil((async () => {
    for (const name of await caches.keys()) {
      if (name.startsWith(PREFIX) && name !== CACHE) await caches.delete(name);
    }
    await self.clients.claim();
  })());
});

self.addEventListener("fetch", (event) => {
  const request = event.request;
  if (request.method !== "GET") return;
  const url = new URL(request.url);
  if (url.origin !== self.location.origin || NEVER.some((path) => url.pathname.startsWith(path))) return;
  if (request.mode === "navigate") {
    event.respondWith(navigation(request));
  } else if (url.pathname.startsWith("/assets/") || url.pathname.startsWith("/icons/")) {
    event.respondWith(cacheFirst(request));
  }
});

// The page names the files it loaded before this worker controlled it (its language catalogue, say;
// src/lib/worker.ts): they are kept too, from the browser's HTTP cache (hashed files are cached for a year).
self.addEventListener("message", (event) => {
  const data = event.data || {};
  if (data.type !== "keep" || !Array.isArray(data.paths)) return;
  const paths = data.paths.filter((path) => typeof path === "string" && /^\/assets\/[A-Za-z0-9_.-]+$/.test(path));
  event.waitUntil((async () => {
    const cache = await caches.open(CACHE);
    for (const path of paths.slice(0, 200)) {
      if (!(await cache.match(path))) await cache.add(path).catch(() => undefined);
    }
  })());
});

/** The network's page (kept as the shell for the next start without a network), else the kept shell. */
async function navigation(request) {
  const cache = await caches.open(CACHE);
  try {
    const response = await fetch(request);
    if (response.ok && response.type === "basic" && (response.headers.get("content-type") || "").startsWith("text/html")) {
      await cache.put(SHELL, response.clone()).catch(() => undefined);
    }
    return response;
  } catch (err) {
    const kept = await cache.match(SHELL);
    if (!kept) throw err;
    const html = (await kept.text()).replace(SIGNED_OUT_HINT, "");
    return new Response(html, { status: 200, headers: kept.headers });
  }
}

/** Hashed files never change under one name: the kept copy, else the network's (kept for next time). */
async function cacheFirst(request) {
  const cache = await caches.open(CACHE);
  const kept = await cache.match(request);
  if (kept) return kept;
  const response = await fetch(request);
  if (response.ok && response.type === "basic") await cache.put(request, response.clone()).catch(() => undefined);
  return response;
}

self.addEventListener("push", (event) => {
  let data = {};
  try {
    data = event.data ? event.data.json() : {};
  } catch {
    data = { body: event.data ? event.data.text() : "" };
  }
  const title = typeof data.title === "string" && data.title ? data.title : "Meadhall";
  const options = {
    body: typeof data.body === "string" ? data.body : "",
    tag: typeof data.tag === "string" ? data.tag : undefined,
    data: { url: typeof data.url === "string" && data.url.startsWith("/") ? data.url : "/channels/@me" },
  };
  event.waitUntil(self.registration.showNotification(title, options));
});

self.addEventListener("notificationclick", (event) => {
  event.notification.close();
  const path = (event.notification.data && event.notification.data.url) || "/channels/@me";
  const target = new URL(path, self.location.origin).href;
  event.waitUntil((async () => {
    const windows = await self.clients.matchAll({ type: "window", includeUncontrolled: true });
    const open = windows.find((client) => new URL(client.url).origin === self.location.origin);
    if (open) {
      await open.focus();
      // An open client is taken to the room; one this worker does not control cannot be, and is left focused.
      if (open.url !== target) await open.navigate(target).catch(() => undefined);
      return;
    }
    await self.clients.openWindow(target);
  })());
});
