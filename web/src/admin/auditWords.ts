// The instance audit log in words: a label for every action of the service's catalogue (the server ones
// come from the server audit log's labels) and a one-line summary of an entry's `data`.

import { actionLabel } from "../settings/guild/auditText";

const INSTANCE_LABELS: Record<string, string> = {
  "instance.user_ban": "User banned from the instance",
  "instance.user_unban": "User unbanned from the instance",
  "instance.user_session_revoke": "User's device signed out",
  "instance.user_reset_2fa": "User's two-factor authentication reset",
  "instance.user_temp_password": "Temporary password set",
  "instance.user_logout_all": "User signed out everywhere",
  "instance.user_delete": "Account deleted",
  "instance.user_claim": "Imported history handed to an account",
  "guild.import": "Server imported",
  "instance.admin_grant": "Administration granted",
  "instance.admin_revoke": "Administration removed",
  "instance.guild_update": "Server changed by the administration",
  "instance.guild_delete": "Server deleted by the administration",
  "instance.settings_update": "Instance settings changed",
};

export function instanceActionLabel(action: string): string {
  return INSTANCE_LABELS[action] ?? actionLabel(action);
}

function short(value: unknown, max = 60): string {
  const text = value === null || value === undefined ? "none" : typeof value === "string" ? value : JSON.stringify(value);
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

function field(key: string): string {
  return key.replace(/_/g, " ");
}

/** `{"changes": {"name": ["A", "B"]}, "code": "x"}` → `name: A → B; code: x`; "" for no data. */
export function dataSummary(data: Record<string, unknown> | null | undefined, max = 240): string {
  if (!data) return "";
  const parts: string[] = [];
  for (const [key, value] of Object.entries(data)) {
    if (key === "changes" && value && typeof value === "object" && !Array.isArray(value)) {
      for (const [name, change] of Object.entries(value as Record<string, unknown>)) {
        if (Array.isArray(change) && change.length === 2) parts.push(`${field(name)}: ${short(change[0])} → ${short(change[1])}`);
        else parts.push(`${field(name)}: ${short(change)}`);
      }
    } else {
      parts.push(`${field(key)}: ${short(value)}`);
    }
  }
  const text = parts.join("; ");
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
