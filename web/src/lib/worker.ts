// The service worker (public/sw.js) is registered at every start: it keeps the client's shell for a start
// without a network and makes the client installable (docs/client.md, "The installable app"); Web Push
// (settings/user/notifications/push.ts) uses the same registration.

export function registerWorker(): void {
  if (typeof navigator === "undefined" || !("serviceWorker" in navigator) || !window.isSecureContext) return;
  // Registering the same script again is a no-op; a failure (a browser that refuses workers) leaves the
  // client as it was.
  navigator.serviceWorker.register("/sw.js", { scope: "/" }).catch(() => undefined);
  // What this page loaded before the worker was there (its language catalogue above all) is kept for a start
  // without a network; later loads go through the worker, which keeps them itself.
  void navigator.serviceWorker.ready.then((registration) => {
    const paths = performance.getEntriesByType("resource")
      .map((entry) => new URL(entry.name, location.href))
      .filter((url) => url.origin === location.origin && url.pathname.startsWith("/assets/"))
      .map((url) => url.pathname);
    registration.active?.postMessage({ type: "keep", paths });
  });
}
