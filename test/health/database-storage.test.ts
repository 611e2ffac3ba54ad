// The database cannot store anything: its disk is full (an embedded database's
// data folder on a small tmpfs the test fills up) or it is read-only (PostgreSQL
// with default_transaction_read_only). Writes answer 503 service_unavailable with
// Retry-After, not 500; nothing is half-written; /readyz says the database is down;
// once space is back a write succeeds and /readyz says ready again.
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm, rmdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import type { App } from '../../src/app.ts';
import type { AppContext } from '../../src/context.ts';
import { openDatabase, type DatabaseHandle } from '../../src/db/database.ts';
import { migrate } from '../../src/db/migrate.ts';
import { createMerchant } from '../../src/merchants/merchant-service.ts';
import { buildTestApp, createTestContext } from '../support/app.ts';
import { backends, describeOnServer, TEST_DATABASE_URL, type TestDatabase } from '../support/databases.ts';

const TMPFS_SIZE = '120m';
const isRoot = process.getuid?.() === 0;

interface Running {
  readonly app: App;
  readonly key: string;
  close(): Promise<void>;
}

async function runOn(context: AppContext): Promise<Running> {
  const app = await buildTestApp(context);
  await app.ready();
  const merchant = await createMerchant(context, {
    name: 'Storage shop',
    email: `storage-${crypto.randomUUID()}@example.test`,
  });
  return { app, key: merchant.api_key, close: () => app.close() };
}

const createPayment = (running: Running, orderId: string) =>
  running.app.inject({
    method: 'POST',
    url: '/v1/payments',
    headers: { authorization: `Bearer ${running.key}`, 'content-type': 'application/json', 'idempotency-key': orderId },
    payload: JSON.stringify({ amount: 250, currency: 'RUB', order_id: orderId }),
  });
const listPayments = async (running: Running) =>
  (
    await running.app.inject({
      method: 'GET',
      url: '/v1/payments',
      headers: { authorization: `Bearer ${running.key}` },
    })
  ).json().data as { order_id: string }[];
const readyz = (running: Running) => running.app.inject({ method: 'GET', url: '/readyz' });

function expectStorageRefusal(response: Awaited<ReturnType<typeof createPayment>>): void {
  expect(response.statusCode, response.body).toBe(503);
  expect(Number(response.headers['retry-after'])).toBeGreaterThan(0);
  expect(response.json()).toEqual({
    error: 'service_unavailable',
    message: expect.stringContaining('nothing was changed'),
    request_id: expect.any(String),
  });
}

/** Fills the tmpfs at `dir`, expects writes refused 503 with nothing stored, frees it, expects writes and readiness back. */
async function fillUpAndRecover(running: Running, dir: string): Promise<void> {
  const filler = join(dir, 'filler');
  // dd stops with "No space left on device" once the tmpfs is full.
  try {
    execFileSync('dd', ['if=/dev/zero', `of=${filler}`, 'bs=1M', 'count=1024'], { stdio: 'ignore' });
  } catch {
    // expected: the disk is full now
  }
  // Enough payments that one of them needs a new page of the table or its indexes.
  let refused: Awaited<ReturnType<typeof createPayment>> | undefined;
  let refusedOrder = '';
  for (let i = 0; i < 200 && !refused; i++) {
    refusedOrder = `full-${i}`;
    const response = await createPayment(running, refusedOrder);
    if (response.statusCode !== 201) refused = response;
  }
  expect(refused, 'no write was refused on a full disk').toBeDefined();
  expectStorageRefusal(refused!);
  const stored = (await listPayments(running)).map((payment) => payment.order_id);
  expect(stored).not.toContain(refusedOrder);
  const notReady = await readyz(running);
  expect(notReady.statusCode).toBe(503);
  expect(notReady.json()).toMatchObject({ checks: { database: 'down' } });

  await rm(filler);
  expect((await createPayment(running, 'after-space')).statusCode).toBe(201);
  const ready = await readyz(running);
  expect(ready.statusCode, ready.body).toBe(200);
  expect(ready.json()).toMatchObject({ checks: { database: 'ok' } });
}

