// Deposits whose block is solidified (and on the chain the watcher follows)
// become final, a batch in one transaction, in sets: the deposits locked (id
// order), then their wallets and invoices (id order); each deposit credited
// (its pending ledger credit posted) or, to a blocked wallet, held (voided);
// each invoice adds its deposits up in block order and moves on; the webhooks
// go to the outbox in one insert. A deposit no longer confirming (settled by an
// earlier pass, orphaned meanwhile) is skipped, so a repeat credits nothing.
import type { Clock } from '../../clock.ts';
import type { Tx } from '../../db/transaction.ts';
import { emitMany, type EmitInput } from '../../webhooks/outbox.ts';
import { depositAccounts, reserveDepositCredits, settleDepositCredits, voidDepositCredits } from './deposit-credits.ts';
import { invoiceStatusAfterFinalDeposit } from './invoice-status.ts';
import { balanceFundedEvent, invoiceUpdatedEvents, walletDepositEvent } from './receiving-events.ts';
import * as repository from './receiving-repository.ts';
import type { DepositRow, InvoiceRow, WalletRow } from './receiving-repository.ts';

/** Settles these deposits (in the order given: block order) that are still confirming; returns how many. */
export async function settleFinalDeposits(tx: Tx, clock: Clock, depositIds: readonly string[]): Promise<number> {
  const locked = await repository.lockConfirmingDeposits(tx, depositIds);
  if (locked.length === 0) return 0;
  const order = new Map(depositIds.map((id, index) => [id, index]));
  const walletIds = [...new Set(locked.flatMap((deposit) => (deposit.wallet_id === null ? [] : [deposit.wallet_id])))];
  const invoiceIds = [
    ...new Set(locked.flatMap((deposit) => (deposit.invoice_id === null ? [] : [deposit.invoice_id]))),
  ];
  const wallets = new Map((await repository.lockWallets(tx, walletIds)).map((row) => [row.id, row]));
  const invoices = new Map((await repository.lockInvoices(tx, invoiceIds)).map((row) => [row.id, row]));
  for (const deposit of locked) {
    if (deposit.wallet_id !== null && !wallets.has(deposit.wallet_id))
      throw new Error(`deposit ${deposit.id}: wallet ${deposit.wallet_id} is missing`);
    if (deposit.invoice_id !== null && !invoices.has(deposit.invoice_id))
      throw new Error(`deposit ${deposit.id}: invoice ${deposit.invoice_id} is missing`);
  }
  const walletTotals = await repository.walletTotals(tx, walletIds);
  const now = clock.now();
  // A deposit to a blocked wallet is held: never credited, its pending credit voided.
  const heldOf = (deposit: DepositRow) =>
    deposit.wallet_id !== null && wallets.get(deposit.wallet_id)!.status !== 'active';
  const finals = (
    await repository.finishDeposits(
      tx,
      locked.map((deposit) => ({ deposit, status: heldOf(deposit) ? 'held' : 'credited' })),
      now,
    )
  ).sort((a, b) => order.get(a.id)! - order.get(b.id)!);
  const credited = finals.filter((deposit) => deposit.status === 'credited');
  const accounts = await depositAccounts(tx, clock, credited);

  const invoiceAfter = new Map<string, InvoiceRow>();
  const invoiceChanges = await settleInvoices(tx, finals, invoices, now, (deposit, invoice) =>
    invoiceAfter.set(deposit.id, invoice),
  );
  // The events in the order the deposits settled, as one-by-one settlement wrote them.
  const events: EmitInput[] = [];
  for (const deposit of finals) {
    if (deposit.wallet_id === null) {
      events.push(
        balanceFundedEvent(accounts.get(deposit.id)!.mainAccountId, deposit),
        ...invoiceUpdatedEvents(invoiceAfter.get(deposit.id)!),
      );
      continue;
    }
    const wallet: WalletRow = wallets.get(deposit.wallet_id)!;
    const before = walletTotals.get(wallet.id)!;
    const totals =
      deposit.status === 'credited'
        ? { ...before, receivedMicro: before.receivedMicro + deposit.amount_micro }
        : { ...before, heldMicro: before.heldMicro + deposit.amount_micro };
    walletTotals.set(wallet.id, totals);
    if (deposit.status === 'credited')
      events.push(balanceFundedEvent(accounts.get(deposit.id)!.mainAccountId, deposit));
    events.push(walletDepositEvent(wallet, totals, deposit));
  }
  await repository.updateInvoices(tx, invoiceChanges, now);
  await emitMany(tx, clock, events);
  // Last: the accounts stay locked to COMMIT.
  await settleDepositCredits(tx, clock, finals, accounts);
  return finals.length;
}

/**
 * Deposits no second, independent source confirmed (deposit-confirmation.ts): `unconfirmed`, held
 * for the operator: their pending credits voided, nothing credited, no invoice moved; a wallet's
 * deposit event says so. Returns how many were still confirming.
 */
