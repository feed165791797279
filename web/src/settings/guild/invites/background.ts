// An invitation's background image (OpenAPI: setInviteBackground, removeInviteBackground): a multipart
// `file` upload like the other images, its refusals in words.

import { api, call } from "../../../lib/api";
import type { Invite } from "../../../lib/types";
import { t } from "../../../i18n/index.svelte";

export async function setBackground(code: string, file: File): Promise<Invite> {
  const { invite } = await api.upload<{ invite: Invite }>(`/invites/${encodeURIComponent(code)}/background`, file, {
    retries: 0,
    reword: (envelope) => {
      if (envelope.code === "file.unsupported_type") return { ...envelope, message: t("guild.invites.background.notImage") };
      if (envelope.code === "file.too_large") return { ...envelope, message: t("guild.invites.background.tooLarge", { detail: envelope.message ?? "" }).trim() };
      return envelope;
    },
  });
  return invite;
}

export async function removeBackground(code: string): Promise<Invite> {
  const { invite } = await call("removeInviteBackground", { path: { code } });
  return invite;
}
