// Whether the client can reach the service (docs/client.md, "The installable app"). A start without a network
// (the browser says it is offline, or the first request fails for want of a network) is not "signed out":
// the client says it is offline (components/OfflineStatus.svelte) and starts again once the network is back.

import { ApiError } from "./api";

export const network = $state({
  /** What the browser says (`navigator.onLine`, its `online` and `offline` events). */
  online: typeof navigator === "undefined" || navigator.onLine !== false,
  /** The start is waiting for the network: the service could not be reached. */
  waiting: false,
});

/** The browser says it has no network (never true where there is no browser, as in unit tests). */
export function browserOffline(): boolean {
  return typeof navigator !== "undefined" && navigator.onLine === false;
}

/** Offline in the sense the person sees: no network, or a start waiting for it. */
export function isOffline(): boolean {
  return !network.online || network.waiting;
}

/** A request that got no answer at all (the network, not the service, failed). */
export function isNetworkError(err: unknown): boolean {
  return err instanceof ApiError && err.code === "network";
}

const RETRY_MS = 5000;
let retry: (() => Promise<void>) | null = null;
let timer: ReturnType<typeof setInterval> | null = null;
let trying = false;
let listening = false;

function listen(): void {
  if (listening || typeof window === "undefined") return;
  listening = true;
  window.addEventListener("online", () => {
    network.online = true;
    void tryAgain();
  });
  window.addEventListener("offline", () => (network.online = false));
}

listen();

/** The start failed for want of a network: say so, and run `again` when the network is back (the browser's
 * `online` event, and every few seconds while the browser thinks it is online but the service was not
 * reached). `again` calls this once more if it fails the same way. */
export function waitForNetwork(again: () => Promise<void>): void {
  network.waiting = true;
  retry = again;
  timer ??= setInterval(() => void tryAgain(), RETRY_MS);
}

async function tryAgain(): Promise<void> {
  if (!retry || trying || browserOffline()) return;
  const again = retry;
  retry = null;
  trying = true;
  try {
    await again();
  } finally {
    trying = false;
  }
  if (!retry) {
    if (timer) clearInterval(timer);
    timer = null;
    network.waiting = false;
  }
}
