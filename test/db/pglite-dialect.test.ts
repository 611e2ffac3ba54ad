import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { inTransaction } from '../../src/db/transaction.ts';
import { backends, openTestDatabase, type TestDatabase } from '../support/databases.ts';

describe.each(backends)('database on %s', (backend) => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await openTestDatabase(backend);
    await sql`create table isolation_probe (id int primary key, note text not null, amount int8 not null default 0)`.execute(
      database.db,
    );
  });
  afterAll(() => database.close());

  it("keeps a failed transaction's write out even when other work overlaps it", async () => {
    let releaseFirst!: () => void;
    const firstMayFinish = new Promise<void>((resolve) => (releaseFirst = resolve));
    let firstInserted!: () => void;
    const firstHasInserted = new Promise<void>((resolve) => (firstInserted = resolve));
    const failing = inTransaction(database.db, async (tx) => {
      await sql`insert into isolation_probe (id, note) values (1, 'from failing')`.execute(tx);
      firstInserted();
      await firstMayFinish;
      throw new Error('abort on purpose');
    });
    await firstHasInserted;
    // Overlapping work while the first transaction is open: another transaction and a lone query.
    const overlapping = inTransaction(database.db, async (tx) => {
      await sql`insert into isolation_probe (id, note) values (2, 'from committed')`.execute(tx);
    });
    const lone = sql`insert into isolation_probe (id, note) values (3, 'lone')`.execute(database.db);
    // On a server the overlapping work commits while the first transaction is still open; on
    // PGlite (one session) it can only queue for the session, which it has done once the
    // microtasks that issue it have run (nothing before its turn waits on I/O).
    if (backend === 'postgres') await Promise.all([overlapping, lone]);
    else await new Promise((resolve) => setImmediate(resolve));
    releaseFirst();
    await expect(failing).rejects.toThrow('abort on purpose');
    await overlapping;
    await lone;
    const rows = await sql<{ id: number }>`select id from isolation_probe order by id`.execute(database.db);
    expect(rows.rows.map((row) => row.id)).toEqual([2, 3]);
  });

  it('reads int8 back as bigint, beyond 2^53 without loss', async () => {
    const big = 9_007_199_254_740_993n;
    await sql`insert into isolation_probe (id, note, amount) values (10, 'big', ${big})`.execute(database.db);
    const row = await sql<{ amount: unknown }>`select amount from isolation_probe where id = 10`.execute(database.db);
    expect(row.rows[0]?.amount).toBe(big);
    const count = await sql<{ count: unknown }>`select count(*) as count from isolation_probe`.execute(database.db);
    expect(typeof count.rows[0]?.count).toBe('bigint');
  });

  it('rolls back every statement of a failed transaction', async () => {
    await expect(
      inTransaction(database.db, async (tx) => {
        await sql`insert into isolation_probe (id, note) values (20, 'a')`.execute(tx);
        await sql`insert into isolation_probe (id, note) values (20, 'duplicate')`.execute(tx);
      }),
    ).rejects.toMatchObject({ code: '23505' });
    const rows = await sql`select id from isolation_probe where id = 20`.execute(database.db);
    expect(rows.rows).toHaveLength(0);
  });
});
