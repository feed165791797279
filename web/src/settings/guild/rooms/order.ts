// Reordering rooms and categories (OpenAPI: reorderChannels): a move swaps an item with its neighbour
// among its siblings (rooms of the same category, or the categories), and the siblings are numbered
// again from 0 so that ties never decide the order. Only changed positions are sent, in one request.

import { t } from "../../../i18n/index.svelte";
import { compareIds } from "../../../lib/ids";
import type { Channel, Id } from "../../../lib/types";

export const byPosition = (a: Channel, b: Channel) => a.position - b.position || compareIds(a.id, b.id);

/** The items that move together with `item`: the categories, or the rooms under the same category. */
export function siblingsOf(channels: Channel[], item: Channel): Channel[] {
  if (item.type === "category") return channels.filter((c) => c.type === "category").sort(byPosition);
  const categories = new Set(channels.filter((c) => c.type === "category").map((c) => c.id));
  const parentOf = (c: Channel) => (c.parent_id && categories.has(c.parent_id) ? c.parent_id : null);
  const parent = parentOf(item);
  return channels.filter((c) => c.type !== "category" && parentOf(c) === parent).sort(byPosition);
}

/** The bulk body of a move by `delta` (-1 up, +1 down), or null when the item is already at that end. */
export function movePayload(siblings: Channel[], id: Id, delta: -1 | 1): { id: Id; position: number }[] | null {
  const i = siblings.findIndex((c) => c.id === id);
  const j = i + delta;
  if (i < 0 || j < 0 || j >= siblings.length) return null;
  const order = [...siblings];
  [order[i], order[j]] = [order[j], order[i]];
  return order.flatMap((c, position) => (c.position === position ? [] : [{ id: c.id, position }]));
}

/** Human slowmode choices; a value set elsewhere that is not among them is offered as it is. */
export const SLOWMODE_CHOICES: { seconds: number; readonly label: string }[] = [0, 5, 10, 30, 60, 300, 900, 3600, 21600].map(
  (seconds) => ({
    seconds,
    get label() {
      return slowmodeLabel(seconds);
    },
  }),
);

/** A slowmode in words, in the largest whole unit: "Off", "5 seconds", "1 minute", "6 hours". */
export function slowmodeLabel(seconds: number): string {
  if (seconds === 0) return t("roles.slowmode.off");
  if (seconds % 3600 === 0) return t("roles.duration.hours", { count: seconds / 3600 });
  if (seconds % 60 === 0) return t("roles.duration.minutes", { count: seconds / 60 });
  return t("roles.duration.seconds", { count: seconds });
}
