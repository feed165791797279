// The webhook calls of the server settings (OpenAPI: listGuildWebhooks, createWebhook, updateWebhook,
// deleteWebhook, regenerateWebhookToken, setWebhookAvatar, removeWebhookAvatar; docs/webhooks.md). Creating
// one and making a new URL need a recent re-verification: both go through withStepUp.

import { api, ApiError, describe, errorText as failureText } from "../../../lib/api";
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
  return (await api.get<{ webhooks: Webhook[] }>(`/guilds/${guildId}/webhooks`)).webhooks;
}

export async function createWebhook(channelId: Id, name: string): Promise<Webhook> {
  const call = () => api.post<{ webhook: Webhook }>(`/channels/${channelId}/webhooks`, { name });
  return (await withStepUp("Creating a webhook gives a program a way to post here: confirm it is you.", call)).webhook;
}

export async function updateWebhook(id: Id, changes: { name?: string; channel_id?: Id }): Promise<Webhook> {
  return (await api.patch<{ webhook: Webhook }>(`/webhooks/${id}`, changes)).webhook;
}

export async function deleteWebhook(id: Id): Promise<void> {
  await api.del(`/webhooks/${id}`);
}

export async function regenerateToken(id: Id): Promise<Webhook> {
  const call = () => api.post<{ webhook: Webhook }>(`/webhooks/${id}/token`);
  return (await withStepUp("A new webhook URL replaces the old one: confirm it is you.", call)).webhook;
}

export async function setAvatar(id: Id, file: File): Promise<Webhook> {
  const form = new FormData();
  form.append("file", file, file.name);
  let response: Response;
  try {
    response = await fetch(`/api/v1/webhooks/${id}/avatar`, {
      method: "POST", body: form, credentials: "same-origin", headers: { Accept: "application/json" },
    });
  } catch {
    throw new ApiError(0, { code: "network", message: describe(0, null) });
  }
  const parsed = await response.json().catch(() => null);
  if (!response.ok) {
    const envelope = parsed?.error ?? { code: "http", message: describe(response.status, null) };
    if (envelope.code === "file.too_large") envelope.message = `That image is too large. ${envelope.message ?? ""}`.trim();
    throw new ApiError(response.status, envelope);
  }
  return (parsed as { webhook: Webhook }).webhook;
}

export async function removeAvatar(id: Id): Promise<Webhook> {
  return (await api.del<{ webhook: Webhook }>(`/webhooks/${id}/avatar`)).webhook;
}
