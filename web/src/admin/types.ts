// Shapes of instance administration (OpenAPI: listInstanceUsers, getInstanceUser, listInstanceGuilds,
// getInstanceSettings, listInstanceAuditLog, getInstanceStats), shared by the administration screens.

import type { AuditEntry, Guild, Id, Passkey, Role, SecurityEvent, Session, User, UserSummary } from "../lib/types";

export type { AuditEntry };

/** A user as administrators see them: the account plus ban, deletion and counts. */
export interface AdminUser extends User {
  banned_at: string | null;
  ban_reason: string | null;
  banned_by: UserSummary | null;
  deleted_at: string | null;
  session_count: number;
  guild_count: number;
  created_at: string;
}

export interface AdminUserPage {
  users: AdminUser[];
  total: number;
  has_more: boolean;
}

export interface AdminServer {
  guild: Guild;
  roles: Role[];
  joined_at: string;
}

/** Everything the user detail view shows (OpenAPI: getInstanceUser). */
export interface AdminUserDetail {
  user: AdminUser;
  devices: Session[];
  passkeys: Passkey[];
  servers: AdminServer[];
  security_events: SecurityEvent[];
  audit_entries: AuditEntry[];
}

/** A server as administrators see it: the server plus its owner. */
export interface AdminGuild extends Guild {
  owner: UserSummary;
}

export interface AdminGuildPage {
  guilds: AdminGuild[];
  total: number;
  has_more: boolean;
}

export interface MediaLimits {
  avatar_max_bytes: number;
  guild_image_max_bytes: number;
  emoji_max_bytes: number;
  sound_max_bytes: number;
  gallery_max_bytes: number;
}

export interface InstanceSettings {
  media_limits: MediaLimits;
  updated_at: string;
}

export interface AuditPage {
  audit_entries: AuditEntry[];
  total: number;
  has_more: boolean;
}

export interface GrowthPoint {
  date: string;
  new: number;
  total: number;
}

export interface Stats {
  range: { from: string; to: string; days: number };
  users: { total: number; banned: number; deleted: number; growth: GrowthPoint[] };
  messages: { total: number; growth: GrowthPoint[] };
  activity: { online_now: number; active_1d: number; active_7d: number; active_30d: number };
  storage: { database_bytes: number; files_bytes: number; files_count: number };
  top_guilds: { guild: Guild; messages: number; members: number }[];
}

export type { Id };
