// A withdrawal's network fee follows the energy source it will be sent on. One
// that awaits a second person (maybe for days) holds no own energy: the preview
// and the creation quote it at the burn price (a rental's where that is on and
// cheaper), nothing is reserved, and approval neither re-prices it nor reserves.
// One queued at once is quoted as a payout's creation: own energy reserved for
// its transfer, nothing charged for energy. The preview shows what the creation
// charges. On the live chain with a provider renting below the burn price: the rental's price.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { OPERATOR } from '../../../src/audit/audit-service.ts';
import { addWithdrawalAddress } from '../../../src/crypto/withdrawals/withdrawal-addresses.ts';
import {
  approveWithdrawal,
  createWithdrawal,
  quoteWithdrawal,
  setWithdrawalApproval,
  type WithdrawalDeps,
} from '../../../src/crypto/withdrawals/withdrawal-service.ts';
import { backends } from '../../support/databases.ts';
import {
  energyReservations,
  NEW_HOLDER_ENERGY,
  stakeHotWallet,
  transferFees,
} from '../payouts/energy-quote-support.ts';
import {
  createPayoutTestApp,
  micro,
  recipient,
  type PayoutShop,
  type PayoutTestApp,
} from '../payouts/payout-support.ts';
import { openLiveRentalApp, RENT_PRICE_SUN, type LiveRentalApp } from '../payouts/live-rental-support.ts';

const REQUESTER = { userId: null, name: 'owner@example.com' };

let keys = 0;
/** An address book entry of the shop's book (no cool-down here), its preview and its creation by the owner. */
async function previewAndCreateOn(testApp: PayoutTestApp, shop: PayoutShop, mode: 'sandbox' | 'live') {
  const deps = { ...testApp.context, chain: testApp.crypto.chain };
  const entry = await addWithdrawalAddress(deps, {
    merchantId: shop.merchantId,
    mode,
    label: `book ${(keys += 1)}`,
    address: recipient(),
    actor: { ...OPERATOR, label: 'operator' },
  });
  const request = { merchantId: shop.merchantId, shopId: shop.shopId, amount: '25.50' };
  const reservedBefore = await energyReservations(testApp);
  const preview = await quoteWithdrawal(deps, { ...request, addressId: entry.address_id, requester: REQUESTER });
  // A preview reserves nothing.
  expect(await energyReservations(testApp)).toEqual(reservedBefore);
  const created = await createWithdrawal(deps, {
    ...request,
    externalId: `wd-energy-${keys}`,
    address: '',
    addressId: entry.address_id,
    requestedBy: REQUESTER.name,
  });
  expect(created.network_fee).toBe(preview.network_fee);
  expect(created.total_debit).toBe(preview.total_debit);
  return { preview, created };
}

