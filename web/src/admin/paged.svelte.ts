// One administration list paged with `before` (the id of the last row shown; OpenAPI: listInstanceUsers,
// listInstanceGuilds, listInstanceAuditLog): the rows so far, the total, whether more follow, and the
// request in flight. A newer request wins over an older one still running (a search typed on while the
// previous page loads), so an answer that arrives late never replaces a newer one.

import { Action } from "../lib/action.svelte";

export interface Page<T> {
  rows: T[];
  total: number;
  has_more: boolean;
}

export class PagedList<T extends { id: string }> {
  rows: T[] = $state([]);
  total = $state(0);
  hasMore = $state(false);
  loaded = $state(false);
  readonly #request = new Action();

  /** `fetchPage(before)`: the page after the row `before` (the first page when undefined), asked with the
   * filters as they are at that moment. */
  constructor(private readonly fetchPage: (before: string | undefined) => Promise<Page<T>>) {}

  /** Whether a page is being asked. */
  get loading(): boolean {
    return this.#request.busy;
  }

  /** The last refusal in words. */
  get error(): string {
    return this.#request.error;
  }

  /** The first page again (`more` false: a filter changed), or the page after the last row shown. */
  async load(more: boolean): Promise<void> {
    const last = more && this.rows.length ? this.rows[this.rows.length - 1].id : undefined;
    const page = await this.#request.run(() => this.fetchPage(last), { latest: true });
    if (!page) return;
    this.rows = more ? [...this.rows, ...page.rows] : page.rows;
    this.total = page.total;
    this.hasMore = page.has_more;
    this.loaded = true;
  }
}
