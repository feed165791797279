// The webhook calls of the server settings (OpenAPI: listGuildWebhooks, createWebhook, updateWebhook,
// deleteWebhook, regenerateWebhookToken, setWebhookAvatar, removeWebhookAvatar; docs/webhooks.md). Creating
// one and making a new URL need a recent re-verification: both go through withStepUp.

import { api, ApiError, call, errorText as failureText } from "../../../lib/api";
import { withStepUp } from "../../../lib/stepup.svelte";
import type { Id, Webhook } from "../../../lib/types";
import { t, type Key } from "../../../i18n/index.svelte";
import { IMAGE_REFUSAL } from "../custom/forms";

/** Refusals in words where the service's own sentence would not say what to do. */
const WORDS: Record<string, Key> = {
  "webhook.limit_reached": "guild.webhooks.api.limitReached",
  "webhook.not_found": "guild.webhooks.api.notFound",
  "channel.wrong_type": "guild.webhooks.api.wrongType",
  "file.unsupported_type": IMAGE_REFUSAL,
};

export function errorText(err: unknown): string {
  if (err instanceof ApiError) return WORDS[err.code] ? t(WORDS[err.code]) : err.message;
  return failureText(err);
}

export async function listWebhooks(guildId: Id): Promise<Webhook[]> {
  return (await call("listGuildWebhooks", { path: { guild_id: guildId } })).webhooks;
}

export async function createWebhook(channelId: Id, name: string): Promise<Webhook> {
  const send = () => call("createWebhook", { path: { channel_id: channelId }, body: { name } });
  return (await withStepUp(t("guild.webhooks.api.stepUpCreate"), send)).webhook;
}

export async function updateWebhook(id: Id, changes: { name?: string; channel_id?: Id }): Promise<Webhook> {
  return (await call("updateWebhook", { path: { webhook_id: id }, body: changes })).webhook;
}

export async function deleteWebhook(id: Id): Promise<void> {
  await call("deleteWebhook", { path: { webhook_id: id } });
}

export async function regenerateToken(id: Id): Promise<Webhook> {
  const send = () => call("regenerateWebhookToken", { path: { webhook_id: id } });
  return (await withStepUp(t("guild.webhooks.api.stepUpToken"), send)).webhook;
}

export async function setAvatar(id: Id, file: File): Promise<Webhook> {
  const { webhook } = await api.upload<{ webhook: Webhook }>(`/webhooks/${id}/avatar`, file, {
    retries: 0,
    reword: (envelope) =>
      envelope.code === "file.too_large" ? { ...envelope, message: t("guild.webhooks.api.tooLarge", { detail: envelope.message ?? "" }).trim() } : envelope,
  });
  return webhook;
}

export async function removeAvatar(id: Id): Promise<Webhook> {
  return (await call("removeWebhookAvatar", { path: { webhook_id: id } })).webhook;
}
