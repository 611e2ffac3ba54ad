// The executor's contract: a transfer enqueued in the caller's transaction is
// stored queued (and rolls back with it), read back as it was asked; the cost
// estimate reads the simulated chain's prices and balances over HTTP.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { inTransaction } from '../../../src/db/transaction.ts';
import {
  enqueueOutgoingTransfer,
  enqueueOutgoingTransfers,
  findOutgoingTransfer,
  type OutgoingTransferRequest,
} from '../../../src/crypto/sending/outgoing-transfers.ts';
import {
  estimateUsdtTransferCost,
  estimateTrxTransferCost,
  sunToMicroUsdt,
  USDT_TRANSFER_BANDWIDTH,
} from '../../../src/crypto/sending/transfer-cost.ts';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { tronAddress, tronAddressFromPrivateKey } from '../../../src/crypto/tron/address.ts';
import { ensureAccounts, systemAccountKey } from '../../../src/ledger/ledger-accounts.ts';
import { backends } from '../../support/databases.ts';
import { openReceivingSetup, type ReceivingSetup } from '../receiving/receiving-service-support.ts';

describe.each(backends)('outgoing transfers on %s', (backend) => {
  let setup: ReceivingSetup;
  beforeEach(async () => {
    setup = await openReceivingSetup(backend);
  });
  afterEach(async () => {
    await setup.close();
  });

  const recipient = tronAddress('TJRabPrwbZy45sbavfcjinPJC18kjpRTv8');
  const request = (): OutgoingTransferRequest => ({
    chain: 'tron-sandbox',
    purpose: 'payout',
    ownerId: 'po_test',
    asset: 'USDT',
    from: { kind: 'hot_wallet' },
    to: recipient,
    amount: 12_500_000n,
  });

  it('enqueues a queued transfer in the caller transaction and finds it', async () => {
    const queued = await inTransaction(setup.context.db, (tx) => enqueueOutgoingTransfer(tx, setup.clock, request()));
    expect(queued.id).toMatch(/^otx_/);
    expect(queued).toMatchObject({
      status: 'queued',
      txId: null,
      feeSun: null,
      errorCode: null,
      blockNumber: null,
      finalAt: null,
      amount: 12_500_000n,
    });
    const found = await findOutgoingTransfer(setup.context.db, queued.id);
    expect(found).toEqual(queued);
    expect(await findOutgoingTransfer(setup.context.db, 'otx_missing')).toBeUndefined();
  });

  it('enqueues many in one INSERT (a batch payout), in the order asked, each as one alone would be', async () => {
    const asked = Array.from({ length: 1_203 }, (_, index) => ({
      ...request(),
      ownerId: `po_many_${index}`,
      amount: 1_000_000n + BigInt(index),
    }));
    const queued = await inTransaction(setup.context.db, (tx) => enqueueOutgoingTransfers(tx, setup.clock, asked));
    expect(queued.map((transfer) => transfer.ownerId)).toEqual(asked.map((transfer) => transfer.ownerId));
    expect(new Set(queued.map((transfer) => transfer.id)).size).toBe(asked.length);
    for (const index of [0, 999, 1_000, 1_202]) {
      expect(await findOutgoingTransfer(setup.context.db, queued[index]!.id)).toEqual(queued[index]);
      expect(queued[index]).toMatchObject({
        status: 'queued',
        amount: asked[index]!.amount,
        to: recipient,
        txId: null,
      });
    }
    expect(await inTransaction(setup.context.db, (tx) => enqueueOutgoingTransfers(tx, setup.clock, []))).toEqual([]);
    await expect(
      inTransaction(setup.context.db, (tx) =>
        enqueueOutgoingTransfers(tx, setup.clock, [request(), { ...request(), amount: 0n }]),
      ),
    ).rejects.toThrow();
  });

  it('rolls back with the caller transaction', async () => {
    let id = '';
    await expect(
      inTransaction(setup.context.db, async (tx) => {
        id = (await enqueueOutgoingTransfer(tx, setup.clock, request())).id;
        throw new Error('the payout failed');
      }),
    ).rejects.toThrow('the payout failed');
    expect(await findOutgoingTransfer(setup.context.db, id)).toBeUndefined();
  });

  it('keeps a deposit-address source, and refuses malformed requests', async () => {
    const source = { kind: 'deposit_address' as const, address: recipient, derivationIndex: 7 };
    const sweep = await inTransaction(setup.context.db, (tx) =>
      enqueueOutgoingTransfer(tx, setup.clock, {
        ...request(),
        purpose: 'sweep',
        ownerId: 'swp_1',
        from: source,
        to: setup.access.addressKey.hotWalletAddress,
      }),
    );
    expect((await findOutgoingTransfer(setup.context.db, sweep.id))!.from).toEqual(source);
    for (const bad of [
      { amount: 0n },
      { asset: 'TRX' as const },
      { to: 'Tnot-an-address' as never },
      { ownerId: '' },
    ]) {
      await expect(
        inTransaction(setup.context.db, (tx) => enqueueOutgoingTransfer(tx, setup.clock, { ...request(), ...bad })),
      ).rejects.toThrow();
    }
    const topup = await inTransaction(setup.context.db, (tx) =>
      enqueueOutgoingTransfer(tx, setup.clock, {
        ...request(),
        purpose: 'gas_topup',
        asset: 'TRX',
        amount: 14_000_000n,
      }),
    );
    expect(topup.asset).toBe('TRX');
  });

  it('the network_fees and network_costs gateway accounts exist in both books', async () => {
    const rows = await inTransaction(setup.context.db, (tx) =>
      ensureAccounts(tx, setup.clock, [
        systemAccountKey('sandbox', 'network_fees', 'USDT', 3),
        systemAccountKey('live', 'network_costs', 'USDT', 0),
      ]),
    );
    expect(rows.map((row) => row.kind)).toEqual(['network_fees', 'network_costs']);
  });

  it('estimates a USDT transfer from the chain: 130k energy to a new holder, 65k to a holder', async () => {
    const hot = setup.access.addressKey.hotWalletAddress;
    const fresh = await estimateUsdtTransferCost(setup.access, { from: hot, to: recipient, amount: 1_000_000n });
    expect(fresh).toEqual({
      energy: 130_285n,
      bandwidth: USDT_TRANSFER_BANDWIDTH,
      activationSun: 0n,
      energySun: 130_285n * 100n,
      totalSun: 130_285n * 100n + USDT_TRANSFER_BANDWIDTH * 1_000n,
      recipientHoldsUsdt: false,
    });
    setup.sandbox.chain.faucet(recipient, { usdt: 1n });
    const holder = await estimateUsdtTransferCost(setup.access, { from: hot, to: recipient, amount: 1_000_000n });
    expect(holder).toMatchObject({
      energy: 64_285n,
      recipientHoldsUsdt: true,
      totalSun: 64_285n * 100n + USDT_TRANSFER_BANDWIDTH * 1_000n,
    });
    const trx = await estimateTrxTransferCost(
      setup.access.node,
      tronAddressFromPrivateKey(secp256k1.utils.randomSecretKey()),
    );
    expect(trx.recipientActivated).toBe(false);
    expect(trx.activationSun).toBeGreaterThan(0n);
  });
});

describe('sunToMicroUsdt', () => {
  it('converts at the rate, rounding up', () => {
    expect(sunToMicroUsdt(1_000_000n, '0.30')).toBe(300_000n);
    expect(sunToMicroUsdt(1_000_000n, 300_000n)).toBe(300_000n);
    expect(sunToMicroUsdt(13_373_500n, '0.30')).toBe(4_012_050n);
    expect(sunToMicroUsdt(1n, '0.30')).toBe(1n);
    expect(sunToMicroUsdt(0n, '0.30')).toBe(0n);
    expect(sunToMicroUsdt(3_333_333n, '0.000001')).toBe(4n);
    expect(() => sunToMicroUsdt(1n, '0')).toThrow();
    expect(() => sunToMicroUsdt(1n, 'abc')).toThrow();
  });
});
