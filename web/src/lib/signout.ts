// What this browser keeps for the signed-in person, forgotten when the session ends (docs/client.md
// "Sessions", docs/push.md "For client authors"): the Web Push subscription, so the device stops receiving
// message text, and the per-room drafts kept in the browser's storage.

import { call } from "./api";

export const DRAFT_PREFIX = "draft:";

const resets: (() => void)[] = [];

/** A module that keeps something of the signed-in person outside the store (caches, timers, what it
 * fetched once) registers here how to forget it: the next account signed in in this tab starts fresh. */
export function onSignOut(reset: () => void): void {
  resets.push(reset);
}

/** Runs every registered reset (store.svelte.ts, whenever a session ends); one failing stops none. */
export function resetClientState(): void {
  for (const reset of resets) {
    try {
      reset();
    } catch (err) {
      console.error(err);
    }
  }
}

type Keyed = Pick<Storage, "length" | "key" | "removeItem">;

/** Removes every draft from the given storages (by default localStorage and sessionStorage). */
export function clearDrafts(storages?: Keyed[]): void {
  for (const storage of storages ?? browserStorages()) {
    try {
      const keys: string[] = [];
      for (let i = 0; i < storage.length; i++) {
        const key = storage.key(i);
        if (key?.startsWith(DRAFT_PREFIX)) keys.push(key);
      }
      for (const key of keys) storage.removeItem(key);
    } catch {
      // Storage refused (private browsing): there is nothing kept to clear.
    }
  }
}

function browserStorages(): Keyed[] {
  const out: Keyed[] = [];
  for (const name of ["localStorage", "sessionStorage"] as const) {
    try {
      const storage = globalThis[name];
      if (storage) out.push(storage);
    } catch {
      // A browser that refuses storage throws on access.
    }
  }
  return out;
}

async function browserSubscription(): Promise<PushSubscription | null> {
  const workers = globalThis.navigator?.serviceWorker;
  if (!workers) return null;
  const registration = await workers.getRegistration("/");
  return (await registration?.pushManager.getSubscription()) ?? null;
}

/**
 * Ends this browser's push subscription. With `tellService` (the session is still valid: a sign-out from
 * this browser) the service is asked first to delete it (OpenAPI: deletePushSubscription); otherwise the
 * session already ended and the service deleted it with the session. Never throws: signing out goes on.
 */
export async function forgetPush(tellService: boolean): Promise<void> {
  let subscription: PushSubscription | null = null;
  try {
    subscription = await browserSubscription();
  } catch {
    return;
  }
  if (!subscription) return;
  if (tellService) {
    try {
      await call("deletePushSubscription", { query: { endpoint: subscription.endpoint } }, { retries: 0 });
    } catch {
      // Already gone (404), or the service is unreachable: the session's end deletes it there anyway.
    }
  }
  try {
    await subscription.unsubscribe();
  } catch {
    // The push service forgets it when it next fails to deliver.
  }
}