describe.runIf(isRoot)('the embedded database on a full disk (a tmpfs data folder filled up)', () => {
  let cleanup: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const step of cleanup.reverse()) await step();
    cleanup = [];
  });

  it('answers writes 503 with Retry-After, stores nothing, and /readyz says the database is down until space is back', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'paygate-full-disk-'));
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${TMPFS_SIZE}`, 'tmpfs', dir]);
    cleanup.push(async () => {
      execFileSync('umount', [dir]);
      await rmdir(dir);
    });
    const { context: base, database } = await createTestContext('pglite');
    cleanup.push(() => database.close());
    const handle: DatabaseHandle = await openDatabase({ dataDir: join(dir, 'pglite') });
    cleanup.push(() => handle.close());
    await migrate(handle);
    const running = await runOn({ ...base, db: handle.db });
    cleanup.push(() => running.close());
    expect((await createPayment(running, 'before-full')).statusCode).toBe(201);

    await fillUpAndRecover(running, dir);
  });
});

/** The test PostgreSQL server runs on this machine, so a folder mounted here can hold its tablespace. */
const localServer =
  TEST_DATABASE_URL !== undefined && ['127.0.0.1', 'localhost', '[::1]'].includes(new URL(TEST_DATABASE_URL).hostname);

describe.runIf(isRoot && localServer)(
  'PostgreSQL with its database in a tablespace on a full disk (a tmpfs filled up)',
  () => {
    let cleanup: (() => Promise<void>)[] = [];
    afterEach(async () => {
      for (const step of cleanup.reverse()) await step();
      cleanup = [];
    });

    it('answers writes 503 with Retry-After, stores nothing, and /readyz says the database is down until space is back', async () => {
      const dir = await mkdtemp(join(tmpdir(), 'paygate-full-tablespace-'));
      execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${TMPFS_SIZE},mode=0700`, 'tmpfs', dir]);
      execFileSync('chown', ['postgres:postgres', dir]);
      cleanup.push(async () => {
        execFileSync('umount', [dir]);
        await rmdir(dir);
      });
      const suffix = crypto.randomUUID().replaceAll('-', '').slice(0, 12);
      const tablespace = `paygate_full_${suffix}`;
      const name = `paygate_full_${suffix}`;
      const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
      await admin.connect();
      cleanup.push(() => admin.end());
      await admin.query(`create tablespace ${tablespace} location '${dir}'`);
      cleanup.push(async () => {
        await admin.query(`drop tablespace ${tablespace}`);
      });
      await admin.query(`create database ${name} tablespace ${tablespace}`);
      cleanup.push(async () => {
        await admin.query(`drop database ${name} with (force)`);
      });
      const url = new URL(TEST_DATABASE_URL!);
      url.pathname = `/${name}`;
      const handle = await openDatabase({ url: url.toString(), poolSize: 4 });
      cleanup.push(() => handle.close());
      await migrate(handle);
      const { context: base, database } = await createTestContext('pglite');
      cleanup.push(() => database.close());
      const running = await runOn({ ...base, db: handle.db, backend: 'postgres' });
      cleanup.push(() => running.close());
      expect((await createPayment(running, 'before-full')).statusCode).toBe(201);
      await fillUpAndRecover(running, dir);
    });
  },
);

for (const backend of backends) {
  describeOnServer(backend)(`a read-only database on ${backend}`, () => {
    let cleanup: (() => Promise<void>)[] = [];
    afterEach(async () => {
      for (const step of cleanup.reverse()) await step();
      cleanup = [];
    });

    it('answers writes 503 with Retry-After and /readyz says the database is down', async () => {
      const { context: base, database } = await createTestContext(backend);
      cleanup.push(() => (database as TestDatabase).close());
      const name = new URL(database.url!).pathname.slice(1);
      const admin = new pg.Client({ connectionString: database.url });
      await admin.connect();
      cleanup.push(() => admin.end());
      await admin.query(`alter database "${name}" set default_transaction_read_only = on`);
      // Sessions opened from now on are read-only.
      const readOnly = await openDatabase({ url: database.url, poolSize: 2 });
      cleanup.push(() => readOnly.close());
      const writable = await runOn(base);
      cleanup.push(() => writable.close());
      const app = await buildTestApp({ ...base, db: readOnly.db });
      cleanup.push(() => app.close());
      const running: Running = { app, key: writable.key, close: () => app.close() };

      expectStorageRefusal(await createPayment(running, 'read-only-1'));
      expect((await listPayments(writable)).map((payment) => payment.order_id)).not.toContain('read-only-1');
      const notReady = await readyz(running);
      expect(notReady.statusCode).toBe(503);
      expect(notReady.json()).toMatchObject({ checks: { database: 'down' } });
      await admin.query(`alter database "${name}" reset default_transaction_read_only`);
    });
  });
}
