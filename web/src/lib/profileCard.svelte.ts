// Which person's profile card is open (components/ProfileCard.svelte, mounted once by the shell): a name in
// a message or in the members list opens it with the summary the client already holds.

import type { Id, UserSummary } from "./types";
import { t } from "../i18n/index.svelte";

export const profileCard = $state<{ user: UserSummary | null; guildId: Id | null }>({ user: null, guildId: null });

export function showProfile(user: UserSummary, guildId: Id | null = null): void {
  profileCard.user = user;
  profileCard.guildId = guildId;
}

export function closeProfile(): void {
  profileCard.user = null;
  profileCard.guildId = null;
}

/** An imported author (docs/imported-authors.md): history brought from another service, nobody signed in. */
export function isImported(user: { badges?: string[] } | null | undefined): boolean {
  return !!user?.badges?.includes("imported");
}

/** The tooltip of an imported author's badge, in the shown language. */
export function importedTip(): string {
  return t("shell.profile.importedTip");
}
