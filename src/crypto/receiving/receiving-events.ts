// The webhooks of crypto receiving, written to the outbox inside the
// transaction of the state change. Crypto events go to the shop's webhook
// endpoint; an invoice's updates also go to its callback_url when it has one.
import type { Clock } from '../../clock.ts';
import type { Tx } from '../../db/transaction.ts';
import { emit, type EmitInput } from '../../webhooks/outbox.ts';
import type { DepositRow, InvoiceRow, WalletRow } from './receiving-repository.ts';
import { walletTotals } from './receiving-repository.ts';
import { depositView, invoiceView, usdtText, walletView, type WalletTotals } from './receiving-views.ts';

export async function emitInvoiceUpdated(tx: Tx, clock: Clock, invoice: InvoiceRow): Promise<void> {
  const data = invoiceView(invoice);
  await emit(tx, clock, { shopId: invoice.shop_id, type: 'crypto.invoice.updated', data, destination: 'shop' });
  if (invoice.callback_url !== null)
    await emit(tx, clock, {
      shopId: invoice.shop_id,
      type: 'crypto.invoice.updated',
      data,
      destination: invoice.callback_url,
    });
}

/** A static-wallet deposit was seen (confirming), became final (credited or held), or left the chain (orphaned). */
export async function emitWalletDeposit(tx: Tx, clock: Clock, wallet: WalletRow, deposit: DepositRow): Promise<void> {
  const totals = await walletTotals(tx, [wallet.id]);
  await emit(tx, clock, {
    shopId: wallet.shop_id,
    type: 'crypto.wallet.deposit',
    data: { wallet: walletView(wallet, totals.get(wallet.id)!), deposit: depositView(deposit) },
    destination: 'shop',
  });
}

// The same events as inputs for emitMany, for batches (the watcher records and settles deposits in sets).

export function invoiceUpdatedEvents(invoice: InvoiceRow): EmitInput[] {
  const data = invoiceView(invoice);
  const events: EmitInput[] = [{ shopId: invoice.shop_id, type: 'crypto.invoice.updated', data, destination: 'shop' }];
  if (invoice.callback_url !== null)
    events.push({ shopId: invoice.shop_id, type: 'crypto.invoice.updated', data, destination: invoice.callback_url });
  return events;
}

/** `totals`: the wallet's sums of credited and held deposits as of this event. */
export function walletDepositEvent(wallet: WalletRow, totals: WalletTotals, deposit: DepositRow): EmitInput {
  return {
    shopId: wallet.shop_id,
    type: 'crypto.wallet.deposit',
    data: { wallet: walletView(wallet, totals), deposit: depositView(deposit) },
    destination: 'shop',
  };
}

export function balanceFundedEvent(accountId: string, deposit: DepositRow): EmitInput {
  return {
    shopId: deposit.shop_id,
    type: 'crypto.balance.funded',
    data: { account_id: accountId, amount: usdtText(deposit.amount_micro), deposit: depositView(deposit) },
    destination: 'shop',
  };
}
