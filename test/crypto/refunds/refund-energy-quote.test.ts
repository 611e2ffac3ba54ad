// A refund's network fee follows the energy source, as a payout's: the preview
// and the creation quote nothing for energy when the hot wallet's own staked
// energy covers the transfer (the creation reserves it for the refund's own
// transfer, the preview reserves nothing), and the burn price otherwise. A replay
// reserves nothing more; a creation refused after its claim gives it back. On
// the live chain with a provider renting below the burn price: the rental's price.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { previewRefund, type RefundDeps } from '../../../src/crypto/refunds/refund-service.ts';
import { backends } from '../../support/databases.ts';
import {
  energyReservations,
  NEW_HOLDER_ENERGY,
  stakeHotWallet,
  transferFees,
} from '../payouts/energy-quote-support.ts';
import {
  createPayoutTestApp,
  externalId,
  micro,
  recipient,
  type PayoutShop,
  type PayoutTestApp,
} from '../payouts/payout-support.ts';
import { openLiveRentalApp, RENT_PRICE_SUN, type LiveRentalApp } from '../payouts/live-rental-support.ts';
import { fixtureDeposit, type FixtureShop } from './refund-fixtures.ts';

describe.each(backends)('the refund quote follows the energy source on %s', (backend) => {
  let testApp: PayoutTestApp;
  let shop: PayoutShop;
  let deps: RefundDeps;

  beforeEach(async () => {
    testApp = await createPayoutTestApp(backend);
    shop = await testApp.payoutShop();
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

  const refundShop = () => ({ shopId: shop.shopId, merchantId: shop.merchantId, mode: 'sandbox' as const });
  const deposit = async (amountMicro = 20_000_000n) =>
    (
      await fixtureDeposit(
        testApp.context.db,
        testApp.clock,
        {
          ...shop,
          call: (method, url, body) => testApp.call(shop.key, method, url, body),
        },
        amountMicro,
      )
    ).depositId;
  const preview = (depositId: string, address: string) =>
    previewRefund(deps, refundShop(), { deposit_id: depositId, address });
  const refund = (body: Record<string, unknown>) => testApp.call(shop.key, 'POST', '/v1/crypto/refunds', body);
  const transferOf = async (refundId: string) =>
    (
      await testApp.context.db
        .selectFrom('crypto_refunds')
        .select('outgoing_transfer_id')
        .where('id', '=', refundId)
        .executeTakeFirstOrThrow()
    ).outgoing_transfer_id;

  it('on own staked energy: the preview and the creation charge the bandwidth only, the creation reserves the refund’s transfer, a replay nothing more', async () => {
    const { bandwidthFee } = transferFees(testApp);
    await stakeHotWallet(testApp, 20_000n);
    const depositId = await deposit();
    const address = recipient();
    const shown = await preview(depositId, address);
    expect(shown.networkFeeMicro).toBe(bandwidthFee);
    expect(shown.amountMicro).toBe(20_000_000n - bandwidthFee);
    expect(await energyReservations(testApp)).toEqual([]);

    const body = { external_id: externalId('refund'), deposit_id: depositId, address };
    const created = await refund(body);
    expect(created.statusCode, created.body).toBe(201);
    expect(micro(created.json().network_fee)).toBe(shown.networkFeeMicro);
    expect(micro(created.json().recipient_amount)).toBe(shown.amountMicro);
    const transferId = await transferOf(created.json().refund_id);
    expect(await energyReservations(testApp)).toEqual([{ transfer_id: transferId, energy: NEW_HOLDER_ENERGY }]);

    const replayed = await refund(body);
    expect(replayed.statusCode, replayed.body).toBe(200);
    expect(replayed.json().refund_id).toBe(created.json().refund_id);
    expect(await energyReservations(testApp)).toHaveLength(1);
  });

  it('a creation refused after its claim (the deposit does not cover even the bandwidth fee) gives the reservation back', async () => {
    const { bandwidthFee } = transferFees(testApp);
    await stakeHotWallet(testApp, 20_000n);
    const depositId = await deposit(bandwidthFee);
    const refused = await refund({ external_id: externalId('refund'), deposit_id: depositId, address: recipient() });
    expect(refused.statusCode, refused.body).toBe(400);
    expect(refused.json().error).toBe('amount_not_supported');
    expect(await energyReservations(testApp)).toEqual([]);
    expect(await testApp.context.db.selectFrom('crypto_refunds').select('id').execute()).toEqual([]);
  });

  it('the stake promised to another transfer, or none: the preview and the creation charge the burn price', async () => {
    const burnFee = transferFees(testApp).feeWithEnergyAt();
    const unstaked = await deposit();
    const address = recipient();
    expect((await preview(unstaked, address)).networkFeeMicro).toBe(burnFee);
    const first = await refund({ external_id: externalId('refund'), deposit_id: unstaked, address });
    expect(first.statusCode, first.body).toBe(201);
    expect(micro(first.json().network_fee)).toBe(burnFee);

    const free = await stakeHotWallet(testApp, 20_000n);
    expect(free).toBeLessThan(2n * NEW_HOLDER_ENERGY);
    const covered = await refund({ external_id: externalId('refund'), deposit_id: await deposit(), address });
    expect(micro(covered.json().network_fee)).toBe(transferFees(testApp).bandwidthFee);
    const promised = await deposit();
    expect((await preview(promised, address)).networkFeeMicro).toBe(burnFee);
    const burned = await refund({ external_id: externalId('refund'), deposit_id: promised, address });
    expect(micro(burned.json().network_fee)).toBe(burnFee);
    expect(await energyReservations(testApp)).toHaveLength(1);
  });
});

describe.each(backends)('a live refund quoted on a rental cheaper than burning on %s', (backend) => {
  let rental: LiveRentalApp | undefined;
  let testApp: PayoutTestApp;
  let shop: PayoutShop;

  beforeEach(async () => {
    rental = await openLiveRentalApp(backend);
    ({ testApp, shop } = rental);
  });
  afterEach(async () => {
    await rental?.close();
    rental = undefined;
  });

  it('the preview and the creation charge the rental’s price, and nothing is reserved', async () => {
    const rentalFee = transferFees(testApp).feeWithEnergyAt(NEW_HOLDER_ENERGY * RENT_PRICE_SUN);
    expect(rentalFee).toBeLessThan(transferFees(testApp).feeWithEnergyAt());
    const call: FixtureShop['call'] = (method, url, body) => testApp.call(shop.key, method, url, body);
    const { depositId } = await fixtureDeposit(
      testApp.context.db,
      testApp.clock,
      { ...shop, call },
      20_000_000n,
      'credited',
      'live',
    );
    const address = recipient();
    const deps = { ...testApp.context, chain: testApp.crypto.chain };
    const shown = await previewRefund(deps, { ...shop, mode: 'live' }, { deposit_id: depositId, address });
    expect(shown.networkFeeMicro).toBe(rentalFee);
    const created = await call('POST', '/v1/crypto/refunds', {
      external_id: externalId('refund'),
      deposit_id: depositId,
      address,
    });
    expect(created.statusCode, created.body).toBe(201);
    expect(micro(created.json().network_fee)).toBe(rentalFee);
    expect(await energyReservations(testApp)).toEqual([]);
  });
});
