// Filter, cursor and id values that must be refused with a 4xx, never a 500, on
// every table page and its downloads.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../support/app.ts';
import { backends } from '../support/databases.ts';
import { CabinetClient, createOwner, type CabinetPerson } from './cabinet-client.ts';

const TABLES = [
  'payments',
  'operations',
  'invoices',
  'wallets',
  'deposits',
  'refunds',
  'payouts',
  'payouts/batches',
  'webhooks/events',
];
const QUERIES = [
  'amount_min=99999999999999999999999',
  'amount_max=99999999999999999999999',
  'amount_min=-99999999999999999999999',
  'amount_min=999999999999999999999',
  'amount_max=999999999999999999999',
  'from=0000-01-01',
  'to=9999-12-31',
  'from=0000-01-01&to=9999-12-31',
  `cursor=${Buffer.from('2026-01-01T00:00:00.000Z|op_x').toString('base64url')}`,
  'cursor=op:99999999999999999999',
  `cursor=${Buffer.from('op:99999999999999999999').toString('base64url')}`,
  `cursor=${Buffer.from('op:-1').toString('base64url')}`,
  'q=%00',
  'q=%E0%A4%A',
  'status[]=x',
];

describe.each(backends)('cabinet robustness of the new tables on %s', (backend) => {
  let testApp: TestApp;
  let owner: CabinetPerson;
  let client: CabinetClient;
  beforeAll(async () => {
    testApp = await createTestApp(backend);
    owner = await createOwner(testApp);
    client = new CabinetClient(testApp.app);
    expect((await client.signIn(owner.email)).statusCode).toBe(303);
  });
  afterAll(() => testApp?.close());

  it('no filter or cursor value makes a table page or a download answer 500', async () => {
    const failures: string[] = [];
    for (const table of TABLES)
      for (const suffix of ['', '.csv'])
        for (const query of QUERIES) {
          const url = `/cabinet/shops/${owner.shopId}/${table}${suffix}?${query}`;
          const response = await client.get(url, { 'accept-language': 'en' });
          if (response.statusCode >= 500) failures.push(`${response.statusCode} ${url}`);
        }
    expect(failures).toEqual([]);
  });

  it('no id of the wrong form makes a detail page answer 500', async () => {
    const failures: string[] = [];
    const ids = ['x', 'pay_' + 'a'.repeat(300), '%00', 'wd_%00', 'dep_%E2%80%AE', '..', "1'--"];
    for (const table of [
      'payments',
      'invoices',
      'wallets',
      'deposits',
      'refunds',
      'payouts',
      'payouts/batches',
      'withdrawals',
      'webhooks/events',
    ])
      for (const id of ids) {
        const url = `/cabinet/shops/${owner.shopId}/${table}/${id}`;
        const response = await client.get(url, { 'accept-language': 'en' });
        if (response.statusCode >= 500) failures.push(`${response.statusCode} ${url}`);
      }
    for (const query of [
      'from=0000-01-01',
      'to=9999-12-31',
      'days=999999999',
      'from=2026-01-01&to=9999-12-31',
      'range=x',
    ])
      for (const page of ['overview', 'accounting', 'accounting.csv']) {
        const url = `/cabinet/shops/${owner.shopId}/${page}?${query}`;
        const response = await client.get(url, { 'accept-language': 'en' });
        if (response.statusCode >= 500) failures.push(`${response.statusCode} ${url}`);
      }
    expect(failures).toEqual([]);
  });
});
