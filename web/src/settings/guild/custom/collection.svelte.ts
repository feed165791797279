// What the emoji, sound and cosmetics screens share: who added an item, Escape leaving an inline edit, and
// the confirmed deletion of one item with its refusal kept in words.

import { displayName } from "../../../lib/state";
import { store } from "../../../lib/store.svelte";
import type { Id } from "../../../lib/types";
import { errorText } from "./forms";
import { t } from "../../../i18n/index.svelte";

/** "Added by you", by the adder's name in this server, or by "someone no longer here" when the client does
 * not know them. */
export function addedBy(guildId: Id, userId: Id | null | undefined): string {
  if (userId && userId === store.me?.id) return t("guild.collection.addedByYou");
  if (!userId || !(store.members[guildId]?.[userId] ?? store.users[userId])) return t("guild.collection.addedByGone");
  return t("guild.collection.addedBy", { name: displayName(store, userId, guildId) });
}

/** Escape in an inline edit cancels it (and does not close the settings). */
export function escapeCancels(ev: KeyboardEvent, cancel: () => void): void {
  if (ev.key !== "Escape") return;
  ev.preventDefault();
  ev.stopPropagation();
  cancel();
}

/** The item a confirmation dialog asks about, the dialog's state, and the deletion itself. */
export class PendingDelete<T> {
  item: T | null = $state(null);
  open = $state(false);
  error = $state("");
  busy = $state(false);

  ask(item: T): void {
    this.item = item;
    this.error = "";
    this.open = true;
  }

  /** Deletes the asked item with `call`; the deleted item on success (the dialog closes), else null with the
   * refusal in `error` (the dialog stays). */
  async run(call: (item: T) => Promise<unknown>, words: Record<string, string>): Promise<T | null> {
    const item = this.item;
    if (!item) return null;
    this.busy = true;
    this.error = "";
    try {
      await call(item);
      this.open = false;
      return item;
    } catch (err) {
      this.error = errorText(err, words);
      return null;
    } finally {
      this.busy = false;
    }
  }
}
