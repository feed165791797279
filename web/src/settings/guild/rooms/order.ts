// Reordering rooms and categories (OpenAPI: reorderChannels): a move swaps an item with its neighbour
// among its siblings (rooms of the same category, or the categories), and the siblings are numbered
// again from 0 so that ties never decide the order. Only changed positions are sent, in one request.

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
export const SLOWMODE_CHOICES: { seconds: number; label: string }[] = [
  { seconds: 0, label: "Off" },
  { seconds: 5, label: "5 seconds" },
  { seconds: 10, label: "10 seconds" },
  { seconds: 30, label: "30 seconds" },
  { seconds: 60, label: "1 minute" },
  { seconds: 300, label: "5 minutes" },
  { seconds: 900, label: "15 minutes" },
  { seconds: 3600, label: "1 hour" },
  { seconds: 21600, label: "6 hours" },
];

export function slowmodeLabel(seconds: number): string {
  const known = SLOWMODE_CHOICES.find((c) => c.seconds === seconds);
  if (known) return known.label;
  if (seconds % 3600 === 0) return `${seconds / 3600} hours`;
  if (seconds % 60 === 0) return `${seconds / 60} minutes`;
  return `${seconds} seconds`;
}
