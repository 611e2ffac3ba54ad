// The ledger side of a capture no payment could take (a second capture of a
// paid payment, a capture after expiry): the acquirer's settlement account owes
// it, but it belongs to the payer, not the merchant, so it is held in the
// gateway's suspense account until it is refunded through the connector.
// The payments module's postings, made through the ledger service inside its transaction; idempotent by the attempt id.
import type { Clock } from '../clock.ts';
import type { Tx } from '../db/transaction.ts';
import { ensureAccounts, shardOf, systemAccountKey } from '../ledger/ledger-accounts.ts';
import type { LedgerBook } from '../ledger/ledger-service.ts';
import { executeLinked, type ChainResult } from '../ledger/ledger-service.ts';

export interface SuspenseInput {
  /** The book of the payment's shop: a sandbox capture is held in sandbox money. */
  readonly book: LedgerBook;
  /** The payment attempt whose capture is held. */
  readonly attemptId: string;
  /** What the acquirer captured, in kopecks. */
  readonly amountKopecks: bigint;
}

/** The settlement shard the attempt id hashes to, as payment credits do; suspense is rare and keeps one row. */
async function suspenseAccounts(tx: Tx, clock: Clock, book: LedgerBook, attemptId: string) {
  const [settlement, suspense] = await ensureAccounts(tx, clock, [
    systemAccountKey(book, 'settlement', 'RUB', shardOf(attemptId)),
    systemAccountKey(book, 'suspense', 'RUB'),
  ]);
  return { settlement: settlement!, suspense: suspense! };
}

/** settlement RUB → suspense RUB: the captured amount is held, owed to the payer. */
export async function holdUnappliedCapture(tx: Tx, clock: Clock, input: SuspenseInput): Promise<ChainResult> {
  if (input.amountKopecks <= 0n) throw new Error(`attempt ${input.attemptId}: a held capture must be > 0`);
  const { settlement, suspense } = await suspenseAccounts(tx, clock, input.book, input.attemptId);
  return executeLinked(tx, clock, [
    {
      action: 'transfer',
      id: `capture:${input.attemptId}`,
      debitAccountId: settlement.id,
      creditAccountId: suspense.id,
      amount: input.amountKopecks,
      type: 'capture_unapplied',
      reference: { type: 'payment_attempt', id: input.attemptId },
    },
  ]);
}

/** suspense RUB → settlement RUB: the acquirer returned the held capture to the payer. */
export async function releaseRefundedCapture(tx: Tx, clock: Clock, input: SuspenseInput): Promise<ChainResult> {
  const { settlement, suspense } = await suspenseAccounts(tx, clock, input.book, input.attemptId);
  return executeLinked(tx, clock, [
    {
      action: 'transfer',
      id: `capture:${input.attemptId}:refund`,
      debitAccountId: suspense.id,
      creditAccountId: settlement.id,
      amount: input.amountKopecks,
      type: 'refund',
      reference: { type: 'payment_attempt', id: input.attemptId },
    },
  ]);
}
