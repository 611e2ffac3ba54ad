// Custody reconciliation end to end on the real database, the real app, the
// gateway's own workers (watcher, sweeper, the outgoing-transfer worker as the
// gateway wires it) and the simulated chain over HTTP: a healthy sandbox with
// deposits, a sweep and payouts reconciles to a zero difference at every stage
// of a payout's flight; USDT sent out of the hot wallet behind the gateway's
// back shows as a shortfall, on /metrics, pauses new payouts (503) and the
// signing of queued ones, until an operator's acknowledgement resumes them.
import { bytesToHex } from '@noble/hashes/utils.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCustodyReconciliationWorker } from '../../../src/crypto/custody/reconciliation-worker.ts';
import {
  reconcileBook,
  acknowledgeShortfall,
  type ReconciliationDeps,
  type ReconciliationView,
} from '../../../src/crypto/custody/reconciliation-service.ts';
import { isSigningPaused } from '../../../src/crypto/custody/signing-pause.ts';
import { createChainWatcher, type ChainWatcher } from '../../../src/crypto/receiving/chain-watcher.ts';
import type { ChainAccess } from '../../../src/crypto/chain/crypto-chain.ts';
import { usdtCreditedAboveBlock } from '../../../src/crypto/receiving/custody-service.ts';
import type { AppContext } from '../../../src/context.ts';
import type { CryptoDeps } from '../../../src/crypto/chain/chain-module.ts';
import { simulateDeposit } from '../../../src/crypto/receiving/sandbox-chain-service.ts';
import { findOutgoingTransfer } from '../../../src/crypto/sending/outgoing-transfers.ts';
import { createOutgoingTransferWorker } from '../../../src/crypto/sending/sending-worker.ts';
import type { SimulatedChainServer } from '../../../src/crypto/simchain/chain-server.ts';
import { runSweepPass, sweepsOfAddress, type SweepingDeps } from '../../../src/crypto/sweeping/sweeping-service.ts';
import { tronAddress, type TronAddress } from '../../../src/crypto/tron/address.ts';
import { signTriggerSmartContract } from '../../../src/crypto/tron/signing.ts';
import { referenceBlockFields } from '../../../src/crypto/tron/transaction.ts';
import { transferCalldata, USDT_CONTRACT_MAINNET } from '../../../src/crypto/tron/trc20-usdt.ts';
import { InvalidStateError } from '../../../src/errors.ts';
import { outgoingOutcomeHandlers } from '../../../src/modules.ts';
import { backends } from '../../support/databases.ts';
import {
  createPayoutTestApp,
  externalId,
  micro,
  payoutBody,
  recipient,
  type PayoutShop,
  type PayoutTestApp,
} from '../payouts/payout-support.ts';

