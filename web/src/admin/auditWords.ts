// The instance audit log in words: a label for every action of the service's catalogue (the server ones
// come from the server audit log's labels) and a one-line summary of an entry's `data`.

import { t, type Key } from "../i18n/index.svelte";
import { actionLabel } from "../settings/guild/auditText";

/** The instance's own actions, by catalogue key (shown through t()). */
const INSTANCE_LABELS: Record<string, Key> = {
  "instance.user_ban": "admin.auditAction.userBan",
  "instance.user_unban": "admin.auditAction.userUnban",
  "instance.user_session_revoke": "admin.auditAction.userSessionRevoke",
  "instance.user_reset_2fa": "admin.auditAction.userReset2fa",
  "instance.user_temp_password": "admin.auditAction.userTempPassword",
  "instance.user_logout_all": "admin.auditAction.userLogoutAll",
  "instance.user_delete": "admin.auditAction.userDelete",
  "instance.user_claim": "admin.auditAction.userClaim",
  "guild.import": "admin.auditAction.guildImport",
  "instance.admin_grant": "admin.auditAction.adminGrant",
  "instance.admin_revoke": "admin.auditAction.adminRevoke",
  "instance.guild_update": "admin.auditAction.guildUpdate",
  "instance.guild_delete": "admin.auditAction.guildDelete",
  "instance.settings_update": "admin.auditAction.settingsUpdate",
};

export function instanceActionLabel(action: string): string {
  const key = INSTANCE_LABELS[action];
  return key ? t(key) : actionLabel(action);
}

function short(value: unknown, max = 60): string {
  const text = value === null || value === undefined ? t("admin.auditData.none") :
 typeof value === "string" ? value : JSON.stringify(value);
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
