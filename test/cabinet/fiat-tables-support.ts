// Shared steps of the fiat tables' tests (payments, balance operations, webhook
// events): a payment paid through the hosted page's sandbox card form (so it has
// acquirer attempts), the ids a table page links to, and a CSV read back into rows.
import { expect } from 'vitest';
import type { TestApp } from '../support/app.ts';

const CARD = { 'cc-exp': '12/34', 'cc-csc': '123' };
export const SUCCESS_CARD = '4242424242424242';
/** The sandbox acquirer declines it and lets the payer try again. */
export const DECLINE_CARD = '4000000000000002';

function field(html: string, name: string): string {
  const value = new RegExp(`name="${name}" value="([^"]*)"`).exec(html)?.[1];
  if (value === undefined) throw new Error(`no ${name} on the payment page`);
  return value;
}

/** Submits each card in turn on the payment's hosted page, as a payer would. */
export async function payOnPage(testApp: TestApp, orderCode: string, cards: readonly string[]): Promise<void> {
  let opened = await testApp.app.inject({ method: 'GET', url: `/pay/${orderCode}` });
  const cookie = String(opened.headers['set-cookie'] ?? '').split(';')[0]!;
  for (const card of cards) {
    const submitted = await testApp.app.inject({
      method: 'POST',
      url: `/pay/${orderCode}/card`,
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
      payload: new URLSearchParams({
        csrf: field(opened.body, 'csrf'),
        attempt: field(opened.body, 'attempt'),
        'cc-number': card,
        ...CARD,
      }).toString(),
    });
    expect(submitted.statusCode, submitted.body).toBe(303);
    opened = await testApp.app.inject({ method: 'GET', url: String(submitted.headers.location), headers: { cookie } });
  }
}

/** The ids of the rows a table page links to (`<path>/<id>` under the shop), in the page's order. */
export function linkedIds(body: string, path: string): string[] {
  const pattern = new RegExp(`href="/cabinet/shops/[^/"]+/${path}/([^"/?]+)"`, 'g');
  return [...body.matchAll(pattern)].map((match) => decodeURIComponent(match[1]!));
}

/** The table page's "next page" link, unescaped. */
export function nextPageLink(body: string): string | undefined {
  const href = /<a href="([^"]+cursor=[^"]+)">(?:Next page|Следующая страница)<\/a>/.exec(body)?.[1];
  return href?.replaceAll('&amp;', '&');
}

/** RFC 4180 text back into rows of cells (quoted fields, doubled quotes, CRLF records). */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  for (let index = 0; index < text.length; index++) {
    const char = text[index]!;
    if (quoted) {
      if (char === '"' && text[index + 1] === '"') {
        cell += '"';
        index++;
      } else if (char === '"') quoted = false;
      else cell += char;
    } else if (char === '"') quoted = true;
    else if (char === ',') {
      row.push(cell);
      cell = '';
    } else if (char === '\r' && text[index + 1] === '\n') {
      row.push(cell);
      rows.push(row);
      row = [];
      cell = '';
      index++;
    } else cell += char;
  }
  if (cell !== '' || row.length > 0) rows.push([...row, cell]);
  return rows;
}

/** CSV rows as records keyed by the header. */
export function csvRecords(text: string): Array<Record<string, string>> {
  const [header, ...rows] = parseCsv(text);
  return rows.map((row) => Object.fromEntries(header!.map((name, index) => [name, row[index] ?? ''])));
}
