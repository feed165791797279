// The administration lists' paging (src/admin/paged.svelte.ts): the first page, the next one after the last
// row shown, the newest request winning over a late answer, and a refusal in words.
import { describe, expect, it } from "vitest";
import { PagedList, type Page } from "./paged.svelte";

type Row = { id: string };
const rows = (...ids: string[]): Row[] => ids.map((id) => ({ id }));

function deferred<T>() {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => ((resolve = res), (reject = rej)));
  return { promise, resolve, reject };
}

describe("PagedList", () => {
  it("asks the first page, then the page after the last row shown", async () => {
    const asked: (string | undefined)[] = [];
    const pages: Page<Row>[] = [
      { rows: rows("9", "8"), total: 3, has_more: true },
      { rows: rows("7"), total: 3, has_more: false },
    ];
    const list = new PagedList<Row>(async (before) => (asked.push(before), pages[asked.length - 1]));
    await list.load(false);
    expect([list.rows.map((r) => r.id), list.total, list.hasMore, list.loaded]).toEqual([["9", "8"], 3, true, true]);
    await list.load(true);
    expect(asked).toEqual([undefined, "8"]);
    expect([list.rows.map((r) => r.id), list.hasMore, list.loading]).toEqual([["9", "8", "7"], false, false]);
    await list.load(false); // a filter changed: the first page again, not appended
    expect(asked[2]).toBeUndefined();
  });

  it("keeps the newest request's answer when an older one arrives late", async () => {
    const slow = deferred<Page<Row>>();
    const fast = deferred<Page<Row>>();
    const answers = [slow, fast];
    let n = 0;
    const list = new PagedList<Row>(() => answers[n++].promise);
    const first = list.load(false);
    const second = list.load(false);
    fast.resolve({ rows: rows("2"), total: 1, has_more: false });
    await second;
    slow.resolve({ rows: rows("1", "0"), total: 2, has_more: true });
    await first;
    expect([list.rows.map((r) => r.id), list.total, list.hasMore, list.loading]).toEqual([["2"], 1, false, false]);
  });

  it("shows a refusal in words and clears it with the next request", async () => {
    let fail = true;
    const list = new PagedList<Row>(async () => {
      if (fail) throw new Error("You may not list the accounts.");
      return { rows: rows("1"), total: 1, has_more: false };
    });
    await list.load(false);
    expect([list.error, list.loading, list.loaded]).toEqual(["You may not list the accounts.", false, false]);
    fail = false;
    await list.load(false);
    expect([list.error, list.rows.length]).toEqual(["", 1]);
  });
});
