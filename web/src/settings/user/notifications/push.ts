// This browser's Web Push subscription (OpenAPI: getPushConfig, listPushSubscriptions, createPushSubscription,
// deletePushSubscription; docs/push.md): the service worker at /sw.js receives the pushes and shows them.

import { t } from "../../../i18n/index.svelte";
import { call, errorText } from "../../../lib/api";
import type { PushSubscriptionInfo } from "../../../lib/types";

export interface PushConfig {
  enabled: boolean;
  public_key: string | null;
}

/** Why this browser cannot receive pushes, in words; null when it can. */
export function browserProblem(): string | null {
  if (!window.isSecureContext) return t("settings.push.insecure");
  if (!("serviceWorker" in navigator)) return t("settings.push.noWorker");
  if (!("PushManager" in window)) return t("settings.push.noPushApi");
  if (!("Notification" in window)) return t("settings.push.noNotifications");
  return null;
}

export async function pushConfig(): Promise<PushConfig> {
  return call("getPushConfig");
}

export async function listSubscriptions(): Promise<PushSubscriptionInfo[]> {
  return (await call("listPushSubscriptions")).subscriptions;
}

/** The base64url public key as the bytes `applicationServerKey` takes. */
export function keyBytes(base64url: string): Uint8Array<ArrayBuffer> {
  const padded = base64url.replace(/-/g, "+").replace(/_/g, "/").padEnd(Math.ceil(base64url.length / 4) * 4, "=");
  const raw = atob(padded);
  const out = new Uint8Array(new ArrayBuffer(raw.length));
  for (let i = 0; i < raw.length; i++) out[i] = raw.charCodeAt(i);
  return out;
}

/** The push subscription this browser holds now, if any. */
export async function currentSubscription(): Promise<PushSubscription | null> {
  const registration = await navigator.serviceWorker.getRegistration("/");
  return (await registration?.pushManager.getSubscription()) ?? null;
}

/** Asks for permission, registers the worker, subscribes and tells the service. */
export async function subscribe(publicKey: string): Promise<PushSubscriptionInfo> {
  const permission = await Notification.requestPermission();
  if (permission !== "granted") {
    throw new Error(permission === "denied"
      ? t("settings.push.blocked")
      : t("settings.push.notAllowed"));
  }
  await navigator.serviceWorker.register("/sw.js", { scope: "/" });
  const registration = await navigator.serviceWorker.ready;
  let subscription = await registration.pushManager.getSubscription();
  if (!subscription) {
    try {
      subscription = await registration.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: keyBytes(publicKey) });
    } catch (err) {
      // Private windows and browsers without a push service refuse here, with a message meant for developers.
      throw new Error(t("settings.push.refused", { reason: errorText(err) }));
    }
  }
  const json = subscription.toJSON();
  const body = { endpoint: subscription.endpoint, keys: { p256dh: json.keys?.p256dh ?? "", auth: json.keys?.auth ?? "" } };
  return (await call("createPushSubscription", { body })).subscription;
}

/** Forgets a subscription on the service (by its endpoint), and in this browser when it is this browser's. */
export async function unsubscribe(endpoint: string): Promise<void> {
  await call("deletePushSubscription", { query: { endpoint } });
  const mine = await currentSubscription().catch(() => null);
  if (mine?.endpoint === endpoint) await mine.unsubscribe();
}

export async function sendTest(): Promise<void> {
  await call("sendTestPush");
}
