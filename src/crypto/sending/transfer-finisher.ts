// Finishing transfers: each batch in one transaction with its rows and
// attempts, the chain's fees booked (fee-booking.ts), and every owner's outcome
// handler. A REVERT is first asked whether the recipient is blacklisted. Each
// landed transfer records what it cost from its receipt (migration 0048).
import { inTransaction, type Tx } from '../../db/transaction.ts';
import type { TronAddress } from '../tron/address.ts';
import type { TransactionOutcome } from '../tron/node-client.ts';
import {
  forEachLimited,
  isStepCrash,
  NODE_CONCURRENCY,
  type ExecutorContext,
  type ExecutorPassResult,
} from './executor-context.ts';
import { bookChainCosts } from './fee-booking.ts';
import { toOutgoingTransfer, type OutgoingErrorCode } from './outgoing-transfers.ts';
import { failureCode } from './planner.ts';
import { sunToMicroUsdt } from './transfer-cost.ts';
import { receiptEnergySource } from '../energy/energy-sources.ts';
import * as repository from './sending-repository.ts';
import type { OutgoingTransferRow } from './sending-repository.ts';

/** Finished transfers per transaction (after a failed batch: one per transaction). */
export const FINISH_CHUNK = 1_000;

export type Finish =
  | {
      readonly kind: 'outcome';
      readonly transferId: string;
      readonly outcome: TransactionOutcome;
      blacklisted?: boolean;
    }
  | {
      readonly kind: 'fail';
      readonly transferId: string;
      readonly code: OutgoingErrorCode;
      readonly message: string;
      readonly deadTxIds: readonly string[];
      /** The txID the transfer had when it was judged: a stale judgement (another executor signed since) fails nothing. */
      readonly judgedTxId: string | null;
    };

/** A transfer failed before anything of it landed. */
export function failureOf(
  row: Pick<OutgoingTransferRow, 'id' | 'tx_id'>,
  code: OutgoingErrorCode,
  message: string,
  deadTxIds: readonly string[] = [],
): Finish {
  return { kind: 'fail', transferId: row.id, code, message, deadTxIds, judgedTxId: row.tx_id };
}

/** What the transfer cost: its receipt's energy and bandwidth, and the TRX burned plus its rentals in micro-USDT at the rate. */
function costsOf(
  row: OutgoingTransferRow,
  outcome: TransactionOutcome | null,
  trxUsdtRateMicro: bigint,
): repository.TransferCosts | null {
  const rentalSun = row.rental_sun ?? 0n;
  if (outcome === null && rentalSun === 0n) return null;
  const receipt = outcome ?? {
    energyUsed: 0,
    energyOwnUsed: 0,
    energyFeeSun: 0n,
    bandwidthUsed: 0,
    bandwidthFeeSun: 0n,
    feeSun: 0n,
  };
  return {
    energyUsed: BigInt(receipt.energyUsed),
    energyOwn: BigInt(receipt.energyOwnUsed),
    energyFeeSun: receipt.energyFeeSun,
    bandwidthUsed: BigInt(receipt.bandwidthUsed),
    bandwidthFeeSun: receipt.bandwidthFeeSun,
    energySource: receiptEnergySource(row.energy_plan, receipt),
    costMicro: sunToMicroUsdt(receipt.feeSun + rentalSun, trxUsdtRateMicro),
  };
}

function finishedFields(
  row: OutgoingTransferRow,
  finish: Finish,
  now: Date,
  trxUsdtRateMicro: bigint,
): repository.FinishedFields {
  if (finish.kind === 'fail') {
    return {
      id: row.id,
      status: 'failed',
      txId: null,
      feeSun: 0n,
      blockNumber: null,
      errorCode: finish.code,
      errorMessage: finish.message.slice(0, 1000),
      submittedAt: null,
      costs: costsOf(row, null, trxUsdtRateMicro),
    };
  }
  const { outcome } = finish;
  const code = outcome.succeeded ? null : finish.blacklisted ? 'address_blacklisted' : failureCode(outcome);
  return {
    id: row.id,
    status: code === null ? 'confirmed' : 'failed',
    txId: outcome.txId,
    feeSun: outcome.feeSun,
    blockNumber: BigInt(outcome.blockNumber),
    errorCode: code,
    errorMessage:
      code === null ? null : (outcome.failureMessage ?? outcome.contractResult ?? 'failed on chain').slice(0, 1000),
    submittedAt: now,
    costs: costsOf(row, outcome, trxUsdtRateMicro),
  };
}

