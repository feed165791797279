// The service worker (public/sw.js) is registered at every start: it keeps the client's shell for a start
// without a network and makes the client installable (docs/client.md, "The installable app"); Web Push
// (settings/user/notifications/push.ts) uses the same registration.

export function registerWorker(): void {
  if (typeof navigator === "undefined" || !("serviceWorker" in navigator) || !window.isSecureContext) return;
  // Registering the same script again is a no-op; a failure (a browser that refuses workers) leaves the
  // client as it was.
  navigator.serviceWorker.register("/sw.js", { scope: "/" }).catch(() => undefined);
}
