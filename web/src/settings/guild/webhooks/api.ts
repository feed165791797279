// The webhook calls of the server settings (OpenAPI: listGuildWebhooks, createWebhook, updateWebhook,
// deleteWebhook, regenerateWebhookToken, setWebhookAvatar, removeWebhookAvatar; docs/webhooks.md). Creating
// one and making a new URL need a recent re-verification: both go through withStepUp.

import { api, ApiError, call, errorText as failureText } from "../../../lib/api";
import { withStepUp } from "../../../lib/stepup.svelte";
import type { Id, Webhook } from "../../../lib/types";

/** Refusals in words where the service's own sentence would not say what to do. */
const WORDS: Record<string, string> = {
  "webhook.limit_reached": "This room already has 15 webhooks, the most it may have. Delete one or choose another room.",
  "webhook.not_found": "That webhook was deleted meanwhile.",
  "channel.wrong_type": "Webhooks can only post in text rooms.",
  "file.unsupported_type": "That file is not a PNG, JPEG, WebP or GIF image (its content must match its type).",
};

export function errorText(err: unknown): string {
  if (err instanceof ApiError) return WORDS[err.code] ?? err.message;
  return failureText(err);
}

export async function listWebhooks(guildId: Id): Promise<Webhook[]> {
  return (await call("listGuildWebhooks", { path: { guild_id: guildId } })).webhooks;
}

export async function createWebhook(channelId: Id, name: string): Promise<Webhook> {
  const send = () => call("createWebhook", { path: { channel_id: channelId }, body: { name } });
  return (await withStepUp("Creating a webhook gives a program a way to post here: confirm it is you.", send)).webhook;
}

export async function updateWebhook(id: Id, changes: { name?: string; channel_id?: Id }): Promise<Webhook> {
  return (await call("updateWebhook", { path: { webhook_id: id }, body: changes })).webhook;
}

export async function deleteWebhook(id: Id): Promise<void> {
  await call("deleteWebhook", { path: { webhook_id: id } });
}

export async function regenerateToken(id: Id): Promise<Webhook> {
  const send = () => call("regenerateWebhookToken", { path: { webhook_id: id } });
  return (await withStepUp("A new webhook URL replaces the old one: confirm it is you.", send)).webhook;
}

export async function setAvatar(id: Id, file: File): Promise<Webhook> {
  const { webhook } = await api.upload<{ webhook: Webhook }>(`/webhooks/${id}/avatar`, file, {
    retries: 0,
    reword: (envelope) =>
      envelope.code === "file.too_large" ? { ...envelope, message: `That image is too large. ${envelope.message ?? ""}`.trim() } : envelope,
  });
  return webhook;
}

export async function removeAvatar(id: Id): Promise<Webhook> {
  return (await call("removeWebhookAvatar", { path: { webhook_id: id } })).webhook;
}
