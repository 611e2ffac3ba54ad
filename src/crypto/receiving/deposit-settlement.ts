// A deposit whose block is solidified (and on the chain the watcher follows)
// becomes final, in one transaction: credited to the merchant's USDT main
// account (ledger transfer `crypto-deposit:<id>`, so a repeat credits nothing
// more) or, to a blocked wallet, held; its invoice adds it up and moves on;
// the webhooks are written to the outbox.
import type { Clock } from '../../clock.ts';
import type { Tx } from '../../db/transaction.ts';
import { ensureAccounts, merchantAccountKey, shardOf, systemAccountKey } from '../../ledger/ledger-accounts.ts';
import { transfer } from '../../ledger/ledger-service.ts';
import { findShopProfile } from '../../merchants/merchant-service.ts';
import { invoiceStatusAfterFinalDeposit } from './invoice-status.ts';
import { emitBalanceFunded, emitInvoiceUpdated, emitWalletDeposit } from './receiving-events.ts';
import * as repository from './receiving-repository.ts';
import type { DepositRow } from './receiving-repository.ts';

/** Settles one confirming deposit; false when it is not confirming any more (settled by an earlier pass). */
export async function settleFinalDeposit(tx: Tx, clock: Clock, depositId: string): Promise<boolean> {
  const deposit = await repository.lockConfirmingDeposit(tx, depositId);
  if (!deposit) return false;
  if (deposit.wallet_id !== null) {
    const wallet = await repository.lockWallet(tx, deposit.wallet_id);
    if (!wallet) throw new Error(`deposit ${deposit.id}: wallet ${deposit.wallet_id} is missing`);
    const final = await repository.finishDeposit(tx, deposit.id, wallet.status === 'active' ? 'credited' : 'held', clock.now());
    if (final.status === 'credited') await creditDeposit(tx, clock, final);
    await emitWalletDeposit(tx, clock, wallet, final);
    return true;
  }
  const invoice = await repository.lockInvoice(tx, deposit.invoice_id!);
  if (!invoice) throw new Error(`deposit ${deposit.id}: invoice ${deposit.invoice_id} is missing`);
  const final = await repository.finishDeposit(tx, deposit.id, 'credited', clock.now());
  await creditDeposit(tx, clock, final);
  const paidMicro = invoice.paid_micro + final.amount_micro;
  const now = clock.now();
  const status = invoiceStatusAfterFinalDeposit(
    invoice,
    paidMicro,
    await repository.underpaidToleranceBps(tx, invoice.shop_id),
    now,
    await repository.countConfirmingDepositsOfInvoice(tx, invoice.id),
  );
  const paidNow = (status === 'paid' || status === 'overpaid') && invoice.paid_at === null;
  const updated = await repository.updateInvoice(tx, invoice.id, { status, paid_micro: paidMicro, updated_at: now, ...(paidNow ? { paid_at: now } : {}) });
  await emitInvoiceUpdated(tx, clock, updated);
  return true;
}

/** hot wallet (USDT, the shop's book) → merchant's USDT main; idempotent by the deposit id. */
async function creditDeposit(tx: Tx, clock: Clock, deposit: DepositRow): Promise<void> {
  const shop = await findShopProfile(tx, deposit.shop_id);
  if (!shop) throw new Error(`deposit ${deposit.id}: shop ${deposit.shop_id} is missing`);
  const [main, hotWallet] = await ensureAccounts(tx, clock, [
    merchantAccountKey(shop.mode, shop.merchantId, 'USDT', 'main'),
    systemAccountKey(shop.mode, 'hot_wallet', 'USDT', shardOf(deposit.id)),
  ]);
  await transfer(tx, clock, {
    id: `crypto-deposit:${deposit.id}`,
    debitAccountId: hotWallet!.id,
    creditAccountId: main!.id,
    amount: deposit.amount_micro,
    type: 'deposit',
    reference: { type: 'deposit', id: deposit.id },
  });
  await emitBalanceFunded(tx, clock, main!.id, deposit);
}
