// An invitation's background image (OpenAPI: setInviteBackground, removeInviteBackground): a multipart
// `file` upload like the other images, its refusals in words.

import { api, ApiError, describe } from "../../../lib/api";
import type { Invite } from "../../../lib/types";

export async function setBackground(code: string, file: File): Promise<Invite> {
  const form = new FormData();
  form.append("file", file, file.name);
  let response: Response;
  try {
    response = await fetch(`/api/v1/invites/${encodeURIComponent(code)}/background`, {
      method: "POST", body: form, credentials: "same-origin", headers: { Accept: "application/json" },
    });
  } catch {
    throw new ApiError(0, { code: "network", message: describe(0, null) });
  }
  const parsed = await response.json().catch(() => null);
  if (!response.ok) {
    const envelope = parsed?.error ?? { code: "http", message: describe(response.status, null) };
    if (envelope.code === "file.unsupported_type") envelope.message = "That file is not an image the server accepts.";
    if (envelope.code === "file.too_large") envelope.message = `That image is too large. ${envelope.message ?? ""}`.trim();
    throw new ApiError(response.status, envelope);
  }
  return (parsed as { invite: Invite }).invite;
}

export async function removeBackground(code: string): Promise<Invite> {
  const { invite } = await api.del<{ invite: Invite }>(`/invites/${encodeURIComponent(code)}/background`);
  return invite;
}
