// What the watcher records of scanned blocks, inside the transaction that also
// moves its cursor past them: each USDT transfer to one of our addresses
// becomes a deposit exactly once by (tx_id, log_index). A deposit orphaned by a
// reorganisation and seen again in another block is revived, not duplicated.
// Every deposit seen becomes a pending ledger credit (deposit-credits.ts) in
// the same transaction; the events go to the outbox in one insert. A new
// transfer below its shop's minimum is dust (deposit-dust.ts): recorded apart,
// it never becomes a deposit, so no invoice, webhook or credit sees it.
import type { Clock } from '../../clock.ts';
import type { Tx } from '../../db/transaction.ts';
import { newId } from '../../ids.ts';
import type { ScannedBlock, UsdtTransfer } from '../tron/node-client.ts';
import { emitMany, type EmitInput } from '../../webhooks/outbox.ts';
import { reserveDepositCredits } from './deposit-credits.ts';
import { depositMinimumMicro, ignoredDepositRow, minimumDepositsOf } from './deposit-dust.ts';
import { invoiceUpdatedEvents, walletDepositEvent } from './receiving-events.ts';
import * as repository from './receiving-repository.ts';
import type { DepositRow, IgnoredDepositRow, InvoiceRow, WalletRow } from './receiving-repository.ts';
import type { AddressKeyId, ChainName } from '../chain/crypto-chain.ts';

/** Deposits per insert statement (each column travels as one array, so this bounds a statement's size). */
const INSERT_CHUNK_ROWS = 1_000;

export interface RecordedDeposits {
  /** New deposits and orphaned ones seen again. */
  readonly seen: number;
  /** New transfers below their shop's minimum, recorded as ignored dust. */
  readonly ignored: number;
}

export async function recordScannedTransfers(
  tx: Tx,
  clock: Clock,
  chain: ChainName,
  keyId: AddressKeyId,
  blocks: readonly ScannedBlock[],
): Promise<RecordedDeposits> {
  const transfers = blocks.flatMap((block) => block.transfers);
  if (transfers.length === 0) return { seen: 0, ignored: 0 };
  // One indexed probe per distinct recipient; nearly all transfers on a real chain are to others.
  const ours = await repository.findOurAddresses(tx, keyId, [...new Set(transfers.map((transfer) => transfer.to))]);
  if (ours.length === 0) return { seen: 0, ignored: 0 };
  const ourAddresses = new Map(ours.map((row) => [row.address, row]));
  const mine = transfers.filter((transfer) => ourAddresses.has(transfer.to));
  const owners = [...new Set(mine.map((transfer) => transfer.to))];
  const [invoices, wallets, known, minimums] = await Promise.all([
    repository.findInvoicesByAddresses(tx, owners),
    repository.findWalletsByAddresses(tx, owners),
    repository.findDepositsByKeys(tx, mine),
    minimumDepositsOf(tx, [...new Set(ours.map((row) => row.shop_id))]),
  ]);
  const invoiceOf = new Map(invoices.map((row) => [row.address, row]));
  const walletOf = new Map(wallets.map((row) => [row.address, row]));
  const walletById = new Map(wallets.map((row) => [row.id, row]));
  const knownOf = new Map(known.map((row) => [`${row.tx_id}:${row.log_index}`, row]));
  let seen = 0;
  const newRows: DepositRow[] = [];
  const dustRows: IgnoredDepositRow[] = [];
  const walletDeposits: { wallet: WalletRow; deposit: DepositRow }[] = [];
  const invoicesSeen = new Set<string>();
  const seenDeposits: DepositRow[] = [];
  for (const transfer of mine) {
    const invoice = invoiceOf.get(transfer.to);
    const wallet = walletOf.get(transfer.to);
    if (!invoice && !wallet) continue; // an address is committed with its invoice or wallet; skip defensively
    const existing = knownOf.get(`${transfer.txId}:${transfer.logIndex}`);
    if (!existing) {
      const owner = (invoice ?? wallet)!;
      const minimumMicro = depositMinimumMicro(minimums.get(owner.shop_id)!, invoice);
      if (transfer.amount < minimumMicro)
        dustRows.push(ignoredDepositRow(clock, chain, owner.shop_id, transfer, minimumMicro));
      else newRows.push(newDepositRow(clock, chain, transfer, invoice, wallet));
      continue;
    }
    const revived = await seenAgain(tx, existing, transfer);
    if (!revived) continue;
    seen += 1;
    seenDeposits.push(revived);
    if (invoice) invoicesSeen.add(invoice.id);
    if (wallet) walletDeposits.push({ wallet, deposit: revived });
  }
  // New deposits in bounded multi-row inserts; (tx_id, log_index) decides against a concurrent writer.
  for (let start = 0; start < newRows.length; start += INSERT_CHUNK_ROWS) {
    for (const deposit of await repository.insertDeposits(tx, newRows.slice(start, start + INSERT_CHUNK_ROWS))) {
      seen += 1;
      seenDeposits.push(deposit);
      if (deposit.invoice_id !== null) invoicesSeen.add(deposit.invoice_id);
      const wallet = deposit.wallet_id === null ? undefined : walletById.get(deposit.wallet_id);
      if (wallet) walletDeposits.push({ wallet, deposit });
    }
  }
  await repository.upsertIgnoredDeposits(tx, dustRows);
  // pending → confirming on the first deposit seen; other statuses wait for finality.
  const events: EmitInput[] = [];
  const invoiceById = new Map(invoices.map((row) => [row.id, row]));
  const seenInvoices = [...invoicesSeen].map((id) => invoiceById.get(id)!);
  for (const invoice of await repository.markInvoicesConfirming(tx, seenInvoices, clock.now()))
    events.push(...invoiceUpdatedEvents(invoice));
  // A confirming deposit changes no wallet total (they count final deposits): one look-up for them all.
  const totals = await repository.walletTotals(tx, [...new Set(walletDeposits.map(({ wallet }) => wallet.id))]);
  for (const { wallet, deposit } of walletDeposits)
    events.push(walletDepositEvent(wallet, totals.get(wallet.id)!, deposit));
  await emitMany(tx, clock, events);
  // Each deposit seen is a pending credit of its merchant's balance until it is final. Last: the accounts stay locked to COMMIT.
  await reserveDepositCredits(tx, clock, seenDeposits);
  return { seen, ignored: dustRows.length };
}

function newDepositRow(
  clock: Clock,
  chain: ChainName,
  transfer: UsdtTransfer,
  invoice: InvoiceRow | undefined,
  wallet: WalletRow | undefined,
): DepositRow {
  const now = clock.now();
  const owner = (invoice ?? wallet)!;
  return {
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
    credit_round: 1,
    evidence: transfer.evidence,
  };
}

/** A known deposit in a scanned block: revived when it had been orphaned, moved when its block changed. */
async function seenAgain(tx: Tx, existing: DepositRow, transfer: UsdtTransfer): Promise<DepositRow | undefined> {
  if (existing.status === 'orphaned')
    return repository.reviveDeposit(tx, existing.id, transfer.blockNumber, transfer.blockId);
  if (existing.status === 'confirming' && existing.block_id !== transfer.blockId)
    await repository.moveDeposit(tx, existing.id, transfer.blockNumber, transfer.blockId);
  return undefined;
}
