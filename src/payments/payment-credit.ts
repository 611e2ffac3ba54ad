// The ledger side of a paid payment: the acquirer's settlement account owes the
// payer's whole payment; the merchant's RUB main account gets `amount` and the
// gateway's fees account the payer fee. Built by the payments module on the ledger service, inside the
// transaction that marks the payment paid; idempotent by the payment id. The
// gateway's two accounts are the shard the payment id hashes to, so payments of
// different merchants do not queue on the same two rows.
import type { Clock } from '../clock.ts';
import type { Tx } from '../db/transaction.ts';
import { findShopProfile } from '../merchants/merchant-service.ts';
import {
  ensureAccounts,
  merchantAccountKey,
  shardOf,
  SYSTEM_ACCOUNT_SHARDS,
  systemAccountKey,
} from '../ledger/ledger-accounts.ts';
import type { LedgerBook } from '../ledger/ledger-service.ts';
import { executeLinked, type ChainResult, type LedgerRequest } from '../ledger/ledger-service.ts';

export interface PaymentCreditInput {
  readonly paymentId: string;
  /** The payment's shop: its merchant is credited, in the book of its mode. */
  readonly shopId?: string | undefined;
  /** Without a shop: the merchant credited and the book (benchmarks, tests). */
  readonly merchantId?: string | undefined;
  readonly book?: LedgerBook | undefined;
  /** What the merchant receives (the payment's `amount`), in kopecks. */
  readonly amountKopecks: bigint;
  /** The payer fee (`amount_total - amount`), in kopecks; the gateway's revenue. */
  readonly feeKopecks: bigint;
}

export async function creditPaymentPaid(
  tx: Tx,
  clock: Clock,
  input: PaymentCreditInput,
  /** How many shards of the gateway's accounts to spread over; 1 only to measure the unsharded baseline. */
  shards = SYSTEM_ACCOUNT_SHARDS,
): Promise<ChainResult> {
  // The payment's shop decides whose account and which book: a sandbox shop's payment is sandbox money.
  const shop = input.shopId === undefined ? undefined : await findShopProfile(tx, input.shopId);
  const merchantId = shop?.merchantId ?? input.merchantId;
  const book = shop?.mode ?? input.book;
  if (merchantId === undefined || book === undefined) {
    throw new Error(`payment ${input.paymentId}: no merchant and book to credit (shop ${input.shopId ?? 'not given'})`);
  }
  if (input.amountKopecks <= 0n || input.feeKopecks < 0n)
    throw new Error(`payment ${input.paymentId}: amount must be > 0 and fee >= 0`);
  const [merchantMain, settlement, fees] = await ensureAccounts(tx, clock, [
    merchantAccountKey(book, merchantId, 'RUB', 'main'),
    systemAccountKey(book, 'settlement', 'RUB', shardOf(input.paymentId, shards)),
    systemAccountKey(book, 'fees', 'RUB', shardOf(input.paymentId, shards)),
  ]);
  const reference = { type: 'payment', id: input.paymentId };
  const chain: LedgerRequest[] = [
    {
      action: 'transfer',
      id: `payment:${input.paymentId}`,
      debitAccountId: settlement!.id,
      creditAccountId: merchantMain!.id,
      amount: input.amountKopecks,
      type: 'payment',
      reference,
    },
  ];
  if (input.feeKopecks > 0n) {
    chain.push({
      action: 'transfer',
      id: `payment:${input.paymentId}:fee`,
      debitAccountId: settlement!.id,
      creditAccountId: fees!.id,
      amount: input.feeKopecks,
      type: 'payment_fee',
      reference,
    });
  }
  return executeLinked(tx, clock, chain);
}
