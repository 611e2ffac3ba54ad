// A deposit key must be the one the database's addresses of its kind were
// derived from (createKeyOfDatabaseCheck, on every chain the chain module hands out): a
// process with another sandbox seed (another data folder) is refused with 503
// naming the setting, before it derives, watches or signs anything.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createCryptoChain } from '../../../src/crypto/chain/crypto-chain.ts';
import { testCryptoDeps } from '../crypto-deps-support.ts';
import { createInvoice } from '../../../src/crypto/receiving/invoice-service.ts';
import { backends } from '../../support/databases.ts';
import { openReceivingSetup, type ReceivingSetup } from './receiving-service-support.ts';

describe.each(backends)('the deposit key of the database on %s', (backend) => {
  let setup: ReceivingSetup;
  beforeEach(async () => {
    setup = await openReceivingSetup(backend);
  });
  afterEach(async () => {
    await setup.close();
  });

  it('the key that derived the addresses is accepted; another one is refused with 503 naming the sealed sandbox seed, and creates nothing', async () => {
    await createInvoice(setup.deps, setup.shop, { external_id: 'first', amount: '1', network: 'TRC20' });
    // The same key again (a second process sharing the data folder): fine.
    await expect(setup.deps.chain.forMode('sandbox')).resolves.toBeDefined();

    // Another process on the same database with its own in-memory sandbox seed.
    const otherChain = createCryptoChain({
      config: setup.context.config,
      dataDir: undefined,
      logger: setup.context.logger,
      sandboxClock: 'manual',
    });
    try {
      const other = testCryptoDeps(setup.context, otherChain);
      const refusal = await other.chain.forMode('sandbox').then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(refusal).toMatchObject({ code: 'service_unavailable' });
      expect((refusal as Error).message).toContain('sandbox seed (sealed in the database)');
      await expect(
        createInvoice(other, setup.shop, { external_id: 'second', amount: '1', network: 'TRC20' }),
      ).rejects.toMatchObject({ code: 'service_unavailable' });
      const addresses = await setup.context.db
        .selectFrom('crypto_addresses')
        .select('address')
        .where('shop_id', '=', setup.shop.shopId)
        .execute();
      expect(addresses).toHaveLength(1);
    } finally {
      await otherChain.close();
    }
  });

  it('a database without addresses of the key accepts any key', async () => {
    const otherChain = createCryptoChain({
      config: setup.context.config,
      dataDir: undefined,
      logger: setup.context.logger,
      sandboxClock: 'manual',
    });
    try {
      const other = testCryptoDeps(setup.context, otherChain);
      await expect(other.chain.forMode('sandbox')).resolves.toBeDefined();
    } finally {
      await otherChain.close();
    }
  });
});