export async function holdUnconfirmedDeposits(tx: Tx, clock: Clock, depositIds: readonly string[]): Promise<number> {
  const locked = await repository.lockConfirmingDeposits(tx, depositIds);
  if (locked.length === 0) return 0;
  const held = (
    await repository.markDepositsUnconfirmed(
      tx,
      locked.map((deposit) => deposit.id),
    )
  ).sort((a, b) => a.id.localeCompare(b.id));
  const walletIds = [...new Set(held.flatMap((deposit) => (deposit.wallet_id === null ? [] : [deposit.wallet_id])))];
  const wallets = new Map((await repository.lockWallets(tx, walletIds)).map((row) => [row.id, row]));
  const totals = await repository.walletTotals(tx, walletIds);
  const events = held.flatMap((deposit) => {
    const wallet = deposit.wallet_id === null ? undefined : wallets.get(deposit.wallet_id);
    return wallet ? [walletDepositEvent(wallet, totals.get(wallet.id)!, deposit)] : [];
  });
  await emitMany(tx, clock, events);
  // Last: the accounts stay locked to COMMIT.
  await voidDepositCredits(tx, clock, held);
  return held.length;
}

/**
 * An operator's release of an unconfirmed deposit, after checking its transaction elsewhere (an
 * explorer): its word is the second confirmation. In one transaction the deposit gets its next
 * pending credit and is settled at once, as the watcher would have (credited, or held at a blocked
 * wallet). Undefined when the deposit is not unconfirmed (released already, or never held).
 */
export async function releaseUnconfirmedDeposit(
  tx: Tx,
  clock: Clock,
  depositId: string,
): Promise<DepositRow | undefined> {
  const deposit = await repository.reconfirmDeposit(tx, depositId);
  if (!deposit) return undefined;
  // The watcher's lock order: the deposit, then its wallet or invoice, then (last) the ledger accounts.
  await repository.lockWallets(tx, deposit.wallet_id === null ? [] : [deposit.wallet_id]);
  await repository.lockInvoices(tx, deposit.invoice_id === null ? [] : [deposit.invoice_id]);
  await reserveDepositCredits(tx, clock, [deposit]);
  await settleFinalDeposits(tx, clock, [deposit.id]);
  return repository.findDepositById(tx, deposit.id);
}

/**
 * Each invoice adds up its final deposits in block order; `onDeposit` sees the invoice as it is
 * after each of them (its webhook shows every step). Returns each invoice's final change.
 */
async function settleInvoices(
  tx: Tx,
  finals: readonly DepositRow[],
  invoices: ReadonlyMap<string, InvoiceRow>,
  now: Date,
  onDeposit: (deposit: DepositRow, invoice: InvoiceRow) => void,
): Promise<{ id: string; status: InvoiceRow['status']; paidMicro: bigint; paidAt: Date | null }[]> {
  const ofInvoices = finals.filter((deposit) => deposit.invoice_id !== null);
  if (ofInvoices.length === 0) return [];
  const invoiceIds = [...new Set(ofInvoices.map((deposit) => deposit.invoice_id!))];
  const tolerances = await repository.underpaidTolerances(tx, [
    ...new Set(invoiceIds.map((id) => invoices.get(id)!.shop_id)),
  ]);
  // Still confirming outside this batch; inside it, the invoice's deposits not added up yet count too.
  const confirming = await repository.confirmingCountsOfInvoices(tx, invoiceIds);
  const laterInBatch = new Map<string, number>();
  for (const deposit of ofInvoices)
    laterInBatch.set(deposit.invoice_id!, (laterInBatch.get(deposit.invoice_id!) ?? 0) + 1);
  const current = new Map(invoiceIds.map((id) => [id, invoices.get(id)!]));
  for (const deposit of ofInvoices) {
    const invoice = current.get(deposit.invoice_id!)!;
    laterInBatch.set(invoice.id, laterInBatch.get(invoice.id)! - 1);
    const paidMicro = invoice.paid_micro + deposit.amount_micro;
    const status = invoiceStatusAfterFinalDeposit(
      invoice,
      paidMicro,
      tolerances.get(invoice.shop_id)!,
      now,
      confirming.get(invoice.id)! + laterInBatch.get(invoice.id)!,
    );
    const paidNow = (status === 'paid' || status === 'overpaid') && invoice.paid_at === null;
    const updated: InvoiceRow = {
      ...invoice,
      status,
      paid_micro: paidMicro,
      updated_at: now,
      paid_at: paidNow ? now : invoice.paid_at,
    };
    current.set(invoice.id, updated);
    onDeposit(deposit, updated);
  }
  return [...current.values()].map((invoice) => ({
    id: invoice.id,
    status: invoice.status,
    paidMicro: invoice.paid_micro,
    paidAt: invoice.paid_at,
  }));
}
