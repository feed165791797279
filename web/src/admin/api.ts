// Thin typed calls of instance administration for users and the audit log (OpenAPI: listInstanceUsers,
// getInstanceUser, banInstanceUser and the other user actions, listInstanceAuditLog,
// listInstanceAuditActions, exportInstanceAuditLog). Mutations are wrapped in withStepUp by the screens.

import { t, type Key } from "../i18n/index.svelte";
import { call, operationPath } from "../lib/api";

export const USERS_PAGE = 50;
export const AUDIT_PAGE = 50;

export interface UserFilters {
  q: string;
  bannedOnly: boolean;
  /** Only imported authors (an extension of listInstanceUsers: `imported=true`). */
  importedOnly?: boolean;
}

/** The list's query: a search that looks like an email address asks the exact-email index, anything else
 * the name search. */
export function usersQuery(filters: UserFilters, before?: string): Record<string, string | number | undefined> {
  const q = filters.q.trim();
  const isEmail = /^[^\s@]+@[^\s@]+$/.test(q);
  return {
    limit: USERS_PAGE,
    q: q && !isEmail ? q : undefined,
    email: isEmail ? q : undefined,
    banned: filters.bannedOnly ? "true" : undefined,
    imported: filters.importedOnly ? "true" : undefined,
    before,
  };
}

export const listUsers = (filters: UserFilters, before?: string) =>
  call("listInstanceUsers", { query: usersQuery(filters, before) });

export const getUser = (id: string) => call("getInstanceUser", { path: { user_id: id } });

const user = (user_id: string) => ({ path: { user_id } });

export const banUser = (id: string, reason: string) => call("banInstanceUser", { ...user(id), body: { reason } });
export const unbanUser = (id: string) => call("unbanInstanceUser", user(id));
export const revokeDevice = (id: string, sessionId: string) =>
  call("revokeInstanceUserSession", { path: { user_id: id, session_id: sessionId } });
export const resetTwoFactor = (id: string) => call("resetInstanceUser2fa", user(id));
export const temporaryPassword = (id: string) => call("setInstanceUserTemporaryPassword", user(id));
export const logoutAll = (id: string) => call("logoutInstanceUserEverywhere", user(id));
export const deleteUser = (id: string) => call("deleteInstanceUser", user(id));
export const grantAdmin = (id: string) => call("grantInstanceAdmin", user(id));
export const revokeAdmin = (id: string) => call("revokeInstanceAdmin", user(id));

export interface AuditFilters {
  action: string;
  actor: string;
  target: string;
  guild: string;
  /** `YYYY-MM-DD` from a date input, or "". */
  from: string;
  /** `YYYY-MM-DD`, the last day shown (inclusive), or "". */
  until: string;
}

export const NO_AUDIT_FILTERS: AuditFilters = { action: "", actor: "", target: "", guild: "", from: "", until: "" };

const ID = /^\d{1,20}$/;
const DAY = /^\d{4}-\d{2}-\d{2}$/;

/** The day after `YYYY-MM-DD`: the service's `to` is exclusive, the screen's "until" includes its day. */
export function nextDay(day: string): string {
  const d = new Date(`${day}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + 1);
  return d.toISOString().slice(0, 10);
}

/** What is wrong with the filters, in words, before anything is asked (ids are numbers, dates in order). */
export function auditFilterProblem(f: AuditFilters): string | null {
  const fields: [Key, string][] = [["admin.audit.doneBy", f.actor], ["admin.audit.about", f.target], ["admin.audit.server", f.guild]];
  for (const [label, value] of fields) {
    if (value.trim() && !ID.test(value.trim())) return t("admin.auditFilter.id", { label: t(label) });
  }
  if (f.from && !DAY.test(f.from)) return t("admin.auditFilter.from");
  if (f.until && !DAY.test(f.until)) return t("admin.auditFilter.until");
  if (f.from && f.until && f.until < f.from) return t("admin.auditFilter.order");

  return null;
}

/** The filters as the query of the list and of the CSV export (no cursor for the export). */
export function auditQuery(f: AuditFilters): Record<string, string> {
  const query: Record<string, string> = {};
  if (f.action) query.action = f.action;
  if (f.actor.trim()) query.actor_id = f.actor.trim();
  if (f.target.trim()) query.target_id = f.target.trim();
  if (f.guild.trim()) query.guild_id = f.guild.trim();
  if (f.from) query.from = f.from;
  if (f.until) query.to = nextDay(f.until);
  return query;
}

/** The export's address with the current filters; the session cookie authenticates the download. */
export function exportUrl(f: AuditFilters): string {
  const text = new URLSearchParams(auditQuery(f)).toString();
  return `/api/v1${operationPath("exportInstanceAuditLog")}${text ? `?${text}` : ""}`;
}

export const listAudit = (f: AuditFilters, beforeId?: string) =>
  call("listInstanceAuditLog", { query: { ...auditQuery(f), limit: AUDIT_PAGE, before_id: beforeId } });

export const listAuditActions = () => call("listInstanceAuditLogActions");