describe.each(backends)('the withdrawal quote follows the energy source on %s', (backend) => {
  let testApp: PayoutTestApp;
  let shop: PayoutShop;
  let deps: WithdrawalDeps;

  beforeEach(async () => {
    testApp = await createPayoutTestApp(backend, { config: { withdrawalAddressCooldownMs: 0 } });
    shop = await testApp.payoutShop();
    await testApp.fund(shop, 1_000_000_000n);
    deps = { ...testApp.context, chain: testApp.crypto.chain };
    const faucet = await testApp.call(shop.key, 'POST', '/v1/test_helpers/crypto/faucet', {
      usdt: '100000',
      trx: '100000',
    });
    expect(faucet.statusCode, faucet.body).toBe(200);
  });
  afterEach(async () => {
    await testApp.expectLedgerGreen();
    await testApp.close();
  });

  const previewAndCreate = () => previewAndCreateOn(testApp, shop, 'sandbox');
  const transferOf = async (withdrawalId: string) =>
    (
      await testApp.context.db
        .selectFrom('crypto_withdrawals')
        .select('outgoing_transfer_id')
        .where('id', '=', withdrawalId)
        .executeTakeFirstOrThrow()
    ).outgoing_transfer_id;

  it('awaiting approval on a staked hot wallet: quoted at the burn price, nothing reserved, the same fee after approval', async () => {
    const free = await stakeHotWallet(testApp, 20_000n);
    expect(free).toBeGreaterThanOrEqual(NEW_HOLDER_ENERGY);
    const { preview, created } = await previewAndCreate();
    expect(preview.awaits_approval).toBe(true);
    expect(micro(preview.network_fee)).toBe(transferFees(testApp).feeWithEnergyAt());
    expect(created.status).toBe('awaiting_approval');
    expect(await energyReservations(testApp)).toEqual([]);

    const approved = await approveWithdrawal(deps, created.withdrawal_id, 'approver@example.com');
    expect(approved).toMatchObject({
      status: 'pending',
      network_fee: created.network_fee,
      total_debit: created.total_debit,
    });
    expect(await transferOf(created.withdrawal_id)).not.toBeNull();
    expect(await energyReservations(testApp)).toEqual([]);
  });

  it('not awaiting approval on a staked hot wallet: quoted without the energy part, own energy reserved for its transfer', async () => {
    await setWithdrawalApproval(deps, shop.shopId, false);
    await stakeHotWallet(testApp, 20_000n);
    const { preview, created } = await previewAndCreate();
    expect(preview.awaits_approval).toBe(false);
    expect(micro(preview.network_fee)).toBe(transferFees(testApp).bandwidthFee);
    expect(created.status).toBe('pending');
    const transferId = await transferOf(created.withdrawal_id);
    expect(await energyReservations(testApp)).toEqual([{ transfer_id: transferId, energy: NEW_HOLDER_ENERGY }]);

    // The stake is promised now: the next one is quoted, and charged, at the burn price.
    const next = await previewAndCreate();
    expect(micro(next.created.network_fee)).toBe(transferFees(testApp).feeWithEnergyAt());
    expect(await energyReservations(testApp)).toHaveLength(1);
  });

  it('without a stake, awaiting approval or not: the preview and the creation charge the burn price', async () => {
    const burnFee = transferFees(testApp).feeWithEnergyAt();
    const awaiting = await previewAndCreate();
    expect(micro(awaiting.created.network_fee)).toBe(burnFee);
    await setWithdrawalApproval(deps, shop.shopId, false);
    const queued = await previewAndCreate();
    expect(queued.created.status).toBe('pending');
    expect(micro(queued.created.network_fee)).toBe(burnFee);
    expect(await energyReservations(testApp)).toEqual([]);
  });
});

describe.each(backends)('a live withdrawal quoted on a rental cheaper than burning on %s', (backend) => {
  let rental: LiveRentalApp | undefined;
  let testApp: PayoutTestApp;
  let shop: PayoutShop;

  beforeEach(async () => {
    rental = await openLiveRentalApp(backend, { withdrawalAddressCooldownMs: 0 });
    ({ testApp, shop } = rental);
    await testApp.fund(shop, 1_000_000_000n);
  });
  afterEach(async () => {
    await rental?.close();
    rental = undefined;
  });

  it('awaiting approval or queued at once without a stake: the preview and the creation charge the rental’s price, nothing reserved', async () => {
    const rentalFee = transferFees(testApp).feeWithEnergyAt(NEW_HOLDER_ENERGY * RENT_PRICE_SUN);
    expect(rentalFee).toBeLessThan(transferFees(testApp).feeWithEnergyAt());
    const awaiting = await previewAndCreateOn(testApp, shop, 'live');
    expect(awaiting.created.status).toBe('awaiting_approval');
    expect(micro(awaiting.created.network_fee)).toBe(rentalFee);
    await setWithdrawalApproval({ ...testApp.context }, shop.shopId, false);
    const queued = await previewAndCreateOn(testApp, shop, 'live');
    expect(queued.created.status).toBe('pending');
    expect(micro(queued.created.network_fee)).toBe(rentalFee);
    expect(await energyReservations(testApp)).toEqual([]);
  });
});
