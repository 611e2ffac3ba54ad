// The cabinet's crypto page through the real app and its sandbox chain: the
// payout limits and tariff the operator set, shown read-only, and a link to the
// static wallets' table, where each wallet's page blocks and unblocks it
// (audited; a money action, so an owner without a second factor is sent to
// enrol first); a deposit to a blocked wallet, sent and mined from the sandbox
// tools page, is held, not credited; a viewer cannot block.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { savePayoutSettings } from '../../src/crypto/payouts/payout-settings.ts';
import { createChainWatcher, type ChainWatcher } from '../../src/crypto/receiving/chain-watcher.ts';
import { backends } from '../support/databases.ts';
import { createCryptoTestApp, externalId, type CryptoTestApp } from '../crypto/receiving/crypto-routes-support.ts';
import { addMember, CabinetClient, createOwner, type CabinetPerson } from './cabinet-client.ts';
import { enrol } from './two-factor-support.ts';

/** Solidification is at head − 18: a deposit is final once 19 blocks include it and follow. */
const BLOCKS_TO_FINALITY = 19;
const WATCHER_PASSES_MAX = 10;

describe.each(backends)('cabinet crypto settings on %s', (backend) => {
  let testApp: CryptoTestApp;
  let watcher: ChainWatcher;
  beforeAll(async () => {
    testApp = await createCryptoTestApp(backend);
    const { context } = testApp;
    const access = await testApp.crypto.chain.forMode('sandbox');
    watcher = createChainWatcher({ db: context.db, clock: context.clock, logger: context.logger, access });
  });
  afterAll(() => testApp?.close());

  async function watch(): Promise<void> {
    for (let pass = 0; pass < WATCHER_PASSES_MAX; pass++) {
      const result = await watcher.runPass();
      if (result.blocksScanned === 0 && result.depositsSettled === 0) return;
    }
    throw new Error(`the watcher still had work after ${WATCHER_PASSES_MAX} passes`);
  }

  /** A signed-in client; `secondFactor` enrols one first (owners, admins and finance need it to move money). */
  async function signedIn(person: CabinetPerson, options: { secondFactor?: boolean } = {}): Promise<CabinetClient> {
    const client = new CabinetClient(testApp.app);
    expect((await client.signIn(person.email)).statusCode).toBe(303);
    if (options.secondFactor) await enrol(client, () => testApp.clock.now());
    return client;
  }

  async function newWallet(owner: CabinetPerson) {
    const created = await testApp.call(owner.apiKey, 'POST', '/v1/crypto/wallets', {
      client_id: externalId('client'),
      network: 'TRC20',
    });
    expect(created.statusCode, created.body).toBe(201);
    return created.json() as { wallet_id: string; address: string; client_id: string };
  }

  it('shows the payout limits and tariff the operator set, read-only, and links to the wallets, listed newest first', async () => {
    const owner = await createOwner(testApp);
    await savePayoutSettings(
      testApp.context.db,
      owner.shopId,
      {
        enabled: true,
        minAmountMicro: 5_000_000n,
        maxAmountMicro: 250_000_000n,
        serviceFeeFixedMicro: 1_500_000n,
        serviceFeeBps: 75,
      },
      testApp.clock.now(),
    );
    const older = await newWallet(owner);
    testApp.clock.advance(1_000);
    const newer = await newWallet(owner);
    const viewer = await addMember(testApp, owner, 'viewer');
    const client = await signedIn(viewer);
    const page = await client.get(`/cabinet/shops/${owner.shopId}/crypto`);
    expect(page.statusCode).toBe(200);
    for (const shown of ['5 USDT', '250 USDT', '1.5 USDT', '0.75 %']) expect(page.body).toContain(shown);
    expect(page.body).not.toMatch(/name="(min|max|fee)/);
    expect(page.body).toContain(`href="/cabinet/shops/${owner.shopId}/wallets"`);
    const table = await client.get(`/cabinet/shops/${owner.shopId}/wallets`);
    expect(table.body.indexOf(newer.address)).toBeLessThan(table.body.indexOf(older.address));
    expect(table.body).toContain(older.client_id);
    const walletPage = await client.get(`/cabinet/shops/${owner.shopId}/wallets/${older.wallet_id}`);
    expect(walletPage.body).not.toContain('/block"');
    const refused = await client.post(`/cabinet/shops/${owner.shopId}/wallets/${older.wallet_id}/block`);
    expect(refused.statusCode).toBe(403);
  });

  it('an owner or an admin without a second factor is sent to enrol one before blocking', async () => {
    const owner = await createOwner(testApp);
    const wallet = await newWallet(owner);
    const admin = await addMember(testApp, owner, 'admin');
    for (const person of [owner, admin]) {
      const client = await signedIn(person);
      await client.get(`/cabinet/shops/${owner.shopId}/crypto`);
      const blocked = await client.post(`/cabinet/shops/${owner.shopId}/wallets/${wallet.wallet_id}/block`);
      expect(blocked.statusCode, person.email).toBe(303);
      expect(blocked.headers.location, person.email).toBe('/cabinet/account/two-factor?required=1');
    }
    const read = await testApp.call(owner.apiKey, 'GET', `/v1/crypto/wallets/${wallet.wallet_id}`);
    expect(read.json().status).toBe('active');
  });

  it('an admin blocks a wallet (audited); a deposit sent and mined from the sandbox tools is then held; unblock is audited too', async () => {
    const owner = await createOwner(testApp);
    const admin = await addMember(testApp, owner, 'admin');
    const wallet = await newWallet(owner);
    const client = await signedIn(admin, { secondFactor: true });
    await client.get(`/cabinet/shops/${owner.shopId}/crypto`);
    const blocked = await client.post(`/cabinet/shops/${owner.shopId}/wallets/${wallet.wallet_id}/block`);
    expect(blocked.statusCode, blocked.body).toBe(303);
    expect(blocked.headers.location).toBe(`/cabinet/shops/${owner.shopId}/wallets/${wallet.wallet_id}?done=blocked`);
    const after = await client.get(blocked.headers.location!);
    expect(after.body).toContain('notice ok');
    expect(after.body).toContain(`/wallets/${wallet.wallet_id}/unblock`);

    await client.get(`/cabinet/shops/${owner.shopId}/sandbox`);
    const sent = await client.post(`/cabinet/shops/${owner.shopId}/sandbox/deposit`, {
      address: wallet.address,
      amount: '3.25',
    });
    expect(sent.statusCode, sent.body).toBe(200);
    expect(sent.body).toContain('notice ok');
    const mined = await client.post(`/cabinet/shops/${owner.shopId}/sandbox/blocks`, {
      count: String(BLOCKS_TO_FINALITY + 1),
    });
    expect(mined.statusCode, mined.body).toBe(200);
    await watch();
    const read = (await testApp.call(owner.apiKey, 'GET', `/v1/crypto/wallets/${wallet.wallet_id}`)).json();
    expect(read).toMatchObject({ status: 'blocked', held_amount: '3.25', received_amount: '0' });

    await client.get(`/cabinet/shops/${owner.shopId}/wallets/${wallet.wallet_id}`);
    const unblocked = await client.post(`/cabinet/shops/${owner.shopId}/wallets/${wallet.wallet_id}/unblock`);
    expect(unblocked.statusCode).toBe(303);
    const rows = await testApp.context.db
      .selectFrom('audit_events')
      .selectAll()
      .where('target', '=', wallet.wallet_id)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    expect(rows.map((row) => [row.action, row.actor_kind, row.actor_id, row.merchant_id])).toEqual([
      ['wallet.blocked', 'user', admin.userId, owner.merchantId],
      ['wallet.unblocked', 'user', admin.userId, owner.merchantId],
    ]);
  });

  it('another merchant’s wallet cannot be blocked from this shop', async () => {
    const owner = await createOwner(testApp);
    const stranger = await createOwner(testApp);
    const theirs = await newWallet(stranger);
    const admin = await addMember(testApp, owner, 'admin');
    const client = await signedIn(admin, { secondFactor: true });
    await client.get(`/cabinet/shops/${owner.shopId}/crypto`);
    const refused = await client.post(`/cabinet/shops/${owner.shopId}/wallets/${theirs.wallet_id}/block`);
    expect(refused.statusCode).toBe(404);
    const read = await testApp.call(stranger.apiKey, 'GET', `/v1/crypto/wallets/${theirs.wallet_id}`);
    expect(read.json().status).toBe('active');
  });
});