describe.each(backends)('custody reconciliation on %s', (backend) => {
  let testApp: PayoutTestApp;
  let shop: PayoutShop;
  let deps: CryptoDeps & AppContext;
  let access: ChainAccess;
  let sandbox: SimulatedChainServer;
  let watcher: ChainWatcher;
  let sending: ReturnType<typeof createOutgoingTransferWorker>;
  let sweeping: SweepingDeps;
  let reconciliation: ReconciliationDeps;
  let hotWallet: TronAddress;
  let swept: TronAddress;
  let unswept: TronAddress;

  beforeAll(async () => {
    testApp = await createPayoutTestApp(backend);
    shop = await testApp.payoutShop();
    const { context } = testApp;
    deps = { ...context, chain: testApp.crypto.chain };
    access = await deps.chain.forMode('sandbox');
    sandbox = await deps.chain.sandboxChain();
    hotWallet = access.addressKey.hotWalletAddress;
    watcher = createChainWatcher({ db: context.db, clock: testApp.clock, logger: context.logger, access });
    sending = createOutgoingTransferWorker(
      { ...deps, signingPaused: (book) => isSigningPaused(context.db, book) },
      outgoingOutcomeHandlers(),
    );
    // 100 USDT on one address goes over the threshold and is swept; 60 on another stays.
    sweeping = {
      db: context.db,
      clock: testApp.clock,
      config: { sweepThresholdMicro: 80_000_000n },
      logger: context.logger,
      chain: deps.chain,
    };
    reconciliation = {
      db: context.db,
      clock: testApp.clock,
      config: { custodyToleranceMicro: 10_000n },
      logger: context.logger,
      chain: deps.chain,
    };
  });
  afterAll(async () => {
    await testApp.expectLedgerGreen();
    await sending.stop();
    await testApp.close();
  });

  const mine = async (count: number) => {
    sandbox.chain.mine(count);
    testApp.clock.advance(3_000 * count);
  };
  const solidityDepth = () => sandbox.chain.parameters.solidityDepth;

  async function post(path: string, body: unknown) {
    const response = await testApp.call(shop.key, 'POST', path, body);
    expect(response.statusCode, `${path}: ${response.body}`).toBeLessThan(300);
    return response.json();
  }

  /** An invoice paid on chain and its deposit credited once final. */
  async function finalDeposit(amount: string): Promise<TronAddress> {
    const invoice = await post('/v1/crypto/invoices', { external_id: externalId('invoice'), amount, network: 'TRC20' });
    await simulateDeposit(deps, { shopId: shop.shopId, mode: 'sandbox' }, { address: invoice.address, amount });
    await mine(1);
    await watcher.runPass();
    await mine(solidityDepth());
    await watcher.runPass();
    return tronAddress(invoice.address);
  }

  async function reconcile(): Promise<ReconciliationView> {
    const view = await reconcileBook(reconciliation, 'sandbox');
    expect(view).toBeDefined();
    return view!;
  }

  /** The ledger's side adds up: what is owed equals deposits credited less outgoing booked, when nothing is in flight. */
  function expectOwedMatches(view: ReconciliationView): void {
    const ledger = view.ledger!;
    expect(micro(ledger.merchant_balances) + micro(ledger.gateway_accounts)).toBe(
      micro(ledger.deposits_credited) - micro(ledger.outgoing_booked),
    );
  }

  it('a healthy sandbox with deposits, a sweep and a payout reconciles to a zero difference', async () => {
    swept = await finalDeposit('100');
    unswept = await finalDeposit('60');
    for (
      let round = 0;
      round < 120 && (await sweepsOfAddress(testApp.context.db, swept))[0]?.status !== 'completed';
      round++
    ) {
      await sending.runOnce();
      await runSweepPass(sweeping);
      await mine(1);
    }
    expect((await sweepsOfAddress(testApp.context.db, swept))[0]?.status).toBe('completed');
    expect(await sweepsOfAddress(testApp.context.db, unswept)).toEqual([]);
    // What a node behind the watcher's would not show yet: the deposits credited from blocks above its solidified one.
    const newest = await testApp.context.db
      .selectFrom('crypto_deposits')
      .select(['block_number', 'amount_micro'])
      .where('address', '=', unswept)
      .executeTakeFirstOrThrow();
    expect(await usdtCreditedAboveBlock(testApp.context.db, 'tron-sandbox', Number(newest.block_number) - 1)).toBe(
      60_000_000n,
    );
    expect(await usdtCreditedAboveBlock(testApp.context.db, 'tron-sandbox', Number(newest.block_number))).toBe(0n);

    const payout = await post('/v1/crypto/payouts', payoutBody({ amount: '30' }));
    await sending.runOnce();
    await mine(1);
    await mine(solidityDepth());
    await sending.runOnce();
    expect((await testApp.call(shop.key, 'GET', `/v1/crypto/payouts/${payout.payout_id}`)).json().status).toBe(
      'completed',
    );

    const view = await reconcile();
    expect(view).toMatchObject({
      outcome: 'balanced',
      on_chain: { hot_wallet: '70', deposit_addresses: '60', addresses_read: 1, total: '130' },
      outgoing_in_flight: '0',
      sweeps_in_flight: '0',
      expected: '130',
      difference: '0',
      shortfall: '0',
      signing_paused: false,
    });
    expect(view.ledger).toMatchObject({
      deposits_credited: '160',
      deposits_above_block: '0',
      outgoing_booked: '30',
      reserved_outgoing: '0',
    });
    expectOwedMatches(view);
  });

  it('money in flight never shows as missing: a payout signed, included, solidified, then booked; a deposit confirming', async () => {
    const payout = await post('/v1/crypto/payouts', payoutBody({ amount: '20' }));
    const signed = await sending.runOnce();
    expect(signed).toBeGreaterThan(0);
    // Signed and broadcast, not in a block: counted gone, still on chain (surplus).
    expect(await reconcile()).toMatchObject({
      outcome: 'balanced',
      outgoing_in_flight: '20',
      expected: '110',
      difference: '20',
      shortfall: '0',
    });
    await mine(1);
    // In a block that is not solidified: the solidified balance still has it.
    expect(await reconcile()).toMatchObject({
      outcome: 'balanced',
      on_chain: { hot_wallet: '70' },
      difference: '20',
      shortfall: '0',
    });
    // A deposit seen and not final: in neither the solidified balance nor the ledger's posted money.
    await simulateDeposit(deps, { shopId: shop.shopId, mode: 'sandbox' }, { address: unswept, amount: '5' });
    await mine(1);
    await watcher.runPass();
    await mine(solidityDepth() - 1);
    // The payout is solidified and the executor has not booked it yet: gone from chain, still in flight.
    const solidified = await reconcile();
    expect(solidified).toMatchObject({
      outcome: 'balanced',
      on_chain: { hot_wallet: '50', deposit_addresses: '60' },
      outgoing_in_flight: '20',
      expected: '110',
      difference: '0',
      shortfall: '0',
    });
    expect(solidified.ledger!.reserved_outgoing).not.toBe('0');
    await sending.runOnce();
    expect((await testApp.call(shop.key, 'GET', `/v1/crypto/payouts/${payout.payout_id}`)).json().status).toBe(
      'completed',
    );
    expect(await reconcile()).toMatchObject({
      outcome: 'balanced',
      outgoing_in_flight: '0',
      expected: '110',
      difference: '0',
    });
    // The deposit becomes final and is credited: both sides grow by 5.
    await mine(1);
    await watcher.runPass();
    const settled = await reconcile();
    expect(settled).toMatchObject({
      outcome: 'balanced',
      on_chain: { hot_wallet: '50', deposit_addresses: '65' },
      expected: '115',
      difference: '0',
      shortfall: '0',
    });
    expectOwedMatches(settled);
  });

  it('USDT sent out of the hot wallet behind the gateway’s back: shortfall, metric, payouts 503, queued ones unsigned; acknowledgement resumes', async () => {
    // A payout accepted before the theft, still queued (not signed) when the shortfall is found.
    const queuedBody = payoutBody({ amount: '10' });
    const queued = await post('/v1/crypto/payouts', queuedBody);

    const key = await access.signingKey();
    const solid = await access.node.getSolidifiedBlock();
    const head = await access.node.getHeadBlock();
    const thief = tronAddress(recipient());
    const theft = signTriggerSmartContract(
      {
        ...referenceBlockFields(solid.number, solid.id),
        expirationMs: head.timestamp + 60_000,
        timestampMs: testApp.clock.now().getTime(),
        feeLimitSun: 100_000_000n,
        ownerAddress: hotWallet,
        contractAddress: USDT_CONTRACT_MAINNET,
        data: transferCalldata(thief, 25_000_000n),
      },
      key.hotWalletPrivateKey(),
    );
    expect((await access.node.broadcast({ txId: theft.txId, hex: bytesToHex(theft.bytes) })).kind).toBe('accepted');
    await mine(1 + solidityDepth());
    expect(await access.node.getUsdtBalance(thief, { solidified: true })).toBe(25_000_000n);

    const found = await reconcile();
    expect(found).toMatchObject({
      outcome: 'shortfall',
      difference: '-25',
      shortfall: '25',
      accepted_shortfall: '0',
      signing_paused: true,
    });
    const metrics = (await testApp.app.inject({ method: 'GET', url: '/metrics' })).body;
    expect(metrics).toContain('paygate_custody_difference{book="sandbox",asset="USDT"} -25');
    expect(metrics).toContain('paygate_custody_signing_paused{book="sandbox"} 1');

    // New payouts and batches: 503 with a clear message, nothing reserved.
    const before = await testApp.balance(shop);
    const refused = await testApp.call(shop.key, 'POST', '/v1/crypto/payouts', payoutBody({ amount: '5' }));
    expect(refused.statusCode).toBe(503);
    expect(refused.headers['retry-after']).toBeDefined();
    expect(refused.json()).toEqual({
      error: 'service_unavailable',
      message: expect.stringContaining('New payouts are paused'),
      request_id: expect.any(String),
    });
    const batch = await testApp.call(shop.key, 'POST', '/v1/crypto/payouts/batch', {
      external_id: externalId('batch'),
      network: 'TRC20',
      payouts: [{ external_id: externalId('item'), amount: '5', address: recipient() }],
    });
    expect(batch.statusCode).toBe(503);
    expect(await testApp.balance(shop)).toEqual(before);
    // A repeat of a payout accepted before is still answered: it asks for no new signing.
    expect((await testApp.call(shop.key, 'POST', '/v1/crypto/payouts', queuedBody)).statusCode).toBe(200);

    // The queued payout waits: passes sign nothing, however long.
    for (let pass = 0; pass < 3; pass++) {
      await sending.runOnce();
      await mine(1);
    }
    const waiting = await testApp.context.db
      .selectFrom('crypto_outgoing_transfers')
      .selectAll()
      .where('owner_id', '=', queued.payout_id)
      .executeTakeFirstOrThrow();
    expect(waiting).toMatchObject({ status: 'queued', tx_id: null, attempts: 0 });
    expect((await testApp.call(shop.key, 'GET', `/v1/crypto/payouts/${queued.payout_id}`)).json().status).toBe(
      'pending',
    );

    // Another run while paused keeps the pause (nothing was accepted yet).
    expect(await reconcile()).toMatchObject({ outcome: 'shortfall', signing_paused: true });

    // The operator acknowledges: recorded with who and when; signing resumes and the queued payout goes out.
    const acknowledged = await acknowledgeShortfall(reconciliation, {
      book: 'sandbox',
      acknowledgedBy: 'ops@example.test',
      note: 'hot key rotated; loss booked by finance',
    });
    expect(acknowledged).toMatchObject({
      book: 'sandbox',
      accepted_shortfall: '25',
      acknowledged_by: 'ops@example.test',
      acknowledged_at: testApp.clock.now().toISOString(),
    });
    const stored = await testApp.context.db.selectFrom('crypto_custody_acknowledgements').selectAll().execute();
    expect(stored).toHaveLength(1);
    await expect(acknowledgeShortfall(reconciliation, { book: 'sandbox', acknowledgedBy: 'ops' })).rejects.toThrow(
      InvalidStateError,
    );

    await sending.runOnce();
    await mine(1 + solidityDepth());
    await sending.runOnce();
    expect((await findOutgoingTransfer(testApp.context.db, waiting.id))!.status).toBe('confirmed');
    expect((await testApp.call(shop.key, 'GET', `/v1/crypto/payouts/${queued.payout_id}`)).json().status).toBe(
      'completed',
    );
    // The accepted shortfall does not pause again; new payouts are taken.
    expect(await reconcile()).toMatchObject({
      outcome: 'balanced',
      shortfall: '25',
      accepted_shortfall: '25',
      signing_paused: false,
    });
    expect((await testApp.call(shop.key, 'POST', '/v1/crypto/payouts', payoutBody({ amount: '5' }))).statusCode).toBe(
      201,
    );

    // More missing beyond the accepted level and the tolerance pauses again.
    const second = signTriggerSmartContract(
      {
        ...referenceBlockFields(
          (await access.node.getSolidifiedBlock()).number,
          (await access.node.getSolidifiedBlock()).id,
        ),
        expirationMs: (await access.node.getHeadBlock()).timestamp + 60_000,
        timestampMs: testApp.clock.now().getTime(),
        feeLimitSun: 100_000_000n,
        ownerAddress: hotWallet,
        contractAddress: USDT_CONTRACT_MAINNET,
        data: transferCalldata(thief, 1_000_000n),
      },
      key.hotWalletPrivateKey(),
    );
    expect((await access.node.broadcast({ txId: second.txId, hex: bytesToHex(second.bytes) })).kind).toBe('accepted');
    await mine(1 + solidityDepth());
    await sending.runOnce();
    await mine(1 + solidityDepth());
    await sending.runOnce();
    expect(await reconcile()).toMatchObject({
      outcome: 'shortfall',
      shortfall: '26',
      accepted_shortfall: '25',
      signing_paused: true,
    });
    expect((await testApp.call(shop.key, 'POST', '/v1/crypto/payouts', payoutBody({ amount: '5' }))).statusCode).toBe(
      503,
    );
  });

  it('the worker reconciles once per PAYGATE_CUSTODY_RECONCILE_INTERVAL_SECONDS of the injected clock, recording each run', async () => {
    const worker = createCustodyReconciliationWorker({ ...testApp.context, chain: testApp.crypto.chain });
    const runs = async () =>
      (await testApp.context.db.selectFrom('crypto_custody_reconciliations').select('id').execute()).length;
    const before = await runs();
    expect(await worker.runOnce()).toBe(1); // the sandbox book; live is not configured
    expect(await worker.runOnce()).toBe(0);
    testApp.clock.advance(testApp.context.config.custodyReconcileIntervalSeconds * 1_000 - 1);
    expect(await worker.runOnce()).toBe(0);
    testApp.clock.advance(1);
    expect(await worker.runOnce()).toBe(1);
    expect(await runs()).toBe(before + 2);
  });
});
