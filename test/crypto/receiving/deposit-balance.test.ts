// A deposit in the merchant's balance and history through the API: pending while
// it confirms (a pending ledger credit written with the deposit), available when
// final (the credit posted), gone from pending when a reorganisation removes it
// (voided), pending again under a new ledger id when it reappears, never
// available when it arrives at a blocked wallet (held: voided). The ledger's
// invariants hold after every test. Real app, real database, the sandbox chain
// over HTTP read by the production node client; the watcher runs pass by pass.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createChainWatcher, type ChainWatcher } from '../../../src/crypto/receiving/chain-watcher.ts';
import type { SimulatedChainServer } from '../../../src/crypto/simchain/chain-server.ts';
import { tronAddress } from '../../../src/crypto/tron/address.ts';
import { checkLedgerInvariants } from '../../../src/ledger/ledger-check.ts';
import { MAX_TIMEOUT_SECONDS } from '../../../src/ledger/ledger-service.ts';
import { createReservationExpiryWorker } from '../../../src/ledger/reservation-expiry-worker.ts';
import { backends } from '../../support/databases.ts';
import { createCryptoTestApp, externalId, invoiceBody, micro, type CryptoTestApp } from './crypto-routes-support.ts';

/** Solidification is at head − 18: a deposit is final once 19 blocks include it and follow. */
const BLOCKS_TO_FINALITY = 19;
const WATCHER_PASSES_MAX = 10;

interface BalanceLine {
  account_id: string;
  currency: string;
  kind: string;
  available: string;
  pending: string;
  total: string;
}

interface OperationLine {
  account_id: string;
  type: string;
  amount: string;
  status: string;
  balance_after: string;
  reference: { type: string; id: string };
}

