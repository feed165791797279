// A room's permission override as the editor shows it: each permission is allowed, left to what the
// roles give (inherit) or denied. The service keeps two sets, `allow` and `deny` (OpenAPI:
// setChannelPermission); a permission in both counts as denied, so the editor reads it that way too.

import { t } from "../../../i18n/index.svelte";
import { bits, names } from "../../../lib/permissions";
import type { Channel, GuildSnapshot, Id, Member, PermissionOverride } from "../../../lib/types";

export type Tri = "allow" | "inherit" | "deny";

export interface Draft {
  allow: bigint;
  deny: bigint;
}

export function triOf(draft: Draft, bit: bigint): Tri {
  if (draft.deny & bit) return "deny";
  if (draft.allow & bit) return "allow";
  return "inherit";
}

/** The override with one permission set to `tri`, the others untouched. */
export function withTri(draft: Draft, bit: bigint, tri: Tri): Draft {
  const allow = tri === "allow" ? draft.allow | bit : draft.allow & ~bit;
  const deny = tri === "deny" ? draft.deny | bit : draft.deny & ~bit;
  return { allow, deny };
}

export function draftOf(o: Pick<PermissionOverride, "allow" | "deny"> | undefined): Draft {
  if (!o) return { allow: 0n, deny: 0n };
  const deny = bits(o.deny);
  return { allow: bits(o.allow) & ~deny, deny };
}

/** The body of PUT /channels/{id}/permissions/{target}. */
export function overrideBody(type: PermissionOverride["type"], draft: Draft): { type: PermissionOverride["type"]; allow: string; deny: string } {
  return { type, allow: names(draft.allow & ~draft.deny), deny: names(draft.deny) };
}

/** What changed between two drafts, as the permissions whose state differs. */
export function changedBits(a: Draft, b: Draft): bigint {
  return (a.allow ^ b.allow) | (a.deny ^ b.deny);
}

/** Only permissions the caller holds in the room may be moved (docs/reference/permissions.md, overrides). */
export function allowedChange(before: Draft, after: Draft, held: bigint): boolean {
  return (changedBits(before, after) & ~held) === 0n;
}

/** The room's overrides with one replaced, added or (draft null) removed: what CHANNEL_UPDATE will say. */
export function replaceOverride(channel: Channel, id: Id, type: PermissionOverride["type"], draft: Draft | null): PermissionOverride[] {
  const rest = channel.permission_overrides.filter((o) => o.id !== id);
  if (!draft) return rest;
  const body = overrideBody(type, draft);
  return [...rest, { id, type, allow: body.allow, deny: body.deny }];
}

/** Display name of an override's target: the role's name (the default role is "@user"), or the member's. */
export function targetName(guild: GuildSnapshot, o: Pick<PermissionOverride, "id" | "type">, members: Record<Id, Member> | undefined,
  fallback: Record<Id, string> = {}): string {
  if (o.type === "role") {
    const role = guild.roles.find((r) => r.id === o.id);
    return role ? role.name : t("roles.overrides.deletedRole");
  }
  const m = members?.[o.id];
  return m?.nick ?? m?.user.display_name ?? fallback[o.id] ?? t("roles.overrides.member");
}
