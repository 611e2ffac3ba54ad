// Shared steps of the payout tests: the real app with its sandbox chain (manual
// block clock), a shop whose USDT balance is credited the way a final deposit
// credits it (hot wallet → merchant main, through the ledger service), fresh
// recipient addresses, and the ledger's own invariant check.
import { randomBytes } from 'node:crypto';
import { expect } from 'vitest';
import { inTransaction } from '../../../src/db/transaction.ts';
import { ensureAccounts, merchantAccountKey, systemAccountKey } from '../../../src/ledger/ledger-accounts.ts';
import { checkLedgerInvariants } from '../../../src/ledger/ledger-check.ts';
import { transfer } from '../../../src/ledger/ledger-service.ts';
import { tronAddressFromPrivateKey } from '../../../src/crypto/tron/address.ts';
import { createCryptoTestApp, externalId, micro, type CryptoTestApp } from '../receiving/crypto-routes-support.ts';
import type { DatabaseBackend } from '../../../src/db/database.ts';
import type { ExecutorOptions } from '../../../src/crypto/sending/executor-context.ts';
import { createOutgoingExecutor, type OutgoingExecutor } from '../../../src/crypto/sending/executor.ts';
import { USDT_CONTRACT_MAINNET } from '../../../src/crypto/tron/trc20-usdt.ts';
import { outgoingOutcomeHandlers } from '../../../src/modules.ts';

export { externalId, micro };

export interface PayoutShop {
  readonly shopId: string;
  readonly merchantId: string;
  readonly key: string;
}

export interface PayoutTestApp extends CryptoTestApp {
  payoutShop(mode?: 'sandbox' | 'live'): Promise<PayoutShop>;
  /** Credits the shop's USDT main account as a final deposit would. */
  fund(shop: PayoutShop, amountMicro: bigint): Promise<void>;
  /** The USDT main account as GET /v1/crypto/balance shows it, in micro-USDT. */
  balance(shop: PayoutShop): Promise<{ available: bigint; pending: bigint; total: bigint }>;
  expectLedgerGreen(): Promise<void>;
}

let fundings = 0;

export async function createPayoutTestApp(
  backend: DatabaseBackend,
  options: Parameters<typeof createCryptoTestApp>[1] = {},
): Promise<PayoutTestApp> {
  const testApp = await createCryptoTestApp(backend, options);
  const { db } = testApp.context;
  return {
    ...testApp,
    async payoutShop(mode = 'sandbox') {
      const merchant = await testApp.createMerchant({ mode });
      return { shopId: merchant.shop_id, merchantId: merchant.merchant_id, key: merchant.api_key };
    },
    async fund(shop, amountMicro) {
      const book = (await testApp.call(shop.key, 'GET', '/v1/account')).json().mode;
      fundings += 1;
      await inTransaction(db, async (tx) => {
        const [main, hotWallet] = await ensureAccounts(tx, testApp.clock, [
          merchantAccountKey(book, shop.merchantId, 'USDT', 'main'),
          systemAccountKey(book, 'hot_wallet', 'USDT', 0),
        ]);
        await transfer(tx, testApp.clock, {
          id: `test-funding:${process.pid}:${fundings}:${shop.shopId}`,
          debitAccountId: hotWallet!.id,
          creditAccountId: main!.id,
          amount: amountMicro,
          type: 'deposit',
          reference: { type: 'deposit', id: `test-${fundings}` },
        });
      });
    },
    async balance(shop) {
      const response = await testApp.call(shop.key, 'GET', '/v1/crypto/balance');
      expect(response.statusCode, response.body).toBe(200);
      const accounts: { currency: string; kind: string; available: string; pending: string; total: string }[] =
        response.json().accounts;
      const main = accounts.find((account) => account.currency === 'USDT' && account.kind === 'main');
      if (!main) return { available: 0n, pending: 0n, total: 0n };
      return { available: micro(main.available), pending: micro(main.pending), total: micro(main.total) };
    },
    async expectLedgerGreen() {
      const report = await checkLedgerInvariants(db);
      expect(report.violations).toEqual([]);
      expect(report.ok).toBe(true);
    },
  };
}

/** A fresh, valid TRON address nobody holds a key to here. */
export function recipient(): string {
  return tronAddressFromPrivateKey(randomBytes(32));
}

export function payoutBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return { external_id: externalId('payout'), network: 'TRC20', amount: '10', address: recipient(), ...overrides };
}

/**
 * The sandbox chain's sign-once executor with every module's outcome handlers, as
 * the sending worker builds it; `overrides` for what a test changes (its node, its waits).
 */
export async function sandboxExecutor(
  testApp: PayoutTestApp,
  overrides: Partial<ExecutorOptions> = {},
): Promise<OutgoingExecutor> {
  const { context } = testApp;
  const access = await testApp.crypto.chain.forMode('sandbox');
  const handlers = outgoingOutcomeHandlers();
  return createOutgoingExecutor({
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
    handlers,
    trxUsdtRateMicro: context.config.trxUsdtRateMicro,
    maxInFlight: 1_000,
    maxAttempts: 3,
    fundsWaitSeconds: 600,
    ...overrides,
  });
}