/** One transaction: the rows and attempts, the fees booked, every owner's handler. A transfer already final is skipped. */
async function applyFinishes(
  context: ExecutorContext,
  tx: Tx,
  finishes: readonly Finish[],
): Promise<OutgoingTransferRow[]> {
  const locked = new Map(
    (
      await repository.lockTransfers(
        tx,
        finishes.map((finish) => finish.transferId),
      )
    ).map((row) => [row.id, row]),
  );
  const now = context.clock.now();
  const fields: repository.FinishedFields[] = [];
  const landed: string[] = [];
  const dead: string[] = [];
  const before = new Map<string, OutgoingTransferRow>();
  for (const finish of finishes) {
    const row = locked.get(finish.transferId);
    if (!row || row.status === 'confirmed' || row.status === 'failed' || before.has(row.id)) continue;
    if (finish.kind === 'fail' && row.tx_id !== finish.judgedTxId) continue;
    if (!context.handlers[row.purpose])
      throw new Error(`outgoing transfer ${row.id}: no outcome handler for purpose ${row.purpose}`);
    before.set(row.id, row);
    if (finish.kind === 'outcome') landed.push(finish.outcome.txId);
    else dead.push(...finish.deadTxIds);
    fields.push(finishedFields(row, finish, now, context.trxUsdtRateMicro));
  }
  await repository.setAttemptsStatus(tx, landed, 'landed');
  await repository.setAttemptsStatus(tx, dead, 'dead');
  const finals = await repository.finishTransfers(tx, fields, now);
  await bookChainCosts(tx, context.clock, context.book, context.trxUsdtRateMicro, finals);
  for (const final of finals) {
    const row = before.get(final.id)!;
    const handler = context.handlers[row.purpose]!;
    // An owner that never heard of the submission hears of it first.
    if (row.submitted_at === null && final.tx_id !== null)
      await handler.onSubmitted?.(
        tx,
        context.clock,
        toOutgoingTransfer({ ...final, status: 'submitted', final_at: null }),
      );
    await handler.onFinal(tx, context.clock, toOutgoingTransfer(final));
  }
  await context.step('inside-finish');
  return finals;
}

/**
 * A REVERT of a transfer whose recipient the USDT contract lists (`isBlackListed`) failed
 * because of that recipient: `address_blacklisted`, a failure the transfer's owner may
 * charge its fee for (docs/payouts.md). A listed sender (the gateway's own address) is
 * not the recipient's doing: it stays `reverted`, logged as an error.
 */
async function classifyReverts(context: ExecutorContext, finishes: readonly Finish[]): Promise<void> {
  const reverts = finishes.filter(
    (finish): finish is Extract<Finish, { kind: 'outcome' }> =>
      finish.kind === 'outcome' && finish.outcome.contractResult === 'REVERT',
  );
  await forEachLimited(reverts, NODE_CONCURRENCY, async (finish) => {
    const row = await repository.findTransfer(context.db, finish.transferId);
    if (!row || row.asset !== 'USDT') return;
    if (await context.node.isUsdtBlacklisted(row.to_address as TronAddress)) {
      finish.blacklisted = true;
      return;
    }
    const from = row.from_kind === 'hot_wallet' ? context.hotWallet : (row.from_address as TronAddress);
    if (await context.node.isUsdtBlacklisted(from))
      context.logger.error(
        { chain: context.chain, transfer_id: row.id, address: from },
        'the USDT contract blacklisted a sending address of the gateway: its transfers revert',
      );
  });
}

/** Finishes in chunks; one owner's handler failing must not hold up the rest: one per transaction, the failing one retried next pass. */
export async function finishAll(
  context: ExecutorContext,
  finishes: readonly Finish[],
  result: ExecutorPassResult,
): Promise<void> {
  if (finishes.length === 0) return;
  await classifyReverts(context, finishes);
  await context.step('before-finish');
  const count = (finals: readonly OutgoingTransferRow[]) => {
    for (const final of finals) {
      if (final.status === 'confirmed') result.confirmed += 1;
      else result.failed += 1;
    }
  };
  for (let start = 0; start < finishes.length; start += FINISH_CHUNK) {
    const chunk = finishes.slice(start, start + FINISH_CHUNK);
    try {
      count(await inTransaction(context.db, (tx) => applyFinishes(context, tx, chunk)));
    } catch (error) {
      if (isStepCrash(error)) throw error;
      for (const finish of chunk) {
        try {
          count(await inTransaction(context.db, (tx) => applyFinishes(context, tx, [finish])));
        } catch (single) {
          if (isStepCrash(single)) throw single;
          context.logger.error(
            { err: single, chain: context.chain, transfer_id: finish.transferId },
            'an outgoing transfer could not be finished',
          );
        }
      }
    }
  }
}
