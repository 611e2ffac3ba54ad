// The custody view: our addresses with what the chain holds there, beside what
// the ledger credited and what is held for blocked wallets.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { listCustodyAddresses } from '../../../src/crypto/receiving/custody-service.ts';
import { sweepSummaries } from '../../../src/crypto/sweeping/sweep-custody.ts';
import { createInvoice } from '../../../src/crypto/receiving/invoice-service.ts';
import { mineBlocks, simulateDeposit } from '../../../src/crypto/receiving/sandbox-chain-service.ts';
import { blockWallet, createWallet } from '../../../src/crypto/receiving/wallet-service.ts';
import { backends } from '../../support/databases.ts';
import { expectLedgerSound, openReceivingSetup, type ReceivingSetup } from './receiving-service-support.ts';

describe.each(backends)('the custody view on %s', (backend) => {
  let setup: ReceivingSetup;
  beforeEach(async () => {
    setup = await openReceivingSetup(backend);
  });
  afterEach(async () => {
    await expectLedgerSound(setup);
    await setup.close();
  });

  it('shows on-chain balances beside credited, held and not-yet-final amounts', async () => {
    const { invoice } = await createInvoice(setup.deps, setup.shop, {
      external_id: 'o-1',
      amount: '10',
      network: 'TRC20',
    });
    const { wallet } = await createWallet(setup.deps, setup.shop, { client_id: 'c-1', network: 'TRC20' });
    await blockWallet(setup.deps, setup.shop.shopId, wallet.wallet_id);
    await simulateDeposit(setup.deps, setup.shop, { address: invoice.address, amount: '10' });
    await simulateDeposit(setup.deps, setup.shop, { address: wallet.address, amount: '3' });
    await mineBlocks(setup.deps, setup.shop, 1);
    await setup.defaultWatcher.runPass();
    await mineBlocks(setup.deps, setup.shop, setup.sandbox.chain.parameters.solidityDepth);
    await setup.defaultWatcher.runPass();
    // One more deposit, seen but not final.
    await simulateDeposit(setup.deps, setup.shop, { address: invoice.address, amount: '1.5' });
    await mineBlocks(setup.deps, setup.shop, 1);
    await setup.defaultWatcher.runPass();

    const lines = await listCustodyAddresses(setup.deps, { limit: 10 }, sweepSummaries);
    const byAddress = new Map(lines.map((line) => [line.address, line]));
    expect(byAddress.get(invoice.address)).toMatchObject({
      key: 'sandbox',
      purpose: 'invoice',
      shop_id: setup.shop.shopId,
      usdt_on_chain: '11.5',
      trx_on_chain: '0',
      usdt_credited: '10',
      usdt_held: '0',
      usdt_unaccounted: '1.5',
    });
    expect(byAddress.get(wallet.address)).toMatchObject({
      purpose: 'wallet',
      usdt_on_chain: '3',
      usdt_credited: '0',
      usdt_held: '3',
      usdt_unaccounted: '0',
    });
    const firstPage = await listCustodyAddresses(setup.deps, { limit: 1 }, sweepSummaries);
    const secondPage = await listCustodyAddresses(
      setup.deps,
      { limit: 1, after: firstPage[0]!.address },
      sweepSummaries,
    );
    expect([firstPage[0]!.address, secondPage[0]!.address].sort()).toEqual([invoice.address, wallet.address].sort());
  });
});
