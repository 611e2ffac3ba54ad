// The pool of deposit addresses derived ahead (address-pool.ts, migration 0023):
// filled with the key's own addresses at fresh indexes; claimed by a creating
// process in batches and handed out one per invoice, lowest index first; never
// an address twice (concurrent creations, a duplicate that loses the race gives
// its address back); another key's rows never handed out; an empty pool only
// means deriving inline.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { addressKeyFingerprint, fillAddressPool } from '../../../src/crypto/receiving/address-pool.ts';
import { createInvoice } from '../../../src/crypto/receiving/invoice-service.ts';
import { createAddressPoolWorker } from '../../../src/crypto/receiving/receiving-workers.ts';
import { backends } from '../../support/databases.ts';
import { openReceivingSetup, type ReceivingSetup } from './receiving-service-support.ts';

describe.each(backends)('deposit address pool on %s', (backend) => {
  let setup: ReceivingSetup;
  beforeEach(async () => {
    setup = await openReceivingSetup(backend);
  });
  afterEach(async () => {
    await setup.close();
  });

  const pooled = () =>
    setup.context.db
      .selectFrom('crypto_address_pool')
      .selectAll()
      .where('key_id', '=', 'sandbox')
      .orderBy('derivation_index')
      .execute();
  const addressesOfShop = () =>
    setup.context.db.selectFrom('crypto_addresses').selectAll().where('shop_id', '=', setup.shop.shopId).execute();
  const newInvoice = (externalId: string) =>
    createInvoice(setup.deps, setup.shop, { external_id: externalId, amount: '10', network: 'TRC20' });
  /** Fills the pool; the clock moves past the pause creations take after finding it empty. */
  const fill = async (size: number) => {
    const added = await fillAddressPool(setup.context.db, setup.access, { size });
    setup.clock.advance(1_000);
    return added;
  };

  it('fills with the key’s own addresses at fresh indexes, and refills only once half is used', async () => {
    const first = await newInvoice('before-pool'); // the pool is empty: derived inline, index 0
    expect(first.invoice.address).toBe(setup.access.addressKey.address(0));
    expect(await fill(20)).toBe(20);
    const rows = await pooled();
    expect(rows).toHaveLength(20);
    expect(rows.map((row) => Number(row.derivation_index))).toEqual(
      Array.from({ length: 20 }, (_, index) => index + 1),
    );
    for (const row of rows) {
      expect(row.address).toBe(setup.access.addressKey.address(Number(row.derivation_index)));
      expect(row.key_fingerprint).toBe(addressKeyFingerprint(setup.access.addressKey));
    }
    // 11 of 20 left: more than half, nothing added.
    await setup.context.db.deleteFrom('crypto_address_pool').where('derivation_index', '<=', 9n).execute();
    expect(await fill(20)).toBe(0);
    // 10 left: half, topped up to 20 with indexes never used before.
    await setup.context.db.deleteFrom('crypto_address_pool').where('derivation_index', '=', 10n).execute();
    expect(await fill(20)).toBe(10);
    expect((await pooled()).map((row) => Number(row.derivation_index))).toEqual([
      ...Array.from({ length: 10 }, (_, index) => index + 11),
      ...Array.from({ length: 10 }, (_, index) => index + 21),
    ]);
  });

  it('invoices take pooled addresses, lowest index first, then derive inline once the pool is empty', async () => {
    await newInvoice('first'); // index 0, inline
    await fill(20); // indexes 1..20
    const taken = [];
    for (let index = 0; index < 21; index++) taken.push((await newInvoice(`take-${index}`)).invoice.address);
    // The first creation claimed all 20 into this process: the table is empty, the invoices used them in order.
    expect(await pooled()).toHaveLength(0);
    expect(taken.slice(0, 20)).toEqual(
      Array.from({ length: 20 }, (_, index) => setup.access.addressKey.address(index + 1)),
    );
    // The 21st: the pool was empty, so the next index of the counter, derived now.
    expect(taken[20]).toBe(setup.access.addressKey.address(21));
  });

  it('no address is handed out twice under concurrency', async () => {
    await newInvoice('first');
    await fill(20);
    const pool = new Set((await pooled()).map((row) => row.address));
    const created = await Promise.all(Array.from({ length: 50 }, (_, index) => newInvoice(`burst-${index}`)));
    expect(created.every((result) => result.created)).toBe(true);
    const addresses = created.map((result) => result.invoice.address);
    expect(new Set(addresses).size).toBe(50);
    expect(addresses.filter((address) => pool.has(address))).toHaveLength(20);
    const rows = await addressesOfShop();
    expect(rows).toHaveLength(51);
    expect(new Set(rows.map((row) => row.derivation_index)).size).toBe(51);
    for (const row of rows) expect(row.address).toBe(setup.access.addressKey.address(Number(row.derivation_index)));
  });

  it('concurrent duplicates of one external_id make one invoice; the losers’ addresses are used by the next invoices', async () => {
    await newInvoice('first');
    await fill(20);
    const results = await Promise.all(Array.from({ length: 20 }, () => newInvoice('same-order')));
    expect(results.filter((result) => result.created)).toHaveLength(1);
    expect(new Set(results.map((result) => result.invoice.invoice_id)).size).toBe(1);
    // 19 more invoices use the other 19 pooled addresses: none was lost to the duplicates.
    const next = [];
    for (let index = 0; index < 19; index++) next.push((await newInvoice(`after-${index}`)).invoice.address);
    const used = new Set([results[0]!.invoice.address, ...next]);
    expect(used).toEqual(new Set(Array.from({ length: 20 }, (_, index) => setup.access.addressKey.address(index + 1))));
  });

  it('rows derived by another key are never handed out', async () => {
    await newInvoice('first');
    const foreign = 'TJRyWwFs9wTFGZg3JbrVriFbNfCug5tDeC';
    await setup.context.db
      .insertInto('crypto_address_pool')
      .values({ key_id: 'sandbox', derivation_index: 999_999n, key_fingerprint: '0123456789abcdef', address: foreign })
      .execute();
    const { invoice } = await newInvoice('second');
    expect(invoice.address).toBe(setup.access.addressKey.address(1));
    expect(await pooled()).toHaveLength(1);
  });

  it('the worker fills the pool of a key once that key has made an address, up to PAYGATE_ADDRESS_POOL_SIZE', async () => {
    // The worker drives the setup's chain.
    const context = {
      ...setup.context,
      config: { ...setup.context.config, addressPoolSize: 30 },
      chain: setup.deps.chain,
    };
    const worker = createAddressPoolWorker(context);
    expect(worker.name).toBe('crypto-address-pool');
    expect(await worker.runOnce()).toBe(0); // no sandbox address yet: nothing derived ahead
    await newInvoice('first');
    expect(await worker.runOnce()).toBe(30);
    expect(await pooled()).toHaveLength(30);
    expect(await worker.runOnce()).toBe(0);
    const off = { ...context, config: { ...context.config, addressPoolSize: 0 } };
    await setup.context.db.deleteFrom('crypto_address_pool').execute();
    expect(await createAddressPoolWorker(off).runOnce()).toBe(0);
  });
});
