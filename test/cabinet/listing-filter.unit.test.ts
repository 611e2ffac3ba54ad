// The cabinet tables' filter form and download columns, read as a person types
// them: days as UTC days (the last one whole), amounts exactly in minor units,
// bad input refused with a message; CSV cells never run as formulas.
import { describe, expect, it } from 'vitest';
import { text } from 'node:stream/consumers';
import { chosenColumns, everyPage, formulaSafe, listingCsv } from '../../src/cabinet/listings/listing-csv.ts';
import { filterValuesOf, parseListingFilter, queryOf, type Listing } from '../../src/cabinet/listings/listing.ts';

const LISTING = {
  statuses: ['pending', 'paid'],
  amountAsset: 'RUB',
  columns: [
    { key: 'id', label: () => 'Id', text: (row: { id: string }) => row.id },
    { key: 'status', label: () => 'Status', text: () => 'paid' },
    { key: 'amount', label: () => 'Amount', text: () => '1.00' },
  ],
} as const satisfies Partial<Listing<{ id: string }>>;

describe('parseListingFilter', () => {
  it('reads days as whole UTC days, amounts in kopecks, and an exact search', () => {
    const filter = parseListingFilter(
      LISTING,
      filterValuesOf({
        status: 'paid',
        from: '2026-11-01',
        to: '2026-11-02',
        amount_min: '10.5',
        amount_max: '100',
        q: ' ord-1 ',
      }),
    );
    expect(filter).toEqual({
      status: 'paid',
      search: 'ord-1',
      createdFrom: new Date('2026-11-01T00:00:00.000Z'),
      createdBefore: new Date('2026-11-03T00:00:00.000Z'),
      amountMin: 1050n,
      amountMax: 10000n,
    });
    expect(parseListingFilter(LISTING, filterValuesOf({}))).toEqual({
      status: undefined,
      search: undefined,
      createdFrom: undefined,
      createdBefore: undefined,
      amountMin: undefined,
      amountMax: undefined,
    });
  });

  it.each([
    [{ status: 'refunded' }, 'status must be one of pending, paid'],
    [{ from: '2026-02-30' }, 'from must be a day'],
    [{ to: '28.11.2026' }, 'to must be a day'],
    [{ from: '2026-11-03', to: '2026-11-02' }, 'from must not be after to'],
    [{ amount_min: '1.005' }, 'more than 2 decimal places'],
    [{ amount_max: '-1' }, 'must be a decimal string'],
    [{ amount_min: '5', amount_max: '4' }, 'amount_min must not be above amount_max'],
    [{ q: 'x'.repeat(201) }, 'at most 200 characters'],
    [{ amount_min: '999999999999999999999' }, 'larger than any amount'],
    [{ to: '9999-12-31' }, 'between the years'],
    [{ from: '0000-01-01' }, 'between the years'],
  ])('refuses %j', (query, message) => {
    expect(() => parseListingFilter(LISTING, filterValuesOf(query))).toThrow(message);
  });

  it('refuses an amount on a table without amounts; a repeated field counts once', () => {
    expect(() => parseListingFilter({ statuses: [] }, filterValuesOf({ amount_min: '1' }))).toThrow('no amount');
    expect(filterValuesOf({ status: ['paid', 'pending'] }).status).toBe('');
  });

  it('writes back a query string without the empty fields', () => {
    expect(queryOf(filterValuesOf({ status: 'paid', q: 'a b&c' }), { cursor: 'xyz' })).toBe(
      '?status=paid&q=a+b%26c&cursor=xyz',
    );
    expect(queryOf(filterValuesOf({}))).toBe('');
  });
});

