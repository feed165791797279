// How a member looks in a server (docs/customisation.md, "The cosmetics gallery" and "Personal styles"):
// the frame around the avatar, the icon beside the name and the name's colour. The member's own
// guild-scope style comes first; else the highest role that shows a frame, an icon or a colour. The
// service already shows as null a chosen item that is no longer available, so the style is taken as it
// comes, and an item the client does not know (gallery not loaded, just deleted) is simply not shown.

import type { Cosmetic, GuildSnapshot, Id, Member, Role } from "./types";

/** Where a gallery item's image is served. */
export function cosmeticUrl(c: Cosmetic): string {
  return `/files/${c.file_id}`;
}

/** "#rrggbb" of an RGB integer. */
export function hexOf(color: number): string {
  return `#${Math.max(0, Math.min(0xffffff, Math.trunc(color))).toString(16).padStart(6, "0")}`;
}

/** The RGB integer of "#rrggbb" (null when it is not one). */
export function colorOf(hex: string): number | null {
  const m = /^#?([0-9a-f]{6})$/i.exec(hex.trim());
  return m ? parseInt(m[1], 16) : null;
}

function item(guild: GuildSnapshot, id: Id | null | undefined, kind: Cosmetic["kind"]): Cosmetic | null {
  if (!id) return null;
  return guild.cosmetics?.find((c) => c.id === id && c.kind === kind) ?? null;
}

/** The roles a member holds, highest first, the default role (which everyone holds) last. */
export function heldRoles(guild: GuildSnapshot, member: Pick<Member, "roles">): Role[] {
  const held = new Set(member.roles);
  const others = guild.roles.filter((r) => !r.is_default && held.has(r.id)).sort((a, b) => b.position - a.position);
  return [...others, ...guild.roles.filter((r) => r.is_default)];
}

/** The frame drawn around the member's avatar. */
export function frameOf(guild: GuildSnapshot, member: Pick<Member, "roles" | "style">): Cosmetic | null {
  const own = item(guild, member.style?.frame_id, "frame");
  if (own) return own;
  for (const r of heldRoles(guild, member)) {
    const f = item(guild, r.frame_id, "frame");
    if (f) return f;
  }
  return null;
}

/** The icon shown beside the member's name. */
export function iconOf(guild: GuildSnapshot, member: Pick<Member, "roles" | "style">): Cosmetic | null {
  const own = item(guild, member.style?.icon_id, "icon");
  if (own) return own;
  for (const r of heldRoles(guild, member)) {
    const i = item(guild, r.icon_id, "icon");
    if (i) return i;
  }
  return null;
}

/** The colour of the member's name: their style's colour over the colour of their highest coloured role. */
export function nameColorOf(guild: GuildSnapshot, member: Pick<Member, "roles" | "style">): string | undefined {
  const own = member.style?.color;
  if (own !== null && own !== undefined) return hexOf(own);
  const r = heldRoles(guild, member).find((x) => !x.is_default && x.color !== 0);
  return r ? hexOf(r.color) : undefined;
}

/** The roles that show a gallery item (what loses it when the item is deleted). */
export function rolesShowing(guild: GuildSnapshot, c: Cosmetic): Role[] {
  return guild.roles.filter((r) => (c.kind === "frame" ? r.frame_id : r.icon_id) === c.id);
}

/** The style attribute of a name shown in `hex`: the colour with its lightness held where the theme's surfaces
 * keep it readable (app.css, --name-l-min/max), hue and chroma kept; a browser without relative colours
 * ignores the second declaration and shows the colour as chosen. */
export function nameStyle(hex: string): string {
  return `color:${hex};color:oklch(from ${hex} clamp(var(--name-l-min), l, var(--name-l-max)) c h)`;
}
