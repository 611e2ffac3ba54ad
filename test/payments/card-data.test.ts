// Card data never lands in the logs or the database (docs/connectors.md, "Card
// data"): a real gateway logging at trace level takes card payments through the
// page (paid, declined, refused by Luhn, 3-D Secure style); then its whole log
// and every row of every table are searched for the card numbers and the code.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/db/database.ts';
import { lastJsonLine, runPaygateInProcess, startPaygate } from '../support/cli.ts';
import { backends, createServerDatabase, dropServerDatabase } from '../support/databases.ts';

const CARDS = ['4242424242424242', '4000000000000002', '4000000000003220', '4242424242424241'];
/** An unusual security code, so a hit cannot be a coincidence of ids or times. */
const SECURITY_CODE = '7391';
/**
 * The code standing on its own: four digits also turn up inside timestamps,
 * durations and hex ids by chance, which would be no leak (and a flaky test).
 */
const SECURITY_CODE_ALONE = new RegExp(`(?<![0-9A-Za-z])${SECURITY_CODE}(?![0-9A-Za-z])`);

function field(html: string, name: string): string | undefined {
  return new RegExp(`name="${name}" value="([^"]*)"`).exec(html)?.[1];
}

/** Every way a number could be written: digits, and in groups of four as the payer typed it. */
function cardForms(number: string): string[] {
  return [
    number,
    number.replace(/(\d{4})(?=\d)/g, '$1 '),
    number.replace(/(\d{4})(?=\d)/g, '$1%20'),
    number.replace(/(\d{4})(?=\d)/g, '$1+'),
  ];
}

describe.each(backends)('card data on %s', (backend) => {
  let env: Record<string, string | undefined>;
  let dataDir: string;
  let databaseUrl: string | undefined;
  let apiKey: string;

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'paygate-card-data-'));
    databaseUrl = backend === 'postgres' ? await createServerDatabase() : undefined;
    env = { PAYGATE_DATA_DIR: dataDir, DATABASE_URL: databaseUrl, PORT: '0' };
    expect((await runPaygateInProcess(['migrate'], env)).code).toBe(0);
    const created = await runPaygateInProcess(
      ['merchant', 'create', '--name', 'Card shop', '--email', 'card@example.test', '--json'],
      env,
    );
    apiKey = lastJsonLine<{ api_key: string }>(created.stdout).api_key;
  });
  afterAll(async () => {
    await rm(dataDir, { recursive: true, force: true });
    if (databaseUrl) await dropServerDatabase(databaseUrl);
  });

  it('no card number or security code appears in a trace-level log or in any table after card payments through the page', async () => {
    const server = await startPaygate(['--role', 'all'], { ...env, LOG_LEVEL: 'trace' });
    try {
      for (const number of CARDS) {
        const created = await request(`${server.url}/v1/payments`, {
          method: 'POST',
          headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
          body: JSON.stringify({ amount: 100, currency: 'RUB', method: 'card' }),
        });
        const payment = (await created.body.json()) as { order_code: string };
        const page = await request(`${server.url}/pay/${payment.order_code}`);
        const html = await page.body.text();
        const cookie = String(page.headers['set-cookie']).split(';')[0]!;
        const spaced = cardForms(number)[1]!;
        const form = new URLSearchParams({
          csrf: field(html, 'csrf')!,
          attempt: field(html, 'attempt')!,
          'cc-number': spaced,
          'cc-exp': '12/34',
          'cc-csc': SECURITY_CODE,
        });
        const posted = await request(`${server.url}/pay/${payment.order_code}/card`, {
          method: 'POST',
          headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
          body: form.toString(),
        });
        expect(posted.statusCode).toBe(303);
        await posted.body.dump();
      }
    } finally {
      const closed = new Promise((resolve) => server.child.once('close', resolve));
      server.child.kill('SIGTERM');
      await closed;
    }
    const log = server.output();
    // The log is real: it holds the card form posts and the debug lines of the charges.
    expect(log).toMatch(/"url":"\/pay\/\w+\/card"/);
    expect(log.match(/"level":20,[^\n]*"msg":"applying the acquirer outcome"/g)).toHaveLength(CARDS.length - 1);
    for (const number of CARDS) for (const written of cardForms(number)) expect(log).not.toContain(written);
    expect(log).not.toMatch(SECURITY_CODE_ALONE);
    expect(log).not.toMatch(/cc-number|cc-csc|securityCode/);

    const handle = await openDatabase({ url: databaseUrl, dataDir: join(dataDir, 'pglite') });
    try {
      const tables = await sql<{
        table_name: string;
      }>`select table_name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE'`.execute(
        handle.db,
      );
      expect(tables.rows.map((row) => row.table_name)).toEqual(
        expect.arrayContaining(['payments', 'payment_attempts', 'sandbox_acquirer_charges']),
      );
      let rows = 0;
      for (const { table_name: table } of tables.rows) {
        const dump = await sql<{ row: string }>`select row_to_json(t)::text as row from ${sql.table(table)} t`.execute(
          handle.db,
        );
        rows += dump.rows.length;
        const text = dump.rows.map((row) => row.row).join('\n');
        for (const number of CARDS) for (const written of cardForms(number)) expect(text, table).not.toContain(written);
        expect(text, table).not.toMatch(SECURITY_CODE_ALONE);
      }
      expect(rows).toBeGreaterThan(0);
      // What is kept of a card: its last four digits, as PCI DSS allows.
      const charges = await handle.db.selectFrom('sandbox_acquirer_charges').select('card_last4').execute();
      expect(charges.map((charge) => charge.card_last4).sort()).toEqual(['0002', '3220', '4242']);
    } finally {
      await handle.close();
    }
  });
});
