// Migration 0031 turns a merchant created with a password before the cabinet
// (its scrypt hash on the merchants row) into that merchant's owner, who signs
// in with the same password; the old hash is replaced by argon2id at sign-in.
import { randomBytes, scryptSync } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readMigrationFiles } from '../../src/db/migrate.ts';
import { createTestApp, type TestApp } from '../support/app.ts';
import { backends } from '../support/databases.ts';
import { CabinetClient } from './cabinet-client.ts';

/** The hash `paygate merchant create --password` stored before the cabinet: node's scrypt defaults. */
function legacyScryptHash(password: string): string {
  const salt = randomBytes(16);
  return `scrypt$${salt.toString('base64')}$${scryptSync(password, salt, 32).toString('base64')}`;
}

describe.each(backends)('migration 0031_cabinet_people on %s', (backend) => {
  let testApp: TestApp;
  beforeAll(async () => {
    testApp = await createTestApp(backend);
  });
  afterAll(() => testApp?.close());

  it('makes a merchant with a password its owner, who signs in with it and gets an argon2id hash', async () => {
    const merchant = await testApp.createMerchant();
    const migration = (await readMigrationFiles()).find((file) => file.version === '0031_cabinet_people')!;
    const copyStep = migration.sql.slice(migration.sql.indexOf('-- A merchant created with a password'));
    const hash = legacyScryptHash('an old long password');
    // The merchants row as it was before the migration: with its password hash.
    await testApp.database.withScriptSession(async (session) => {
      await session.run('alter table merchants add column password_hash text');
      await session.run(`update merchants set password_hash = '${hash}' where id = '${merchant.merchant_id}'`);
      await session.run(copyStep);
    });
    const { email } = await testApp.context.db
      .selectFrom('merchants')
      .select('email')
      .where('id', '=', merchant.merchant_id)
      .executeTakeFirstOrThrow();
    const owner = await testApp.context.db
      .selectFrom('memberships')
      .innerJoin('users', 'users.id', 'memberships.user_id')
      .select(['users.id', 'users.password_hash', 'memberships.role'])
      .where('memberships.merchant_id', '=', merchant.merchant_id)
      .executeTakeFirstOrThrow();
    expect(owner.role).toBe('owner');
    expect(owner.password_hash).toBe(hash);

    const client = new CabinetClient(testApp.app);
    expect((await client.signIn(email, 'an old long password')).statusCode).toBe(303);
    expect((await client.get('/cabinet/shops')).body).toContain(merchant.shop_id);
    const after = await testApp.context.db
      .selectFrom('users')
      .select('password_hash')
      .where('id', '=', owner.id)
      .executeTakeFirstOrThrow();
    expect(after.password_hash).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
  });
});
