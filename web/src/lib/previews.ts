// Link previews (OpenAPI: getLinkPreview): the first few http(s) links of a message, each asked for once
// per page load (answers kept in memory by URL, so a message rendered again, or the same link in many
// messages, costs no new request). Failures are silent: a message without a card is still a message.

import { ApiError, call } from "./api";
import type { LinkPreview } from "./types";

/** How many links of one message get a card. */
export const PREVIEWS_PER_MESSAGE = 3;

const LINK = /https?:\/\/[^\s<>"]+[^\s<>".,;:!?)\]']/g;
const cache = new Map<string, Promise<LinkPreview | null>>();

/** The distinct http(s) links of a message, in order, at most `PREVIEWS_PER_MESSAGE`; code is skipped. */
export function linksOf(content: string): string[] {
  const text = content.replace(/```[\s\S]*?```|`[^`\n]+`/g, " ");
  const out: string[] = [];
  for (const m of text.matchAll(LINK)) {
    if (!out.includes(m[0])) out.push(m[0]);
    if (out.length === PREVIEWS_PER_MESSAGE) break;
  }
  return out;
}

/** The preview of `url`, or null when there is nothing to show (not `ok`, refused, unreachable). */
export function previewOf(url: string): Promise<LinkPreview | null> {
  let found = cache.get(url);
  if (!found) {
    found = call("getLinkPreview", { query: { url } }, { retries: 0 }).catch((err: unknown) => {
      // Too many new previews this minute: forget the failure so a later render may ask again.
      if (err instanceof ApiError && err.status === 429) cache.delete(url);
      return null;
    });
    cache.set(url, found);
  }
  return found;
}

/** Whether an image may be shown: only same-origin addresses (the content policy blocks other sites). */
export function imageAllowed(imageUrl: string | null, origin: string = location.origin): boolean {
  if (!imageUrl) return false;
  try {
    return new URL(imageUrl, origin).origin === origin;
  } catch {
    return false;
  }
}

/** Tests start from an empty cache. */
export function forgetPreviews(): void {
  cache.clear();
}