describe.each(backends)('deposits in the balance and the history on %s', (backend) => {
  let testApp: CryptoTestApp;
  let watcher: ChainWatcher;
  let sandbox: SimulatedChainServer;

  beforeAll(async () => {
    testApp = await createCryptoTestApp(backend);
    const { context } = testApp;
    const access = await testApp.crypto.chain.forMode('sandbox');
    sandbox = await testApp.crypto.chain.sandboxChain();
    watcher = createChainWatcher({ db: context.db, clock: context.clock, logger: context.logger, access });
  });
  afterEach(async () => {
    const report = await checkLedgerInvariants(testApp.context.db);
    expect(report.violations).toEqual([]);
  });
  afterAll(() => testApp.close());

  async function watch(): Promise<void> {
    for (let pass = 0; pass < WATCHER_PASSES_MAX; pass++) {
      const result = await watcher.runPass();
      if (result.blocksScanned === 0 && result.depositsSettled === 0 && result.reorganisations === 0) return;
    }
    throw new Error(`the watcher still had work after ${WATCHER_PASSES_MAX} passes`);
  }

  async function post(key: string, path: string, body?: unknown) {
    const response = await testApp.call(key, 'POST', path, body);
    expect(response.statusCode, `${path}: ${response.body}`).toBeLessThan(300);
    return response.json();
  }

  async function usdtMain(key: string): Promise<BalanceLine> {
    const response = await testApp.call(key, 'GET', '/v1/crypto/balance');
    expect(response.statusCode).toBe(200);
    return (response.json() as { accounts: BalanceLine[] }).accounts.find(
      (line) => line.currency === 'USDT' && line.kind === 'main',
    )!;
  }

  async function depositOperations(key: string): Promise<OperationLine[]> {
    const response = await testApp.call(key, 'GET', '/v1/crypto/balance/operations?type=deposit&limit=100');
    expect(response.statusCode).toBe(200);
    return (response.json() as { data: OperationLine[] }).data;
  }

  async function paidInvoice(key: string, amount: string): Promise<{ invoiceId: string; address: string }> {
    const invoice = await post(key, '/v1/crypto/invoices', invoiceBody({ amount }));
    await post(key, '/v1/test_helpers/crypto/deposits', { address: invoice.address, amount });
    return { invoiceId: invoice.invoice_id, address: invoice.address };
  }

  const mine = (key: string, count: number) => post(key, '/v1/test_helpers/crypto/blocks', { count });

  it('a confirming deposit is pending in the balance and listed in the history; when final it is available, listed once as posted', async () => {
    const { key } = await testApp.shop();
    await mine(key, 1);
    await watch();
    const { invoiceId } = await paidInvoice(key, '12.5');
    await mine(key, 1);
    await watch();

    const confirming = await usdtMain(key);
    expect(micro(confirming.available)).toBe(0n);
    expect(micro(confirming.pending)).toBe(12_500_000n);
    expect(micro(confirming.total)).toBe(12_500_000n);
    const [seen, ...none] = await depositOperations(key);
    expect(none).toEqual([]);
    expect(seen).toMatchObject({
      account_id: confirming.account_id,
      type: 'deposit',
      status: 'pending',
      reference: { type: 'deposit' },
    });
    expect(micro(seen!.amount)).toBe(12_500_000n);
    expect(micro(seen!.balance_after)).toBe(0n);

    await mine(key, BLOCKS_TO_FINALITY);
    await watch();
    expect((await testApp.call(key, 'GET', `/v1/crypto/invoices/${invoiceId}`)).json().status).toBe('paid');
    const final = await usdtMain(key);
    expect([micro(final.available), micro(final.pending), micro(final.total)]).toEqual([12_500_000n, 0n, 12_500_000n]);
    // The pending entry gives way to the credit itself: the money is listed once.
    const [credit, ...rest] = await depositOperations(key);
    expect(rest).toEqual([]);
    expect(credit).toMatchObject({
      account_id: final.account_id,
      type: 'deposit',
      status: 'posted',
      reference: seen!.reference,
    });
    expect(micro(credit!.amount)).toBe(12_500_000n);
    expect(micro(credit!.balance_after)).toBe(12_500_000n);
  });

  it('a reorganisation that removes a confirming deposit takes it out of pending and out of the history; nothing is ever available', async () => {
    const { key } = await testApp.shop();
    await mine(key, 1);
    await watch();
    await paidInvoice(key, '7');
    await mine(key, 1);
    await watch();
    expect(micro((await usdtMain(key)).pending)).toBe(7_000_000n);

    sandbox.chain.reorg(1, { reinclude: false });
    await mine(key, BLOCKS_TO_FINALITY + 1);
    await watch();
    const after = await usdtMain(key);
    expect([micro(after.available), micro(after.pending), micro(after.total)]).toEqual([0n, 0n, 0n]);
    expect(await depositOperations(key)).toEqual([]);
    const voids = await testApp.context.db
      .selectFrom('ledger_transfers')
      .select('idempotency_key')
      .where('idempotency_key', 'like', 'crypto-deposit:%:void')
      .execute();
    expect(voids.length).toBeGreaterThan(0);
  });

  it('a deposit orphaned and then included again is pending once more under a new ledger id, and credited once when final', async () => {
    const { key } = await testApp.shop();
    await mine(key, 1);
    await watch();
    const invoice = await post(key, '/v1/crypto/invoices', invoiceBody({ amount: '3' }));
    const invoiceId: string = invoice.invoice_id;
    const sent = sandbox.chain.sendUsdt({ to: tronAddress(invoice.address), amount: 3_000_000n });
    expect(sent.result).toBe(true);
    await mine(key, 1);
    await watch();
    // The block is replaced by one without the transfer; the watcher orphans the deposit.
    sandbox.chain.reorg(1, { reinclude: false });
    await mine(key, 1);
    await watch();
    expect(micro((await usdtMain(key)).pending)).toBe(0n);
    // The same signed bytes broadcast again land in a later block: the deposit is seen again.
    expect(sandbox.chain.broadcast(sandbox.chain.incoming(sent.transaction)).result).toBe(true);
    await mine(key, 1);
    await watch();
    expect(micro((await usdtMain(key)).pending)).toBe(3_000_000n);

    const [deposit] = await testApp.context.db
      .selectFrom('crypto_deposits')
      .selectAll()
      .where('invoice_id', '=', invoiceId)
      .execute();
    expect(deposit!.credit_round).toBe(2);
    const ledger = await testApp.context.db
      .selectFrom('ledger_transfers')
      .select(['idempotency_key', 'status'])
      .where('reference_id', '=', deposit!.id)
      .orderBy('idempotency_key')
      .execute();
    expect(ledger).toEqual([
      { idempotency_key: `crypto-deposit:${deposit!.id}:1`, status: 'pending' },
      { idempotency_key: `crypto-deposit:${deposit!.id}:1:void`, status: 'voided' },
      { idempotency_key: `crypto-deposit:${deposit!.id}:2`, status: 'pending' },
    ]);

    await mine(key, BLOCKS_TO_FINALITY);
    await watch();
    const final = await usdtMain(key);
    expect([micro(final.available), micro(final.pending)]).toEqual([3_000_000n, 0n]);
    const credits = await testApp.context.db
      .selectFrom('ledger_transfers')
      .select('id')
      .where('idempotency_key', '=', `crypto-deposit:${deposit!.id}`)
      .execute();
    expect(credits).toHaveLength(1);
    expect((await depositOperations(key)).map((line) => [line.status, micro(line.amount)])).toEqual([
      ['posted', 3_000_000n],
    ]);
  });

  it('a deposit to a wallet blocked before finality is pending while it confirms, then held: never available, pending released', async () => {
    const { key } = await testApp.shop();
    await mine(key, 1);
    await watch();
    const wallet = await post(key, '/v1/crypto/wallets', { client_id: externalId('client'), network: 'TRC20' });
    await post(key, '/v1/test_helpers/crypto/deposits', { address: wallet.address, amount: '5' });
    await mine(key, 1);
    await watch();
    expect(micro((await usdtMain(key)).pending)).toBe(5_000_000n);

    await post(key, `/v1/crypto/wallets/${wallet.wallet_id}/block`);
    await mine(key, BLOCKS_TO_FINALITY);
    await watch();
    const after = await usdtMain(key);
    expect([micro(after.available), micro(after.pending), micro(after.total)]).toEqual([0n, 0n, 0n]);
    expect(await depositOperations(key)).toEqual([]);
    const [deposit] = await testApp.context.db
      .selectFrom('crypto_deposits')
      .select(['status'])
      .where('wallet_id', '=', wallet.wallet_id)
      .execute();
    expect(deposit!.status).toBe('held');
  });

  it('a pending deposit credit has no timeout: past the longest reservation timeout the expiry worker leaves it, and it is still credited', async () => {
    const { key } = await testApp.shop();
    await mine(key, 1);
    await watch();
    const { invoiceId } = await paidInvoice(key, '1');
    await mine(key, 1);
    await watch();
    const [deposit] = await testApp.context.db
      .selectFrom('crypto_deposits')
      .select('id')
      .where('invoice_id', '=', invoiceId)
      .execute();
    const reservation = () =>
      testApp.context.db
        .selectFrom('ledger_transfers')
        .select(['status', 'timeout_seconds', 'expires_at'])
        .where('idempotency_key', '=', `crypto-deposit:${deposit!.id}:1`)
        .executeTakeFirst();
    expect(await reservation()).toEqual({ status: 'pending', timeout_seconds: null, expires_at: null });

    testApp.clock.advance((MAX_TIMEOUT_SECONDS + 3600) * 1_000);
    const expiry = createReservationExpiryWorker(testApp.context);
    await expiry.runOnce();
    expect(micro((await usdtMain(key)).pending)).toBe(1_000_000n);
    const closing = await testApp.context.db
      .selectFrom('ledger_transfers')
      .select('id')
      .where('idempotency_key', 'like', `expiry:%`)
      .execute();
    expect(closing).toEqual([]);

    await mine(key, BLOCKS_TO_FINALITY);
    await watch();
    const final = await usdtMain(key);
    expect([micro(final.available), micro(final.pending)]).toEqual([1_000_000n, 0n]);
  });
});
