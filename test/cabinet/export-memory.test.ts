// A download of 50,000 rows streams with constant memory: 50,000 ledger entries
// written by SQL, downloaded as the accounting export's XLSX over a real socket
// into a file. The heap, sampled (after a full collection) while the file
// arrives, grows by far less than the rows would take if they were held; the
// file opens with the same library and holds every row with its values.
import { createWriteStream } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { get } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inTransaction } from '../../src/db/transaction.ts';
import { ensureAccounts, merchantAccountKey, systemAccountKey } from '../../src/ledger/ledger-accounts.ts';
import { createTestApp, type TestApp } from '../support/app.ts';
import { backends } from '../support/databases.ts';
import { freePort } from '../support/free-port.ts';
import { CabinetClient, createOwner, type CabinetPerson } from './cabinet-client.ts';
import { readXlsx } from './download-support.ts';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const ROWS = 50_000;
/** What the heap may grow by while the file streams (measured: under 2 MB); holding 50,000 rows or their XML would take several times this. */
const HEAP_GROWTH_MAX_MB = 16;
const CHUNKS_BETWEEN_SAMPLES = 100;

function heapUsedMb(): number {
  gc();
  return process.memoryUsage().heapUsed / 2 ** 20;
}

describe.each(backends)('a 50,000-row download on %s', (backend) => {
  let testApp: TestApp;
  let owner: CabinetPerson;
  let client: CabinetClient;
  let origin: string;
  let folder: string;

  beforeAll(async () => {
    testApp = await createTestApp(backend);
    owner = await createOwner(testApp);
    client = new CabinetClient(testApp.app);
    expect((await client.signIn(owner.email)).statusCode).toBe(303);
    const port = await freePort();
    await testApp.app.listen({ port, host: '127.0.0.1' });
    origin = `http://127.0.0.1:${port}`;
    folder = await mkdtemp(join(tmpdir(), 'paygate-export-'));
    // Entry g credits g cents to the merchant's USDT main account.
    const at = testApp.clock.now();
    await inTransaction(testApp.context.db, async (tx) => {
      const [main, hotWallet] = await ensureAccounts(tx, testApp.clock, [
        merchantAccountKey('sandbox', owner.merchantId, 'USDT', 'main'),
        systemAccountKey('sandbox', 'hot_wallet', 'USDT', 0),
      ]);
      const prefix = `bulk-${owner.merchantId}-`;
      await sql`
        insert into ledger_transfers (id, idempotency_key, debit_account_id, credit_account_id, amount, currency,
                                      type, reference_type, reference_id, status, chain_id, created_at)
        select ${prefix} || g, ${prefix} || g, ${hotWallet!.id}, ${main!.id}, g * 10000, 'USDT',
               'transfer', 'transfer', 'ext-' || g, 'posted', ${prefix} || g, ${at}
          from generate_series(1, ${ROWS}::int) as g`.execute(tx);
      await sql`
        insert into ledger_operations (id, account_id, transfer_id, origin_id, amount, balance_after, created_at)
        select 'op-' || ${prefix} || g, ${main!.id}, ${prefix} || g, ${prefix} || g, g * 10000,
               10000::int8 * g * (g + 1) / 2, ${at}
          from generate_series(1, ${ROWS}::int) as g order by g`.execute(tx);
    });
  });
  afterAll(async () => {
    await testApp?.close();
    if (folder) await rm(folder, { recursive: true, force: true });
  });

  it('streams with a flat heap, and the file opens with every row and its values', async () => {
    const file = join(folder, `accounting-${backend}.xlsx`);
    const cookie = [...client.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
    const before = heapUsedMb();
    let peak = before;
    await new Promise<void>((resolve, reject) => {
      get(`${origin}/cabinet/shops/${owner.shopId}/accounting.xlsx`, { headers: { cookie } }, (response) => {
        if (response.statusCode !== 200) reject(new Error(`status ${response.statusCode}`));
        const out = createWriteStream(file);
        let chunks = 0;
        response.on('data', () => {
          chunks += 1;
          if (chunks % CHUNKS_BETWEEN_SAMPLES === 0) peak = Math.max(peak, heapUsedMb());
        });
        response.pipe(out);
        out.on('finish', resolve);
        out.on('error', reject);
        response.on('error', reject);
      }).on('error', reject);
    });
    expect(peak - before, `heap grew from ${before.toFixed(1)} MB to ${peak.toFixed(1)} MB`).toBeLessThan(
      HEAP_GROWTH_MAX_MB,
    );

    const rows = await readXlsx(await readFile(file));
    expect(rows).toHaveLength(ROWS + 1);
    const header = rows[0]!;
    const column = (name: string) => header.indexOf(name);
    for (const g of [1, 2, 777, Math.floor(ROWS / 2), ROWS]) {
      const row = rows[g]!;
      expect(row[column('object_type')]).toBe('transfer');
      expect(row[column('external_ref')]).toBe(`ext-${g}`);
      expect(row[column('credit')]).toBe(g / 100);
      expect(row[column('amount')]).toBe(g / 100);
      expect(row[column('balance_after')]).toBe((g * (g + 1)) / 200);
      expect(row[column('currency')]).toBe('USDT');
    }
  });
});
