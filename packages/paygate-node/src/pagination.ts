// Lists: `{data, next_cursor}` pages, newest first. A list method returns a
// PageList, an async iterator over every item of every page, fetched a page at a
// time as the loop asks; `firstPage()` gives one page for a table with "next".

export interface Page<Item> {
  readonly data: Item[];
  readonly next_cursor: string | null;
}

/** At most this many pages per iteration: a cursor that never ends is a bug, not a reason to loop for ever. */
const MAX_PAGES = 100_000;

export class PageList<Item> implements AsyncIterable<Item> {
  readonly #fetchPage: (cursor: string | undefined) => Promise<Page<Item>>;

  constructor(fetchPage: (cursor: string | undefined) => Promise<Page<Item>>) {
    this.#fetchPage = fetchPage;
  }

  /** The first page only (its `next_cursor` goes in the next call's `cursor`). */
  firstPage(): Promise<Page<Item>> {
    return this.#fetchPage(undefined);
  }

  /** Every page in turn. */
  async *pages(): AsyncGenerator<Page<Item>, void, undefined> {
    let cursor: string | undefined;
    for (let count = 0; count < MAX_PAGES; count++) {
      const page = await this.#fetchPage(cursor);
      yield page;
      if (page.next_cursor === null || page.next_cursor === undefined) return;
      cursor = page.next_cursor;
    }
    throw new Error(`Paygate: a list gave more than ${MAX_PAGES} pages`);
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<Item, void, undefined> {
    for await (const page of this.pages()) yield* page.data;
  }

  /** Every item of every page in one array; at most `limit` of them. */
  async toArray(limit = Number.POSITIVE_INFINITY): Promise<Item[]> {
    const items: Item[] = [];
    for await (const item of this) {
      if (items.length >= limit) break;
      items.push(item);
    }
    return items;
  }
}
