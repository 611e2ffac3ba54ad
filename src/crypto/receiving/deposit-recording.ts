// What the watcher records of scanned blocks, inside the transaction that also
// moves its cursor past them: each USDT transfer to one of our addresses
// becomes a deposit exactly once by (tx_id, log_index). A deposit orphaned by a
// reorganisation and seen again in another block is revived, not duplicated.
import type { Clock } from '../../clock.ts';
import type { Tx } from '../../db/transaction.ts';
import { newId } from '../../ids.ts';
import type { ScannedBlock, UsdtTransfer } from '../tron/node-client.ts';
import { emitInvoiceUpdated, emitWalletDeposit } from './receiving-events.ts';
import * as repository from './receiving-repository.ts';
import type { DepositRow, InvoiceRow, WalletRow } from './receiving-repository.ts';
import type { AddressKeyId, ChainName } from './receiving-tables.ts';

export interface RecordedDeposits {
  /** New deposits and orphaned ones seen again. */
  readonly seen: number;
}

export async function recordScannedTransfers(
  tx: Tx,
  clock: Clock,
  chain: ChainName,
  keyId: AddressKeyId,
  blocks: readonly ScannedBlock[],
): Promise<RecordedDeposits> {
  const transfers = blocks.flatMap((block) => block.transfers);
  if (transfers.length === 0) return { seen: 0 };
  // One indexed probe per distinct recipient; nearly all transfers on a real chain are to others.
  const ours = await repository.findOurAddresses(tx, keyId, [...new Set(transfers.map((transfer) => transfer.to))]);
  if (ours.length === 0) return { seen: 0 };
  const ourAddresses = new Map(ours.map((row) => [row.address, row]));
  const mine = transfers.filter((transfer) => ourAddresses.has(transfer.to));
  const owners = [...new Set(mine.map((transfer) => transfer.to))];
  const [invoices, wallets, known] = await Promise.all([
    repository.findInvoicesByAddresses(tx, owners),
    repository.findWalletsByAddresses(tx, owners),
    repository.findDepositsByKeys(tx, mine),
  ]);
  const invoiceOf = new Map(invoices.map((row) => [row.address, row]));
  const walletOf = new Map(wallets.map((row) => [row.address, row]));
  const knownOf = new Map(known.map((row) => [`${row.tx_id}:${row.log_index}`, row]));
  let seen = 0;
  for (const transfer of mine) {
    const existing = knownOf.get(`${transfer.txId}:${transfer.logIndex}`);
    const invoice = invoiceOf.get(transfer.to);
    const wallet = walletOf.get(transfer.to);
    if (!invoice && !wallet) continue; // an address whose invoice or wallet was never committed cannot occur; skip defensively
    const deposit = existing ? await seenAgain(tx, existing, transfer) : await insertNew(tx, clock, chain, transfer, invoice, wallet);
    if (!deposit) continue;
    seen += 1;
    if (invoice) await invoiceSeen(tx, clock, invoice.id);
    if (wallet) await emitWalletDeposit(tx, clock, wallet, deposit);
  }
  return { seen };
}

async function insertNew(
  tx: Tx,
  clock: Clock,
  chain: ChainName,
  transfer: UsdtTransfer,
  invoice: InvoiceRow | undefined,
  wallet: WalletRow | undefined,
): Promise<DepositRow | undefined> {
  const now = clock.now();
  const owner = (invoice ?? wallet)!;
  return repository.insertDeposit(tx, {
    id: newId('deposit'),
    chain,
    shop_id: owner.shop_id,
    address: transfer.to,
    invoice_id: invoice?.id ?? null,
    wallet_id: invoice ? null : (wallet?.id ?? null),
    tx_id: transfer.txId,
    log_index: transfer.logIndex,
    block_number: BigInt(transfer.blockNumber),
    block_id: transfer.blockId,
    from_address: transfer.from,
    amount_micro: transfer.amount,
    status: 'confirming',
    // After the invoice's expires_at: still credited when final, and reported as late.
    late: invoice !== undefined && (invoice.status === 'expired' || now.getTime() >= invoice.expires_at.getTime()),
    seen_at: now,
    final_at: null,
  });
}

/** A known deposit in a scanned block: revived when it had been orphaned, moved when its block changed. */
async function seenAgain(tx: Tx, existing: DepositRow, transfer: UsdtTransfer): Promise<DepositRow | undefined> {
  if (existing.status === 'orphaned') return repository.reviveDeposit(tx, existing.id, transfer.blockNumber, transfer.blockId);
  if (existing.status === 'confirming' && existing.block_id !== transfer.blockId) await repository.moveDeposit(tx, existing.id, transfer.blockNumber, transfer.blockId);
  return undefined;
}

/** pending → confirming on the first deposit seen; other statuses wait for finality. */
async function invoiceSeen(tx: Tx, clock: Clock, invoiceId: string): Promise<void> {
  const invoice = await repository.lockInvoice(tx, invoiceId);
  if (!invoice || invoice.status !== 'pending') return;
  const updated = await repository.updateInvoice(tx, invoice.id, { status: 'confirming', updated_at: clock.now() });
  await emitInvoiceUpdated(tx, clock, updated);
}
