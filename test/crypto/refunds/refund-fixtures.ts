// A final deposit for the tests that need one without running the chain: an
// invoice made through the API (its deposit address is real), and a deposit row
// to it as the watcher records one once final (credited, its credit in the
// ledger and its address's running total; or held). The lifecycle tests make their deposits on the chain.
import { randomBytes } from 'node:crypto';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { inTransaction, type Db } from '../../../src/db/transaction.ts';
import type { Clock } from '../../../src/clock.ts';
import { addFinalUsdt } from '../../../src/crypto/receiving/receiving-repository.ts';
import { newId } from '../../../src/ids.ts';
import { ensureAccounts, merchantAccountKey, systemAccountKey } from '../../../src/ledger/ledger-accounts.ts';
import { transfer } from '../../../src/ledger/ledger-service.ts';
import { externalId, recipient } from '../payouts/payout-support.ts';

export interface FixtureShop {
  readonly shopId: string;
  readonly merchantId: string;
  call(method: InjectOptions['method'], url: string, body?: unknown): Promise<LightMyRequestResponse>;
}

/** A deposit of `amountMicro` to a new invoice of the shop, final: credited (and in the balance) or confirming. */
export async function fixtureDeposit(
  db: Db,
  clock: Clock,
  shop: FixtureShop,
  amountMicro: bigint,
  status: 'credited' | 'confirming' = 'credited',
  /** The shop's book: its chain and its ledger. */
  mode: 'sandbox' | 'live' = 'sandbox',
): Promise<{ depositId: string; invoiceId: string }> {
  const invoice = (
    await shop.call('POST', '/v1/crypto/invoices', { external_id: externalId('inv'), amount: '100', network: 'TRC20' })
  ).json();
  const depositId = newId('deposit');
  const now = clock.now();
  await inTransaction(db, async (tx) => {
    await tx
      .insertInto('crypto_deposits')
      .values({
        id: depositId,
        chain: `tron-${mode}`,
        shop_id: shop.shopId,
        address: invoice.address,
        invoice_id: invoice.invoice_id,
        wallet_id: null,
        tx_id: randomBytes(32).toString('hex'),
        log_index: 0,
        block_number: 1n,
        block_id: randomBytes(32).toString('hex'),
        from_address: recipient(),
        amount_micro: amountMicro,
        status,
        seen_at: now,
        final_at: status === 'credited' ? now : null,
      })
      .execute();
    if (status !== 'credited') return;
    await addFinalUsdt(tx, [{ address: invoice.address, amount_micro: amountMicro }]);
    const [main, hotWallet] = await ensureAccounts(tx, clock, [
      merchantAccountKey(mode, shop.merchantId, 'USDT', 'main'),
      systemAccountKey(mode, 'hot_wallet', 'USDT', 0),
    ]);
    await transfer(tx, clock, {
      id: `crypto-deposit:${depositId}`,
      debitAccountId: hotWallet!.id,
      creditAccountId: main!.id,
      amount: amountMicro,
      type: 'deposit',
      reference: { type: 'deposit', id: depositId },
    });
  });
  return { depositId, invoiceId: invoice.invoice_id };
}