describe('download columns and cells', () => {
  const listing = LISTING as unknown as Listing<{ id: string }>;
  it('takes the columns asked for in the table’s order, all when none, and refuses unknown ones', () => {
    expect(chosenColumns(listing, ['amount', 'id']).map((column) => column.key)).toEqual(['id', 'amount']);
    expect(chosenColumns(listing, 'status,id').map((column) => column.key)).toEqual(['id', 'status']);
    expect(chosenColumns(listing, undefined)).toHaveLength(3);
    expect(() => chosenColumns(listing, ['id', 'secret'])).toThrow('Unknown column secret');
  });

  it.each([
    ['=HYPERLINK("http://evil")', `'=HYPERLINK("http://evil")`],
    ['+1', `'+1`],
    ['-2+3', `'-2+3`],
    ['@SUM(A1)', `'@SUM(A1)`],
    ['\tcmd', `'\tcmd`],
    ['-12.50', '-12.50'],
    ['order-7', 'order-7'],
  ])('the cell %j is written as %j', (cell, written) => {
    expect(formulaSafe(cell)).toBe(written);
  });

  it('writes RFC 4180 records a page at a time: CRLF ends, quoted commas, quotes and line breaks, formulas as text', async () => {
    async function* pages() {
      yield [{ id: 'plain' }, { id: 'a,b' }];
      yield [];
      yield [{ id: 'say "hi"' }, { id: 'two\nlines' }, { id: 'cr\rhere' }, { id: '=HYPERLINK("http://evil")' }];
    }
    const csv = await text(listingCsv(LISTING.columns, pages()));
    expect(csv).toBe(
      [
        'id,status,amount',
        'plain,paid,1.00',
        '"a,b",paid,1.00',
        '"say ""hi""",paid,1.00',
        '"two\nlines",paid,1.00',
        '"cr\rhere",paid,1.00',
        `"'=HYPERLINK(""http://evil"")",paid,1.00`,
        '',
      ].join('\r\n'),
    );
  });

  it('a download without rows is its header line', async () => {
    async function* none(): AsyncGenerator<readonly { id: string }[]> {}
    expect(await text(listingCsv(LISTING.columns, none()))).toBe('id,status,amount\r\n');
  });
});

describe('everyPage', () => {
  const shop = { shopId: 'shp_1', merchantId: 'mer_1', mode: 'sandbox' } as Parameters<typeof everyPage>[1];

  it('asks for the next page before handing on the one it has, and follows the cursor to the end', async () => {
    const asked: (string | undefined)[] = [];
    const listing = {
      ...LISTING,
      read: async (_shop: unknown, _filter: unknown, page: { cursor?: string | undefined }) => {
        asked.push(page.cursor);
        const index = page.cursor === undefined ? 0 : Number(page.cursor);
        return { data: [{ id: `row-${index}` }], next_cursor: index < 2 ? String(index + 1) : null };
      },
    } as unknown as Listing<{ id: string }>;
    const pages = everyPage(listing, shop, {});
    expect((await pages.next()).value).toEqual([{ id: 'row-0' }]);
    expect(asked).toEqual([undefined, '1']);
    const rest: unknown[] = [];
    for await (const page of pages) rest.push(...page);
    expect(rest).toEqual([{ id: 'row-1' }, { id: 'row-2' }]);
    expect(asked).toEqual([undefined, '1', '2']);
  });

  it('a download stopped early drops the page read ahead, even one whose read fails', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const listing = {
        ...LISTING,
        read: async (_shop: unknown, _filter: unknown, page: { cursor?: string | undefined }) => {
          if (page.cursor !== undefined) throw new Error('the database went away');
          return { data: [{ id: 'row-0' }], next_cursor: '1' };
        },
      } as unknown as Listing<{ id: string }>;
      const pages = everyPage(listing, shop, {});
      expect((await pages.next()).value).toEqual([{ id: 'row-0' }]);
      expect(await pages.return(undefined)).toEqual({ done: true, value: undefined });
      // An unhandled rejection is reported once the microtasks of the turn that left it have run.
      await new Promise((resolve) => setImmediate(resolve));
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });
});
