// Shared steps of the refund tests: the real app with its sandbox chain (manual
// block clock), the chain watcher (deposits seen, credited or held) and the
// sign-once executor (refunds signed, broadcast, confirmed) run pass by pass,
// with the module list's outcome handlers, as the worker runs them.
import { expect } from 'vitest';
import { createChainWatcher, type ChainWatcher } from '../../../src/crypto/receiving/chain-watcher.ts';
import { createOutgoingExecutor } from '../../../src/crypto/sending/executor.ts';
import { USDT_CONTRACT_MAINNET } from '../../../src/crypto/tron/trc20-usdt.ts';
import type { DatabaseBackend } from '../../../src/db/database.ts';
import { outgoingOutcomeHandlers } from '../../../src/modules.ts';
import { invoiceBody } from '../receiving/crypto-routes-support.ts';
import { createPayoutTestApp, type PayoutShop } from '../payouts/payout-support.ts';

/** Solidified at head − 18: a transaction is final once 19 blocks include it and follow. */
const BLOCKS_TO_FINALITY = 19;
const WATCHER_PASSES_MAX = 10;

/** The payout test app with the watcher and the executor, and the steps the refund and withdrawal tests share. */
export type ChainTestApp = Awaited<ReturnType<typeof createChainTestApp>>;

export async function createChainTestApp(
  backend: DatabaseBackend,
  options: Parameters<typeof createPayoutTestApp>[1] = {},
) {
  const testApp = await createPayoutTestApp(backend, options);
  const { context } = testApp;
  const deps = { ...context, chain: testApp.crypto.chain };
  const access = await deps.chain.forMode('sandbox');
  const watcher: ChainWatcher = createChainWatcher({
    db: context.db,
    clock: context.clock,
    logger: context.logger,
    access,
  });
  const executor = createOutgoingExecutor({
    db: context.db,
    clock: context.clock,
    logger: context.logger,
    chain: access.chain,
    node: access.node,
    transferEnergy: access.transferEnergy,
    signingKey: () => access.signingKey(),
    hotWallet: access.addressKey.hotWalletAddress,
    // As the sending worker: a shop's armed outcomes apply to its own transfers only.
    declareTransferOwners: access.declareTransferOwners,
    usdtContract: USDT_CONTRACT_MAINNET,
    handlers: outgoingOutcomeHandlers(),
    trxUsdtRateMicro: context.config.trxUsdtRateMicro,
    maxInFlight: 1_000,
    maxAttempts: 3,
    fundsWaitSeconds: 600,
  });
  const post = async (shop: PayoutShop, path: string, body?: unknown) => {
    const response = await testApp.call(shop.key, 'POST', path, body);
    expect(response.statusCode, `${path}: ${response.body}`).toBeLessThan(300);
    return response.json();
  };
  const mine = async (shop: PayoutShop, count: number) => {
    await post(shop, '/v1/test_helpers/crypto/blocks', { count });
  };
  const watch = async () => {
    for (let pass = 0; pass < WATCHER_PASSES_MAX; pass++) {
      const result = await watcher.runPass();
      if (result.blocksScanned === 0 && result.depositsSettled === 0 && result.reorganisations === 0) return;
    }
    throw new Error(`the watcher still had work after ${WATCHER_PASSES_MAX} passes`);
  };
  const depositIdsOfInvoice = async (invoiceId: string) =>
    (
      await context.db
        .selectFrom('crypto_deposits')
        .select('id')
        .where('invoice_id', '=', invoiceId)
        .orderBy('block_number')
        .orderBy('log_index')
        .execute()
    ).map((row) => row.id);
  return {
    ...testApp,
    executor,
    post,
    get: async (shop: PayoutShop, path: string) => (await testApp.call(shop.key, 'GET', path)).json(),
    mine,
    watch,
    /** Executor pass, a block, finality, watcher and executor again: every queued transfer final. */
    async carryToFinal(shop: PayoutShop) {
      await executor.runPass();
      await mine(shop, 1);
      await mine(shop, BLOCKS_TO_FINALITY);
      await watch();
      await executor.runPass();
    },
    /** Pays a new invoice of `amount` and waits until the deposit is credited. */
    async creditedInvoiceDeposit(shop: PayoutShop, amount: string) {
      const invoice = await post(shop, '/v1/crypto/invoices', invoiceBody({ amount }));
      await post(shop, '/v1/test_helpers/crypto/deposits', { address: invoice.address, amount });
      await mine(shop, 1);
      await mine(shop, BLOCKS_TO_FINALITY);
      await watch();
      const [depositId] = await depositIdsOfInvoice(invoice.invoice_id);
      return { invoiceId: invoice.invoice_id, depositId: depositId! };
    },
    depositIdsOfInvoice,
    async usdtOnChain(address: string) {
      return (await deps.chain.sandboxChain()).chain.state.usdtBalance(address as never);
    },
    async eventsOf(shop: PayoutShop, type: string, key: string, id: string): Promise<Record<string, unknown>[]> {
      const rows = await context.db
        .selectFrom('webhook_events')
        .select('payload')
        .where('shop_id', '=', shop.shopId)
        .where('type', '=', type)
        .orderBy('created_at')
        .orderBy('id')
        .execute();
      return rows
        .map((row) => JSON.parse(row.payload).data as Record<string, unknown>)
        .filter((data) => data[key] === id);
    },
    async close() {
      await executor.release();
      await testApp.close();
    },
  };
}
